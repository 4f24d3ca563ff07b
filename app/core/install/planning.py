"""``plan(request)``: decide everything that can be decided without writing anything.

The Python, the environment backend, the packages and indexes, the size estimate. An
impossible request (a folder that already is an env, nothing to install, a bundle for another
Python) raises :class:`~app.core.base.errors.BadInput`.

Index rules (never mix one index's torch with another's): see :mod:`app.core.install`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base import pyarch, requirements
from app.core.base.enums import Backend
from app.core.base.errors import BadInput, ForFace
from app.core.base.text import Text, msg
from app.core.base.wheels import backend_of_variant, local_label
from app.core.detection.system import PythonInfo
from app.core.env import backends as envs
from app.core.env.backends import EnvBackend, env_python
from app.core.env.distinfo import TORCH_FAMILY
from app.core.install.bundle import Manifest, check_bundle
from app.core.install.request import InstallPlan, InstallRequest
from app.core.install.sizing import estimate
from app.core.sources import closure, scan, torch_origin
from app.core.sources.settings import SourceSettings

if TYPE_CHECKING:  # start-up: only the type is needed here
    from app.core.detection.system import SystemReport
    from app.core.recommend import Recommendation

__all__ = ["TORCH_FAMILY", "plan", "python_version"]

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
            raise BadInput(msg("install.already_env", "{path} already is a Python environment.", path=str(env_path)),
                           hint=ForFace(msg("install.already_env_gui", "Choose a new folder, or tick \"Add to an "
                                            "existing environment\" to add to this one on purpose (it is "
                                            "snapshotted and restored if anything fails)."),
                                        msg("install.already_env_cli", "Choose a new folder, or add to this "
                                            "environment on purpose (--existing; it is snapshotted and restored "
                                            "if anything fails).")))
        return env_path, backend
    if not is_env:
        raise BadInput(msg("install.not_env", "{path} is not a Python environment, so nothing can be added to it.",
                           path=str(env_path)),
                       hint=msg("install.not_env_hint", "Pick the folder of an existing venv or conda env (it holds "
                                "pyvenv.cfg or conda-meta), or create a new one."))
    actual = envs.env_kind(env_path)
    if actual is not None and actual != request.kind:
        backend = envs.backend_for(actual, request.installer)
    if request.installer == "pip" and not envs.pip_version_in(env_path):
        raise BadInput(msg("install.no_pip", "{path} has no pip, so pip cannot add packages to it.",
                           path=str(env_path)),
                       hint=ForFace(msg("install.no_pip_gui", "Choose the uv environment type: it needs no pip inside "
                                        "the environment."),
                                    msg("install.no_pip_cli", "Use --installer uv (it needs no pip inside the "
                                        "environment).")))
    return env_path, backend


def _what(request: InstallRequest, rec: Recommendation | None) -> _What:
    """The packages (validated) from the bundle, the request or the recommendation."""
    bundle = request.sources.bundle
    if bundle is not None:
        manifest = check_bundle(bundle)
        note = msg("install.note_bundle", "offline bundle {bundle} ({count} wheels, built {created})",
                   bundle=str(bundle), count=len(manifest.files), created=manifest.created)
        return _What((), manifest, bundle / manifest.requirements_file,
                     request.python or manifest.python_version, (note,))
    if request.packages is not None and any(p.strip() for p in request.packages):
        packages = tuple(p for p in request.packages if p.strip())
    elif request.packages:  # given, but every one empty: "--packages ''"
        raise BadInput("packages: no package name was given (only empty ones).",
                       hint='List packages like: torch torchvision numpy')
    else:
        packages = tuple(rec.packages) if rec is not None else ()
        if not packages:
            raise BadInput(msg("install.nothing", "Nothing to install: no packages and no recommendation."),
                           hint=ForFace(msg("install.nothing_gui", "Go back to the Recommendation page and let the "
                                            "assistant recommend."),
                                        msg("install.nothing_cli", "Pass --packages torch ... or let the assistant "
                                            "recommend.")))
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
            raise BadInput(msg("install.python_broken", "The Python of {path} does not run: {why}", path=str(env_path),
                               why=why),
                           hint=msg("install.python_broken_hint", "Repair or recreate that environment."))
    else:
        python, notes = envs.find_python(what.python_spec, report, arch=_wheels_arch(request))
    m = what.manifest
    if m is not None and python is not None and python.minor != m.python_version:
        raise BadInput(msg("install.bundle_python", "The bundle is for Python {bundle}, but the environment would "
                           "use Python {python}.", bundle=m.python_version, python=python.version),
                       hint=ForFace(msg("install.bundle_python_gui", "Choose Python {version} on the Environment "
                                        "page (that Python must be installed here), or build the bundle for this "
                                        "Python.", version=m.python_version),
                                    msg("install.bundle_python_cli", "Pass --python {version} (that Python must be "
                                        "installed here), or build the bundle for this Python.",
                                        version=m.python_version)))
    return python, tuple(notes)


def _wheels_arch(request: InstallRequest) -> str | None:
    """The interpreter architecture the recommended build's wheels need (None: no recommendation)."""
    rec = request.recommendation
    if rec is None or not rec.platform:
        return None
    from app.core.recommend.machine import python_arch_for

    return python_arch_for(rec.platform)


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


def python_version(python: PythonInfo | None, spec: str | None) -> str | None:
    """The target Python as "3.11" (None: unknown, then this interpreter's tags are assumed)."""
    if python is not None:
        return python.minor
    return spec if spec and _MINOR.match(spec) else None


def _resolved(src: SourceSettings, *, torch_index: str | None = None, default_index: str | None = None,
              extra_index_urls: tuple[str, ...] = (), find_links: tuple[str, ...] = (), offline: bool = False,
              require_hashes: bool = False) -> SourceSettings:
    """The sources the install commands use: the indexes and folders decided here, with the user's
    bundle, mirrors, proxy and CA kept."""
    return replace(src, torch_index=torch_index, default_index=default_index, extra_index_urls=extra_index_urls,
                   find_links=find_links, offline=offline, require_hashes=require_hashes)


def _index(request: InstallRequest, rec: Recommendation | None, what: _What,
           pyver: str | None) -> tuple[SourceSettings, tuple[Text, ...]]:
    """Where the packages come from; notes when the wheel folders make an index unnecessary."""
    src = request.sources
    if what.manifest is not None and src.bundle is not None:  # offline: the bundle's wheels, nothing else
        return _resolved(src, default_index=src.default_index, extra_index_urls=src.extra_index_urls,
                         find_links=(str(src.bundle.absolute() / what.manifest.wheels_dir),),
                         offline=True, require_hashes=True), ()
    if rec is not None and rec.no_index and not (src.torch_index or src.extra_index_urls or src.default_index):
        # the recommendation was made from what the wheel folders hold: install from them alone when they
        # hold everything; when they hold the torch wheels but not all they need, the rest comes from the
        # package index (the pre-flight says whether it answers; with no index at all the install would
        # fail half-way, and the pre-flight's closure check refuses such a plan)
        folders = tuple(dict.fromkeys((*src.find_links, *rec.find_links)))
        wheels = scan(folders) if what.packages else ()
        pins = [x for x in what.packages if requirements.requirement_name(x) in TORCH_FAMILY]
        if not wheels or closure(what.packages, wheels, pyver).complete or not pins or \
                any(x in closure([x], wheels, pyver).missing for x in pins):
            return _resolved(src, find_links=folders, offline=True), ()
        return (_resolved(src, default_index=src.default_index, find_links=folders),
                (msg("install.note_torch_local", "torch comes from your folder {folders}; the other packages "
                     "from the package index.", folders=", ".join(folders)),))
    find_links = src.find_links
    if rec is not None and rec.find_links:
        find_links = tuple(dict.fromkeys((*find_links, *rec.find_links)))
    torch_index = src.torch_index or (torch_origin(rec.index_url) if rec is not None and rec.index_url else None)
    folders = src.folders
    wheels = scan(folders) if folders and what.packages else ()
    if wheels:
        shown = ", ".join(folders)
        whole = closure(what.packages, wheels, pyver)
        if whole.complete:  # everything is in the folders: no index at all
            return (_resolved(src, find_links=find_links, offline=True),
                    (msg("install.note_all_local", "Everything comes from your folder {folders}: torch and the "
                         "{count} packages it needs are there, so no index is used.", folders=shown,
                         count=len(whole.chosen) - 1),))
        pins = [x for x in what.packages if requirements.requirement_name(x) in TORCH_FAMILY]
        if pins and torch_index and not src.torch_index and \
                all(x not in closure([x], wheels, pyver).missing for x in pins):
            # the torch wheels are in the folders: the torch index is not needed
            return (_resolved(src, default_index=src.default_index, extra_index_urls=src.extra_index_urls,
                              find_links=find_links),
                    (msg("install.note_torch_local", "torch comes from your folder {folders}; the other packages "
                         "from the package index.", folders=shown),))
    return _resolved(src, torch_index=torch_index, default_index=src.default_index,
                     extra_index_urls=src.extra_index_urls, find_links=find_links), ()


_VERSION_LIKE = re.compile(r"^\d+(\.\d+)*$")


def _check_python_request(spec: str | None) -> None:
    """A version must be a Python 3 ``X.Y`` (``9.99`` is bad input, not a failed download)."""
    if spec is not None and _VERSION_LIKE.match(spec.strip()) and not re.match(r"^3\.\d{1,2}$", spec.strip()):
        raise BadInput(f"python: {spec!r} is not a Python 3 version such as 3.12.",
                       hint="Give the version as X.Y (3.10, 3.12, ...) or the path of an interpreter.")


def _pip_version(request: InstallRequest, env_path: Path, backend: EnvBackend,
                 python: PythonInfo | None) -> tuple[int, ...]:
    """The pip the installer will meet in the env: the env's own, or the one a new venv gets from
    its Python's ensurepip; () when it cannot be known before (a conda env's)."""
    if request.existing:
        return envs.pip_version_in(env_path)
    if backend.installer == "pip" and backend.kind == "venv" and python is not None and python.pip:
        return envs.leading_numbers(python.pip)
    return ()


def plan(request: InstallRequest, report: SystemReport | None = None) -> InstallPlan:
    """Decide everything without writing anything. Raises BadInput for impossible requests."""
    if not str(request.env_path).strip():
        raise BadInput(msg("install.no_env_path", "No environment path was given."),
                       hint=ForFace(msg("install.no_env_path_gui", "Choose where to create the environment."),
                                    msg("install.no_env_path_cli", "Pass --env PATH.")))
    _check_python_request(request.python)
    rec0 = request.recommendation
    if rec0 is not None and request.installer == "uv" and not request.sources.torch_index and rec0.needs_pip:
        # a build from AMD's own index (it answers 403 for what it does not host; pip moves on, uv stops)
        request = replace(request, installer="pip")
    env_path, backend = _env_and_backend(request)
    rec = request.recommendation
    what = _what(request, rec)
    python, python_notes = _python(request, env_path, what, report)
    index, index_notes = _index(request, rec, what, python_version(python, what.python_spec))
    why: Text = ""
    if rec is not None and rec.availability and request.packages is None:
        why = msg("install.note_why_version", "Why torch {torch}: {why}", torch=rec.torch_version or "?",
                  why=rec.availability)
    build_mb = rec.install_size_mb if rec is not None and not request.sources.torch_index else None  # the data's size
    estimate_mb, est_why = estimate(what.packages, backend, _build_backend(rec, what), index.find_links,
                                    what.manifest, build_mb)
    if request.existing:
        est_why = msg("install.estimate_upper_bound", "{why} (existing env: upper bound)", why=est_why)
    planned = InstallPlan(
        request=request, env_path=env_path, backend=backend, python=python,
        python_request=what.python_spec, packages=what.packages, index=index,
        new_env=not request.existing, estimate_mb=estimate_mb, estimate_why=est_why,
        variant=None if what.manifest is not None else (rec.variant if rec is not None else None),
        bundle_manifest=what.manifest, requirements_file=what.requirements_file,
        notes=(*what.notes, *((why,) if why else ()), *index_notes), python_notes=python_notes,
        pip_version=_pip_version(request, env_path, backend, python),
        uv_python=_uv_python(request, backend, python, what.python_spec),
    )
    if request.lock is None:
        return planned
    from app.core.install.lockplan import locked_plan  # start-up: only an install from a lock needs it

    return locked_plan(planned, report)  # the lock's files pinned by hash, checked against this machine first


def _uv_python(request: InstallRequest, backend: EnvBackend, python: PythonInfo | None,
               spec: str | None) -> str | None:
    """What ``uv venv --python`` is given when no interpreter here fits: the version with this
    machine's OS and the architecture the build's wheels need, so that uv finds or downloads a
    Python of that architecture and never the one of another that was passed over."""
    if python is not None or backend.installer != "uv" or backend.kind != "venv" or not spec \
            or not _MINOR.match(spec):
        return None
    arch = _wheels_arch(request)
    return pyarch.uv_request(spec, pyarch.this_family(), arch) if arch else None
