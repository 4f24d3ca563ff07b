"""CPU: model, vendor, physical and logical cores, and the SIMD flags that matter for PyTorch."""
from __future__ import annotations

import os
import platform
import re
import sys
import time
from collections.abc import Iterable, Mapping

from app.core.detection import Row, parser, read_text, record
from app.core.detection.system import CPUInfo, ProbeRecord

# /proc/cpuinfo flag -> the name reported. x86: avx2 and avx512f decide which oneDNN/FBGEMM
# kernels run; AMX (Sapphire Rapids+) accelerates bf16/int8 matmuls. Arm: asimd is NEON;
# sve/sve2/sme as reported by the kernel (Documentation/arch/arm64/elf_hwcaps.rst).
_FLAG_MAP = {
    "avx": "avx", "avx2": "avx2", "fma": "fma", "f16c": "f16c",
    "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512_vnni": "avx512_vnni",
    "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16", "avx_vnni": "avx_vnni",
    "amx_tile": "amx", "amx_bf16": "amx_bf16", "amx_int8": "amx_int8", "amx_fp16": "amx_fp16",
    "asimd": "neon", "neon": "neon", "asimdhp": "fp16", "fphp": "fp16", "bf16": "bf16",
    "i8mm": "i8mm", "sve": "sve", "sve2": "sve2", "sme": "sme",
}
FLAG_ORDER = ("avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512_vnni",
              "avx512_bf16", "avx512_fp16", "amx", "amx_bf16", "amx_int8", "amx_fp16",
              "neon", "fp16", "bf16", "i8mm", "sve", "sve2", "sme")


def flags_of_interest(raw_flags: Iterable[str]) -> list[str]:
    found = {_FLAG_MAP[f] for f in raw_flags if f in _FLAG_MAP}
    return [f for f in FLAG_ORDER if f in found]


@parser(dict)
def parse_proc_cpuinfo(text: str) -> Row:
    """``{"model", "vendor", "flags" (of interest), "cores" (physical), "threads", "max_mhz"}``
    from /proc/cpuinfo (x86 "flags", Arm "Features"/"CPU part")."""
    model: str | None = None
    vendor: str | None = None
    flags: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    processors = 0
    phys: str | None = None
    core: str | None = None
    mhz: float | None = None
    arm_impl: str | None = None
    arm_part: str | None = None
    for ln in (text or "").splitlines():
        key, sep, value = ln.partition(":")
        if not sep:
            if not ln.strip():
                if phys is not None and core is not None:
                    pairs.add((phys, core))
                phys = core = None
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "processor" and re.fullmatch(r"\d+", value):
            processors += 1
        elif key in ("model name", "cpu model", "hardware") and value and model is None:
            model = value
        elif key == "vendor_id" and vendor is None:
            vendor = value
        elif key in ("flags", "features"):
            flags.update(value.split())
        elif key == "physical id":
            phys = value
        elif key == "core id":
            core = value
        elif key == "cpu mhz" and mhz is None:
            try:
                mhz = float(value)
            except ValueError:
                pass
        elif key == "cpu implementer" and arm_impl is None:
            arm_impl = value
        elif key == "cpu part" and arm_part is None:
            arm_part = value
    if phys is not None and core is not None:
        pairs.add((phys, core))
    if vendor is None and arm_impl:
        vendor = {"0x41": "ARM", "0x61": "Apple", "0xc0": "Ampere", "0x48": "HiSilicon",
                  "0x4e": "NVIDIA", "0x51": "Qualcomm"}.get(arm_impl.lower(), arm_impl)
    return {"model": model, "vendor": vendor, "flags": flags_of_interest(flags),
            "cores": len(pairs) or None, "threads": processors or None, "max_mhz": mhz}


def detect_cpu(family: str | None, sysctl: Mapping[str, str] | None = None) -> tuple[CPUInfo, ProbeRecord]:
    """CPU facts for this machine; ``sysctl`` is the macOS sysctl dict when already read."""
    started = time.monotonic()
    info: Row = {"model": None, "vendor": None, "flags": [], "cores": None, "threads": None,
                  "max_mhz": None}
    source = "platform"
    try:
        if family == "linux":
            text = read_text("/proc/cpuinfo", 4 << 20)
            if text:
                info.update({k: v for k, v in parse_proc_cpuinfo(text).items() if v})
                source = "/proc/cpuinfo"
        elif family == "macos" and sysctl:
            info["model"] = sysctl.get("machdep.cpu.brand_string")
            flags: list[str] = []
            if sysctl.get("hw.optional.arm64") == "1" or (info["model"] or "").startswith("Apple"):
                flags.append("neon")
            for key, name in (("hw.optional.arm.FEAT_BF16", "bf16"), ("hw.optional.arm.FEAT_I8MM", "i8mm"),
                              ("hw.optional.arm.FEAT_SME", "sme"), ("hw.optional.avx2_0", "avx2"),
                              ("hw.optional.avx512f", "avx512f")):
                if sysctl.get(key) == "1":
                    flags.append(name)
            info["flags"] = [f for f in FLAG_ORDER if f in flags]
            source = "sysctl"
        elif family == "windows":
            info["model"] = _windows_cpu_name() or platform.processor() or None
            info["flags"] = _windows_flags()
            source = "registry"
    except Exception:
        pass
    try:
        import psutil

        info["cores"] = psutil.cpu_count(logical=False) or info["cores"]
        info["threads"] = psutil.cpu_count(logical=True) or info["threads"]
        try:
            freq = psutil.cpu_freq()
            if freq and freq.max:
                info["max_mhz"] = float(freq.max)
        except Exception:
            pass
    except Exception:
        info["threads"] = info["threads"] or os.cpu_count()
    if info["model"] is None:
        info["model"] = platform.processor() or platform.machine() or None
    cpu = CPUInfo(model=info["model"], vendor=info["vendor"], cores=info["cores"], threads=info["threads"],
                  flags=list(info["flags"]), max_mhz=info["max_mhz"])
    detail = f"{cpu.model or '?'}: {cpu.cores or '?'} cores / {cpu.threads or '?'} threads"
    if cpu.flags:
        detail += ", " + " ".join(cpu.flags)
    return cpu, record("cpu", "ok" if cpu.model else "empty", f"{detail} (from {source})", started)


def _windows_cpu_name() -> str | None:  # pragma: no cover - Windows only
    if sys.platform != "win32":
        return None
    try:
        import winreg

        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE,
                            r"HARDWARE\DESCRIPTION\System\CentralProcessor\0") as k:
            return str(winreg.QueryValueEx(k, "ProcessorNameString")[0]).strip()
    except Exception:
        return None


def _windows_flags() -> list[str]:  # pragma: no cover - Windows only
    # IsProcessorFeaturePresent ids (winnt.h): PF_ARM_V8_INSTRUCTIONS_AVAILABLE 29,
    # PF_AVX_INSTRUCTIONS_AVAILABLE 39, PF_AVX2_INSTRUCTIONS_AVAILABLE 40,
    # PF_AVX512F_INSTRUCTIONS_AVAILABLE 41. Source: Microsoft Learn, IsProcessorFeaturePresent.
    try:
        import ctypes

        present = ctypes.windll.kernel32.IsProcessorFeaturePresent  # type: ignore[attr-defined]
        flags = []
        for pf, name in ((39, "avx"), (40, "avx2"), (41, "avx512f"), (29, "neon")):
            if present(pf):
                flags.append(name)
        return [f for f in FLAG_ORDER if f in flags]
    except Exception:
        return []
