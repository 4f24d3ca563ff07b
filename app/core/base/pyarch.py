"""An interpreter's own architecture, as the interpreter itself reports it: the one home of the rule.

``platform.machine()`` names the machine (or the emulator's view of it), not the interpreter: a
32-bit Python on 64-bit Windows reports ``AMD64``, an x86_64 Python under Rosetta on an Apple
silicon Mac reports ``x86_64`` (right for the process, but the Mac is arm64), and an x64 Python
on Windows on Arm reports ``AMD64``. Each interpreter is therefore asked, by the
:data:`FACTS_SNIPPET` both probe scripts carry (:mod:`app.core.detection.pythons` and
:func:`app.core.env.backends.probe_python`), for

* its pointer width (``struct.calcsize("P") * 8``),
* ``sysconfig.get_platform()`` (``win32``, ``win-amd64``, ``win-arm64``, ``macosx-11.0-arm64``,
  ``macosx-10.9-universal2``, ``linux-x86_64``): what it was built for,
* the process's own machine (``os.uname()`` / ``PROCESSOR_ARCHITECTURE``): which slice of a
  universal2 build runs,
* whether the process is translated (macOS ``sysctl.proc_translated``, asked with
  ``sysctlbyname``; Windows ``IsWow64Process2``'s native machine differing from the process's),
* the machine's native architecture (macOS ``hw.optional.arm64``; Windows ``IsWow64Process2``).

:func:`interpreter_arch` turns those facts into one name in the vocabulary of the report's
``arch`` (``x86_64``, ``x86``, ``arm64``, ``aarch64``, ``arm``); :func:`uv_request` names a
uv-managed Python of a given architecture (uv's own key, ``cpython-3.12-macos-aarch64-none``).
"""
from __future__ import annotations

import os
import re
import struct
import sys
from dataclasses import dataclass

__all__ = ["FACTS_SNIPPET", "ArchFacts", "facts_of_this_process", "interpreter_arch", "norm_arch", "parse_facts",
           "same_arch", "this_family", "uv_request", "wheel_arch"]

# Python 2.7 and 3.x, no site (-S), no third-party module. Defines _tsa_facts() -> "bits plat machine
# translated native" (one line, no spaces inside a field; "-" for what could not be read).
FACTS_SNIPPET = (
    "def _tsa_facts():\n"
    "    import os, struct, sys\n"
    "    bits = struct.calcsize('P') * 8\n"
    "    try:\n"
    "        import sysconfig\n"
    "        plat = sysconfig.get_platform()\n"
    "    except Exception:\n"
    "        plat = '-'\n"
    "    if os.name == 'nt':\n"
    "        mach = os.environ.get('PROCESSOR_ARCHITECTURE') or '-'\n"
    "    else:\n"
    "        try:\n"
    "            mach = os.uname()[4]\n"
    "        except Exception:\n"
    "            mach = '-'\n"
    "    tr = '-'\n"
    "    nat = '-'\n"
    "    try:\n"
    "        import ctypes\n"
    "        if sys.platform == 'darwin':\n"
    "            try:\n"
    "                lib = ctypes.CDLL('/usr/lib/libSystem.B.dylib')\n"
    "            except Exception:\n"
    "                lib = ctypes.CDLL(None)\n"
    "            def sc(name):\n"
    "                v = ctypes.c_int(0)\n"
    "                n = ctypes.c_size_t(ctypes.sizeof(v))\n"
    "                if lib.sysctlbyname(name, ctypes.byref(v), ctypes.byref(n), None, ctypes.c_size_t(0)) == 0:\n"
    "                    return v.value\n"
    "                return None\n"
    "            t = sc(b'sysctl.proc_translated')\n"
    "            tr = '1' if t == 1 else '0'\n"
    "            nat = 'arm64' if sc(b'hw.optional.arm64') == 1 else 'x86_64'\n"
    "        elif os.name == 'nt':\n"
    "            k = ctypes.windll.kernel32\n"
    "            k.GetCurrentProcess.restype = ctypes.c_void_p\n"
    "            pm = ctypes.c_ushort(0)\n"
    "            nm = ctypes.c_ushort(0)\n"
    "            if k.IsWow64Process2(ctypes.c_void_p(k.GetCurrentProcess()), ctypes.byref(pm), ctypes.byref(nm)):\n"
    "                nat = {0x8664: 'AMD64', 0xAA64: 'ARM64', 0x14c: 'x86'}.get(nm.value, '-')\n"
    "    except Exception:\n"
    "        pass\n"
    "    return '%d %s %s %s %s' % (bits, plat.replace(' ', '_'), mach.replace(' ', '_'), tr, nat)\n"
)


@dataclass(frozen=True)
class ArchFacts:
    """What an interpreter says about its own architecture (None: it could not say)."""

    bits: int | None = None
    platform_tag: str | None = None  # sysconfig.get_platform()
    machine: str | None = None  # the process's machine
    translated: bool | None = None  # the process runs under Rosetta / Windows' x64 emulation
    native: str | None = None  # the machine's own architecture, normalised


_FACTS_RE = re.compile(r"^(\d{1,3}) (\S+) (\S+) ([01-]) (\S+)$")


def parse_facts(text: str, family: str | None = None) -> ArchFacts:
    """``"64 win-amd64 AMD64 - ARM64"`` -> :class:`ArchFacts`; anything else -> ``ArchFacts()``."""
    m = _FACTS_RE.match((text or "").strip())
    if not m:
        return ArchFacts()

    def field(s: str) -> str | None:
        return None if s == "-" else s

    native = norm_arch(field(m.group(5)), family)
    machine = field(m.group(3))
    translated = {"1": True, "0": False}.get(m.group(4))
    if translated is None and native and machine:  # Windows: the process's machine is not the native one
        translated = norm_arch(machine, family) != native if native == "arm64" else False
    return ArchFacts(int(m.group(1)), field(m.group(2)), machine, translated, native)


def norm_arch(name: str | None, family: str | None = None) -> str | None:
    """One name per architecture, as the report's ``arch`` writes it: ``AMD64``/``x64`` ->
    ``x86_64``; ``i686``/``win32``/``Intel`` -> ``x86``; ``ARM64`` -> ``arm64`` (``aarch64`` on Linux)."""
    if not name:
        return None
    n = name.strip().lower()
    if n in ("x86_64", "amd64", "x64", "x86-64", "em64t"):
        return "x86_64"
    if n in ("x86", "i386", "i486", "i586", "i686", "win32", "intel", "ia32"):
        return "x86"
    if n in ("arm64", "aarch64", "armv8", "armv8l", "arm64e"):
        return "aarch64" if family == "linux" else "arm64"
    if n in ("arm", "arm32", "armv7l", "armv6l", "armv7"):
        return "arm"
    return n or None


_32 = {"x86_64": "x86", "arm64": "arm", "aarch64": "arm"}


def interpreter_arch(facts: ArchFacts, family: str | None = None) -> str | None:
    """The architecture the interpreter runs as (and whose wheels it installs), or None when it did
    not say. ``family``: linux | macos | windows (the arm64 spelling)."""
    tag = (facts.platform_tag or "").lower()
    arch: str | None = None
    if tag == "win32":
        arch = "x86"
    elif tag.startswith("win-"):
        arch = norm_arch(tag[4:], family)
    elif tag.startswith("macosx-"):
        last = tag.rsplit("-", 1)[-1]
        if last in ("universal2", "universal", "intel", "fat", "fat3", "fat64"):
            arch = norm_arch(facts.machine, family)  # the slice that runs in this process
        else:
            arch = norm_arch(last, family)
        if facts.translated:
            arch = "x86_64"  # Rosetta runs x86_64 code only
    elif "-" in tag:
        arch = norm_arch(tag.rsplit("-", 1)[-1], family)
    if arch is None:
        arch = norm_arch(facts.machine, family)
    if facts.bits == 32 and arch in _32:
        arch = _32[arch]  # a 32-bit build on a 64-bit kernel (sysconfig / uname name the kernel's)
    return arch


def facts_of_this_process() -> ArchFacts:
    """The running interpreter's facts, read here (the same rules as the snippet, no process)."""
    import sysconfig

    ns: dict[str, object] = {}
    try:
        exec(FACTS_SNIPPET, ns)  # our own constant: one source of truth for both probes
        line = ns["_tsa_facts"]()  # type: ignore[operator]
    except Exception:
        mach = os.environ.get("PROCESSOR_ARCHITECTURE", "-") if os.name == "nt" else os.uname()[4]
        line = f"{struct.calcsize('P') * 8} {sysconfig.get_platform()} {mach} - -"
    return parse_facts(str(line), this_family())


def this_family() -> str | None:
    """This machine's OS family in the report's vocabulary (``linux``, ``macos``, ``windows``)."""
    return {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(
        sys.platform, "linux" if sys.platform.startswith("linux") else None)


def same_arch(a: str | None, b: str | None) -> bool:
    """Whether two architecture names mean the same code (``arm64`` is ``aarch64``)."""
    na, nb = norm_arch(a), norm_arch(b)
    return na is not None and na == nb


def wheel_arch(platform: str | None) -> str | None:
    """The interpreter architecture a wheel platform (``macos-arm64``, ``windows-x86_64``) needs."""
    if not platform or "-" not in platform:
        return None
    family, arch = platform.split("-", 1)
    return norm_arch(arch, family)


_UV_OS = {"windows": "windows", "macos": "macos", "linux": "linux"}
_UV_ARCH = {"x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64", "x86": "x86"}


def uv_request(version: str, family: str | None, arch: str | None) -> str | None:
    """uv's key for a CPython of ``version`` built for ``arch`` (``cpython-3.12-macos-aarch64-none``):
    it finds an installed one of that architecture or downloads it, never another's. None when uv
    has no such key (an unknown OS or architecture; on Linux the libc is left to uv)."""
    os_name = _UV_OS.get(family or "")
    uv_arch = _UV_ARCH.get(norm_arch(arch) or "")
    if not os_name or not uv_arch or not re.fullmatch(r"\d+\.\d+(?:\.\d+)?", version or ""):
        return None
    libc = "none" if os_name != "linux" else "gnu"
    return f"cpython-{version}-{os_name}-{uv_arch}-{libc}"
