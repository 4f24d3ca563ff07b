"""Operating system: family, version, distribution, WSL, glibc, kernel, architecture."""
from __future__ import annotations

import os
import platform
import re
import sys
import time

from app.core.detection import parser, read_text, record
from app.core.detection.system import OSInfo, ProbeRecord


@parser(dict)
def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` -> dict (quotes removed)."""
    out: dict[str, str] = {}
    for ln in (text or "").splitlines():
        m = re.match(r"^([A-Z][A-Z0-9_]*)=(.*)$", ln.strip())
        if not m:
            continue
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[m.group(1)] = value.replace('\\"', '"')
    return out


@parser(lambda: None)
def wsl_version(osrelease: str) -> int | None:
    """2 for WSL2 (``...-microsoft-standard-WSL2``), 1 for WSL1 (``...-Microsoft``), else None."""
    s = (osrelease or "").strip()
    if re.search(r"microsoft-standard|WSL2", s, re.IGNORECASE):
        return 2
    if "Microsoft" in s:
        return 1
    if "microsoft" in s.lower():
        return 2
    return None


@parser(lambda: None)
def parse_glibc(confstr: str) -> str | None:
    """``"glibc 2.36"`` (os.confstr CS_GNU_LIBC_VERSION) -> ``"2.36"``."""
    m = re.match(r"\s*glibc\s+(\d+\.\d+)", confstr or "")
    return m.group(1) if m else None


def normalize_arch(machine: str | None) -> str | None:
    if not machine:
        return None
    m = machine.strip().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "i686": "x86", "i386": "x86", "armv8": "aarch64"}.get(m, m)


def detect_os() -> tuple[OSInfo, str | None, int | None, ProbeRecord]:
    """``(OSInfo, arch, wsl_version, record)`` for this machine; never raises."""
    started = time.monotonic()
    family = {"linux": "linux", "darwin": "macos", "win32": "windows", "cygwin": "windows"}.get(
        sys.platform, "linux" if sys.platform.startswith("linux") else None)
    version = distro = glibc = kernel = None
    wsl = None
    try:
        kernel = platform.release() or None
        if family == "linux":
            rel = parse_os_release(read_text("/etc/os-release") or read_text("/usr/lib/os-release") or "")
            version = rel.get("PRETTY_NAME") or " ".join(
                x for x in (rel.get("NAME"), rel.get("VERSION_ID")) if x) or None
            distro = rel.get("ID") or None
            wsl = wsl_version(read_text("/proc/sys/kernel/osrelease") or kernel or "")
            if wsl is None and os.path.exists("/proc/sys/fs/binfmt_misc/WSLInterop"):
                wsl = 2
            try:
                glibc = parse_glibc(os.confstr("CS_GNU_LIBC_VERSION") or "")
            except (ValueError, OSError, AttributeError):
                glibc = None
            if glibc is None:
                lib, ver = platform.libc_ver()
                glibc = ver if lib == "glibc" and ver else None
        elif family == "macos":
            version = platform.mac_ver()[0] or None
        elif family == "windows":
            version = platform.version() or None
    except Exception:
        pass
    machine = platform.machine()
    arch = normalize_arch(machine)
    info = OSInfo(family=family, version=version, wsl=bool(wsl), glibc=glibc, kernel=kernel, distro=distro)
    bits = [family or sys.platform, version or "", arch or ""]
    if wsl:
        bits.append(f"WSL{wsl}")
    if glibc:
        bits.append(f"glibc {glibc}")
    return info, arch, wsl, record("os", "ok" if family else "error", ", ".join(b for b in bits if b), started)
