"""Property-based: every registered detection parser survives random and truncated text.

The parsers are called bare (``__wrapped__``, without the safety net of the ``@parser``
decorator), so a parser that raises fails here instead of being silently caught.
"""
from __future__ import annotations

import inspect
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
TOOL_DIRS = ("nvidia-smi", "nvidia-smi-query", "proc-driver-nvidia", "rocminfo", "amd-smi", "rocm-smi",
             "rocm-agent-enumerator", "lspci", "system-profiler", "sysctl", "windows-videocontroller")
REAL_TEXTS = [p.read_text(encoding="utf-8") for d in TOOL_DIRS for p in sorted((FIXTURES / d).iterdir())]

EXPECTED = {
    "nvidia.parse_query_csv", "nvidia.parse_smi_header", "nvidia.parse_smi_table", "nvidia.classify_smi_error",
    "nvidia.parse_proc_driver_version", "amd.parse_rocminfo", "amd.parse_rock_version",
    "amd.parse_amd_smi_static", "amd.parse_amd_smi_list", "amd.parse_amd_smi_version",
    "amd.parse_rocm_smi_productname", "amd.parse_rocm_agent_enumerator", "amd.parse_kfd_properties",
    "pci.parse_lspci", "intel.windows_pnp_ids", "apple.parse_sysctl", "apple.parse_system_profiler_displays",
    "windows.parse_video_controllers", "cpu.parse_proc_cpuinfo", "osinfo.parse_os_release",
    "osinfo.wsl_version", "osinfo.parse_glibc", "pythons.parse_probe_output", "pythons.parse_py_launcher",
    "pythons.version_from_path", "tools.parse_tool_version",
}


def test_every_parser_is_registered():
    assert set(PARSERS) >= EXPECTED, sorted(EXPECTED - set(PARSERS))


def _call(name: str, text: str):
    fn = PARSERS[name].__wrapped__
    params = list(inspect.signature(fn).parameters)
    if params[0] == "name":  # parse_tool_version(name, text)
        return fn("conda", text)
    return fn(text)


# Text that looks like tool output: pieces of the real fixtures, separators and numbers.
_alphabet = st.characters(blacklist_categories=("Cs",))
_tokens = st.sampled_from([
    "|", ",", ":", " ", "\n", "\r\n", "\t", "[N/A]", "MiB", "0x", "GPU[0]", "GPU: 0", "Agent 1", "gfx", "gfx9010",
    "Device Type:             GPU", "Name:", "Marketing Name:", "Driver Version:", "CUDA Version:",
    "00000000:01:00.0", "[10de:2204]", "VGA compatible controller [0300]:", "  ", "    ", "Pool Info:",
    "Size:", "KB", "(0x", ")", "{", "}", "\"card0\": {", "TSA-PY ", "3.11.7", "-V:", "*", "Chipset Model:",
    "Vendor:", "VRAM (Total):", "GB", "Kernel Module", "Segment: GLOBAL", "device,Card series", "99999999999999999999",
])
fuzz_text = st.one_of(
    st.text(_alphabet, max_size=400),
    st.lists(st.one_of(_tokens, st.text(_alphabet, max_size=8)), max_size=80).map("".join),
)


@st.composite
def truncated_real(draw):
    text = draw(st.sampled_from(REAL_TEXTS))
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, len(text)))
    piece = text[a:b]
    if draw(st.booleans()):  # damage a few characters
        chars = list(piece)
        for _ in range(draw(st.integers(0, 5))):
            if chars:
                i = draw(st.integers(0, len(chars) - 1))
                chars[i] = draw(st.sampled_from(["", ":", "\n", " ", "x", "0", "|", "\x00", "é"]))
        piece = "".join(chars)
    return piece


@pytest.mark.parametrize("name", sorted(EXPECTED))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(fuzz_text, truncated_real()))
def test_parsers_never_raise(name, text):
    _call(name, text)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parsers_take_every_real_fixture(name):
    for text in REAL_TEXTS:
        _call(name, text)
    _call(name, "")


def _helpers():
    from app.core.compat.cuda import windows_driver_to_nvidia
    from app.core.detection import first_version, hex_id, norm_bus, to_int
    from app.core.detection.amd import amd_is_integrated, gfx_from_target_version, normalize_gfx
    from app.core.detection.apple import apple_chip
    from app.core.detection.intel import intel_family, intel_is_integrated
    from app.core.detection.nvidia import cc_from_name
    from app.core.detection.pci import parse_lspci

    return [norm_bus, to_int, hex_id, first_version, cc_from_name, normalize_gfx, gfx_from_target_version,
            windows_driver_to_nvidia, intel_family, intel_is_integrated, apple_chip,
            lambda t: amd_is_integrated(t, t),
            lambda t: [(d.name, d.vendor, d.pci_id) for d in parse_lspci.__wrapped__(t)]]


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(fuzz_text, truncated_real()))
def test_helpers_never_raise(text):
    for fn in _helpers():
        fn(text)
