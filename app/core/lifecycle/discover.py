"""The environments list: the registry's envs and the PyTorch envs found on this machine.

Where it looks (each a cheap directory listing; nothing runs unless conda is installed):

* the registry (:mod:`app.core.env.registry`): every env this app made, installed into or checked,
  shown even when broken or gone, so it can be repaired or forgotten;
* conda: ``conda env list --json`` through the runner when conda / mamba / micromamba exists,
  ``~/.conda/environments.txt`` (conda writes every env it creates there) and the usual
  ``envs`` folders of Miniforge / Miniconda / Anaconda / micromamba;
* venvs in the usual places: ``~/.venvs``, ``~/venvs``, ``~/.virtualenvs`` (virtualenvwrapper),
  ``~/.local/share/virtualenvs`` (pipenv), ``~/.cache/pypoetry/virtualenvs``, pyenv-virtualenv's
  ``~/.pyenv/versions/*/envs``, the assistant's default ``~/torch-envs``, and ``.venv`` / ``venv``
  in the current folder;
* the interpreters detection listed (a SystemReport's ``interpreters``): their env, if any.

For each env: the torch build and backend from its dist-info and ``torch/version.py`` (no Python
started), the Python version from pyvenv.cfg / conda-meta, the size (bounded, see
:mod:`.sizes`), the last check (registry) and a status.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.paths import path_lines
from app.core.base.text import Text, msg
from app.core.env import guard, registry
from app.core.env.backends import conda_bin, env_kind, env_python, is_env
from app.core.env.distinfo import TORCH_FAMILY, TorchBuildInfo, distributions, torch_build
from app.core.env.registry import EnvRecord
from app.core.lifecycle.common import python_version_of
from app.core.lifecycle.sizes import TreeSize, tree_size
from app.core.proc import runner

if TYPE_CHECKING:  # start-up: only the type is needed
    from app.core.detection.system import SystemReport

__all__ = ["STATUSES", "FoundEnv", "candidate_paths", "describe", "discover", "status_of"]

#: ok: verified and unchanged since; changed: torch differs from the verified build; failed: the last
#: check failed; unchecked: never checked; broken: no Python; no-torch; missing: the folder is gone;
#: pending: an upgrade waits for --confirm / --undo.
STATUSES = ("ok", "changed", "failed", "unchecked", "broken", "no-torch", "missing", "pending")


@dataclass(frozen=True)
class FoundEnv:
    path: str
    kind: str | None  # venv | conda | None (missing)
    python: str | None
    torch: TorchBuildInfo | None
    found_by: tuple[str, ...]  # registry, conda, ~/.venvs, interpreter, current folder ...
    record: EnvRecord | None = None
    size: TreeSize | None = None
    status: str = "unchecked"
    status_text: Text = ""
    family: dict[str, str] = field(default_factory=dict)
    guarded: bool = False

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def last_check(self) -> str | None:
        v = self.record.verification if self.record is not None else None
        return v.when if v is not None else None

    @property
    def made_by_app(self) -> bool:
        return self.record is not None and self.record.made_by_app

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "kind": self.kind, "python": self.python,
                "torch": self.torch.to_dict() if self.torch is not None else None,
                "backend": str(self.torch.backend) if self.torch is not None else None,
                "found_by": list(self.found_by), "made_by_app": self.made_by_app,
                "size": self.size.to_dict() if self.size is not None else None,
                "last_check": self.last_check, "status": self.status, "status_text": str(self.status_text),
                "status_code": getattr(self.status_text, "code", None), "family": dict(self.family),
                "guarded": self.guarded, "record": self.record.to_dict() if self.record is not None else None}


def _children(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _conda_list(cancel: runner.CancelToken | None) -> list[Path]:
    exe = conda_bin()
    if not exe:
        return []
    res = runner.run([exe, "env", "list", "--json"], timeout=20, cancel=cancel)
    if not res.ok:
        return []
    try:
        data = json.loads(res.stdout)
    except ValueError:
        return []
    envs = data.get("envs") if isinstance(data, dict) else None
    return [Path(str(e)) for e in envs] if isinstance(envs, list) else []


def candidate_paths(report: SystemReport | None = None, *, home: Path | None = None, cwd: Path | None = None,
                    run_conda: bool = True, cancel: runner.CancelToken | None = None) -> dict[Path, list[str]]:
    """Folders that may be environments, each with how it was found (not yet checked)."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    out: dict[Path, list[str]] = {}

    def add(p: Path, how: str) -> None:
        key = Path(os.path.abspath(p))
        hows = out.setdefault(key, [])
        if how not in hows:
            hows.append(how)

    for rec in registry.load().records:
        add(Path(rec.path), "registry")
    if run_conda:
        for p in _conda_list(cancel):
            add(p, "conda")
    try:
        for line in path_lines((home / ".conda" / "environments.txt").read_bytes()):
            add(Path(line), "conda")
    except OSError:
        pass
    for base in ("miniforge3", "mambaforge", "miniconda3", "anaconda3", "micromamba", ".conda", "opt/conda"):
        root = home / base
        if (root / "conda-meta").is_dir():
            add(root, "conda")
        for p in _children(root / "envs"):
            add(p, "conda")
    places: list[tuple[Path, str]] = [
        (home / ".venvs", "~/.venvs"), (home / "venvs", "~/venvs"), (home / ".virtualenvs", "~/.virtualenvs"),
        (home / ".local" / "share" / "virtualenvs", "pipenv"), (home / ".cache" / "pypoetry" / "virtualenvs", "poetry"),
        (home / "torch-envs", "~/torch-envs"),
    ]
    for version in _children(home / ".pyenv" / "versions"):
        places.append((version / "envs", "pyenv"))
    for folder, how in places:
        for p in _children(folder):
            add(p, how)
    for name in (".venv", "venv", "env"):
        add(cwd / name, "current folder")
    if report is not None:
        for interp in report.interpreters:
            if interp.executable:
                exe = Path(interp.executable)
                add(exe.parent.parent if exe.parent.name in ("bin", "Scripts") else exe.parent, "interpreter")
    return out


def status_of(path: Path, record: EnvRecord | None, torch: TorchBuildInfo | None,
              family: dict[str, str]) -> tuple[str, Text]:
    """The env's status word and its sentence."""
    if not path.exists():
        return "missing", msg("envs.status_missing", "the folder no longer exists")
    if record is not None and record.pending_upgrade is not None:
        return "pending", msg("envs.status_pending", "upgraded from torch {old}: confirm it (or undo it)",
                              old=record.pending_upgrade.old_torch or "?")
    if not env_python(path).exists():
        return "broken", msg("envs.status_broken", "its Python is missing (the environment is broken)")
    if torch is None:
        return "no-torch", msg("envs.status_no_torch", "PyTorch is not installed")
    verified = _protected(record)
    changed = [f"{n} {v} -> {family.get(n) or 'removed'}" for n, v in verified.items() if family.get(n) != v]
    if changed:
        return "changed", msg("envs.status_changed", "PyTorch changed since it was verified: {what}",
                              what=", ".join(changed))
    last = record.verification if record is not None else None
    if last is None:
        return "unchecked", msg("envs.status_unchecked", "not checked yet")
    if last.ok:
        return "ok", msg("envs.status_ok", "verified {when}", when=_short(last.when))
    return "failed", msg("envs.status_failed", "the last check failed ({when})", when=_short(last.when))


def _protected(record: EnvRecord | None) -> dict[str, str]:
    """The build the env should hold: the guard's pins, else the last verified one (as the doctor reads it)."""
    if record is None:
        return {}
    if record.guard is not None and record.guard.enabled and record.guard.pins:
        return guard.parse_pins(record.guard.pins)
    return record.verified_family


def _short(when: str) -> str:
    """``2026-12-01T10:15:02+01:00`` -> ``2026-12-01 10:15``."""
    return when[:16].replace("T", " ")


def describe(path: Path, found_by: Iterable[str] = (), *, record: EnvRecord | None = None,
             with_size: bool = True) -> FoundEnv:
    """One env, read from its files."""
    rec = record if record is not None else registry.find(path)
    exists = path.exists()
    dists = distributions(path) if exists else {}
    torch = torch_build(path, dists) if exists else None
    family = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
    status, text = status_of(path, rec, torch, family)
    size = tree_size(path) if with_size and exists else None
    python = (python_version_of(path) if exists else None) or (rec.python if rec is not None else None)
    return FoundEnv(str(path), env_kind(path) if exists else (rec.kind if rec else None), python, torch,
                    tuple(found_by), rec, size, status, text, family, guard.status(path).active if exists else False)


def discover(report: SystemReport | None = None, *, with_size: bool = True, only_torch: bool = True,
             run_conda: bool = True, home: Path | None = None, cwd: Path | None = None,
             cancel: runner.CancelToken | None = None) -> list[FoundEnv]:
    """Every known or found environment; ``only_torch``: found ones without torch are left out
    (the registry's are always listed). Registry envs first, then by path."""
    reg = registry.load()
    out: list[FoundEnv] = []
    for path, hows in candidate_paths(report, home=home, cwd=cwd, run_conda=run_conda, cancel=cancel).items():
        if cancel is not None:
            cancel.raise_if_cancelled()
        rec = reg.find(path)
        if rec is None and not is_env(path):
            continue
        if rec is None and only_torch and not _has_torch(path):
            continue
        out.append(describe(path, hows, record=rec, with_size=with_size))
    out.sort(key=lambda e: (e.record is None, e.path))
    return out


def _has_torch(path: Path) -> bool:
    return "torch" in distributions(path)
