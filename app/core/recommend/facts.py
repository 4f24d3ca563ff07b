"""The engine's view of the machine: its platform, its GPUs as the rules need them.

Built once per call by :func:`app.core.recommend.machine.read_machine` from the SystemReport;
the sentences it carries (warnings, notes) are texts, never rendered here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.base.text import Text
from app.core.compat.cuda import driver_tuple
from app.core.detection.gpu_ids import Told
from app.core.detection.system import GPU
from app.core.recommend.types import GpuRef

__all__ = ["GpuView", "Machine", "UnfitPython", "short_name", "version_of", "vtext"]


def version_of(text: object) -> tuple[int, ...] | None:
    """The leading dotted number of a version text: ``"2.35-0ubuntu3"`` -> (2, 35); garbage -> None."""
    return driver_tuple(text)


def vtext(t: tuple[int, ...] | None) -> str:
    return ".".join(str(x) for x in t) if t else "?"


def short_name(name: str) -> str:
    """A GPU's name for sentences: ``NVIDIA GeForce GTX 1080 Ti`` -> ``GTX 1080 Ti``."""
    n = re.sub(r"\((R|TM|tm|r)\)", "", name or "").strip()
    for prefix in ("NVIDIA ", "GeForce ", "AMD ", "Intel "):
        if n.startswith(prefix) and len(n) > len(prefix) + 2:
            n = n[len(prefix):]
    return re.sub(r"\s+", " ", n).strip() or (name or "GPU")


@dataclass(frozen=True)
class GpuView:
    """One GPU as the rules see it."""

    gpu: GPU
    idx: int  # the vendor tool's index (or position)
    name: str  # short, for sentences: "GTX 1080 Ti"
    cc: tuple[int, int] | None = None
    gfx: str | None = None
    told: Told | None = None  # the cc / gfx the report left out, told from the GPU's PCI id, chip code or name
    driver: tuple[int, ...] | None = None
    driver_text: str | None = None  # NVIDIA's form ("576.80", also on Windows)
    tegra: bool = False
    xpu: bool = False
    intel_family: str | None = None

    @property
    def vendor(self) -> str:
        return self.gpu.vendor

    @property
    def cc_text(self) -> str | None:
        """The compute capability as NVIDIA writes it, "8.6"."""
        return f"{self.cc[0]}.{self.cc[1]}" if self.cc else None

    @property
    def integrated(self) -> bool:
        return self.gpu.integrated

    def ref(self) -> GpuRef:
        return GpuRef(self.idx, self.gpu.name, self.gpu.vendor, self.cc_text, self.gfx, self.gpu.driver_version)


@dataclass(frozen=True)
class UnfitPython:
    """An interpreter whose own architecture no wheel of the build serves (a 32-bit Python, an x86_64
    Python under Rosetta on an Apple silicon Mac, an ARM64 Python on Windows on Arm): never offered."""

    minor: str | None  # "3.12"
    executable: str  # "" when the report does not say
    arch: str  # the interpreter's own architecture: x86, x86_64, arm64
    needs: str | None  # the architecture the build's wheels need (x86_64, arm64)
    translated: bool = False  # it runs under Rosetta 2 / Windows' x64 emulation


@dataclass(frozen=True)
class Machine:
    platform: str | None  # linux-x86_64, windows-x86_64, macos-arm64, ...
    family: str
    arch: str | None
    wsl: bool
    glibc: tuple[int, ...] | None
    macos: tuple[int, ...] | None
    python: str | None  # "3.11" (the report's running Python)
    interpreters: tuple[tuple[str, str], ...]  # (minor, executable)
    nvidia: tuple[GpuView, ...]  # the NVIDIA GPUs PyTorch will see (CUDA_VISIBLE_DEVICES applied)
    amd: tuple[GpuView, ...]
    intel: tuple[GpuView, ...]
    apple: tuple[GpuView, ...]
    jetson: tuple[GpuView, ...]
    driver: tuple[int, ...] | None  # the NVIDIA driver (the oldest any GPU reports)
    driver_text: str | None
    warnings: tuple[Text, ...]
    unknowns: tuple[Text, ...]
    notes: tuple[Text, ...]
    emulated_x64: bool = False  # Windows on Arm: recommend an x64 Python under emulation
    other: tuple[GpuView, ...] = ()  # GPUs of makers PyTorch publishes no build for (Qualcomm, Moore Threads, ...)
    windows: tuple[int, ...] | None = None  # the Windows version (10.0.22631), when the report gives it
    # the interpreters no wheel serves (left out of ``interpreters``), and the report's own Python when it is one
    unfit: tuple[UnfitPython, ...] = ()
    python_unfit: UnfitPython | None = None
    python_fits: bool | None = None  # the report's Python is of the wheels' architecture (None: it did not say)

    @property
    def driver_os(self) -> str:
        """Whose driver thresholds apply: WSL2 runs the Windows driver."""
        return "windows" if (self.family == "windows" or self.wsl) else "linux"

    @property
    def all_gpus(self) -> tuple[GpuView, ...]:
        return self.nvidia + self.amd + self.intel + self.apple + self.jetson + self.other
