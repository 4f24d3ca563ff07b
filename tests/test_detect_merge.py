"""Merging GPUs found by several sources, hybrid laptops, and the plain-words explanation."""
from __future__ import annotations

from app.core.base.text import render_all
from app.core.detection import nvidia, pci
from app.core.detection.detect import _target_dir, explain, merge_gpus
from app.core.detection.system import GPU, OSInfo, ProbeRecord, SystemReport


def _smi_gpus(fixture_text, name):
    rows = nvidia.parse_smi_table(fixture_text("nvidia-smi", name))
    return [(GPU(vendor="nvidia", name=r["name"], driver_version="535.183.01", compute_capability="6.1",
                 memory_mb=r["memory_mb"], index=r["index"], source="nvidia-smi"), r["bus"]) for r in rows]


def test_hybrid_laptop_igpu_marked_integrated_and_nvidia_deduped(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "nn-with-domain-laptop-tigerlake-uhd-plus-rtx-a5000-mobile.txt"))
    found = [(GPU(vendor="nvidia", name="NVIDIA RTX A5000 Laptop GPU", driver_version="550.54.14",
                  compute_capability="8.6", memory_mb=16384, index=0, source="nvml"), "0000:01:00.0")]
    gpus = merge_gpus(found, devs)
    assert [(g.vendor, g.name, g.integrated) for g in gpus] == [
        ("nvidia", "NVIDIA RTX A5000 Laptop GPU", False), ("intel", "Intel UHD Graphics", True)]
    assert gpus[0].pci_id == "10de:24b6" and gpus[0].source == "nvml"  # PCI only filled the gap
    assert gpus[1].pci_id == "8086:9a70"


def test_two_sources_same_gpus_by_bus(fixture_text):
    smi = _smi_gpus(fixture_text, "multi-gtx1050ti-gtx1060-535.183.01-debian12.txt")
    nvml = [(GPU(vendor="nvidia", name=g.name, driver_version="535.183.01", compute_capability="6.1",
                 index=g.index, source="nvml"), bus) for g, bus in smi]
    gpus = merge_gpus(smi + nvml)
    assert len(gpus) == 2
    assert {g.source for g in gpus} == {"nvml"}  # the richer source wins
    assert [g.memory_mb for g in gpus] == [4096, 6144]  # ... and the other fills its gaps


def test_truncated_name_replaced_by_full_one():
    a = (GPU(vendor="nvidia", name="NVIDIA GeForce RTX 2080 ...", index=0, source="nvidia-smi"), "0000:0c:00.0")
    b = (GPU(vendor="nvidia", name="NVIDIA GeForce RTX 2080 SUPER", index=0, source="pci"), "0000:0c:00.0")
    assert [g.name for g in merge_gpus([a, b])] == ["NVIDIA GeForce RTX 2080 SUPER"]


def test_nvidia_on_pci_without_a_working_driver_is_reported(fixture_text):
    devs = pci.parse_lspci(fixture_text("lspci", "nnk-grep-A3-nvidia-2x-rtx3090.txt"))
    gpus = merge_gpus([], devs)
    assert [(g.name, g.source, g.pci_id) for g in gpus] == [
        ("NVIDIA GeForce RTX 3090", "pci", "10de:2204"), ("NVIDIA GeForce RTX 3090", "pci", "10de:2204")]
    report = SystemReport(gpus=gpus, probes=[ProbeRecord("nvidia-smi", "error", "nvidia-smi cannot talk to the NVIDIA driver")])
    ex = explain(report)
    assert any("its driver did not answer" in p for p in render_all(ex.problems))
    assert any("cannot talk to the NVIDIA driver" in p for p in render_all(ex.problems))
    assert not any("CUDA build" in m for m in render_all(ex.meaning))


def test_amd_dgpu_plus_igpu_from_pci_with_kfd_targets(fixture_text):
    dgpu = pci.parse_lspci(fixture_text("lspci", "nn-amd-navi31-rx7900xtx.txt"))
    igpu = pci.parse_lspci(fixture_text("lspci", "grep-display-amd-strix-880m-igpu-class-0380.txt"))
    gpus = merge_gpus([], dgpu + igpu, kfd={"0000:03:00.0": "gfx1100", "0000:c4:00.0": "gfx1150"})
    assert [(g.name, g.gfx_target, g.integrated) for g in gpus] == [
        ("AMD Radeon RX 7900 XT/7900 XTX", "gfx1100", False), ("AMD Radeon 880M / 890M", "gfx1150", True)]
    ex = explain(SystemReport(os=OSInfo(family="linux"), gpus=gpus))
    assert any("ROCm" in m and "gfx1100" in m for m in render_all(ex.meaning))


def test_intel_arc_discrete_from_pci_id():
    dev = pci.PCIDevice("0000:03:00.0", "8086", "56a0", "0300", "Intel Corporation DG2 [Arc A770] [8086:56a0]")
    unknown = pci.PCIDevice("0000:04:00.0", "8086", "e20b", "0300", "Intel Corporation Device [8086:e20b]")
    gpus = merge_gpus([], [dev, unknown])
    assert [(g.name, g.integrated) for g in gpus] == [("Intel Arc A770", False),
                                                       ("Intel Arc B-series (Battlemage)", False)]


def test_virtual_adapters_are_not_gpus():
    qemu = pci.PCIDevice("0000:00:02.0", "1234", "1111", "0300", "")
    assert merge_gpus([], [qemu]) == []


def test_explain_nvidia_meaning_and_cuda_version():
    g = GPU(vendor="nvidia", name="NVIDIA GeForce RTX 3070", driver_version="531.68", compute_capability="8.6",
            memory_mb=8192, source="nvidia-smi")
    ex = explain(SystemReport(gpus=[g], nvidia_cuda_version="12.1"))
    assert any("supports CUDA up to 12.1" in m and "no CUDA toolkit is needed" in m for m in render_all(ex.meaning))
    assert any("compute capability 8.6" in f for f in render_all(ex.found))


def test_target_dir_walks_up(tmp_path):
    assert _target_dir(tmp_path / "a" / "b" / "c") == tmp_path
    assert _target_dir(tmp_path) == tmp_path


def test_explain_integrated_only_and_windows_amd():
    igpu = GPU(vendor="intel", name="Intel UHD Graphics", integrated=True, pci_id="8086:9a70", source="pci")
    ex = explain(SystemReport(os=OSInfo(family="linux"), gpus=[igpu]))
    assert render_all(ex.meaning) == ["Only integrated graphics were found (Intel UHD Graphics): the CPU build of PyTorch "
                          "is the right one here."]
    rx = GPU(vendor="amd", name="AMD Radeon RX 6800 XT", source="win32-videocontroller")
    ex = explain(SystemReport(os=OSInfo(family="windows"), gpus=[rx]))
    assert "only on Linux" in render_all(ex.meaning)[0]


def test_windows_adapter_list_merges_with_nvidia_smi(fixture_text):
    """Windows lists the Intel iGPU first; its NVIDIA entry is the same card nvidia-smi reports."""
    from app.core.detection import windows

    text = ("Intel(R) UHD Graphics 630|PCI\\VEN_8086&DEV_3E9B&SUBSYS_0|31.0.101.2111|1073741824\n"
            "NVIDIA GeForce GTX 1660 Ti|PCI\\VEN_10DE&DEV_2191&SUBSYS_0|31.0.15.4633|4293918720\n")
    found = []
    for n, a in enumerate(windows.parse_video_controllers(text)):
        found.append((GPU(vendor=a["vendor"], name=a["name"], memory_mb=a["memory_mb"], index=n,
                          integrated=a["vendor"] == "intel",
                          pci_id=f"{a['vendor_id']}:{a['device_id']}", source="win32-videocontroller"), None))
    smi = [(GPU(vendor="nvidia", name=r["name"], driver_version="546.33", compute_capability="7.5",
                memory_mb=r["memory_mb"], index=r["index"], source="nvidia-smi"), r["bus"])
           for r in nvidia.parse_smi_table(fixture_text("nvidia-smi", "windows-gtx1660ti-546.33-wddm.txt"))]
    gpus = merge_gpus(found + smi)
    assert [(g.vendor, g.name, g.source, g.memory_mb, g.pci_id, g.integrated) for g in gpus] == [
        ("nvidia", "NVIDIA GeForce GTX 1660 Ti", "nvidia-smi", 6144, "10de:2191", False),
        ("intel", "Intel(R) UHD Graphics 630", "win32-videocontroller", 1024, "8086:3e9b", True)]
