"""How much disk an install will take (installed size, not download size).

Documented in docs/install.md: CPU torch ~0.9 GB (measured here: 895 MB venv,
research/feasibility.md #4); CUDA builds 5-7 GB (torch + the nvidia-* runtime wheels; we use
7 GB); ROCm ~15 GB (the compat data's own size of a build comes first: a TheRock-based ROCm build
with every device's kernels ~19 GB, AMD's index with one GPU's extra ~6 GB, ultralytics/ultralytics#24137);
XPU ~4 GB; macOS ~0.5 GB; a local wheel: its size x 4 (the CPU wheel:
191.8 MB -> 754 MB installed); a bundle: the sum of its wheel sizes x 4; anything else 10 MB
per package; plus the empty environment (uv ~1 MB, venv + pip ~25 MB, conda ~200 MB) and a
10 % margin.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from app.core.base import requirements
from app.core.base.enums import Backend
from app.core.base.locations import local_path
from app.core.base.text import Text, join, msg
from app.core.env.backends import EnvBackend
from app.core.install.bundle import Manifest

__all__ = ["ENV_BASE_MB", "INSTALLED_MB", "MARGIN", "OTHER_PACKAGE_MB", "WHEEL_TO_INSTALLED", "estimate",
           "fmt_mb", "local_torch_wheel_bytes"]

# Installed sizes in MB (see the module docstring for where they come from).
INSTALLED_MB: dict[Backend, int] = {Backend.CPU: 900, Backend.CUDA: 7000, Backend.ROCM: 15000,
                                    Backend.XPU: 4000, Backend.MPS: 500}
WHEEL_TO_INSTALLED = 4
OTHER_PACKAGE_MB = 10
COMPANION_MB = {"small": 30, "large": 60}  # torchvision / torchaudio: CPU and macOS builds, others
ENV_BASE_MB = {"uv": 1, "pip": 25, "conda": 200}
MARGIN = 1.1


def fmt_mb(mb: float) -> str:
    """``1536`` -> ``"1.5 GiB"``, ``900`` -> ``"900 MiB"``: MiB (free space is read in MiB) in binary units named
    as such, as the report and the wizard name them (units read the same in every language)."""
    return f"{mb / 1024:.1f} GiB" if mb >= 1024 else f"{mb:.0f} MiB"


def local_torch_wheel_bytes(find_links: Sequence[str]) -> int | None:
    """The size of the largest torch wheel in the first find-links folder that holds one."""
    for fl in find_links:
        local = local_path(fl)
        if local is None:
            continue
        d = Path(local)
        if d.is_dir():
            wheels = sorted(d.glob("torch-*.whl"))
            if wheels:
                return max(w.stat().st_size for w in wheels)
    return None


def _torch_mb(backend: Backend | None, find_links: Sequence[str], build_mb: int | None = None) -> tuple[float, Text]:
    local = local_torch_wheel_bytes(find_links)
    if local:
        return (local / 1e6 * WHEEL_TO_INSTALLED,
                msg("install.estimate_local_wheel", "torch: about {factor} times its wheel file",
                    factor=WHEEL_TO_INSTALLED))
    b = backend or (Backend.CUDA if sys.platform.startswith("linux") else Backend.CPU)
    mb = build_mb or INSTALLED_MB.get(b, INSTALLED_MB[Backend.CUDA])  # the build's own size (compat data) first
    return mb, msg("install.estimate_torch", "torch ({variant}): ~{gb:.1f} GiB", variant=str(b), gb=mb / 1024)


def estimate(packages: Sequence[str], env: EnvBackend, backend: Backend | None, find_links: Sequence[str],
             manifest: Manifest | None = None, build_mb: int | None = None) -> tuple[int, Text]:
    """``(MB, why)``: the installed size of ``packages`` (or of the bundle), with its reason.
    ``build_mb``: the recommended build's installed size when the compat data knows it (ROCm)."""
    base = ENV_BASE_MB["conda" if env.kind == "conda" else env.installer]
    if manifest is not None:
        wheels_mb = manifest.total_bytes / 1e6
        return (int((base + wheels_mb * WHEEL_TO_INSTALLED) * MARGIN),
                msg("install.estimate_bundle", "bundle wheels {mb:.0f} MB x {factor}", mb=wheels_mb,
                    factor=WHEEL_TO_INSTALLED))
    names = [n for n in (requirements.requirement_name(p) for p in packages) if n]
    total: float = base
    why: list[Text] = []
    for name in names:
        if name == "torch":
            mb, reason = _torch_mb(backend, find_links, build_mb)
            total += mb
            why.append(reason)
        elif name in ("torchvision", "torchaudio"):
            small = backend in (None, Backend.CPU, Backend.MPS)
            total += COMPANION_MB["small" if small else "large"]
        else:
            total += OTHER_PACKAGE_MB
    if why:
        return int(total * MARGIN), join(why, msg("text.list_sep", ", "))
    return int(total * MARGIN), msg("install.estimate_packages", "{count} package(s)", count=len(names))
