"""Issue 24, on the Windows lane: the probes of a real Windows CPython report its own architecture,
64-bit x86_64 (``win-amd64``), not ``platform.machine()``'s raw ``AMD64``; both probes agree (detect's
and the install's)."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import sysconfig

import pytest

from app.core.detection import pythons
from app.core.env import backends as envs

windows_only = pytest.mark.skipif(os.name != "nt", reason="a real Windows CPython (the Windows lane)")


@windows_only
def test_the_running_windows_python_is_64bit_x86_64():
    assert struct.calcsize("P") * 8 == 64 and sysconfig.get_platform() == "win-amd64"  # the lane's Python
    running = pythons.running_interpreter()
    assert running.arch == "x86_64"  # its own architecture, named as the report names it (not "AMD64")
    assert (running.bits, running.platform_tag) == (64, "win-amd64")
    assert running.translated is not True  # x64 on x64: not emulated


@windows_only
def test_both_probes_of_the_lane_python_report_64bit_x86_64():
    base = getattr(sys, "_base_executable", None) or sys.executable
    for exe in dict.fromkeys((sys.executable, base)):
        res = subprocess.run([exe, "-E", "-s", "-S", "-c", pythons.PROBE_SCRIPT], capture_output=True, text=True,
                             timeout=120)
        parsed = pythons.parse_probe_output(res.stdout)
        assert parsed is not None, (exe, res.stdout, res.stderr)
        info = pythons._info(exe, "registry", parsed, None)  # no machine arch to fall back on: its own answer
        assert info.arch == "x86_64", (exe, res.stdout)
        assert (info.bits, info.platform_tag) == (64, "win-amd64")
        probed, why = envs.probe_python(exe, use_cache=False)
        assert probed is not None, why
        assert (probed.arch, probed.bits) == ("x86_64", 64)
