"""Size on disk of a folder tree: fast, bounded, never following a symlink or leaving the filesystem.

Environments hold 20 000 - 100 000 files; caches far more. :func:`tree_size` walks with
``os.scandir`` (one ``lstat`` per entry, no symlink followed, nothing on another device counted),
counts a hard-linked file once (uv links packages from its cache into every env), and stops after
``max_entries`` entries or ``max_seconds``, saying so (``complete`` False: the size is a lower
bound).

On Windows a scandir entry's ``st_dev``, ``st_ino`` and ``st_nlink`` are always 0 (the Python
docs: "call os.stat() to get these"), so there each entry whose ``st_ino`` is 0 is stat'ed by path
(real volume serial, file id and link count on Python 3.12+); a junction or volume mount point
(a reparse point that looks like a folder) is never entered.
"""
from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base.schema import Record, spec

__all__ = ["TreeSize", "human_bytes", "tree_size"]


@dataclass(frozen=True)
class TreeSize(Record):
    bytes: int
    files: int
    complete: bool = True  # False: stopped at the bound (``bytes`` is a lower bound)
    seconds: float = field(default=0.0, metadata=spec(write=lambda s: round(s, 3)))
    skipped_mounts: int = 0  # folders on another filesystem, not entered
    shared_bytes: int = 0  # hard-linked elsewhere too (uv's cache): freed only when every link goes


def human_bytes(n: int) -> str:
    """``1.2 GB`` (decimal-free for bytes)."""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def _is_junction(entry: os.DirEntry[str]) -> bool:
    is_junction = getattr(entry, "is_junction", None)  # Python 3.12+ (Windows junctions, mount points)
    return bool(is_junction and is_junction())


def tree_size(root: str | os.PathLike[str], *, max_entries: int = 400_000, max_seconds: float = 5.0) -> TreeSize:
    """The bytes under ``root`` (``root`` itself a symlink: 0, it is not followed)."""
    start = time.monotonic()
    top = Path(root)
    try:
        st = os.lstat(top)
    except OSError:
        return TreeSize(0, 0, True, 0.0)
    if not stat.S_ISDIR(st.st_mode):
        return TreeSize(st.st_size if stat.S_ISREG(st.st_mode) else 0, 1, True, time.monotonic() - start)
    dev = st.st_dev
    seen: set[tuple[int, int]] = set()
    total = files = entries = mounts = shared = 0
    stack = [os.fspath(top)]
    complete = True
    while stack:
        folder = stack.pop()
        try:
            it = os.scandir(folder)
        except OSError:
            continue
        with it:
            for entry in it:
                entries += 1
                if entries > max_entries or (entries % 2048 == 0 and time.monotonic() - start > max_seconds):
                    complete = False
                    stack.clear()
                    break
                try:
                    est = entry.stat(follow_symlinks=False)
                    if est.st_ino == 0:  # Windows: the entry's dev/ino/nlink are not filled in
                        est = os.lstat(entry.path)
                except OSError:
                    continue
                if stat.S_ISDIR(est.st_mode) and _is_junction(entry):
                    continue  # a link to a folder, as a symlink is: not followed, not counted
                if stat.S_ISDIR(est.st_mode):
                    if est.st_dev != dev:
                        mounts += 1
                        continue
                    stack.append(entry.path)
                elif stat.S_ISREG(est.st_mode):
                    files += 1
                    if est.st_nlink > 1:
                        key = (est.st_dev, est.st_ino)
                        if key in seen:
                            continue
                        seen.add(key)
                        shared += est.st_size
                    total += est.st_size
    return TreeSize(total, files, complete, time.monotonic() - start, mounts, shared)
