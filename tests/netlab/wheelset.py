"""A CUDA-like wheel set, generated: one large torch-like wheel and a dozen library wheels.

The sizes follow a real CUDA build of torch (the torch wheel plus its ``nvidia-*`` libraries and
triton), scaled: at ``scale=1.0`` the torch wheel is 500 MB and the twelve libraries 20 to 200 MB
(1.3 GB in all); ``scale=0.01`` makes the same set in 13 MB for a quick run or a test.

Every file is a real wheel: a zip (members stored, not compressed: their bytes are random, so
the size on the wire is the size given), ``*.dist-info/METADATA`` with ``Requires-Dist`` (torch
needs every library at its exact version), ``WHEEL`` and a ``RECORD`` with each member's
sha256. pip and uv install them. The torch wheel is ``torch-2.13.0+cu132-<this Python's tag>-
<manylinux tag>.whl``: what the recommendation asks for on a CUDA machine, installable here.

:func:`cuda_like_set` makes the set once per (scale, Python tag) under ``root`` (default: the
netlab cache, ``TORCH_SETUP_NETLAB_CACHE`` or ``<tmp>/torch-setup-netlab-<uid>``) and reuses it.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.netlab.wheelhouse import cache_root

__all__ = ["LIBRARIES", "TORCH_MB", "WheelSet", "cuda_like_set"]

VERSION = "2.13.0"
VARIANT = "cu132"
PLATFORM = "manylinux_2_28_x86_64"
TORCH_MB = 500
# (project, version, MB at scale 1): the libraries of a CUDA build of torch, in proportion
LIBRARIES = (
    ("nvidia-cudnn-cu13", "9.13.0.50", 200), ("nvidia-cublas", "13.0.2.14", 150),
    ("nvidia-cusparse", "12.6.3.3", 80), ("nvidia-cufft", "12.0.0.61", 70), ("nvidia-nccl-cu13", "2.28.3", 70),
    ("nvidia-cusolver", "12.0.4.66", 60), ("triton", "3.5.0", 60), ("nvidia-cusparselt-cu13", "0.8.0", 50),
    ("nvidia-curand", "10.4.0.35", 25), ("nvidia-cuda-nvrtc", "13.0.88", 20), ("nvidia-nvjitlink", "13.0.88", 20),
    ("nvidia-cuda-cupti", "13.0.85", 20),
)
MEMBER = 32 << 20  # the largest member of a wheel (a shared library)
MANIFEST = "wheelset.json"
LAYOUT = 1  # bump when the files change


@dataclass(frozen=True)
class WheelSet:
    folder: Path
    torch: Path
    files: tuple[Path, ...]  # torch first
    requirement: str  # "torch==2.13.0+cu132"
    variant: str
    scale: float

    @property
    def total_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.files)


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(dest: Path, project: str, version: str, tag: str, payload: int, requires: list[str]) -> Path:
    """A wheel of ``project`` whose members hold ``payload`` random bytes in all."""
    dist = project.replace("-", "_")
    pkg = dist.lower()
    info = f"{dist}-{version}.dist-info"
    record: list[str] = []
    path = dest / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        def put(name: str, data: bytes) -> None:
            zf.writestr(name, data)
            record.append(f"{name},sha256={_digest(data)},{len(data)}")

        put(f"{pkg}/__init__.py", f'__version__ = "{version}"\n'.encode())
        left, n = payload, 0
        while left > 0:
            size = min(MEMBER, left)
            name = f"{pkg}/lib/lib{pkg}-{n:02d}.so"
            h = hashlib.sha256()
            with zf.open(name, "w", force_zip64=True) as out:
                done = 0
                while done < size:
                    block = os.urandom(min(1 << 20, size - done))
                    out.write(block)
                    h.update(block)
                    done += len(block)
            record.append(f"{name},sha256={base64.urlsafe_b64encode(h.digest()).rstrip(b'=').decode()},{size}")
            left -= size
            n += 1
        meta = ["Metadata-Version: 2.1", f"Name: {project}", f"Version: {version}", "Requires-Python: >=3.10"]
        meta += [f"Requires-Dist: {r}" for r in requires]
        put(f"{info}/METADATA", ("\n".join(meta) + "\n").encode())
        put(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: netlab\nRoot-Is-Purelib: false\nTag: {tag}\n".encode())
        zf.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


def _python_tag() -> str:
    return f"cp{sys.version_info[0]}{sys.version_info[1]}"


def _load(folder: Path) -> WheelSet | None:
    try:
        m = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = tuple(folder / n for n in m["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(f.is_file() for f in files):
        return None
    return WheelSet(folder, files[0], files, m["requirement"], VARIANT, float(m["scale"]))


def cuda_like_set(root: Path | None = None, *, scale: float = 1.0) -> WheelSet:
    """The set at ``scale`` (made once under ``root``, then reused)."""
    tag = _python_tag()
    root = root or cache_root()
    final = root / f"cudaset-v{LAYOUT}-{tag}-x{scale:g}"
    found = _load(final)
    if found is not None:
        return found
    shutil.rmtree(final, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix="cudaset-", dir=root))
    try:
        libs = [_write_wheel(stage, p, v, f"py3-none-{PLATFORM}", max(1, int(mb * scale * 1e6)), [])
                for p, v, mb in LIBRARIES]
        torch = _write_wheel(stage, "torch", f"{VERSION}+{VARIANT}", f"{tag}-{tag}-{PLATFORM}",
                             max(1, int(TORCH_MB * scale * 1e6)), [f"{p}=={v}" for p, v, _ in LIBRARIES])
        requirement = f"torch=={VERSION}+{VARIANT}"
        (stage / MANIFEST).write_text(json.dumps({"requirement": requirement, "scale": scale,
                                                  "files": [torch.name, *(p.name for p in libs)]}), encoding="utf-8")
        try:
            os.rename(stage, final)
        except OSError:  # another process made it first: use theirs
            pass
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    made = _load(final)
    if made is None:
        raise RuntimeError(f"the wheel set in {final} is incomplete")
    return made
