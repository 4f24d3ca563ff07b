"""Free disk space at a place that may not exist yet (the one helper for it).

The GUI must call :func:`free_mb` off its thread: on a network mount or a sleeping disk
``statvfs`` can block for seconds.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["existing_ancestor", "free_mb"]


def existing_ancestor(path: str | os.PathLike[str]) -> Path:
    """``path`` itself or its nearest existing parent (the filesystem it will be created on)."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = Path.cwd() / p
    while True:
        try:
            if p.exists():
                return p
        except OSError:  # a component too long, a permission problem: go up
            pass
        if p.parent == p:
            return p
        p = p.parent


def free_mb(path: str | os.PathLike[str]) -> int | None:
    """Free MiB on the filesystem that holds (or will hold) ``path``; None when it cannot be read."""
    try:
        return shutil.disk_usage(existing_ancestor(path)).free // (1024 * 1024)
    except OSError:
        return None
