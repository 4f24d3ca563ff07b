"""Windows display adapters (Win32_VideoController) through PowerShell CIM, else wmic."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from app.core.cuda import windows_driver_to_nvidia
from app.core.detection import Row, listing, parser, record, run_tool, snippet
from app.core.detection.amd import amd_is_integrated
from app.core.detection.intel import intel_is_integrated, windows_pnp_ids
from app.core.detection.vendors import vendor_of_acpi, vendor_of_id, vendor_of_name
from app.core.system import GPU, ProbeRecord

SEP = "|"
# One line per adapter: Name|PNPDeviceID|DriverVersion|AdapterRAM
PS_COMMAND = ("Get-CimInstance -ClassName Win32_VideoController | ForEach-Object { "
              "$_.Name + '|' + $_.PNPDeviceID + '|' + $_.DriverVersion + '|' + $_.AdapterRAM }")

_HEADERS = {"name", "caption", "description", "videoprocessor"}
_VIRTUAL = re.compile(r"virtual|remote|basic display|basic render|parsec|citrix|vmware|"
                      r"hyper-v|virtualbox|qxl|spacedesk|idd|gameviewer|meta virtual|"
                      r"mirage|displaylink|microsoft remote", re.IGNORECASE)


@parser(list)
def parse_video_controllers(text: str) -> list[Row]:
    """Adapters from ``wmic path Win32_VideoController get Name|Caption``, PowerShell
    ``(Get-WmiObject win32_VideoController).Name``, or :data:`PS_COMMAND`'s ``a|b|c|d`` lines.

    Each is ``{"name", "vendor", "vendor_id", "device_id", "driver_version", "memory_mb",
    "virtual"}`` (unknown values None).
    """
    out: list[Row] = []
    for raw in (text or "").replace("\r", "\n").splitlines():
        s = raw.strip()
        if not s or s.lower() in _HEADERS:
            continue
        parts = [p.strip() for p in s.split(SEP)] if SEP in s else [s]
        name = parts[0]
        if not name or len(name) > 128 or not re.search(r"[A-Za-z]", name):
            continue
        pnp = parts[1] if len(parts) > 1 else ""
        driver = parts[2] if len(parts) > 2 and parts[2] else None
        ram = parts[3] if len(parts) > 3 else ""
        ids = windows_pnp_ids(pnp) if pnp else None
        vendor_id, device_id = ids if ids else (None, None)
        vendor = _vendor(name, vendor_id, pnp)
        mem = None
        if re.fullmatch(r"\d+", ram or ""):
            mem = int(ram) // (1024 * 1024) or None  # AdapterRAM is a uint32: caps at 4 GiB
        out.append({"name": name, "vendor": vendor, "vendor_id": vendor_id, "device_id": device_id,
                    "driver_version": driver, "memory_mb": mem,
                    "virtual": bool(_VIRTUAL.search(name)) and vendor is None})
    return out


def _vendor(name: str, vendor_id: str | None, pnp: str = "") -> str | None:
    """The adapter's maker: its PCI or ACPI vendor id in the data's table, else words of its name."""
    known = vendor_of_id(vendor_id) or vendor_of_acpi(pnp)
    if known:
        return known
    low = name.lower()
    if "nvidia" in low or "geforce" in low or "quadro" in low or "tesla" in low:
        return "nvidia"
    if low.startswith("amd") or "radeon" in low or low.startswith("ati "):
        return "amd"
    if low.startswith("intel") or "arc(tm)" in low or "iris" in low or "uhd graphics" in low:
        return "intel"
    return vendor_of_name(name)


@dataclass
class WindowsFindings:
    gpus: list[tuple[GPU, str | None]] = field(default_factory=list)
    records: list[ProbeRecord] = field(default_factory=list)


def adapter_gpu(it: Row, n: int) -> GPU | None:
    """The GPU of one parsed adapter; None for virtual / remote-desktop / unknown adapters."""
    vendor = it["vendor"]
    if vendor is None:
        return None
    name = it["name"]
    integrated = False
    if vendor == "intel":
        integrated = intel_is_integrated(it["device_id"], name)
    elif vendor == "amd":
        integrated = amd_is_integrated(None, name)
    driver = it["driver_version"]
    if vendor == "nvidia":  # WMI's form (32.0.15.7680) -> NVIDIA's (576.80): app.core.cuda's rule
        driver = windows_driver_to_nvidia(driver) or driver
    return GPU(vendor=vendor, name=name, driver_version=driver, memory_mb=it["memory_mb"], integrated=integrated,
               index=n, pci_id=f"{it['vendor_id']}:{it['device_id']}" if it["device_id"] else None,
               source="win32-videocontroller")


def detect_windows(timeout_s: float) -> WindowsFindings:
    from app.core.runner import which

    f = WindowsFindings()
    try:
        t0 = time.monotonic()
        ps = which("powershell") or which("pwsh")
        items: list[Row] | None = None
        if ps:
            res, rec = run_tool("powershell", [ps, "-NoProfile", "-NonInteractive", "-Command", PS_COMMAND],
                                timeout_s)
            if rec is not None:
                f.records.append(rec)
            else:
                items = parse_video_controllers(res.stdout)
                f.records.append(listing("win32-videocontroller", [i["name"] for i in items], res.stdout, t0,
                                         res.argv, shown=res.stdout + res.stderr))
        ps_hung = bool(f.records) and f.records[-1].status == "timeout"
        if not items and not ps_hung:  # a hung WMI service would hang wmic too
            wmic = which("wmic")
            if wmic:
                t1 = time.monotonic()
                res, rec = run_tool("wmic", [wmic, "path", "Win32_VideoController", "get", "Name"], timeout_s)
                if rec is not None:
                    f.records.append(rec)
                else:
                    items = parse_video_controllers(res.stdout)
                    f.records.append(record("wmic", "ok" if items else "garbage",
                                            ", ".join(i["name"] for i in items) or snippet(res.stdout), t1,
                                            res.argv))
            elif not ps:
                f.records.append(ProbeRecord("win32-videocontroller", "not-found",
                                             "neither PowerShell nor wmic is available", 0))
        for n, it in enumerate(items or []):
            gpu = adapter_gpu(it, n)
            if gpu is not None:
                f.gpus.append((gpu, None))
    except Exception as exc:  # pragma: no cover
        f.records.append(ProbeRecord("windows-gpus", "error", f"{type(exc).__name__}: {snippet(str(exc))}"))
    return f
