"""GPU makers, from the compatibility data's PCI vendor table (``hardware.toml [[pci_vendor]]``).

Detection names every display adapter's maker with it: by PCI vendor id (sysfs, lspci, Windows'
``PCI\\VEN_xxxx``), by ACPI vendor id (Windows on Arm's ``ACPI\\VEN_QCOM``), or by a word of the
adapter's name. A maker PyTorch has no build for (Qualcomm, Moore Threads, Huawei, ...) is still
reported, so the report and the engine can say so. When the data cannot be read, the five makers
PyTorch builds for are still known.
"""
from __future__ import annotations

import functools
import re

from app.core.compat.data import PciVendor

__all__ = ["accelerator_ids", "brand", "vendor_of_acpi", "vendor_of_id", "vendor_of_name", "vendor_rows"]

_FALLBACK = (PciVendor("10de", "nvidia", "NVIDIA", "cuda", "built in"),
             PciVendor("1002", "amd", "AMD", "rocm", "built in"),
             PciVendor("1022", "amd", "AMD", "rocm", "built in"),
             PciVendor("8086", "intel", "Intel", "xpu", "built in"),
             PciVendor("106b", "apple", "Apple", "mps", "built in"))


@functools.lru_cache(maxsize=1)
def vendor_rows() -> tuple[PciVendor, ...]:
    from app.core.base.errors import BadInput
    from app.core.compat.data import load_compat

    try:
        return load_compat().pci_vendors or _FALLBACK
    except BadInput:
        return _FALLBACK


def vendor_of_id(vendor_id: str | None) -> str | None:
    """``"5143"`` -> ``"qualcomm"``; an id not in the table -> None."""
    vid = (vendor_id or "").lower()
    return next((r.vendor for r in vendor_rows() if r.id == vid), None)


def vendor_of_acpi(pnp: str | None) -> str | None:
    """``ACPI\\VEN_QCOM&DEV_0C36...`` -> ``"qualcomm"``."""
    m = re.search(r"VEN_([A-Z0-9]{3,4})(?:&|\\\\|$)", (pnp or "").upper())
    if not m:
        return None
    return next((r.vendor for r in vendor_rows() if r.acpi and r.acpi == m.group(1)), None)


def vendor_of_name(name: str | None) -> str | None:
    """A maker from words of an adapter's name (``Qualcomm(R) Adreno(TM) X1-85 GPU`` -> ``qualcomm``)."""
    low = (name or "").lower()
    return next((r.vendor for r in vendor_rows() for w in r.names if w in low), None)


def brand(vendor: str) -> str:
    """A vendor key in words: ``moorethreads`` -> ``Moore Threads``."""
    row = next((r for r in vendor_rows() if r.vendor == vendor), None)
    return row.name if row else (vendor[:1].upper() + vendor[1:] if vendor else "?")


def accelerator_ids() -> frozenset[str]:
    """PCI vendor ids whose compute cards sit in class 12h (processing accelerators)."""
    return frozenset(r.id for r in vendor_rows() if r.accelerator)
