"""``plan(request)``: decide everything that can be decided without writing anything.

The Python, the environment backend, the packages and indexes, the size estimate. An
impossible request (a folder that already is an env, nothing to install, a bundle for another
Python) raises :class:`~app.core.errors.BadInput`.

Index rules (never mix one index's torch with another's): see :mod:`app.core.install`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core import envs, requirements
from app.core.bundle import Manifest, check_bundle
from app.core.enums import Backend
from app.core.envs import EnvBackend, IndexOptions, PythonInfo, env_python
from app.core.errors import BadInput
from app.core.install.request import InstallPlan, InstallRequest
from app.core.install.sizing import estimate
from app.core.text import Text, msg
from app.core.wheels import backend_of_variant, local_label

if TYPE_CHECKING:  # start-up: only the type is needed here
    from app.core.recommend import Recommendation
    from app.core.system import SystemReport

__all__ = ["plan"]

_MINOR = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True)
class _What:
    """What goes in: the packages, or a checked bundle."""

    packages: tuple[str, ...]
    manifest: Manifest | None = None
    requirements_file: Path | None = None
    python_spec: str | None = None
    notes: tuple[Text, ...] = ()


def _env_and_backend(request: InstallRequest) -> tuple[Path, EnvBackend]:
    """The absolute env path and its backend; refuses a new env on an env, an "existing" non-env."""
    env_path = Path(os.path.abspath(os.path.expanduser(os.fspath(request.env_path))))
    backend = envs.backend_for(request.kind, request.installer)
    is_env = envs.is_env(env_path)
    if not request.existing:
        if is_env:
            raise BadInput(f"{env_path} already is a Python environment.",
                           hint="Choose a new folder, or add to this environment on purpose "
                                "(--existing; it is snapshotted and restored if anything fails).")
        return env_path, backend
    if not is_env:
        raise BadInput(f"{env_path} is not a Python environment, so nothing can be added to it.",
                       hint="Pick the folder of an existing venv or conda env (it holds pyvenv.cfg or "
                            "conda-meta), or create a new one.")
    actual = envs.env_kind(env_path)
    if actual is not None and actual != request.kind:
        backend = envs.backend_for(actual, request.installer)
    if request.installer == "pip" and not envs.pip_version_in(env_path):
        raise BadInput(f"{env_path} has no pip, so pip cannot add packages to it.",
                       hint="Use --installer uv (it needs no pip inside the environment).")
    return env_path, backend


def _what(request: InstallRequest, rec: Recommendation | None) -> _What:
    """The packages (validated) from the bundle, the request or the recommendation."""
    if request.bundle is not None:
        manifest = check_bundle(request.bundle)
        note = msg("install.note_bundle", "offline bundle {bundle} ({count} wheels, built {created})",
                   bundle=str(request.bundle), count=len(manifest.files), created=manifest.created)
        return _What((), manifest, request.bundle / manifest.requirements_file,
                     request.python or manifest.python_version, (note,))
    if request.packages:
        packages = tuple(p for p in request.packages if p.strip())
    else:
        packages = tuple(rec.packages) if rec is not None else ()
        if not packages:
            raise BadInput("Nothing to install: no packages and no recommendation.",
                           hint="Pass --packages torch ... or let the assistant recommend.")
    for p in packages:
        requirements.requirement_name(p)  # validates: raises BadInput naming the requirement
    python_spec = request.python
    if python_spec is None and rec is not None and rec.env_python and _MINOR.match(rec.env_python):
        python_spec = rec.env_python
    return _What(packages, python_spec=python_spec)


def _python(request: InstallRequest, env_path: Path, what: _What,
            report: SystemReport | None) -> tuple[PythonInfo | None, tuple[str, ...]]:
    """The interpreter the env is (or will be) built on, and what was tried."""
    notes: list[str] = []
    if request.existing:
        python, why = envs.probe_python(env_python(env_path))
        if python is None:
            raise BadInput(f"The Python of {env_path} does not run: {why}", hint="Repair or recreate that environment.")
    else:
        python, notes = envs.find_python(what.python_spec, report)
    m = what.manifest
    if m is not None and python is not None and python.major_minor != m.python_version:
        raise BadInput(f"The bundle is for Python {m.python_version}, but the environment would use "
                       f"Python {python.version}.",
                       hint=f"Pass --python {m.python_version} (that Python must be installed here), or "
                            "build the bundle for this Python.")
    return python, tuple(notes)


def _build_backend(rec: Recommendation | None, what: _What) -> Backend | None:
    """What the torch build computes on: the recommendation's variant / backend, else a pinned +label."""
    if rec is not None:
        found = backend_of_variant(rec.variant) or Backend.parse(str(rec.backend))
        if found is not None:
            return found
    for p in what.packages:
        if requirements.requirement_name(p) == "torch":
            found = backend_of_variant(local_label(p))
            if found is not None:
                return found
    return None


def _index(request: InstallRequest, rec: Recommendation | None, what: _What) -> IndexOptions:
    if what.manifest is not None and request.bundle is not None:  # offline: the bundle's wheels, nothing else
        return IndexOptions(default_index=request.default_index_url,
                            extra_index_urls=request.extra_index_urls,
                            find_links=(str(request.bundle.absolute() / what.manifest.wheels_dir),),
                            ca_bundle=request.ca_bundle, offline=True, require_hashes=True)
    if rec is not None and rec.no_index and not (request.index_url or request.extra_index_urls
                                                 or request.default_index_url):
        # the recommendation was made from what the wheel folders hold: install from them alone
        folders = tuple(dict.fromkeys((*request.find_links, *rec.find_links)))
        return IndexOptions(find_links=folders, ca_bundle=request.ca_bundle, offline=True)
    find_links = request.find_links
    if rec is not None and rec.find_links:
        find_links = tuple(dict.fromkeys((*find_links, *rec.find_links)))
    return IndexOptions(torch_index=request.index_url or (rec.index_url if rec is not None else None) or None,
                        default_index=request.default_index_url,
                        extra_index_urls=request.extra_index_urls,
                        find_links=find_links, ca_bundle=request.ca_bundle)


def _pip_version(request: InstallRequest, env_path: Path, backend: EnvBackend,
                 python: PythonInfo | None) -> tuple[int, ...]:
    """The pip the installer will meet in the env: the env's own, or the one a new venv gets from
    its Python's ensurepip; () when it cannot be known before (a conda env's)."""
    if request.existing:
        return envs.pip_version_in(env_path)
    if backend.installer == "pip" and backend.kind == "venv" and python is not None and python.pip:
        return _version_tuple(python.pip)
    return ()


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def plan(request: InstallRequest, report: SystemReport | None = None) -> InstallPlan:
    """Decide everything without writing anything. Raises BadInput for impossible requests."""
    if not str(request.env_path).strip():
        raise BadInput("No environment path was given.", hint="Pass --env PATH.")
    env_path, backend = _env_and_backend(request)
    rec = request.recommendation
    what = _what(request, rec)
    python, python_notes = _python(request, env_path, what, report)
    index = _index(request, rec, what)
    estimate_mb, why = estimate(what.packages, backend, _build_backend(rec, what), index.find_links,
                                what.manifest)
    if request.existing:
        why = msg("install.estimate_upper_bound", "{why} (existing env: upper bound)", why=why)
    return InstallPlan(
        request=request, env_path=env_path, backend=backend, python=python,
        python_request=what.python_spec, packages=what.packages, index=index,
        new_env=not request.existing, estimate_mb=estimate_mb, estimate_why=why,
        variant=None if what.manifest is not None else (rec.variant if rec is not None else None),
        bundle_manifest=what.manifest, requirements_file=what.requirements_file,
        notes=what.notes, python_notes=python_notes,
        pip_version=_pip_version(request, env_path, backend, python),
    )
