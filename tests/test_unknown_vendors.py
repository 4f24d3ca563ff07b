"""GPUs of makers PyTorch has no build for (Qualcomm on Windows on Arm, Moore Threads, Huawei
Ascend, Cambricon, ...) are never refused: the SystemReport keeps them, ``detect`` names them, the
engine explains them and serves the machine with the CPU build (or the other GPUs' build), and
detection finds them by PCI vendor id from the data's table."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.compat.data import load_compat
from app.core.detection import pci, vendors, windows
from app.core.detection.detect import explain
from app.core.detection.merge import merge_gpus
from app.core.detection.system import GPU, SystemReport
from app.core.recommend import recommend

REPO = Path(__file__).resolve().parents[1]
DATA = load_compat(bundled=True)
WOA = {"os": {"family": "windows", "version": "10.0.26100"}, "arch": "arm64", "python": {"version": "3.12.4"},
       "gpus": [{"vendor": "qualcomm", "name": "Qualcomm(R) Adreno(TM) X1-85 GPU", "integrated": True}]}


@pytest.mark.parametrize("vendor,name,shown", [
    ("qualcomm", "Qualcomm(R) Adreno(TM) X1-85 GPU", "Qualcomm"), ("moorethreads", "MTT S80", "Moore Threads"),
    ("huawei", "Ascend 910B", "Huawei"), ("cambricon", "MLU370-S4", "Cambricon"),
    ("Biren", "BR104", "Biren"),  # in no table row: kept as written, never refused
])
def test_any_maker_is_accepted_shown_and_explained(vendor, name, shown):
    report = SystemReport.from_dict({**WOA, "os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64",
                                     "gpus": [{"vendor": vendor, "name": name}]})
    assert report.gpus[0].vendor == vendor.lower()
    ex = explain(report)
    assert any(render(t).startswith(f"{shown} GPU: {name}") for t in ex.found)
    meaning = " ".join(render(t) for t in ex.meaning)
    assert f"PyTorch has no build for your {name} ({shown}) here; the CPU build is used." in meaning
    assert any("没有适用于" in render(t, "zh_CN") for t in ex.meaning)
    rec = recommend(report, DATA)
    assert (rec.backend, rec.variant) == ("cpu", "cpu")
    assert "rec.unknown_vendor_cpu" in rec.reason_codes


def test_vendor_is_validated_for_type_only():
    for bad in ("", "  ", None, 3, ["nvidia"]):
        with pytest.raises(BadInput, match=r"gpus\[\d*\]\.vendor"):
            SystemReport.from_dict({"gpus": [{"vendor": bad, "name": "x"}]})


def test_windows_on_arm_with_qualcomm_via_the_cli(tmp_path):
    """The issue's report: recommend --from-report used to exit 2 ("gpus[].vendor 'qualcomm' is not one of ...")."""
    report = tmp_path / "woa.json"
    report.write_text(json.dumps(WOA), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "app", "recommend", "--from-report", str(report)],
                          capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "PyTorch has no build for your Qualcomm Adreno X1-85 GPU (Qualcomm) here; the CPU build is used." \
        in done.stdout
    assert "x64 CPU build runs under Windows' x64 emulation" in done.stdout


def test_an_unknown_maker_beside_nvidia_never_blocks():
    report = {"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": {"version": "3.12.4"},
              "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9",
                        "driver_version": "580.95.05"}, {"vendor": "cambricon", "name": "MLU370-S4"}]}
    rec = recommend(report, DATA)
    assert rec.backend == "cuda" and [u.gpu.vendor for u in rec.unserved_gpus] == ["cambricon"]
    assert "PyTorch has no build for it" in rec.texts().unserved[0]


# ------------------------------------------------------------------ detection names them

@pytest.mark.parametrize("vid,vendor", [("10de", "nvidia"), ("1002", "amd"), ("8086", "intel"), ("106b", "apple"),
                                        ("5143", "qualcomm"), ("17cb", "qualcomm"), ("1ed5", "moorethreads"),
                                        ("19e5", "huawei"), ("cabc", "cambricon"), ("1234", None)])
def test_pci_vendor_ids_come_from_the_data(vid, vendor):
    assert vendors.vendor_of_id(vid) == vendor
    assert pci.PCIDevice("0000:01:00.0", vid, "0001", "0300").vendor == vendor


def test_every_vendor_row_has_a_source_and_a_unique_id():
    ids = [r.id for r in DATA.pci_vendors]
    assert len(ids) == len(set(ids)) and all("pci.ids" in r.source for r in DATA.pci_vendors)
    assert {"nvidia", "amd", "intel", "apple", "qualcomm", "moorethreads", "huawei", "cambricon"} <= \
        {r.vendor for r in DATA.pci_vendors}


def _sysfs(root: Path, bus: str, cls: str, vendor: str, device: str) -> None:
    d = root / "sys/bus/pci/devices" / bus
    d.mkdir(parents=True)
    (d / "class").write_text(cls + "\n", encoding="utf-8")
    (d / "vendor").write_text(vendor + "\n", encoding="utf-8")
    (d / "device").write_text(device + "\n", encoding="utf-8")


def test_sysfs_names_other_makers_and_their_accelerators_but_not_npus(tmp_path):
    _sysfs(tmp_path, "0000:01:00.0", "0x030000", "0x1ed5", "0x0201")  # Moore Threads MTT S80 (VGA)
    _sysfs(tmp_path, "0000:02:00.0", "0x120000", "0x19e5", "0xd801")  # Huawei Ascend (processing accelerator)
    _sysfs(tmp_path, "0000:00:0b.0", "0x120000", "0x8086", "0x7d1d")  # Intel NPU: class 12h, not a GPU
    _sysfs(tmp_path, "0000:00:02.0", "0x030000", "0x8086", "0x7d55")  # Intel Arc iGPU
    _sysfs(tmp_path, "0000:03:00.0", "0x020000", "0x10de", "0x2204")  # not a display or accelerator class
    found = {d.bus: d.vendor for d in pci.scan_sysfs(str(tmp_path))}
    assert found == {"0000:01:00.0": "moorethreads", "0000:02:00.0": "huawei", "0000:00:02.0": "intel"}
    gpus = merge_gpus([], [d for d in pci.scan_sysfs(str(tmp_path)) if d.vendor])
    names = {g.vendor: g.name for g in gpus}
    assert names["moorethreads"] == "Moore Threads GPU 1ed5:0201" and names["huawei"] == "Huawei GPU 19e5:d801"


def test_windows_adapters_of_other_makers_are_kept():
    text = ("Qualcomm(R) Adreno(TM) X1-85 GPU|ACPI\\VEN_QCOM&DEV_0C36&SUBSYS_CLS08380&REV_1000\\3&1&0|31.0.95.0|"
            "2147483648\n"
            "MTT S80|PCI\\VEN_1ED5&DEV_0201&SUBSYS_00011ED5&REV_01\\4&1&0|1.0.0.0|4294967295\n"
            "Microsoft Basic Display Adapter|ROOT\\BASICDISPLAY\\0000|10.0.26100.1|0\n")
    adapters = windows.parse_video_controllers(text)
    gpus = [g for g in (windows.adapter_gpu(a, n) for n, a in enumerate(adapters)) if g is not None]
    assert [(g.vendor, g.name) for g in gpus] == [("qualcomm", "Qualcomm(R) Adreno(TM) X1-85 GPU"),
                                                  ("moorethreads", "MTT S80")]
    assert isinstance(gpus[0], GPU)
