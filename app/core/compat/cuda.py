"""NVIDIA rules, in one place: compute capabilities, compiled arch lists, driver floors.

* **Arch coverage** (docs/compat-decisions.md, decisions 3 and 4): a device of compute capability
  X.Y is served by a wheel when the wheel carries SASS for the same major X with a compiled minor
  <= Y. PTX (``compute_XY``, ``X.Y+PTX``) is JIT-compiled on first use and does not cover cuDNN,
  cuBLAS and the other libraries with their own kernels, so it does not count unless a caller
  asks (``count_ptx=True``). Tegra/Jetson capabilities are served only by an exact match.
* **Driver floors**: a ``+cuXY`` wheel brings its own CUDA runtime; the driver must be at least
  the floor of that CUDA major (minor-version compatibility), read from the compat data
  (``resources/compat/drivers.toml``), on Linux or Windows (WSL2 uses the Windows numbers).
* **Driver ceilings**: an old architecture stops at a driver branch (R580 is the last for Maxwell,
  Pascal and Volta; ``drivers.toml [[arch_ceiling]]``). :func:`driver_ceiling` finds a GPU's,
  :func:`above_ceiling` says whether a driver is past it, :func:`capped_driver` whether advice to
  install a driver stays under it. Advice never sends such a card past its ceiling.
* **Last release**: :func:`last_release` is the newest torch release with a CUDA build whose kernels
  serve a capability on a platform (torch 2.14.1 for a GTX 1080 Ti).
* **Windows driver numbers**: WMI reports NVIDIA driver 576.80 as ``32.0.15.7680`` (the last five
  digits).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from app.core.compat.data import CompatData, DriverCeiling, DriverFloor, Release, Variant

__all__ = [
    "ArchEntry",
    "above_ceiling",
    "arch_covers",
    "capped_driver",
    "driver_ceiling",
    "driver_floor",
    "driver_meets",
    "driver_tuple",
    "last_release",
    "parse_arch",
    "parse_cc",
    "sass_serves",
    "windows_driver_to_nvidia",
]

_CC = re.compile(r"^\s*(\d{1,2})\.(\d)\s*$")
_ARCH = re.compile(r"^\s*(?:(sm|compute)_(\d{1,3})([a-z]?)|(\d{1,2})\.(\d)(\+PTX)?)\s*$", re.IGNORECASE)
_WMI = re.compile(r"^\s*\d{1,2}\.\d+\.(\d+)\.(\d+)\s*$")


def parse_cc(text: object) -> tuple[int, int] | None:
    """``"8.6"`` -> (8, 6); anything else (None, "", "8", "abc") -> None."""
    if text is None:
        return None
    m = _CC.match(str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class ArchEntry:
    """One entry of an arch list: ``sm_90a`` -> (9, 0), sass, suffix "a"."""

    cc: tuple[int, int]
    ptx: bool  # compute_XY / X.Y+PTX: intermediate code, not a kernel binary
    suffix: str = ""


def parse_arch(entry: str) -> ArchEntry | None:
    """Parse ``sm_86``, ``sm_90a``, ``sm_100f``, ``compute_90``, ``8.6`` or ``8.6+PTX``."""
    m = _ARCH.match(entry or "")
    if not m:
        return None
    if m.group(1):
        num = m.group(2)
        if len(num) < 2:
            return None
        return ArchEntry((int(num[:-1]), int(num[-1])), m.group(1).lower() == "compute", m.group(3).lower())
    entry_cc = (int(m.group(4)), int(m.group(5)))
    return ArchEntry(entry_cc, bool(m.group(6)))


def sass_serves(device: tuple[int, int], code: tuple[int, int], tegra: Iterable[str] = ()) -> bool:
    """Does a kernel binary compiled for ``code`` run on ``device``?"""
    if f"{device[0]}.{device[1]}" in set(tegra):
        return device == code
    return device[0] == code[0] and device[1] >= code[1]


def arch_covers(cc: object, arch_list: Iterable[str], *, tegra: Iterable[str] = (),
                count_ptx: bool = False) -> bool | None:
    """Is a device of capability ``cc`` served by a wheel compiled for ``arch_list``?

    None when it cannot be decided (an unknown capability or an empty list).
    """
    device = parse_cc(cc)
    entries = [e for e in (parse_arch(a) for a in arch_list) if e is not None]
    if device is None or not entries:
        return None
    tegra = frozenset(tegra)
    for e in entries:
        if not e.ptx and sass_serves(device, e.cc, tegra):
            return True
        if e.ptx and count_ptx and e.cc <= device and f"{device[0]}.{device[1]}" not in tegra:
            return True
    return False


def driver_tuple(text: object) -> tuple[int, ...] | None:
    """``"525.60.13"`` -> (525, 60, 13); ``"580"`` -> (580,); garbage -> None."""
    if text is None:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def windows_driver_to_nvidia(text: object) -> str | None:
    """``"32.0.15.7680"`` -> ``"576.80"`` (Windows' WMI form); None when it is not that form."""
    m = _WMI.match(str(text or ""))
    if not m:
        return None
    digits = (m.group(1) + m.group(2).zfill(4))[-5:]
    return f"{int(digits[:3])}.{digits[3:]}"


def _cmp_key(t: tuple[int, ...]) -> tuple[int, ...]:
    return t + (0,) * (4 - len(t)) if len(t) < 4 else t


def driver_floor(cuda: str, os_family: str | None, data: CompatData) -> tuple[str, DriverFloor] | None:
    """(minimum driver, its data row) for a CUDA ``X.Y`` wheel on ``os_family`` (None: unknown major)."""
    t = driver_tuple(cuda)
    if not t:
        return None
    row = data.driver_floors.get(t[0])
    if row is None:
        return None
    return (row.windows if os_family == "windows" else row.linux), row


def driver_meets(driver: object, floor: str) -> bool | None:
    """Is ``driver`` (any form, Windows' too) at least ``floor``? None when the driver is unreadable."""
    text = windows_driver_to_nvidia(driver) or driver
    have, need = driver_tuple(text), driver_tuple(floor)
    if have is None or need is None:
        return None
    return _cmp_key(have) >= _cmp_key(need)


def driver_ceiling(cc: object, data: CompatData) -> DriverCeiling | None:
    """The newest driver branch a GPU of capability ``cc`` can run (``drivers.toml``), or None
    when no ceiling is known (Turing and newer, or an unreadable capability)."""
    device = parse_cc(cc)
    if device is None:
        return None
    return next((c for c in data.driver_ceilings if c.covers(device)), None)


def _major(text: object) -> int | None:
    t = driver_tuple(windows_driver_to_nvidia(text) or text)
    return t[0] if t else None


def above_ceiling(driver: object, ceiling: DriverCeiling) -> bool | None:
    """Is ``driver`` (any form) of a branch that no longer supports the ceiling's architecture?
    None when the driver is unreadable."""
    have, beyond = _major(driver), _major(ceiling.beyond)
    if have is None or beyond is None:
        return None
    return have >= beyond


def capped_driver(floor: str, ceilings: Iterable[DriverCeiling | None]) -> bool:
    """May a driver of at least ``floor`` be advised to GPUs with these ceilings? False when the
    floor lies past any of them (such a driver does not run those GPUs at all)."""
    need = _major(floor)
    if need is None:
        return True
    for c in ceilings:
        beyond = _major(c.beyond) if c is not None else None
        if beyond is not None and need >= beyond:
            return False
    return True


def last_release(cc: object, platform: str, data: CompatData) -> tuple[Release, Variant] | None:
    """The newest release (and its newest CUDA build) whose kernels serve ``cc`` on ``platform``;
    None when no release of the data has one."""
    if parse_cc(cc) is None:
        return None
    for rel in data.releases:  # newest first
        builds = [v for v in rel.variants_for(platform)
                  if v.backend == "cuda" and arch_covers(cc, v.arch, tegra=data.tegra)]
        if builds:
            return rel, max(builds, key=lambda v: driver_tuple(v.cuda) or (0,))
    return None
