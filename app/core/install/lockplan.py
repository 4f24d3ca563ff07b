"""An install from a lock (``install --lock pylock.toml``): the same plan, pinned by hash.

:func:`~app.core.install.planning.plan` makes the plan as for any request (the lock's exact pins,
its Python, its indexes and wheel folders, which the caller put into the request); then
:func:`locked_plan` makes it the lock's:

* the lock is checked against this machine first (:func:`app.core.pylock.fit.fit_lock`: platform
  tags, the GPU against the build's architectures, the driver floor, Python): a build that cannot
  run here is refused (BadInput, exit 2) with the reason and the nearest build that can, before
  anything is created;
* a file the lock found in a local folder must be in that folder here too (or in a folder given
  with ``--find-links``), else the plan is refused naming it;
* the installer gets one requirements file with every file's sha256 (``--require-hashes``): the
  same versions and the same files, whichever index, mirror or folder serves them;
* the engine's view of the locked build here becomes the plan's recommendation, so the
  verification expects the accelerator the build is for.

The pre-flight then checks the plan as any other (Python, target, disk, the indexes).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.errors import BadInput
from app.core.base.paths import cache_dir
from app.core.base.text import Text, msg
from app.core.install.request import InstallPlan, InstallRequest
from app.core.pylock.fit import fit_lock
from app.core.pylock.lockfile import Lock, read_lock, requirements_text
from app.core.sources.local import scan

if TYPE_CHECKING:  # start-up: only the type
    from app.core.detection.system import SystemReport

__all__ = ["lock_request", "locked_plan", "missing_local_files"]


def missing_local_files(lock: Lock, folders: tuple[str, ...]) -> list[str]:
    """The lock's files that only a local path names, found neither there nor in ``folders``."""
    here = {lw.path.name for lw in scan(folders)}
    out = []
    for p in lock.hashed:
        if any(f.url for f in p.files):
            continue
        if not any((f.path and Path(f.path).is_file()) or f.name in here for f in p.files):
            out.append(p.files[0].path or p.files[0].name)
    return out


def _requirements_file(lock: Lock) -> Path:
    """The hash-pinned requirements, in the cache (named by their content: the same lock, the same file)."""
    text = requirements_text(lock.hashed)
    folder = cache_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"requirements-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}.txt"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def _notes(lock: Lock) -> tuple[Text, ...]:
    where = lock.machine.describe() if lock.machine is not None else "?"
    notes: list[Text] = [msg("lab.note_lock", "From the lock {file}: {count} packages pinned by sha256 (torch "
                             "{torch}, verified on {machine}).", file=str(lock.source or ""),
                             count=len(lock.hashed), torch=lock.torch or "?", machine=where)]
    notes += [msg("lab.note_unhashed", "{name} is not installed from the lock: it came from the folder {path}, "
                  "which a hash cannot pin.", name=p.name, path=p.directory or "") for p in lock.unhashed]
    notes += [msg("lab.note_not_locked", "{name} {version} was not in the lock ({why}); it is not installed.",
                  name=n.name, version=n.version, why=n.why) for n in lock.not_locked]
    return tuple(notes)


def locked_plan(planned: InstallPlan, report: SystemReport | None) -> InstallPlan:
    """``planned`` made the lock's (see the module's docstring); BadInput when the lock cannot run here."""
    request = planned.request
    assert request.lock is not None
    lock = read_lock(request.lock)
    if report is None:
        from app.core.detection.detect import detect  # start-up: a caller without a report of this machine

        report = detect()
    fit = fit_lock(lock, report)
    if not fit.ok:
        raise fit.refusal(lock, msg("lab.this_machine", "this machine"))
    missing = missing_local_files(lock, tuple(planned.index.find_links))
    if missing:
        raise BadInput(msg("lab.local_file_missing", "The lock's {file} came from a local folder, and it is not "
                           "here. Nothing was changed.", file=missing[0]),
                       hint=msg("lab.local_file_missing_hint", "Copy the folder's wheels to this machine and pass it "
                                "with --find-links DIR (answer file: [sources] find_links), or build an offline "
                                "bundle from the lock on the first machine (torch-setup bundle --lock)."),
                       lines=missing[1:6])
    return replace(planned, packages=(), requirements_file=_requirements_file(lock),
                   index=replace(planned.index, require_hashes=True),
                   request=replace(request, recommendation=fit.recommendation),
                   variant=fit.recommendation.variant if fit.recommendation is not None else lock.variant,
                   notes=(*planned.notes, *_notes(lock), *fit.notes))


def lock_request(request: InstallRequest, lock: Lock) -> InstallRequest:
    """``request`` (the environment, the installer, what the user named) with what the lock decides:
    its exact pins, its Python, and its sources where the user named none (a folder the lock's torch
    came from, when it is here; its index; its default index unless that is PyPI, so a machine's own
    PyPI mirror still serves: the hashes make any source give the same files)."""
    from app.core.base.locations import local_path
    from app.core.install.config import PYPI_SIMPLE  # start-up

    locked = lock.sources
    folders = [f for f in locked.find_links if (where := local_path(f)) is not None and Path(where).is_dir()]
    torch_index = locked.torch_index if locked.torch_index and local_path(locked.torch_index) is None else None
    default = locked.default_index if locked.default_index and locked.default_index.rstrip("/") != PYPI_SIMPLE else None
    src, locked = request.sources, lock.sources
    return replace(request, packages=tuple(f"{p.name}=={p.version}" for p in lock.hashed),
                   python=request.python or lock.python_minor, lock=lock.source,
                   sources=replace(src, torch_index=src.torch_index or torch_index,
                                   default_index=src.default_index or default,
                                   extra_index_urls=src.extra_index_urls or locked.extra_index_urls,
                                   find_links=tuple(dict.fromkeys((*src.find_links, *folders)))))
