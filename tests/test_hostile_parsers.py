"""Every detection parser is linear: hostile 100 KB lines cost a bounded multiple of 10 KB ones.

One ``nvidia-smi`` line of 1.5 KB once held the table parser for 17.8 s (a regex with adjacent
``\\s+(.+?)\\s+`` runs backtracking cubically). Here each registered parser gets, for each of its
line shapes (the start of a real line of its tool) and each hostile unit (a run of digits,
spaces, brackets, newlines ...), one line of 10 KB and one of 100 KB. The guard does not
depend on this machine's speed: the 100 KB parse must take at most a fixed multiple of the
10 KB parse (linear: ~10x; quadratic: ~100x; the broken regexes were far beyond), plus a
generous absolute bound. Hypothesis then splices long runs into real tool output and checks
that no parser raises (called bare, without the ``@parser`` safety net).
"""
from __future__ import annotations

import inspect
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import app.core.detection.amd
import app.core.detection.apple
import app.core.detection.cpu
import app.core.detection.intel
import app.core.detection.nvidia
import app.core.detection.osinfo
import app.core.detection.pci
import app.core.detection.pythons
import app.core.detection.tools
import app.core.detection.windows  # noqa: F401
from app.core.detection import PARSERS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL, BIG = 10_000, 100_000
RATIO = 25  # linear parsers stay near 10x; the bound leaves room for a noisy machine
FLOOR_S = 0.1  # below this a ratio is noise
LIMIT_S = 3.0

UNITS = ("1", " ", "\t", "[", "(", "|", "a ", "0.", ":", "-", "x", "\n", " \n", "@", ",")
# The start of a real line of each parser's tool: the hostile run follows it.
SHAPES: dict[str, tuple[str, ...]] = {
    "nvidia.parse_query_csv": ("name, memory.total [MiB], ", "0, NVIDIA GeForce ", "NVIDIA "),
    "nvidia.parse_smi_header": ("| NVIDIA-SMI 550.54  Driver Version: ", "NVIDIA-SMI ", "CUDA Version: "),
    "nvidia.parse_smi_table": ("| 0 ", "|   0  NVIDIA ", "|   0  NVIDIA GeForce  On  |   "),
    "nvidia.classify_smi_error": ("Failed to initialize NVML: Driver/library version mismatch\n"
                                  "NVML library version: ",),
    "nvidia.parse_proc_driver_version": ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  ", "Kernel Module for "),
    "amd.parse_rocminfo": ("Agent 1\n  Name: ", "  Marketing Name: ", "  Device Type: GPU\n  Name: gfx"),
    "amd.parse_rock_version": ("ROCk module version ",),
    "amd.parse_amd_smi_static": ("GPU: 0\n    TARGET_GRAPHICS_VERSION: ", "GPU: "),
    "amd.parse_amd_smi_list": ("GPU: ", "GPU: 0\n    BDF: "),
    "amd.parse_amd_smi_version": ("AMDSMI Tool: ", "ROCm version: "),
    "amd.parse_rocm_smi_productname": ("GPU[0]\t\t: Card series:\t\t", "GPU[0] : ", "device,Card series\ncard0,",
                                       '{"card0": {"Card series": "'),
    "amd.parse_rocm_agent_enumerator": ("gfx",),
    "amd.parse_kfd_properties": ("gfx_target_version ", "simd_count "),
    "pci.parse_lspci": ("01:00.0 ", "01:00.0 VGA compatible controller [0300]: ", "0000:01:00.0 3D controller: "),
    "intel.windows_pnp_ids": ("PCI\\VEN_8086&DEV_",),
    "apple.parse_sysctl": ("hw.model: ", "machdep.cpu.brand_string: "),
    "apple.parse_system_profiler_displays": ("Graphics/Displays:\n\n    Apple M2:\n\n      Chipset Model: ",
                                             "      VRAM (Total): "),
    "windows.parse_video_controllers": ("Name,AdapterRAM,DriverVersion,PNPDeviceID\n",),
    "cpu.parse_proc_cpuinfo": ("processor\t: ", "model name\t: ", "flags\t\t: "),
    "osinfo.parse_os_release": ("NAME=", "ID="),
    "osinfo.wsl_version": ("Linux version 5.15.0-microsoft-standard",),
    "osinfo.parse_glibc": ("glibc ",),
    "pythons.parse_probe_output": ("TSA-PY ", "TSA-PY 3.11.7 "),
    "pythons.parse_py_launcher": (" -V:3.12 ", " -3.9-64 "),
    "pythons.version_from_path": ("/usr/bin/python3.", "cpython-3."),
    "xcode.parse_xcode_select": ("/Library/Developer/", "xcode-select: error: "),
    "tools.parse_tool_version": ("conda ", "v", "conda 1."),
}


def _call(name: str, text: str):
    fn = PARSERS[name].__wrapped__
    if next(iter(inspect.signature(fn).parameters)) == "name":  # parse_tool_version(name, text)
        return fn("conda", text)
    return fn(text)


def _line(shape: str, unit: str, size: int) -> str:
    return shape + unit * ((size - len(shape)) // len(unit)) + "x"


def _seconds(name: str, text: str, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        _call(name, text)
        best = min(best, time.perf_counter() - t0)
    return best


def test_every_parser_has_line_shapes():
    assert set(SHAPES) == set(PARSERS), sorted(set(PARSERS) ^ set(SHAPES))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_parser_is_linear_on_100kb_hostile_lines(name):
    slow = []
    for shape in ("", *SHAPES[name]):
        for unit in UNITS:
            small, big = _line(shape, unit, SMALL), _line(shape, unit, BIG)
            t_small, t_big = _seconds(name, small, 2), _seconds(name, big)
            if t_big > max(RATIO * t_small, FLOOR_S):  # a busy machine: measure again before judging
                t_small, t_big = min(t_small, _seconds(name, small, 3)), min(t_big, _seconds(name, big, 2))
            if t_big > max(RATIO * t_small, FLOOR_S) or t_big > LIMIT_S:
                slow.append(f"{shape!r} + {unit!r}*: 10 KB {t_small * 1e3:.1f} ms, 100 KB {t_big * 1e3:.1f} ms")
    assert not slow, f"{name} is not linear:\n" + "\n".join(slow)


def test_the_table_line_that_took_17_seconds():
    line = "|   0" + " " * 1500 + "NVIDIA x"  # 1.5 KB of spaces inside the first cell, no mode column
    t0 = time.perf_counter()
    assert PARSERS["nvidia.parse_smi_table"](line) == []
    assert time.perf_counter() - t0 < 5  # not a speed limit: the bug it guards took 17 s
    good = "|   0  NVIDIA GeForce RTX 3090     On  |   00000000:01:00.0 Off |                  N/A |\n" \
           "| 30%   35C    P8    22W / 350W |      5MiB / 24576MiB |      0%      Default |"
    (row,) = PARSERS["nvidia.parse_smi_table"](good)
    assert row == {"index": 0, "name": "NVIDIA GeForce RTX 3090", "bus": "0000:01:00.0", "memory_mb": 24576,
                   "truncated": False}


# ------------------------------------------------------------------- fuzzing
_DIRS = ("nvidia-smi", "nvidia-smi-query", "proc-driver-nvidia", "rocminfo", "amd-smi", "rocm-smi",
         "rocm-agent-enumerator", "lspci", "system-profiler", "sysctl", "windows-videocontroller")
REAL = [p.read_text(encoding="utf-8") for d in _DIRS for p in sorted((FIXTURES / d).iterdir())]


@st.composite
def spliced(draw):
    """Real tool output with a long hostile run spliced in at a random place."""
    text = draw(st.sampled_from(REAL))
    at = draw(st.integers(0, len(text)))
    unit = draw(st.sampled_from([*UNITS, "9" * 5, "GPU[0]", "(0x", "Radeon ", "MiB /"]))
    run = unit * draw(st.integers(1, 3000))
    return text[:at] + run + text[at:]


@given(st.sampled_from(sorted(PARSERS)), spliced())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_no_parser_raises_on_spliced_output(name, text):
    expected = type(PARSERS[name](""))  # the "nothing found" value's type
    got = _call(name, text)
    assert got is None or isinstance(got, expected) or expected is type(None)
