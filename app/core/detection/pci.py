"""Display devices on the PCI bus: sysfs (``/sys/bus/pci/devices``) and ``lspci -nn``.

This is the vendor-neutral view: it sees a GPU even when its driver is missing or broken,
which is what lets the report say "an NVIDIA GPU is present but its driver does not answer".
The makers come from the compatibility data's PCI vendor table (``hardware.toml
[[pci_vendor]]``, :mod:`app.core.detection.vendors`): the ones PyTorch builds for and the others
(Qualcomm, Moore Threads, Huawei, Cambricon, ...), which are reported too so that the engine can
explain them; emulated adapters (QEMU, VirtIO, VMware, Hyper-V, ASPEED BMCs, Matrox server
chips) are in no row and are not GPUs for PyTorch. Compute cards of the makers marked
``accelerator`` sit in PCI class 12h and are read as well.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from app.core.detection import norm_bus, parser, read_text, record, run_tool, snippet
from app.core.detection.gpu_ids import chip_code
from app.core.detection.system import ProbeRecord
from app.core.detection.vendors import accelerator_ids, vendor_of_id

# Class 0x03xx = display controller (00 VGA, 02 3D, 80 other); 0x12xx = processing accelerator.
# Source: PCI Code and ID Assignment Specification, base classes 03h and 12h.
DISPLAY_CLASS_PREFIX = "03"
ACCELERATOR_CLASS_PREFIX = "12"


# (?<!\s): a match starts only where a run of spaces starts (linear; see tests/test_hostile_parsers.py)
_REV_RE = re.compile(r"(?<!\s)\s*\(rev [0-9a-fA-F]+\)\s*$")
_IDS_RE = re.compile(r"(?<!\s)\s*\[[0-9a-fA-F]{4}:[0-9a-fA-F]{4}\]\s*$")
_BRACKETS_RE = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True)
class PCIDevice:
    bus: str | None  # "0000:03:00.0"
    vendor_id: str | None  # "10de"
    device_id: str | None  # "2204"
    class_code: str | None  # "0300"
    description: str = ""  # lspci's text ("NVIDIA Corporation GA102 [GeForce RTX 3090]")

    @property
    def vendor(self) -> str | None:
        """The maker's report key (``nvidia``, ``qualcomm``, ...); None for makers in no table row."""
        return vendor_of_id(self.vendor_id)

    @property
    def pci_id(self) -> str | None:
        if self.vendor_id and self.device_id:
            return f"{self.vendor_id}:{self.device_id}"
        return None

    @property
    def chip(self) -> str | None:
        """NVIDIA's chip code in lspci's text (``GP102`` of ``NVIDIA Corporation GP102 [GeForce GTX 1080
        Ti]``): it alone tells the GPU's generation; None for other makers or without lspci's text."""
        if self.vendor_id != "10de":
            return None
        return chip_code(self.description.split("[")[0] if "[" in self.description else self.description)

    @property
    def name(self) -> str:
        """A product name from lspci's text: the last bracketed marketing name if any."""
        d = self.description
        d = _REV_RE.sub("", d)
        d = _IDS_RE.sub("", d)
        brackets: list[str] = _BRACKETS_RE.findall(d)
        vendor_words = {"AMD/ATI"}
        product = [b for b in brackets if b not in vendor_words]
        if product:
            return product[-1]
        for long, short in (("Intel Corporation ", "Intel "), ("NVIDIA Corporation ", "NVIDIA "),
                            ("Advanced Micro Devices, Inc. ", "AMD "), ("Apple Inc. ", "Apple ")):
            if d.startswith(long):
                d = short + d[len(long):]
        return d.strip()


_BUS_PREFIX_RE = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_CLASS_ID_RE = re.compile(r"(?<!\s)\s+\[([0-9a-fA-F]{4})\]$")


def _lspci_line(line: str) -> tuple[str, str, str, str] | None:
    """``01:00.0 VGA compatible controller [0300]: NVIDIA ... [10de:2204] (rev a1)`` ->
    ``(bus, class name, class id or "", description)``; None for other lines. Read by
    splitting (linear; the regex it replaces went quadratic on long runs of spaces)."""
    first = line.split(None, 1)
    if len(first) != 2 or not _BUS_PREFIX_RE.fullmatch(first[0]) or not line[len(first[0]):][:1].isspace():
        return None
    rest = first[1]
    colon = rest.find(":")
    if colon <= 0 or not rest[colon + 1:colon + 2].isspace():
        return None
    head, desc = rest[:colon], rest[colon + 1:].strip()
    clsid = ""
    if "[" in head:
        m = _CLASS_ID_RE.search(head)
        if m is None or "[" in head[:m.start()]:
            return None
        clsid, head = m.group(1), head[:m.start()]
    if not head:
        return None
    return first[0], head, clsid, desc


@parser(list)
def parse_lspci(text: str) -> list[PCIDevice]:
    """Display devices from ``lspci``, ``lspci -nn``, ``lspci -nnk`` or ``lspci -d ::03xx``.

    With ``-nn`` the class and vendor:device ids are read from the brackets; without it the
    class comes from its name (VGA compatible controller / 3D controller / Display
    controller) and the vendor from the company name.
    """
    out: list[PCIDevice] = []
    for ln in (text or "").splitlines():
        if not ln or ln[0].isspace():
            continue  # -k detail lines, -v blocks
        found = _lspci_line(ln.strip())
        if found is None:
            continue
        bus, cls_name, clsid, desc = found
        cls_name = cls_name.strip().lower()
        clsid = clsid.lower()
        if clsid:
            if not clsid.startswith(DISPLAY_CLASS_PREFIX):
                continue
        elif not any(w in cls_name for w in ("vga compatible controller", "3d controller",
                                              "display controller")):
            continue
        ids = re.findall(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]", desc)
        vendor_id = device_id = None
        if ids:
            vendor_id, device_id = ids[-1][0].lower(), ids[-1][1].lower()
        else:
            low = desc.lower()
            if low.startswith("nvidia"):
                vendor_id = "10de"
            elif low.startswith("advanced micro devices") or low.startswith("amd") or "[amd/ati]" in low:
                vendor_id = "1002"
            elif low.startswith("intel"):
                vendor_id = "8086"
        if not clsid:
            clsid = {"vga compatible controller": "0300", "3d controller": "0302"}.get(cls_name, "0380")
        out.append(PCIDevice(norm_bus(bus), vendor_id, device_id, clsid, desc))
    return out


def scan_sysfs(root: str = "/") -> list[PCIDevice]:
    """Display-class PCI devices from sysfs (Linux); [] elsewhere. Never raises."""
    base = os.path.join(root, "sys/bus/pci/devices")
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return []
    out = []
    for e in entries:
        d = os.path.join(base, e)
        cls = (read_text(os.path.join(d, "class"), 64) or "").strip().lower()
        accel = cls.startswith("0x" + ACCELERATOR_CLASS_PREFIX)
        if not cls.startswith("0x" + DISPLAY_CLASS_PREFIX) and not accel:
            continue
        vendor = (read_text(os.path.join(d, "vendor"), 64) or "").strip().lower().replace("0x", "")
        if accel and vendor not in accelerator_ids():
            continue  # an NPU or crypto card of a GPU maker (Intel's NPU is 12h too): not a GPU
        device = (read_text(os.path.join(d, "device"), 64) or "").strip().lower().replace("0x", "")
        out.append(PCIDevice(norm_bus(e), vendor or None, device or None, cls[2:6], ""))
    return out


def detect_pci(timeout_s: float, *, family: str | None) -> tuple[list[PCIDevice], list[ProbeRecord]]:
    """``(devices, records)``: sysfs first; lspci only to put names on what sysfs found."""
    started = time.monotonic()
    records: list[ProbeRecord] = []
    if family != "linux":
        return [], records
    devices = scan_sysfs()
    wanted = [d for d in devices if d.vendor]
    if not devices:
        records.append(record("pci-sysfs", "empty", "no display devices on the PCI bus", started))
        return [], records
    records.append(record("pci-sysfs", "ok", ", ".join(f"{d.pci_id or '?'} at {d.bus}" for d in devices),
                          started))
    if not wanted:
        return [], records
    from app.core.proc.runner import which

    lspci = which("lspci")
    if not lspci:
        records.append(record("lspci", "not-found", "lspci is not installed (pciutils); GPU names "
                              "come from the other sources", started))
        return wanted, records
    t0 = time.monotonic()
    res, rec = run_tool("lspci", [lspci, "-nn"], timeout_s)
    if rec is not None:
        records.append(rec)
        return wanted, records
    named = {d.bus: d for d in parse_lspci(res.stdout)}
    if not named:
        records.append(record("lspci", "garbage" if res.stdout.strip() else "empty",
                              f"lspci listed no display devices ({res.describe()}): {snippet(res.stdout)}",
                              t0, [lspci, "-nn"]))
        return wanted, records
    merged = [PCIDevice(d.bus, d.vendor_id, d.device_id, d.class_code,
                        named[d.bus].description if d.bus in named else "") for d in wanted]
    records.append(record("lspci", "ok", "; ".join(named[d.bus].name for d in wanted if d.bus in named),
                          t0, [lspci, "-nn"]))
    return merged, records
