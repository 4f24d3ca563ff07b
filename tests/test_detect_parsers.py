"""Detection parsers on recorded real tool output (tests/fixtures/<tool>/, see SOURCES.md)."""
from __future__ import annotations

import pytest

from app.core.base.text import render_all
from app.core.compat import cuda
from app.core.detection import amd, apple, cpu, envvars, intel, norm_bus, nvidia, osinfo, pci, pythons, tools, windows

# ------------------------------------------------------------------ nvidia-smi (plain table)

@pytest.mark.parametrize("name, smi, driver, cuda, gpus", [
    ("single-titan-v-515.65.01.txt", "515.65.01", "515.65.01", "11.7",
     [(0, "NVIDIA TITAN V", "0000:af:00.0", 12288)]),
    ("multi-gtx1050ti-gtx1060-535.183.01-debian12.txt", "535.183.01", "535.183.01", "12.2",
     [(0, "NVIDIA GeForce GTX 1050 Ti", "0000:03:00.0", 4096),
      (1, "NVIDIA GeForce GTX 1060 6GB", "0000:04:00.0", 6144)]),
    ("multi-p100-gtx1070-580.82.07-cuda13.txt", "580.82.07", "580.82.07", "13.0",
     [(0, "Tesla P100-PCIE-16GB", "0000:03:00.0", 16384), (1, "NVIDIA GeForce GTX 1070", "0000:04:00.0", 8192)]),
    # WSL2: nvidia-smi's own version differs from the Windows driver's version
    ("wsl2-rtx3070-530.47-driver-531.68.txt", "530.47", "531.68", "12.1",
     [(0, "NVIDIA GeForce RTX 3070", "0000:2b:00.0", 8192)]),
    ("wsl2-gtx1660ti-545.36-driver-546.33.txt", "545.36", "546.33", "12.3",
     [(0, "NVIDIA GeForce GTX 1660 Ti", "0000:01:00.0", 6144)]),
    ("windows-gtx1660ti-546.33-wddm.txt", "546.33", "546.33", "12.3",
     [(0, "NVIDIA GeForce GTX 1660 Ti", "0000:01:00.0", 6144)]),
    # R610+ header: "KMD Version" / "CUDA UMD Version"
    ("r610-kmd-header-rtx2080super-610.57.04-fedora.txt", "610.57.04", "610.57.04", "13.3",
     [(0, "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 8192)]),
    ("windows-r610-kmd-header-rtx2080super-610.62.txt", "610.62", "610.62", "13.3",
     [(0, "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 8192)]),
    # unified memory: the memory column says "Not Supported"; PCI domain 000F
    ("cuda13-gb10-580.95.05.txt", "580.95.05", "580.95.05", "13.0", [(0, "NVIDIA GB10", "000f:01:00.0", None)]),
    # MIG enabled: the MIG table must not add GPUs
    ("h100-mig-enabled-590.48.01.txt", "590.48.01", "590.48.01", "13.1",
     [(0, "NVIDIA H100 80GB HBM3", "0000:00:09.0", 81559)]),
    ("h200-590.48.01-cuda13.1.txt", "590.48.01", "590.48.01", "13.1", [(0, "NVIDIA H200", "0000:83:00.0", 143771)]),
])
def test_nvidia_smi_table(fixture_text, name, smi, driver, cuda, gpus):
    text = fixture_text("nvidia-smi", name)
    assert nvidia.parse_smi_header(text) == {"smi_version": smi, "driver_version": driver, "cuda_version": cuda}
    rows = nvidia.parse_smi_table(text)
    assert [(r["index"], r["name"], r["bus"], r["memory_mb"]) for r in rows] == gpus
    assert nvidia.classify_smi_error(text) is None


def test_nvidia_smi_eight_h100(fixture_text):
    rows = nvidia.parse_smi_table(fixture_text("nvidia-smi", "multi-8x-h100-550.90.07.txt"))
    assert [r["index"] for r in rows] == list(range(8))
    assert {r["name"] for r in rows} == {"NVIDIA H100 80GB HBM3"}
    assert len({r["bus"] for r in rows}) == 8
    assert nvidia.parse_smi_header(fixture_text("nvidia-smi", "multi-8x-h100-550.90.07.txt"))["cuda_version"] == "12.4"


def test_nvidia_truncated_names_flagged(fixture_text):
    rows = nvidia.parse_smi_table(fixture_text("nvidia-smi", "single-rtx-a2000-laptop-525.147.05.txt"))
    assert rows[0]["name"] == "NVIDIA RTX A200..." and rows[0]["truncated"]


@pytest.mark.parametrize("name, status, words, library", [
    ("error-driver-library-mismatch-550.144.txt", "error", "do not match", "550.144"),
    ("error-driver-library-mismatch-570.124.txt", "error", "reboot", "570.124"),
    ("error-driver-library-mismatch-580.178-truenas.txt", "error", "do not match", "580.178"),
    ("error-driver-library-mismatch-old-460.txt", "error", "do not match", None),
    ("error-couldnt-communicate-after-kernel-upgrade.txt", "error", "cannot talk to the NVIDIA driver", None),
    ("error-couldnt-communicate-fedora-secureboot.txt", "error", "Secure Boot", None),
    ("error-couldnt-communicate-wsl2.txt", "error", "cannot talk to the NVIDIA driver", None),
    ("error-no-devices-found-rtx5090-rebar-off.txt", "empty", "found no usable GPU", None),
])
def test_nvidia_smi_error_texts(fixture_text, name, status, words, library):
    text = fixture_text("nvidia-smi", name)
    got = nvidia.classify_smi_error(text)
    assert got is not None
    assert got[0] == status
    assert words in got[1]
    if library:
        assert f"the library is {library}" in got[1]
    assert nvidia.parse_smi_table(text) == []
    assert nvidia.parse_query_csv(text) == []


# ------------------------------------------------------------------ nvidia-smi --query-gpu CSV

def test_query_csv_with_header_all_fields(fixture_text):
    rows = nvidia.parse_query_csv(fixture_text("nvidia-smi-query", "all-fields-h100-590.48.01.csv.txt"))
    assert len(rows) == 1
    r = rows[0]
    assert (r["name"], r["driver_version"], r["compute_cap"], r["memory.total"]) == \
        ("NVIDIA H100 80GB HBM3", "590.48.01", "9.0", 81559)
    assert norm_bus(r["pci.bus_id"]) == "0000:00:09.0"
    assert r["uuid"] is not None  # the parser reads it; detection never copies it into the report


def test_query_csv_rtx4080(fixture_text):
    rows = nvidia.parse_query_csv(fixture_text("nvidia-smi-query", "all-fields-rtx4080super-595.71.05.csv.txt"))
    assert [(r["name"], r["compute_cap"], r["driver_version"]) for r in rows] == \
        [("NVIDIA GeForce RTX 4080 SUPER", "8.9", "595.71.05")]


def test_query_csv_two_gpus_header_order(fixture_text):
    rows = nvidia.parse_query_csv(fixture_text("nvidia-smi-query", "compute-cap-titanv-rtx5880ada-570.86.15.csv.txt"))
    assert [(r["index"], r["name"], r["compute_cap"], r["driver_version"]) for r in rows] == [
        (0, "NVIDIA TITAN V", "7.0", "570.86.15"), (1, "NVIDIA RTX 5880 Ada Generation", "8.9", "570.86.15")]


def test_query_csv_compute_cap_only(fixture_text):
    rows = nvidia.parse_query_csv(fixture_text("nvidia-smi-query", "compute-cap-only-8.9-570.133.07.csv.txt"))
    assert [r["compute_cap"] for r in rows] == ["8.9"]


def test_query_csv_noheader_nounits():
    text = "0, NVIDIA GeForce RTX 3090, 550.54.14, 8.6, 24576, 00000000:05:00.0, 0x220410DE\n" \
           "1, NVIDIA GeForce RTX 3090, 550.54.14, [N/A], 24576, 00000000:0A:00.0, 0x220410DE\n"
    rows = nvidia.parse_query_csv(text)
    assert [(r["index"], r["compute_cap"], r["memory.total"], norm_bus(r["pci.bus_id"])) for r in rows] == \
        [(0, "8.6", 24576, "0000:05:00.0"), (1, None, 24576, "0000:0a:00.0")]


@pytest.mark.parametrize("name, version", [
    ("open-module-565.57.01-ubuntu24.04.txt", "565.57.01"),
    ("open-module-525.60.11-arch.txt", "525.60.11"),
    ("proprietary-384.98-ubuntu.txt", "384.98"),
    ("proprietary-580.173.02-truenas.txt", "580.173.02"),
    ("jetson-orin-nx-aarch64-35.3.1.txt", "35.3.1"),
])
def test_proc_driver_version(fixture_text, name, version):
    assert nvidia.parse_proc_driver_version(fixture_text("proc-driver-nvidia", name)) == version


def test_sys_module_version_and_garbage():
    assert nvidia.parse_proc_driver_version("550.90.07\n") == "550.90.07"
    assert nvidia.parse_proc_driver_version("hello") is None


@pytest.mark.parametrize("value, cuda", [(12040, "12.4"), (13010, "13.1"), (11080, "11.8"), (0, None), ("x", None)])
def test_cuda_version_from_nvml_int(value, cuda):
    assert nvidia.cuda_version_from_int(value) == cuda


@pytest.mark.parametrize("name, cc", [
    ("NVIDIA TITAN V", "7.0"), ("Tesla P100-PCIE-16GB", "6.0"), ("NVIDIA GeForce GTX 1070", "6.1"),
    ("NVIDIA GeForce GTX 1050 Ti", "6.1"), ("NVIDIA GeForce RTX 3070", "8.6"), ("NVIDIA GeForce RTX 2080 SUPER", "7.5"),
    ("NVIDIA GeForce GTX 1660 Ti", "7.5"), ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA A100-SXM4-40GB", "8.0"),
    ("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA RTX 5880 Ada Generation", "8.9"), ("NVIDIA GeForce RTX 5090", "12.0"),
    ("NVIDIA GB10", "12.1"), ("Tesla K80", "3.7"), ("NVIDIA GeForce GTX 970", "5.2"), ("Some Future GPU", None),
])
def test_cc_from_name(name, cc):
    assert nvidia.cc_from_name(name) == cc


# ------------------------------------------------------------------ AMD

def test_rocminfo_rx7900xtx(fixture_text):
    text = fixture_text("rocminfo", "radeon-rx7900xtx-gfx1100-rocm6.2.2-ubuntu24.04.txt")
    gpus = amd.parse_rocminfo(text)
    assert [(g["gfx"], g["name"], g["device_id"], g["bus"]) for g in gpus] == \
        [("gfx1100", "Radeon RX 7900 XTX", "744c", "0000:03:00.0")]
    assert gpus[0]["memory_mb"] == 25149440 // 1024
    assert amd.parse_rock_version(text) == "6.8.5"


def test_rocminfo_mi300x(fixture_text):
    gpus = amd.parse_rocminfo(fixture_text("rocminfo", "instinct-mi300x-x4-gfx942-epyc9474f.txt"))
    assert len(gpus) == 4  # the two EPYC CPU agents are not GPUs
    assert {g["gfx"] for g in gpus} == {"gfx942"}
    assert {g["name"] for g in gpus} == {"AMD Instinct MI300X"}
    assert gpus[0]["bus"] == "0000:26:00.0"  # BDFID 9728


def test_rocminfo_mi25_old_layout(fixture_text):
    gpus = amd.parse_rocminfo(fixture_text("rocminfo", "instinct-mi25-x7-gfx900-threadripper-pro.txt"))
    assert len(gpus) == 7
    assert {(g["gfx"], g["name"]) for g in gpus} == {("gfx900", "Radeon Instinct MI25")}


def test_rocminfo_wsl2(fixture_text):
    gpus = amd.parse_rocminfo(fixture_text("rocminfo", "wsl2-radeon-rx6800xt-gfx1030-rocm6.1.3.txt"))
    assert [(g["gfx"], g["name"]) for g in gpus] == [("gfx1030", "AMD Radeon RX 6800 XT")]


def test_amd_smi(fixture_text):
    static = amd.parse_amd_smi_static(fixture_text("amd-smi", "static-mi300x-blog-cut.txt"))
    assert [(g["index"], g["name"], g["device_id"], g["bus"]) for g in static] == \
        [(0, "MI300X-O", "74a1", "0000:05:00.0")]
    lst = amd.parse_amd_smi_list(fixture_text("amd-smi", "list-mi300x-blog-cut.txt"))
    assert [g["bus"] for g in lst] == ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0"]
    nic = amd.parse_amd_smi_list(fixture_text("amd-smi", "list-mi210-with-ai-nic-rocm7.txt"))
    assert nic == [{"index": 0, "bus": "0000:23:00.0"}]  # the AI NIC is not a GPU
    assert amd.parse_amd_smi_version(fixture_text("amd-smi", "version-rocm6.4-inbox-amdgpu-ubuntu24.04.txt")) == \
        {"tool": "25.3.0+ede62f2", "library": "25.3.0", "rocm": "6.4.0"}


def test_rocm_smi_productname_forms(fixture_text):
    csv = amd.parse_rocm_smi_productname(fixture_text("rocm-smi", "showproductname-csv-mi100-x2.txt"))
    assert [(c["index"], c["name"]) for c in csv] == [(0, "AMD Instinct MI100"), (1, "AMD Instinct MI100")]
    js = amd.parse_rocm_smi_productname(fixture_text("rocm-smi", "showproductname-json-mi250x.txt"))
    assert [(c["name"], c["model"], c["gfx"]) for c in js] == \
        [("AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "0x7408", "gfx90a")]
    old = amd.parse_rocm_smi_productname(fixture_text("rocm-smi", "showproductname-mi100-rocm4.0.txt"))
    assert [(c["index"], c["name"], c["model"]) for c in old] == [(0, None, "0xc34")]
    allinfo = amd.parse_rocm_smi_productname(fixture_text("rocm-smi", "showallinfo-a-mi300x-x4.txt"))
    assert [c["name"] for c in allinfo] == ["AMD Instinct MI300X OAM"] * 4


@pytest.mark.parametrize("name, targets", [
    ("legacy-gfx000-gfx803-gfx902.txt", ["gfx803", "gfx902"]),
    ("legacy-t-gpu-vega56-gfx900.txt", ["gfx900"]),
    ("mi300x-x8-gfx942-no-gfx000.txt", ["gfx942"] * 8),
])
def test_rocm_agent_enumerator(fixture_text, name, targets):
    assert amd.parse_rocm_agent_enumerator(fixture_text("rocm-agent-enumerator", name)) == targets


@pytest.mark.parametrize("value, gfx", [(110000, "gfx1100"), (90010, "gfx90a"), (90402, "gfx942"),
                                        (100300, "gfx1030"), (90012, "gfx90c"), (0, None), ("junk", None)])
def test_gfx_from_kfd_target_version(value, gfx):
    assert amd.gfx_from_target_version(value) == gfx


def test_kfd_properties():
    text = "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\nlocation_id 768\ndomain 0\n" \
           "vendor_id 4098\ndevice_id 29772\n"
    props = amd.parse_kfd_properties(text)
    assert props["simd_count"] == 192 and amd.gfx_from_target_version(props["gfx_target_version"]) == "gfx1100"
    assert norm_bus(props["location_id"]) == "0000:03:00.0"


def test_amd_integrated():
    assert amd.amd_is_integrated("gfx1103", "AMD Radeon 780M")
    assert amd.amd_is_integrated("gfx902", None)
    assert amd.amd_is_integrated(None, "AMD Radeon(TM) Graphics")
    assert not amd.amd_is_integrated("gfx1100", "Radeon RX 7900 XTX")
    assert not amd.amd_is_integrated("gfx942", "AMD Instinct MI300X")


# ------------------------------------------------------------------ lspci, Intel

def test_lspci_hybrid_laptop_nn(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "nn-grep-vga-3d-laptop-intel-mx130-plus-egpu-gtx970-bridge-false-positive.txt"))
    # the PCI bridge (class 0604) whose id contains "3d" is not a display device
    assert [(d.bus, d.pci_id, d.class_code, d.vendor) for d in devs] == [
        ("0000:00:02.0", "8086:3e9b", "0300", "intel"),
        ("0000:02:00.0", "10de:174d", "0302", "nvidia"),
        ("0000:08:00.0", "10de:13c2", "0300", "nvidia"),
    ]
    assert [d.name for d in devs[1:]] == ["GeForce MX130", "GeForce GTX 970"]
    assert intel.intel_is_integrated(devs[0].device_id)


def test_lspci_domain_and_names(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "nn-with-domain-laptop-tigerlake-uhd-plus-rtx-a5000-mobile.txt"))
    assert [(d.pci_id, d.name) for d in devs] == [("8086:9a70", "UHD Graphics"), ("10de:24b6", "RTX A5000 Mobile")]
    assert intel.intel_is_integrated("9a70")


def test_lspci_without_nn_and_display_controller_class(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "d-class-03xx-alderlake-display-controller-plus-rtx3080ti.txt"))
    assert [(d.vendor, d.class_code, d.name) for d in devs] == [
        ("intel", "0380", "Intel AlderLake-S GT1"), ("nvidia", "0300", "GeForce RTX 3080 Ti")]
    strix = pci.parse_lspci(fixture_text("lspci", "grep-display-amd-strix-880m-igpu-class-0380.txt"))
    assert [(d.vendor, d.name) for d in strix] == [("amd", "Radeon 880M / 890M")]
    assert amd.amd_is_integrated(None, strix[0].name)
    iris = pci.parse_lspci(fixture_text("lspci", "grep-vga-3d-laptop-iris-plus-g7-mx250.txt"))
    assert [(d.vendor, d.name) for d in iris] == [("intel", "Intel Iris Plus Graphics G7"), ("nvidia", "GeForce MX250")]


def test_lspci_nnk_and_amd(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "nnk-grep-A3-nvidia-2x-rtx3090.txt"))
    assert [(d.bus, d.pci_id, d.name) for d in devs] == [
        ("0000:05:00.0", "10de:2204", "GeForce RTX 3090"), ("0000:0a:00.0", "10de:2204", "GeForce RTX 3090")]
    navi = pci.parse_lspci(fixture_text("lspci", "nn-amd-navi31-rx7900xtx.txt"))
    assert [(d.pci_id, d.name) for d in navi] == [("1002:744c", "Radeon RX 7900 XT/7900 XTX")]


@pytest.mark.parametrize("device_id, family", [
    ("56a0", "Arc A-series (DG2 / Alchemist)"), ("0x5690", "Arc A-series (DG2 / Alchemist)"),
    ("56c0", "Data Center GPU Flex (ATS-M)"), ("e20b", "Arc B-series (Battlemage)"),
    ("E212", "Arc B-series (Battlemage)"), ("0bd5", "Data Center GPU Max (Ponte Vecchio)"),
    ("4905", "Iris Xe MAX (DG1)"),
    ("9a70", None), ("3e9b", None), ("7d55", None),  # Tiger Lake UHD, Coffee Lake, Meteor Lake "Arc" iGPU
    ("46a6", None),
])
def test_intel_discrete_table(device_id, family):
    assert intel.intel_family(device_id) == family
    assert intel.intel_is_integrated(device_id) == (family is None)


def test_intel_by_name_without_id():
    assert not intel.intel_is_integrated(None, "Intel(R) Arc(TM) A770 Graphics")
    assert intel.intel_is_integrated(None, "Intel(R) UHD Graphics 630")
    assert intel.windows_pnp_ids(r"PCI\VEN_8086&DEV_56A0&SUBSYS_10208086&REV_08\6&1A2B") == ("8086", "56a0")


# ------------------------------------------------------------------ macOS

def test_system_profiler_apple_silicon(fixture_text):
    gpus = apple.parse_system_profiler_displays(fixture_text("system-profiler", "text-apple-silicon-m3-macbookpro-external-display.txt"))
    assert [(g["name"], g["vendor"], g["cores"]) for g in gpus] == [("Apple M3", "apple", 10)]


def test_system_profiler_dual_gpu_mac(fixture_text):
    gpus = apple.parse_system_profiler_displays(
        fixture_text("system-profiler", "text-intel-macbookpro-2010-dual-gpu-intel-hd-plus-gt330m-cut.txt"))
    assert [(g["name"], g["vendor"], g["bus"], g["memory_mb"]) for g in gpus] == [
        ("Intel HD Graphics", "intel", "Built-In", 288), ("NVIDIA GeForce GT 330M", "nvidia", "PCIe", 512)]


def test_system_profiler_imac_pro(fixture_text):
    gpus = apple.parse_system_profiler_displays(fixture_text("system-profiler", "text-intel-imacpro-2017-radeon-pro-vega64.txt"))
    assert [(g["name"], g["vendor"], g["memory_mb"], g["device_id"]) for g in gpus] == \
        [("Radeon Pro Vega 64", "amd", 16384, "6860")]


@pytest.mark.parametrize("name, brand, chip", [
    ("machdep-cpu-apple-m1-bigsur.txt", "Apple M1", "Apple M1"),
    ("A-machdep-cpu-early-apple-silicon-apple-processor.txt", "Apple processor", "Apple processor"),
    ("n-brand-string-apple-m1-pro-under-rosetta.txt", "Apple M1 Pro", "Apple M1 Pro"),
    ("n-brand-string-intel-macbookpro-2012.txt", "Intel(R) Core(TM) i7-3820QM CPU @ 2.70GHz", None),
    ("n-machdep-cpu-model-unknown-oid-apple-silicon.txt", None, None),
])
def test_sysctl(fixture_text, name, brand, chip):
    d = apple.parse_sysctl(fixture_text("sysctl", name))
    got = d.get("machdep.cpu.brand_string", d.get(""))
    assert got == brand
    assert apple.apple_chip(got) == chip


def test_sysctl_counts(fixture_text):
    d = apple.parse_sysctl(fixture_text("sysctl", "machdep-cpu-apple-m1-bigsur.txt"))
    assert d["machdep.cpu.core_count"] == "8" and d["machdep.cpu.thread_count"] == "8"


# ------------------------------------------------------------------ Windows

def test_windows_video_controllers(fixture_text):
    two = windows.parse_video_controllers(fixture_text("windows-videocontroller", "powershell-wmi-name-amd-igpu-plus-rx6800xt.txt"))
    assert [(a["name"], a["vendor"]) for a in two] == [("AMD Radeon(TM) Graphics", "amd"), ("AMD Radeon RX 6800 XT", "amd")]
    assert amd.amd_is_integrated(None, two[0]["name"]) and not amd.amd_is_integrated(None, two[1]["name"])
    r9 = windows.parse_video_controllers(fixture_text("windows-videocontroller", "wmic-get-caption-amd-r9-390.txt"))
    assert [(a["name"], a["vendor"]) for a in r9] == [("AMD Radeon (TM) R9 390 Series", "amd")]
    gtx = windows.parse_video_controllers(fixture_text("windows-videocontroller", "wmic-get-caption-nvidia-gtx1060.txt"))
    assert [(a["name"], a["vendor"]) for a in gtx] == [("NVIDIA GeForce GTX 1060", "nvidia")]
    virt = windows.parse_video_controllers(
        fixture_text("windows-videocontroller", "wmic-get-name-virtual-adapter-first-plus-rtx2080ti-header-omitted.txt"))
    assert [(a["name"], a["vendor"], a["virtual"]) for a in virt] == [
        ("GameViewer Virtual Display Adapter", None, True), ("NVIDIA GeForce RTX 2080 Ti", "nvidia", False)]


def test_windows_powershell_lines_and_driver_version():
    text = "NVIDIA GeForce RTX 4070|PCI\\VEN_10DE&DEV_2786&SUBSYS_00000000&REV_A1\\4&X|31.0.15.4633|4293918720\r\n" \
           "Intel(R) UHD Graphics 770|PCI\\VEN_8086&DEV_4680&SUBSYS_00000000&REV_0C\\3&X|31.0.101.4502|2147479552\r\n"
    got = windows.parse_video_controllers(text)
    assert [(a["vendor"], a["device_id"], a["memory_mb"]) for a in got] == [("nvidia", "2786", 4095), ("intel", "4680", 2047)]
    # the conversion is app.core.compat.cuda's (one home); detection applies it to NVIDIA adapters
    assert cuda.windows_driver_to_nvidia("31.0.15.4633") == "546.33"
    assert cuda.windows_driver_to_nvidia("32.0.15.6094") == "560.94"
    assert cuda.windows_driver_to_nvidia("garbage") is None
    nv, intel_gpu = (windows.adapter_gpu(a, n) for n, a in enumerate(got))
    assert nv.driver_version == "546.33" and nv.pci_id == "10de:2786"
    assert intel_gpu.driver_version == "31.0.101.4502" and intel_gpu.integrated  # only NVIDIA's is converted


# ------------------------------------------------------------------ CPU, OS, Pythons, tools, env

def test_proc_cpuinfo_x86():
    block = ("processor\t: {n}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
             "physical id\t: 0\ncore id\t\t: {c}\ncpu MHz\t\t: 2000.000\n"
             "flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw avx512_bf16 amx_tile amx_bf16 amx_int8\n\n")
    text = "".join(block.format(n=n, c=n // 2) for n in range(4))
    got = cpu.parse_proc_cpuinfo(text)
    assert got["model"] == "Intel(R) Xeon(R) Platinum 8480+" and got["vendor"] == "GenuineIntel"
    assert got["threads"] == 4 and got["cores"] == 2
    assert got["flags"] == ["avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_bf16", "amx", "amx_bf16", "amx_int8"]


def test_proc_cpuinfo_arm():
    text = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics " \
           "fphp asimdhp sve sve2 bf16 i8mm\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n\n"
    got = cpu.parse_proc_cpuinfo(text)
    assert got["flags"] == ["neon", "fp16", "bf16", "i8mm", "sve", "sve2"]
    assert got["vendor"] == "ARM"


def test_os_release_and_wsl():
    rel = osinfo.parse_os_release('PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n')
    assert rel["PRETTY_NAME"] == "Ubuntu 22.04.4 LTS" and rel["ID"] == "ubuntu"
    assert osinfo.wsl_version("5.15.153.1-microsoft-standard-WSL2") == 2
    assert osinfo.wsl_version("4.4.0-19041-Microsoft") == 1
    assert osinfo.wsl_version("6.1.0-28-amd64") is None
    assert osinfo.parse_glibc("glibc 2.36") == "2.36"
    assert osinfo.parse_glibc("") is None


def test_python_probe_and_launcher():
    assert pythons.parse_probe_output("TSA-PY 3.12.1 cpython 1 64 linux\n") == \
        {"version": "3.12.1", "implementation": "CPython", "can_venv": True, "bits": 64}
    assert pythons.parse_probe_output("TSA-PY 2.7.18 cpython 0 64 linux2")["can_venv"] is False
    assert pythons.parse_probe_output("Traceback (most recent call last):") is None
    new = " -V:3.12 *        C:\\Users\\X\\AppData\\Local\\Programs\\Python\\Python312\\python.exe\n" \
          " -V:3.11          C:\\Python311\\python.exe\n"
    assert pythons.parse_py_launcher(new) == [
        ("3.12", "C:\\Users\\X\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"),
        ("3.11", "C:\\Python311\\python.exe")]
    old = "Installed Pythons found by py Launcher for Windows\n -3.9-64        C:\\Python39\\python.exe *\n"
    assert pythons.parse_py_launcher(old) == [("3.9", "C:\\Python39\\python.exe")]
    assert pythons.version_from_path("/root/.pyenv/versions/3.12.1/bin/python3.12") == "3.12.1"
    assert pythons.version_from_path("/h/.local/share/uv/python/cpython-3.13.0-linux-x86_64-gnu/bin/python3") == "3.13.0"


@pytest.mark.parametrize("name, text, version", [
    ("uv", "uv 0.13.9 (0f3e1d2c3 2026-10-01)", "0.13.9"),
    ("conda", "conda 24.11.3", "24.11.3"),
    ("mamba", "mamba 1.5.8\nconda 24.1.2", "1.5.8"),
    ("micromamba", "2.0.5\n", "2.0.5"),
    ("conda", "command not found", None),
])
def test_tool_versions(name, text, version):
    assert tools.parse_tool_version(name, text) == version


def test_env_vars_masking_and_notes():
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin", "HTTPS_PROXY": "http://alice:s3cret@proxy:3128",
           "PIP_INDEX_URL": "https://user:tok@pypi.example/simple", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
           "HF_TOKEN": "x", "HSA_OVERRIDE_GFX_VERSION": "10.3.0", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
    got = envvars.collect(env)
    assert got == {"CUDA_VISIBLE_DEVICES": "", "HTTPS_PROXY": "http://***@proxy:3128",
                   "PIP_INDEX_URL": "https://***@pypi.example/simple",
                   "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
                   "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
    notes = render_all(envvars.visible_devices_note(got))
    assert any("CUDA_VISIBLE_DEVICES is set but empty" in n and "see no GPU" in n for n in notes)
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in n and "as gfx1030" in n for n in notes)
    assert envvars.visible_devices_note({"CUDA_VISIBLE_DEVICES": "0,1"}) == []
    hidden = envvars.collect({"CUDA_VISIBLE_DEVICES": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,"
                                                      "MIG-1f4bd2a1-3c5e-5b2e-9c1d-5a6b7c8d9e0f"})
    assert hidden == {"CUDA_VISIBLE_DEVICES": "GPU-<uuid>,MIG-<uuid>"}
    assert "hides every GPU" in render_all(envvars.visible_devices_note({"HIP_VISIBLE_DEVICES": "-1"}))[0]


def test_norm_bus_forms():
    assert norm_bus("00000000:03:00.0") == "0000:03:00.0"
    assert norm_bus("0000000F:01:00.0") == "000f:01:00.0"
    assert norm_bus("0a:00.1") == "0000:0a:00.1"
    assert norm_bus(768) == "0000:03:00.0"
    assert norm_bus("nothing") is None
