"""What local wheel folders hold, read without the network.

* :func:`scan` lists the wheels of folders (``--find-links``, the wizard's local wheels, an
  answer file's ``find_links``; a bundle's ``wheels/``) by their file names
  (:func:`app.core.base.wheels.parse_wheel`).
* :func:`closure` says whether the folders hold everything some requirements need on the
  target Python: each requirement's best wheel (version, tags, ``Requires-Python``), then its
  ``Requires-Dist`` (markers evaluated for the target), recursively. When nothing is missing
  the install needs no index at all.
* :func:`compatible_tags` is the target's wheel tags, most specific first.
"""
from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from functools import lru_cache
from pathlib import Path

from app.core.base.locations import local_path
from app.core.base.wheels import WheelFile, parse_wheel

__all__ = ["Closure", "LocalWheel", "closure", "compatible_tags", "metadata_of", "scan"]


@dataclass(frozen=True)
class LocalWheel:
    path: Path
    wheel: WheelFile
    folder: str  # the folder as the user gave it


@dataclass(frozen=True)
class Metadata:
    requires_dist: tuple[str, ...]
    requires_python: str | None


@dataclass(frozen=True)
class Closure:
    """The wheels a set of requirements takes from the folders, and what they lack."""

    chosen: tuple[LocalWheel, ...]
    missing: tuple[str, ...]  # requirements no wheel in the folders satisfies

    @property
    def complete(self) -> bool:
        return not self.missing


def scan(folders: Iterable[str | os.PathLike[str]]) -> tuple[LocalWheel, ...]:
    """Every wheel directly inside ``folders`` (missing folders, network URLs and other files are
    skipped; a ``file:`` URL is read as the folder it names, app/core/base/locations.py)."""
    out: list[LocalWheel] = []
    for folder in folders:
        where = local_path(folder)
        if where is None:
            continue
        root = Path(where)
        try:
            names = sorted(p for p in root.iterdir() if p.name.endswith(".whl") and p.is_file())
        except OSError:
            continue
        for p in names:
            w = parse_wheel(p.name)
            if w is not None:
                out.append(LocalWheel(p, w, os.fspath(folder)))
    return tuple(out)


@lru_cache(maxsize=8)
def compatible_tags(python: str | None = None) -> tuple[str, ...]:
    """The wheel tags an interpreter of ``python`` ("3.11"; None: this one) on this machine
    accepts, most specific first."""
    from packaging import tags  # start-up: packaging.tags costs ~10 ms

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if python is None or python == here:
        return tuple(str(t) for t in tags.sys_tags())
    major, minor = (int(x) for x in python.split(".")[:2])
    plats = list(tags.platform_tags())
    found = [str(t) for t in tags.cpython_tags((major, minor), platforms=plats)]
    found += [str(t) for t in tags.compatible_tags((major, minor), platforms=plats)]
    return tuple(dict.fromkeys(found))


def tag_rank(wheel: WheelFile, python: str | None) -> int | None:
    """How well ``wheel`` fits the target (0: best), None when it does not fit at all."""
    order = compatible_tags(python)
    ranks = {t: i for i, t in enumerate(order)}
    found = [ranks[t] for t in wheel.tags if t in ranks]
    return min(found) if found else None


_META: dict[tuple[str, int, int], Metadata] = {}


def metadata_of(path: Path) -> Metadata:
    """``Requires-Dist`` and ``Requires-Python`` of a wheel (its ``*.dist-info/METADATA``)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    known = _META.get(key)
    if known is not None:
        return known
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            raw = zf.read(names[0]).decode("utf-8", "replace") if names else ""
    except (OSError, zipfile.BadZipFile):
        raw = ""
    headers = HeaderParser().parsestr(raw, headersonly=True)
    found = Metadata(tuple(headers.get_all("Requires-Dist") or ()),
                     (headers.get("Requires-Python") or "").strip() or None)
    _META[key] = found
    return found


def _environment(python: str | None) -> dict[str, str]:
    from packaging.markers import default_environment  # start-up

    env = {k: str(v) for k, v in default_environment().items()}
    if python:
        env["python_version"] = python
        if not env["python_full_version"].startswith(python + "."):
            env["python_full_version"] = python + ".0"
    return env


def _python_ok(meta: Metadata, python: str | None) -> bool:
    if not meta.requires_python:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # start-up

    want = python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        return SpecifierSet(meta.requires_python).contains(want + ".0", prereleases=True) or \
            SpecifierSet(meta.requires_python).contains(want, prereleases=True)
    except InvalidSpecifier:
        return True


# long: a small breadth-first walk over Requires-Dist, with the checks each step needs
def closure(requirements: Sequence[str], wheels: Sequence[LocalWheel], python: str | None = None) -> Closure:
    """Whether ``wheels`` hold ``requirements`` and all they need on Python ``python``."""
    from packaging.requirements import InvalidRequirement, Requirement  # start-up
    from packaging.version import InvalidVersion, Version

    env = _environment(python)
    by_name: dict[str, list[LocalWheel]] = {}
    for lw in wheels:
        by_name.setdefault(lw.wheel.name, []).append(lw)
    chosen: dict[str, LocalWheel] = {}
    missing: list[str] = []
    todo: list[str] = list(requirements)
    seen: set[str] = set()
    while todo:
        text = todo.pop(0)
        if text in seen:
            continue
        seen.add(text)
        try:
            req = Requirement(text)
        except InvalidRequirement:
            missing.append(text)
            continue
        name = req.name.lower().replace("_", "-").replace(".", "-")
        if name in chosen:
            try:
                if req.specifier.contains(Version(chosen[name].wheel.version), prereleases=True):
                    continue
            except InvalidVersion:
                pass
            missing.append(text)
            continue
        best: tuple[Version, int, LocalWheel] | None = None
        for lw in by_name.get(name, []):
            try:
                v = Version(lw.wheel.version)
            except InvalidVersion:
                continue
            rank = tag_rank(lw.wheel, python)
            if rank is None or not req.specifier.contains(v, prereleases=True):
                continue
            if not _python_ok(metadata_of(lw.path), python):
                continue
            if best is None or (v, -rank) > (best[0], -best[1]):
                best = (v, rank, lw)
        if best is None:
            missing.append(text)
            continue
        lw = best[2]
        chosen[name] = lw
        extras = ["", *sorted(req.extras)]
        for dep in metadata_of(lw.path).requires_dist:
            try:
                dreq = Requirement(dep)
            except InvalidRequirement:
                continue
            if dreq.marker is None or any(dreq.marker.evaluate({**env, "extra": e}) for e in extras):
                todo.append(str(dreq).split(";", 1)[0].strip())
    return Closure(tuple(chosen.values()), tuple(missing))
