"""File-tree checksums for "nothing was changed" assertions (never following a link)."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def digest(root: Path) -> dict[str, str]:
    """``{relative path: "file <mode> <sha256>" | "link -> target" | "dir <mode>"}`` for everything under ``root``."""
    out: dict[str, str] = {}
    if root.is_symlink():
        return {".": f"link -> {os.readlink(root)}"}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            p = Path(folder) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = f"link -> {os.readlink(p)}"
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = f"dir {stat.S_IMODE(st.st_mode):o}"
            else:
                h = hashlib.sha256()
                with p.open("rb") as fh:
                    for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                        h.update(block)
                out[rel] = f"file {stat.S_IMODE(st.st_mode):o} {h.hexdigest()}"
    return out
