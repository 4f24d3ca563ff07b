"""Windows GPU detection that a slow or missing WMI does not blind (app.core.detection.windows).

PowerShell gets a longer budget than other probes (its cold start takes seconds); wmic is asked
with every field at once; the display drivers' registry keys give the list when WMI gives none,
and the memory size WMI caps at 4 GiB. Under Wine PowerShell is a stub (no output) and wmic
refuses the query, so the registry fallback is tested for real there, with display-class keys
written under a test key of its own in HKEY_CURRENT_USER. The parsers and the folder lookups
run on every OS.
"""
from __future__ import annotations

import os

import pytest

from app.core.detection import windows
from tests.helpers import fake_program

windows_only = pytest.mark.skipif(os.name != "nt", reason="the Windows registry (the Windows lane)")
CLASS = r"{4d36e968-e325-11ce-bfc1-08002be10318}"


# ------------------------------------------------------------------------------ parsers

def test_recorded_wmi_outputs_parse_as_before(fixture_text):
    """The recorded outputs (tests/fixtures/windows-videocontroller, sources in SOURCES.md)."""
    virt = windows.parse_video_controllers(
        fixture_text("windows-videocontroller", "wmic-get-name-virtual-adapter-first-plus-rtx2080ti-header-omitted.txt"))
    assert [(a["name"], a["vendor"], a["virtual"]) for a in virt] == [
        ("GameViewer Virtual Display Adapter", None, True), ("NVIDIA GeForce RTX 2080 Ti", "nvidia", False)]
    two = windows.parse_video_controllers(
        fixture_text("windows-videocontroller", "powershell-wmi-name-amd-igpu-plus-rx6800xt.txt"))
    assert [a["name"] for a in two] == ["AMD Radeon(TM) Graphics", "AMD Radeon RX 6800 XT"]


def test_wmic_value_form_one_query_for_every_field():
    # the shape of `wmic path Win32_VideoController get AdapterRAM,DriverVersion,Name,PNPDeviceID /value`:
    # Key=Value lines, alphabetical, blank lines doubled by its \r\r\n endings
    text = ("\r\r\n\r\r\nAdapterRAM=4293918720\r\r\nDriverVersion=32.0.15.6094\r\r\nName=NVIDIA GeForce RTX 4090\r\r\n"
            "PNPDeviceID=PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1\\4&2283F625&0&0019\r\r\n\r\r\n\r\r\n"
            "AdapterRAM=1073741824\r\r\nDriverVersion=31.0.101.4502\r\r\nName=Intel(R) UHD Graphics 770\r\r\n"
            "PNPDeviceID=PCI\\VEN_8086&DEV_4680&SUBSYS_00000000&REV_0C\\3&11583659&0&10\r\r\n\r\r\n")
    got = windows.parse_video_controllers(text)
    assert [(a["name"], a["vendor_id"], a["device_id"], a["driver_version"], a["memory_mb"]) for a in got] == [
        ("NVIDIA GeForce RTX 4090", "10de", "2684", "32.0.15.6094", 4095),
        ("Intel(R) UHD Graphics 770", "8086", "4680", "31.0.101.4502", 1024)]
    assert windows.adapter_gpu(got[0], 0).driver_version == "560.94"


def _tree():
    from app.core.detection.winregistry import RegKey

    return RegKey(keys={
        "0000": RegKey({"DriverDesc": "NVIDIA GeForce RTX 4090", "DriverVersion": "32.0.15.6094",
                        "MatchingDeviceId": "pci\\ven_10de&dev_2684&subsys_16f310de",
                        "HardwareInformation.qwMemorySize": 24 * 1024**3,
                        "HardwareInformation.MemorySize": 4293918720}),
        "0001": RegKey({"DriverDesc": "Microsoft Basic Display Adapter", "MatchingDeviceId": "PCI\\CC_0300",
                        "DriverVersion": "10.0.22621.1"}),
        "0002": RegKey({"HardwareInformation.AdapterString": "Intel(R) UHD Graphics 770".encode("utf-16-le") + b"\0\0",
                        "MatchingDeviceId": "PCI\\VEN_8086&DEV_4680", "DriverVersion": "31.0.101.4502",
                        "HardwareInformation.MemorySize": (128 * 1024**2).to_bytes(4, "little")}),
        "Properties": RegKey({"x": 1}),  # not an adapter (and the system's alone on Windows)
    })


def test_display_class_keys_give_the_adapters_with_their_whole_memory():
    rows = windows.registry_adapters(_tree())
    assert [(r["name"], r["vendor"], r["device_id"], r["memory_mb"], r["source"]) for r in rows] == [
        ("NVIDIA GeForce RTX 4090", "nvidia", "2684", 24576, "windows-registry"),
        ("Microsoft Basic Display Adapter", None, None, None, "windows-registry"),
        ("Intel(R) UHD Graphics 770", "intel", "4680", 128, "windows-registry")]
    gpus = [g for g in (windows.adapter_gpu(r, n) for n, r in enumerate(rows)) if g is not None]
    assert [(g.name, g.driver_version, g.integrated, g.source) for g in gpus] == [
        ("NVIDIA GeForce RTX 4090", "560.94", False, "windows-registry"),
        ("Intel(R) UHD Graphics 770", "31.0.101.4502", True, "windows-registry")]
    assert windows.registry_adapters(None) == []


def test_wmi_4_gib_cap_is_lifted_from_the_registry():
    wmi = windows.parse_video_controllers(
        "NVIDIA GeForce RTX 4090|PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1\\4&X|32.0.15.6094|4293918720\n"
        "Intel(R) UHD Graphics 770|PCI\\VEN_8086&DEV_4680&SUBSYS_0&REV_0C\\3&X|31.0.101.4502|1073741824\n")
    windows._with_registry_memory(wmi, windows.registry_adapters(_tree()))
    assert [a["memory_mb"] for a in wmi] == [24576, 1024]  # under the cap WMI's own value stands


def test_tool_folders_come_from_the_environment_not_drive_c():
    from app.core.detection.nvidia import windows_smi_paths

    env = {"SYSTEMROOT": r"D:\WINDOWS", "ProgramW6432": r"E:\Program Files", "ProgramFiles": r"E:\Program Files (x86)"}
    assert windows_smi_paths(env) == [r"D:\WINDOWS\System32\nvidia-smi.exe",
                                      r"E:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe",
                                      r"E:\Program Files (x86)\NVIDIA Corporation\NVSMI\nvidia-smi.exe"]
    assert windows.windows_folder("SystemRoot", {"windir": r"F:\Win"}) == r"F:\Win"
    assert windows_smi_paths({}) == []


# ------------------------------------------------------------------------------ a PowerShell that does not answer

@pytest.fixture
def hung_powershell(tmp_path, monkeypatch):
    """A powershell that never answers, first on PATH (a cold start slower than any budget)."""
    fake_program(tmp_path / "bin", "powershell", "import time\ntime.sleep(120)\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ.get("PATH", ""))


def test_powershell_gets_more_than_the_probe_limit(hung_powershell):
    f = windows.detect_windows(3.0, class_key=("HKCU", r"Software\TorchSetupNoSuchKey"))
    ps = [r for r in f.records if r.name == "powershell"]
    assert ps and ps[0].status == "timeout"
    assert "within 4 s" in ps[0].detail  # 3 s for every other probe, 1 s more for PowerShell's start


# ------------------------------------------------------------------------------ the registry, for real (Windows)

@pytest.fixture
def display_class():
    """Display-class keys like Windows' own, under a test key in HKEY_CURRENT_USER; removed afterwards."""
    import winreg

    base = rf"Software\TorchSetupAssistantTest-{os.getpid()}"
    path = rf"{base}\Class\{CLASS}"
    adapters = {
        "0000": {"DriverDesc": (winreg.REG_SZ, "NVIDIA GeForce RTX 4090"),
                 "MatchingDeviceId": (winreg.REG_SZ, "pci\\ven_10de&dev_2684&subsys_16f310de"),
                 "DriverVersion": (winreg.REG_SZ, "32.0.15.6094"),
                 "HardwareInformation.qwMemorySize": (winreg.REG_QWORD, 24 * 1024**3)},
        "0001": {"DriverDesc": (winreg.REG_SZ, "Intel(R) UHD Graphics 770"),
                 "MatchingDeviceId": (winreg.REG_SZ, "PCI\\VEN_8086&DEV_4680"),
                 "DriverVersion": (winreg.REG_SZ, "31.0.101.4502"),
                 "HardwareInformation.MemorySize": (winreg.REG_BINARY, (128 * 1024**2).to_bytes(4, "little"))},
        "0002": {"DriverDesc": (winreg.REG_SZ, "Microsoft Remote Display Adapter"),
                 "MatchingDeviceId": (winreg.REG_SZ, "SWD\\RemoteDisplayEnum")},
    }
    for sub, values in adapters.items():
        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, rf"{path}\{sub}") as k:
            for name, (kind, value) in values.items():
                winreg.SetValueEx(k, name, 0, kind, value)
    yield ("HKCU", path)
    for sub in adapters:
        winreg.DeleteKey(winreg.HKEY_CURRENT_USER, rf"{path}\{sub}")
    for key in (path, rf"{base}\Class", base):
        winreg.DeleteKey(winreg.HKEY_CURRENT_USER, key)


def _listed(f):
    return [(g.name, g.vendor, g.driver_version, g.memory_mb, g.integrated) for g, _bus in f.gpus]


EXPECTED = [("NVIDIA GeForce RTX 4090", "nvidia", "560.94", 24576, False),
            ("Intel(R) UHD Graphics 770", "intel", "31.0.101.4502", 128, True)]


@windows_only
def test_no_wmi_answer_the_registry_gives_the_gpus(display_class):
    """Wine's PowerShell prints nothing and its wmic refuses the query: what a broken WMI does."""
    f = windows.detect_windows(3.0, class_key=display_class)
    assert _listed(f) == EXPECTED, [(r.name, r.status, r.detail) for r in f.records]
    assert all(g.source == "windows-registry" for g, _ in f.gpus)


@windows_only
def test_a_hung_powershell_does_not_lose_the_gpu_list(display_class, hung_powershell):
    f = windows.detect_windows(3.0, class_key=display_class)
    assert [r.status for r in f.records if r.name == "powershell"] == ["timeout"]
    assert _listed(f) == EXPECTED
