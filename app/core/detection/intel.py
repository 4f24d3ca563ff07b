"""Intel GPUs: discrete (Arc, Data Center Flex/Max) versus integrated, from the PCI device id.

The marketing name cannot decide it: Meteor Lake / Arrow Lake iGPUs are also sold as
"Intel Arc Graphics". The device id can. Everything Intel that is not in the discrete table
is integrated (UHD, Iris, Iris Xe, Xe-LPG ...).
"""
from __future__ import annotations

import re

from app.core.detection import hex_id, parser

# Discrete Intel GPU PCI device ids.
# Source: Linux kernel include/drm/intel/pciids.h (formerly i915_pciids.h): INTEL_DG1_IDS,
# INTEL_DG2_IDS (Arc A-series, 0x56xx) + INTEL_ATS_M_IDS (Data Center GPU Flex, 0x56c0-0x56c2),
# INTEL_PVC_IDS (Data Center GPU Max), INTEL_BMG_IDS (Arc B-series), as of Linux 6.17.
INTEL_DISCRETE_SOURCE = "Linux include/drm/intel/pciids.h (DG1, DG2, ATS-M, PVC, BMG id lists)"
INTEL_DISCRETE_FAMILIES: tuple[tuple[str, str], ...] = (
    # (device-id regex on 4 lowercase hex digits, family)
    (r"490[5-9]", "Iris Xe MAX (DG1)"),  # INTEL_DG1_IDS
    (r"56c[0-2]", "Data Center GPU Flex (ATS-M)"),  # INTEL_ATS_M_IDS, before DG2's wider range
    (r"56[0-9a-f][0-9a-f]", "Arc A-series (DG2 / Alchemist)"),  # INTEL_DG2_IDS
    (r"0b6[9e]|0bd[4-9ab]|0be[015]", "Data Center GPU Max (Ponte Vecchio)"),  # INTEL_PVC_IDS
    (r"e20[29bcd]|e21[0-26]|e22[0-2]", "Arc B-series (Battlemage)"),  # INTEL_BMG_IDS
)


def intel_family(device_id: object) -> str | None:
    """The discrete family for an Intel device id, or None (= integrated / unknown)."""
    d = hex_id(device_id)
    if d is None:
        return None
    for pattern, family in INTEL_DISCRETE_FAMILIES:
        if re.fullmatch(pattern, d):
            return family
    return None


def intel_is_integrated(device_id: object, name: str | None = None) -> bool:
    """True unless the device id is a known discrete part; without an id, judge by name."""
    if hex_id(device_id) is not None:
        return intel_family(device_id) is None
    n = (name or "").lower()
    return not re.search(r"arc\s*(\(tm\)\s*)?[ab]\d{3}|data center gpu|iris xe max|arc pro", n)


@parser(lambda: None)
def windows_pnp_ids(text: str) -> tuple[str, str] | None:
    """``("8086", "56a0")`` from a Windows PNPDeviceID ``PCI\\VEN_8086&DEV_56A0&...``."""
    m = re.search(r"VEN_([0-9A-Fa-f]{4})&DEV_([0-9A-Fa-f]{4})", text or "")
    if not m:
        return None
    return m.group(1).lower(), m.group(2).lower()
