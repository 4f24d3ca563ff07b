"""Before a torch upgrade (or repair) changes anything: do the env's other packages fit the new torch?

Three kinds of evidence, all read from files (no resolver, no network):

* **The torch family** (torchvision, torchaudio) must match torch exactly: the compat data's
  ``companions`` table (``resources/compat/releases.toml``, each row with its source) says which
  version goes with each torch release, "" when none was published. A family member with no
  release for the new torch is a conflict (it would be left behind, mismatched).
* **Requires-Dist**: a package whose metadata requires ``torch<2.13`` (or ``torchvision==...``)
  conflicts with a new torch outside that range.
* **Compiled extensions** (:data:`ABI_EXTENSIONS`: xformers, flash-attn, mamba-ssm ...) are built
  against one torch's C++ ABI, often without saying so in their metadata: each installed one is a
  warning here, and the upgrade imports it in the staging env before the swap
  (:func:`import_names`), so a build that does not fit fails there, not in the user's env.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from app.core.base.requirements import canonical
from app.core.base.text import Text, msg
from app.core.compat.data import CompatData
from app.core.env.distinfo import TORCH_FAMILY, Dist, requires_dist

__all__ = ["ABI_EXTENSIONS", "CompanionReport", "Conflict", "check_companions", "family_for", "import_names"]

#: Distribution -> import name of extensions compiled against one torch release (C++ / CUDA ABI).
#: Sources: each project's install notes say a build matches one torch version (xformers README
#: "pip install -U xformers --index-url .../cu126" per torch; flash-attn setup.py builds against the
#: installed torch; torch-scatter/-sparse wheels are published per torch version at data.pyg.org).
ABI_EXTENSIONS: Mapping[str, str] = {
    "xformers": "xformers", "flash-attn": "flash_attn", "mamba-ssm": "mamba_ssm", "causal-conv1d": "causal_conv1d",
    "torch-scatter": "torch_scatter", "torch-sparse": "torch_sparse", "torch-cluster": "torch_cluster",
    "torch-spline-conv": "torch_spline_conv", "deepspeed": "deepspeed", "apex": "apex", "pytorch3d": "pytorch3d",
    "detectron2": "detectron2", "torchao": "torchao", "auto-gptq": "auto_gptq", "sageattention": "sageattention",
    "vllm": "vllm", "bitsandbytes": "bitsandbytes",
}


@dataclass(frozen=True)
class Conflict:
    package: str
    version: str
    requirement: str  # what it asks ("torch<2.13") or "" for a family member with no matching release
    text: Text

    def to_dict(self) -> dict[str, object]:
        return {"package": self.package, "version": self.version, "requirement": self.requirement,
                "text": str(self.text), "code": getattr(self.text, "code", None)}


@dataclass(frozen=True)
class CompanionReport:
    family: Mapping[str, str]  # the family members to install with the new torch (name -> version)
    conflicts: tuple[Conflict, ...] = ()
    warnings: tuple[Text, ...] = ()
    extensions: tuple[str, ...] = ()  # installed ABI extensions (import-checked in staging)

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def to_dict(self) -> dict[str, object]:
        return {"family": dict(self.family), "conflicts": [c.to_dict() for c in self.conflicts],
                "warnings": [str(w) for w in self.warnings], "extensions": list(self.extensions), "ok": self.ok}


def _base(version: str) -> str:
    return version.split("+", 1)[0]


def family_for(torch_version: str, data: CompatData | None) -> dict[str, str | None]:
    """torchvision / torchaudio versions that go with ``torch_version`` (None: none published / unknown)."""
    out: dict[str, str | None] = {"torchvision": None, "torchaudio": None}
    if data is None:
        return out
    minor = ".".join(_base(torch_version).split(".")[:2])
    rel = data.release(minor)
    if rel is None:
        return out
    for name in out:
        out[name] = rel.companions.get(name) or None
    return out


def _satisfies(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return True


def _env_markers(python: str | None) -> dict[str, str]:
    if not python:
        return {"extra": ""}
    parts = python.split(".")
    return {"extra": "", "python_version": ".".join(parts[:2]), "python_full_version": python}


def _torch_reqs(dist: Dist, python: str | None) -> list[Requirement]:
    out = []
    for line in requires_dist(dist):
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonical(req.name) not in TORCH_FAMILY:
            continue
        try:
            if req.marker is not None and not req.marker.evaluate(_env_markers(python)):
                continue
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            continue
        out.append(req)
    return out


def check_companions(installed: Mapping[str, Dist], new_torch: str, data: CompatData | None, *,
                     python: str | None = None, new_family: Mapping[str, str] | None = None) -> CompanionReport:
    """Check the env's packages (``installed``) against ``new_torch`` ("2.14.1", "2.14.1+cu130").

    ``new_family``: torchvision / torchaudio versions already decided (an explicit package list);
    otherwise the compat data's companions table decides.
    """
    conflicts: list[Conflict] = []
    warnings: list[Text] = []
    family: dict[str, str] = {"torch": new_torch}
    table = family_for(new_torch, data)
    for name in ("torchvision", "torchaudio"):
        if name not in installed:
            continue
        want = (new_family or {}).get(name) or table.get(name)
        if want:
            family[name] = want
        else:
            conflicts.append(Conflict(name, installed[name].version, "", msg(
                "envs.companion_none", "{name} {version} is installed, but no {name} release is known for torch "
                "{torch} (compat data): the upgrade would leave it mismatched", name=name,
                version=installed[name].version, torch=_base(new_torch))))
    for dist in installed.values():
        if dist.name in TORCH_FAMILY:
            continue
        for req in _torch_reqs(dist, python):
            target = family.get(canonical(req.name))
            if target is None or not str(req.specifier):
                continue
            try:
                ok = _satisfies(SpecifierSet(str(req.specifier)), _base(target)) or _satisfies(
                    SpecifierSet(str(req.specifier)), target)
            except InvalidSpecifier:
                continue
            if not ok:
                conflicts.append(Conflict(dist.name, dist.version, str(req), msg(
                    "envs.companion_requires", "{package} {version} requires {requirement}, which {target} does not "
                    "satisfy", package=dist.name, version=dist.version, requirement=str(req),
                    target=f"{canonical(req.name)} {target}")))
    extensions = tuple(sorted(n for n in installed if n in ABI_EXTENSIONS and n not in TORCH_FAMILY))
    for name in extensions:
        warnings.append(msg("envs.companion_abi", "{package} {version} is compiled against one torch release: it is "
                            "imported in the staging environment before the swap", package=name,
                            version=installed[name].version))
    return CompanionReport(family, tuple(conflicts), tuple(warnings), extensions)


def import_names(extensions: tuple[str, ...]) -> list[str]:
    """The modules to import in staging for these extensions (the family's members too)."""
    return [ABI_EXTENSIONS[n] for n in extensions if n in ABI_EXTENSIONS]
