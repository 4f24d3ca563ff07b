"""macOS: the chip (``sysctl``) and the GPUs (``system_profiler SPDisplaysDataType``)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from app.core.detection import Row, hex_id, listing, parser, record, run_tool, snippet, to_int
from app.core.detection.jobs import Jobs, result_of
from app.core.detection.system import GPU, ProbeRecord


@parser(dict)
def parse_sysctl(text: str) -> dict[str, str]:
    """``sysctl name...`` output (``key: value`` or ``key = value`` lines) -> dict.

    ``sysctl -n`` prints bare values; a single bare line is returned as ``{"": value}``.
    Errors such as ``sysctl: unknown oid 'x'`` are skipped.
    """
    out: dict[str, str] = {}
    bare: list[str] = []
    for ln in (text or "").splitlines():
        s = ln.strip()
        if not s or s.startswith("sysctl:"):
            continue
        m = re.match(r"^([a-zA-Z][\w.]*)\s*[:=]\s*(.*)$", s)
        if m and "." in m.group(1):
            out[m.group(1)] = m.group(2).strip()
        else:
            bare.append(s)
    if bare and not out:
        out[""] = bare[0]
    return out


def apple_chip(brand: str | None) -> str | None:
    """``"Apple M1 Pro"`` from a brand string, or None for Intel Macs / unknown."""
    if not brand:
        return None
    b = brand.strip()
    if b.lower().startswith("apple"):
        return b
    return None


@parser(list)
def parse_system_profiler_displays(text: str) -> list[Row]:
    """GPUs from ``system_profiler SPDisplaysDataType`` (text):
    ``{"name", "vendor", "bus", "memory_mb", "cores", "device_id", "metal"}``."""
    gpus: list[Row] = []
    cur: Row | None = None
    gpu_indent: int | None = None
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        s = raw.strip()
        if s.endswith(":") and (indent == 4 or (gpu_indent is not None and indent == gpu_indent)):
            cur = {"name": s[:-1].strip()}
            gpus.append(cur)
            gpu_indent = indent
            continue
        if cur is None or gpu_indent is None or indent <= gpu_indent:
            continue
        if s == "Displays:":
            cur["_in_displays"] = True
            continue
        if cur.get("_in_displays"):
            continue
        key, sep, value = s.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "Chipset Model":
            cur["name"] = value
        elif key == "Vendor":
            low = value.lower()
            cur["vendor"] = ("apple" if "apple" in low or "0x106b" in low else
                             "nvidia" if "nvidia" in low or "0x10de" in low else
                             "amd" if "amd" in low or "ati" in low or "0x1002" in low else
                             "intel" if "intel" in low or "0x8086" in low else None)
        elif key == "Bus":
            cur["bus"] = value
        elif key.startswith("VRAM"):
            m = re.match(r"(\d{1,12})\s*(GB|MB)", value)
            if m:
                cur["memory_mb"] = int(m.group(1)) * (1024 if m.group(2) == "GB" else 1)
        elif key == "Total Number of Cores":
            cur["cores"] = to_int(value)
        elif key == "Device ID":
            cur["device_id"] = hex_id(value)
        elif key.startswith("Metal"):
            cur["metal"] = value
    out: list[Row] = []
    for g in gpus:
        if not g.get("vendor") and not g.get("bus"):
            continue  # not a GPU block
        g.pop("_in_displays", None)
        out.append(g)
    return out


def native_arch(sysctl: dict[str, str], arch: str | None) -> tuple[str | None, bool]:
    """``(the Mac's own architecture, whether this process runs under Rosetta 2)`` from sysctl's
    keys: ``hw.optional.arm64`` is 1 on Apple silicon even inside a translated process, and
    ``sysctl.proc_translated`` is 1 in one (an Intel Mac has neither key); ``arch`` (what uname
    says) otherwise."""
    translated = sysctl.get("sysctl.proc_translated") == "1"
    if translated or sysctl.get("hw.optional.arm64") == "1":
        return "arm64", translated
    return arch, False


@dataclass
class AppleFindings:
    gpus: list[tuple[GPU, str | None]] = field(default_factory=list)
    chip: str | None = None
    cpu_brand: str | None = None
    records: list[ProbeRecord] = field(default_factory=list)
    sysctl: dict[str, str] = field(default_factory=dict)


SYSCTL_KEYS = ("machdep.cpu.brand_string", "hw.physicalcpu", "hw.logicalcpu", "hw.memsize",
               "hw.optional.arm64", "hw.optional.arm.FEAT_BF16", "hw.optional.arm.FEAT_I8MM",
               "hw.optional.arm.FEAT_SME", "hw.optional.avx2_0", "hw.optional.avx512f",
               "sysctl.proc_translated")


def detect_apple(timeout_s: float) -> AppleFindings:
    """Chip from sysctl and GPUs from system_profiler, run concurrently; never raises."""
    from app.core.proc.runner import which

    f = AppleFindings()
    try:
        sysctl = which("sysctl") or "/usr/sbin/sysctl"
        prof = which("system_profiler") or "/usr/sbin/system_profiler"
        jobs = Jobs("apple")
        t1 = time.monotonic()
        prof_fut = jobs.start("system_profiler", lambda: run_tool("system_profiler", [prof, "SPDisplaysDataType"],
                                                                  timeout_s))
        t0 = time.monotonic()
        # sysctl stops at the first unknown key on some versions: ask for each with -i? -> not
        # portable; one call with all keys, unknown ones are reported on stderr and skipped.
        res, rec = run_tool("sysctl", [sysctl, *SYSCTL_KEYS], timeout_s)
        if rec is not None:
            f.records.append(rec)
        else:
            f.sysctl = parse_sysctl(res.stdout)
            f.cpu_brand = f.sysctl.get("machdep.cpu.brand_string")
            f.chip = apple_chip(f.cpu_brand)
            f.records.append(record("sysctl", "ok" if f.sysctl else "garbage",
                                    f"CPU {f.cpu_brand or '?'}" if f.sysctl else snippet(res.stdout),
                                    t0, res.argv))
        jobs.wait(time.monotonic() + timeout_s + 5)
        got = result_of(prof_fut)
        if got is not None:
            pres, prec = got
            if prec is not None:
                f.records.append(prec)
            else:
                items = parse_system_profiler_displays(pres.stdout)
                f.records.append(listing("system_profiler", [i["name"] for i in items], pres.stdout, t1, pres.argv))
                for n, it in enumerate(items):
                    vendor = it.get("vendor") or "apple"
                    builtin = (it.get("bus") or "").lower().startswith("built")
                    integrated = builtin and vendor != "apple"
                    f.gpus.append((GPU(vendor=vendor, name=it["name"], memory_mb=it.get("memory_mb"),
                                       integrated=integrated, index=n,
                                       pci_id=None, source="system_profiler"), None))
        if f.chip and not any(g.vendor == "apple" for g, _ in f.gpus):
            f.gpus.append((GPU(vendor="apple", name=f.chip, integrated=False, index=0, source="sysctl"),
                           None))
    except Exception as exc:  # pragma: no cover
        f.records.append(ProbeRecord("apple", "error", f"{type(exc).__name__}: {snippet(str(exc))}"))
    return f
