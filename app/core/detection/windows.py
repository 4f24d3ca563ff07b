"""Windows display adapters: Win32_VideoController through PowerShell's CIM (one query for
every field), else wmic (one query too), else the display drivers' registry keys.

PowerShell starts slowly when cold (several seconds: .NET, then WMI's first connection), so it
gets :data:`PS_EXTRA_S` beyond the probe limit, within the detection's grace. The registry's
display class (``{4d36e968-e325-11ce-bfc1-08002be10318}\\00NN``: DriverDesc, MatchingDeviceId,
DriverVersion, HardwareInformation.qwMemorySize) is read first, at no cost (no process): it is the
list when WMI does not answer in time or at all, and it gives the memory size WMI cannot
(AdapterRAM is a uint32, so it stops at 4 GiB). It also holds drivers of adapters no longer
present, so WMI's list, when there is one, decides which adapters there are.

Programs are found on PATH, else under ``%SystemRoot%`` (a PATH that lost System32 is common
after an installer rewrote it); never under a hard-coded ``C:``.
"""
from __future__ import annotations

import ntpath
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.core.compat.cuda import windows_driver_to_nvidia
from app.core.detection import MAX_TIMEOUT_S, Row, clamp_timeout, listing, parser, record, run_tool, snippet
from app.core.detection.amd import amd_is_integrated
from app.core.detection.intel import intel_is_integrated, windows_pnp_ids
from app.core.detection.system import GPU, ProbeRecord
from app.core.detection.vendors import vendor_of_acpi, vendor_of_id, vendor_of_name
from app.core.detection.winregistry import RegKey, read_key

SEP = "|"
# One line per adapter: Name|PNPDeviceID|DriverVersion|AdapterRAM, in UTF-8 (the console's code
# page would garble a name the runner reads as UTF-8); no progress records on stderr
PS_COMMAND = ("$ProgressPreference = 'SilentlyContinue'; "
              "try { [Console]::OutputEncoding = [Text.Encoding]::UTF8 } catch {}; "
              "Get-CimInstance -ClassName Win32_VideoController | ForEach-Object { "
              "$_.Name + '|' + $_.PNPDeviceID + '|' + $_.DriverVersion + '|' + $_.AdapterRAM }")
# /value (Key=Value lines), not /format:csv, which fails on Windows whose language is not English
WMIC_ARGS = ("path", "Win32_VideoController", "get", "AdapterRAM,DriverVersion,Name,PNPDeviceID", "/value")
#: The display adapters' driver keys: (hive, path). Tests point it at a key of their own.
DISPLAY_CLASS = ("HKLM", r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}")
#: PowerShell's cold start, beyond the probe limit (the detection waits 1.5 s past it for every source).
PS_EXTRA_S = 1.0
_WMI_CAP_MB = 4095  # AdapterRAM (uint32) for any adapter with 4 GiB or more

_HEADERS = {"name", "caption", "description", "videoprocessor"}
_VIRTUAL = re.compile(r"virtual|remote|basic display|basic render|parsec|citrix|vmware|"
                      r"hyper-v|virtualbox|qxl|spacedesk|idd|gameviewer|meta virtual|"
                      r"mirage|displaylink|microsoft remote", re.IGNORECASE)


_VALUE_LINE = re.compile(r"^(adapterram|caption|driverversion|name|pnpdeviceid)=(.*)$", re.IGNORECASE)


def _value_blocks(lines: list[str]) -> list[str] | None:
    """wmic's ``/value`` output (``Name=...`` lines, one block per adapter) as ``a|b|c|d`` lines;
    None when the text is not in that form. A key seen again starts the next adapter (wmic's blank
    lines come doubled, ``\\r\\r\\n``, so they cannot tell adapters apart)."""
    blocks: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    for s in lines:
        m = _VALUE_LINE.match(s)
        if not m:
            continue
        key = m.group(1).lower()
        if key in cur:
            blocks.append(cur)
            cur = {}
        cur[key] = m.group(2).strip().replace(SEP, " ")
    if cur:
        blocks.append(cur)
    if not blocks:
        return None
    return [SEP.join((b.get("name") or b.get("caption") or "", b.get("pnpdeviceid", ""),
                      b.get("driverversion", ""), b.get("adapterram", ""))) for b in blocks]


@parser(list)
def parse_video_controllers(text: str) -> list[Row]:
    """Adapters from ``wmic path Win32_VideoController get Name|Caption`` (or ``get ... /value``),
    PowerShell ``(Get-WmiObject win32_VideoController).Name``, or :data:`PS_COMMAND`'s ``a|b|c|d``
    lines.

    Each is ``{"name", "vendor", "vendor_id", "device_id", "driver_version", "memory_mb",
    "virtual"}`` (unknown values None).
    """
    out: list[Row] = []
    lines = [raw.strip() for raw in (text or "").replace("\r", "\n").splitlines()]
    for raw in _value_blocks(lines) or lines:
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
    if vendor == "nvidia":  # WMI's form (32.0.15.7680) -> NVIDIA's (576.80): app.core.compat.cuda's rule
        driver = windows_driver_to_nvidia(driver) or driver
    return GPU(vendor=vendor, name=name, driver_version=driver, memory_mb=it["memory_mb"], integrated=integrated,
               index=n, pci_id=f"{it['vendor_id']}:{it['device_id']}" if it["device_id"] else None,
               source=it.get("source") or "win32-videocontroller")


# ------------------------------------------------------------------ the display drivers' registry keys

def _memory_bytes(value: object) -> int | None:
    """HardwareInformation.qwMemorySize (REG_QWORD) or .MemorySize (REG_DWORD, or 4-8 bytes of REG_BINARY)."""
    if isinstance(value, bytes) and 1 <= len(value) <= 8:
        value = int.from_bytes(value, "little")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _adapter_string(value: object) -> str | None:
    """HardwareInformation.AdapterString: a string, or UTF-16 bytes."""
    if isinstance(value, bytes):
        value = value.decode("utf-16-le", "replace")
    return value.strip("\x00 ").strip() or None if isinstance(value, str) else None


def registry_adapters(tree: RegKey | None) -> list[Row]:
    """The adapters of the display class key (its ``0000``, ``0001``, ... subkeys), as
    :func:`parse_video_controllers` rows with ``source`` ``"windows-registry"`` and the memory
    size from ``HardwareInformation.qwMemorySize`` (not capped at 4 GiB)."""
    out: list[Row] = []
    for sub in sorted(tree.keys if tree is not None else ()):
        if not re.fullmatch(r"\d{4}", sub):
            continue
        k = tree.keys[sub] if tree is not None else RegKey()
        name = k.text("DriverDesc") or _adapter_string(k.values.get("HardwareInformation.AdapterString")) or ""
        pnp = (k.text("MatchingDeviceId") or "").upper()  # written in lower case: pci\\ven_10de&dev_2684&...
        line = SEP.join((name.replace(SEP, " "), pnp, k.text("DriverVersion") or "", ""))
        for row in parse_video_controllers(line):
            size = (_memory_bytes(k.values.get("HardwareInformation.qwMemorySize"))
                    or _memory_bytes(k.values.get("HardwareInformation.MemorySize")))
            row["memory_mb"] = size // (1024 * 1024) or None if size else None
            row["source"] = "windows-registry"
            out.append(row)
    return out


def _with_registry_memory(items: list[Row], registry: list[Row]) -> None:
    """WMI's adapters get the registry's memory size where WMI had none or its 4 GiB cap (same
    PCI vendor and device)."""
    for it in items:
        if (it["memory_mb"] is not None and it["memory_mb"] < _WMI_CAP_MB) or not it["device_id"]:
            continue
        sizes = {r["memory_mb"] for r in registry
                 if (r["vendor_id"], r["device_id"]) == (it["vendor_id"], it["device_id"]) and r["memory_mb"]}
        if len(sizes) == 1:
            it["memory_mb"] = sizes.pop()


# ------------------------------------------------------------------ finding the programs

def windows_folder(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """A folder variable of Windows' environment (``SystemRoot``, ``ProgramW6432``,
    ``ProgramFiles``), its name in any case; ``SystemRoot`` falls back to ``windir``."""
    env = os.environ if environ is None else environ
    low = {k.lower(): v for k, v in env.items()}
    value = low.get(name.lower()) or (low.get("windir") if name.lower() == "systemroot" else None)
    return value.strip() or None if value else None


def system_program(name: str, *parts: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``name`` on PATH, else ``%SystemRoot%\\<parts>`` when that file exists."""
    from app.core.proc.runner import which

    found = which(name)
    if found:
        return found
    root = windows_folder("SystemRoot", environ)
    path = ntpath.join(root, *parts) if root else None
    return path if path and os.path.isfile(path) else None


def _powershell(deadline: float, f: WindowsFindings) -> tuple[list[Row] | None, bool]:
    """(PowerShell's adapters or None, whether it hung)."""
    ps = system_program("powershell", "System32", "WindowsPowerShell", "v1.0", "powershell.exe") or \
        system_program("pwsh")
    if not ps:
        return None, False
    t0 = time.monotonic()
    res, rec = run_tool("powershell", [ps, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", PS_COMMAND],
                        deadline - t0, ceiling=MAX_TIMEOUT_S + PS_EXTRA_S)
    if rec is not None:
        f.records.append(rec)
        return None, rec.status == "timeout"
    items = parse_video_controllers(res.stdout)
    f.records.append(listing("win32-videocontroller", [i["name"] for i in items], res.stdout, t0, res.argv,
                             shown=res.stdout + res.stderr))
    return items, False


def _wmic(deadline: float, f: WindowsFindings) -> list[Row] | None:
    wmic = system_program("wmic", "System32", "wbem", "WMIC.exe")
    left = deadline - time.monotonic()
    if not wmic or left < 0.5:
        return None
    t0 = time.monotonic()
    res, rec = run_tool("wmic", [wmic, *WMIC_ARGS], left)
    if rec is not None:
        f.records.append(rec)
        return None
    items = parse_video_controllers(res.stdout)
    f.records.append(record("wmic", "ok" if items else "garbage",
                            ", ".join(i["name"] for i in items) or snippet(res.stdout + res.stderr), t0, res.argv))
    return items


def _registry(class_key: tuple[str, str], f: WindowsFindings) -> list[Row]:
    t0 = time.monotonic()
    hive, path = class_key
    rows = registry_adapters(read_key(hive, path, depth=1))
    shown = ", ".join(f"{r['name']} ({r['memory_mb']} MiB)" if r["memory_mb"] else r["name"] for r in rows)
    f.records.append(record("display-registry", "ok" if rows else "empty", shown or "no display driver keys", t0))
    return rows


def detect_windows(timeout_s: float, *, class_key: tuple[str, str] = DISPLAY_CLASS) -> WindowsFindings:
    """The display adapters: WMI's list (PowerShell, else wmic) with the registry's memory sizes,
    else the registry's list. ``class_key``: where the drivers' keys are read (tests give their own)."""
    f = WindowsFindings()
    try:
        deadline = time.monotonic() + clamp_timeout(timeout_s) + PS_EXTRA_S
        registry = _registry(class_key, f)
        items, ps_hung = _powershell(deadline, f)
        if not items and not ps_hung:  # a hung WMI service would hang wmic too
            items = _wmic(deadline, f)
        if items:
            _with_registry_memory(items, registry)
        elif registry:
            items = registry
            f.records.append(ProbeRecord("windows-gpus", "ok", "WMI gave no adapter list: the display drivers' "
                                         "registry keys were used", 0))
        for n, it in enumerate(items or []):
            gpu = adapter_gpu(it, n)
            if gpu is not None:
                f.gpus.append((gpu, None))
    except Exception as exc:  # pragma: no cover
        f.records.append(ProbeRecord("windows-gpus", "error", f"{type(exc).__name__}: {snippet(str(exc))}"))
    return f
