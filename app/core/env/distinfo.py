"""What an environment holds, read from its ``*.dist-info`` folders without starting its Python.

* :func:`distributions`: every installed distribution (canonical name, version, which installer
  put it there, when), from the folder names and the small ``INSTALLER`` file.
* :func:`requires_dist`: a distribution's ``Requires-Dist`` lines (its ``METADATA`` headers).
* :func:`torch_build`: the installed torch: its version, and the build (CUDA / ROCm / XPU / CPU)
  read as TEXT from ``torch/version.py`` (``cuda: Optional[str] = '13.0'``), so a torch that
  cannot import (a missing native library) is still described.

All of it costs a few directory listings and file reads: the environments list and the doctor's
guard rule call it for every environment.
"""
from __future__ import annotations

import os
import platform
import re
import sys
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from app.core.base.enums import Backend
from app.core.base.requirements import canonical
from app.core.base.wheels import backend_of_variant, variant_of_version
from app.core.env.backends import site_packages

__all__ = ["TORCH_FAMILY", "Dist", "TorchBuildInfo", "distributions", "requires_dist", "torch_build"]

#: The packages built together with torch (one build, one local label).
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


@dataclass(frozen=True)
class Dist:
    """One installed distribution."""

    name: str  # canonical ("torch", "flash-attn")
    version: str  # as installed, with its local label ("2.13.0+cpu")
    path: Path  # its .dist-info folder
    installer: str | None = None  # "pip", "uv", "conda" (the INSTALLER file), None when absent
    mtime: float = 0.0  # when the dist-info folder was written (the install time)


def distributions(env_path: str | os.PathLike[str]) -> dict[str, Dist]:
    """``{canonical name: Dist}`` for the env at ``env_path`` (empty when it has none)."""
    out: dict[str, Dist] = {}
    for sp in site_packages(env_path):
        try:
            entries = sorted(sp.glob("*.dist-info"))
        except OSError:
            continue
        for d in entries:
            stem = d.name[: -len(".dist-info")]
            name, sep, version = stem.partition("-")
            if not sep:
                continue
            installer: str | None = None
            try:
                installer = (d / "INSTALLER").read_text(encoding="utf-8", errors="replace").strip() or None
            except OSError:
                pass
            try:
                mtime = d.stat().st_mtime
            except OSError:
                mtime = 0.0
            out[canonical(name)] = Dist(canonical(name), version, d, installer, mtime)
    return out


def requires_dist(dist: Dist) -> tuple[str, ...]:
    """The ``Requires-Dist`` lines of ``dist`` (markers kept), empty when unreadable."""
    try:
        text = (dist.path / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    headers = HeaderParser().parsestr(text, headersonly=True)
    return tuple(v.strip() for v in headers.get_all("Requires-Dist") or ())


@dataclass(frozen=True)
class TorchBuildInfo:
    """The torch installed in an environment, as its files describe it."""

    version: str  # the distribution's version ("2.14.1", "2.13.0+cpu")
    full_version: str | None = None  # torch.__version__ as the build wrote it ("2.14.1+cu130")
    cuda: str | None = None  # "13.0"
    hip: str | None = None
    xpu: str | None = None
    installer: str | None = None
    installed_at: float = 0.0

    @property
    def variant(self) -> str | None:
        """``cpu``, ``cu130``, ``rocm6.4``, ``xpu`` (None when the files do not say)."""
        found = variant_of_version(self.full_version) or variant_of_version(self.version)
        if found:
            return found
        if self.cuda:
            return "cu" + self.cuda.replace(".", "")
        if self.hip:
            return "rocm" + ".".join(self.hip.split(".")[:2])
        return None

    @property
    def backend(self) -> Backend:
        """What this build computes on (a build with no GPU runtime: CPU, or MPS on Apple silicon)."""
        if self.cuda:
            return Backend.CUDA
        if self.hip:
            return Backend.ROCM
        if self.xpu:
            return Backend.XPU
        found = backend_of_variant(self.variant)
        if found is not None and found != Backend.CPU:
            return found
        if sys.platform == "darwin" and platform.machine() == "arm64":
            return Backend.MPS
        return Backend.CPU

    def describe(self) -> str:
        """``"2.14.1 (CUDA 13.0)"``, ``"2.13.0+cpu (CPU)"`` (names and numbers: language-neutral)."""
        if self.cuda:
            what = f"CUDA {self.cuda}"
        elif self.hip:
            what = f"ROCm {self.hip}"
        else:
            what = str(self.backend).upper() if self.backend != Backend.MPS else "MPS"
        return f"{self.version} ({what})"

    def to_dict(self) -> dict[str, object]:
        return {"version": self.version, "full_version": self.full_version, "cuda": self.cuda, "hip": self.hip,
                "xpu": self.xpu, "variant": self.variant, "backend": str(self.backend),
                "installer": self.installer, "installed_at": self.installed_at}


_ASSIGN = re.compile(r"^(__version__|cuda|hip|xpu)\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)\s*$")


def _version_py(pkg_dir: Path) -> dict[str, str | None]:
    """The assignments of ``torch/version.py`` (read as text, never run)."""
    out: dict[str, str | None] = {}
    try:
        lines = (pkg_dir / "version.py").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        m = _ASSIGN.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    return out


def torch_build(env_path: str | os.PathLike[str], dists: dict[str, Dist] | None = None) -> TorchBuildInfo | None:
    """The torch in ``env_path`` (None when none is installed)."""
    dists = distributions(env_path) if dists is None else dists
    dist = dists.get("torch")
    if dist is None:
        return None
    v = _version_py(dist.path.parent / "torch")
    return TorchBuildInfo(version=dist.version, full_version=v.get("__version__"), cuda=v.get("cuda"),
                          hip=v.get("hip"), xpu=v.get("xpu"), installer=dist.installer, installed_at=dist.mtime)
