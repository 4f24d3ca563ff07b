"""What a GPU is when its driver did not say (app/core/detection/gpu_ids.py), on real GPUs: each row of
tests/fixtures/gpu-ids.toml is a real product (pci.ids' text, the name Windows / NVML give it) with
its compute capability, gfx target or XPU support and the source of that. Every row goes through
detection the ways a machine shows it: an ``lspci -nn`` line, Windows' Win32_VideoController line
(``PCI\\VEN_10DE&DEV_1B06&...``), a sysfs tree, and its name alone; then the engine."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from app.core.compat.data import load_compat
from app.core.detection import gpu_ids, pci
from app.core.detection.merge import merge_gpus
from app.core.detection.system import GPU
from app.core.detection.windows import adapter_gpu, parse_video_controllers

DATA = load_compat(bundled=True)
ROWS = tomllib.loads((Path(__file__).parent / "fixtures" / "gpu-ids.toml").read_text(encoding="utf-8"))["gpu"]
CORP = {"nvidia": "NVIDIA Corporation", "amd": "Advanced Micro Devices, Inc. [AMD/ATI]", "intel": "Intel Corporation"}


def _id(row: dict) -> str:
    return f"{row['vendor']}-{row['pci']}-{row['name']}"


def _truth(row: dict) -> str | None:
    return row.get("cc") or row.get("gfx")


def _value(g: GPU) -> str | None:
    return g.compute_capability if g.vendor == "nvidia" else g.gfx_target


def _check(g: GPU, row: dict) -> None:
    assert g.vendor == row["vendor"]
    if row["vendor"] == "intel":
        assert g.integrated is row["integrated"]
    else:
        assert _value(g) == _truth(row), (g, row["source"])


def test_the_table_covers_every_family_with_60_or_more_real_gpus():
    assert len(ROWS) >= 60 and all(r["source"].startswith("pci.ids @c1c1254") for r in ROWS)
    families = " ".join(r["family"] for r in ROWS)
    for word in ("Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell", "laptop",
                 "workstation", "data center", "Polaris", "Vega", "CDNA", "RDNA1", "RDNA2", "RDNA3", "RDNA4",
                 "Phoenix", "Hawk Point", "Strix", "Rembrandt", "Renoir", "Van Gogh", "Arc A-series", "iGPU"):
        assert word in families, word


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_an_lspci_line(row):
    """``lspci -nn`` names the chip and the ids: the PCI id, else NVIDIA's chip code, tells the value."""
    cls = "3D controller [0302]" if "laptop" in row["family"] else "VGA compatible controller [0300]"
    line = f"01:00.0 {cls}: {CORP[row['vendor']]} {row['pci_ids']} [{row['pci']}] (rev a1)"
    devices = pci.parse_lspci(line)
    told: list[str] = []
    (g,) = merge_gpus([], devices, told=told)
    _check(g, row)
    if row["vendor"] != "intel":
        assert told and f"from its PCI id {row['pci']}" in told[0]


@pytest.mark.parametrize("row", [r for r in ROWS if r["vendor"] == "nvidia"], ids=_id)
def test_nvidias_chip_code_alone(row):
    """An id newer than the data's table: the chip code pci.ids writes (GP102, GA104GLM ...) tells it."""
    line = f"01:00.0 VGA compatible controller [0300]: NVIDIA Corporation {row['pci_ids']} [10de:ffff]"
    (g,) = merge_gpus([], pci.parse_lspci(line))
    assert g.compute_capability == row["cc"], row["pci_ids"]


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_a_windows_adapter(row):
    """Win32_VideoController: the adapter's name and PNPDeviceID ``PCI\\VEN_xxxx&DEV_xxxx&SUBSYS...``."""
    vid, did = row["pci"].split(":")
    line = (f"{row['name']}|PCI\\VEN_{vid.upper()}&DEV_{did.upper()}&SUBSYS_00000000&REV_A1\\4&1A2B3C4D&0&0008"
            f"|31.0.15.3623|4293918720")
    (it,) = parse_video_controllers(line)
    gpu = adapter_gpu(it, 0)
    assert gpu is not None
    (g,) = merge_gpus([(gpu, None)])
    _check(g, row)


@pytest.mark.posix_only("a sysfs tree: its folder names (0000:01:00.0) hold ':'")
@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_sysfs_ids_only(row, tmp_path):
    """/sys/bus/pci/devices: the class and the ids, no name at all."""
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:01:00.0"
    dev.mkdir(parents=True)
    vid, did = row["pci"].split(":")
    for f, v in (("class", "0x030000"), ("vendor", f"0x{vid}"), ("device", f"0x{did}")):
        (dev / f).write_text(v + "\n", encoding="utf-8")
    devices = pci.scan_sysfs(str(tmp_path))
    (g,) = merge_gpus([], devices)
    _check(g, row)


@pytest.mark.parametrize("row", [r for r in ROWS if r["vendor"] != "intel"], ids=_id)
def test_the_name_alone_tells_it_or_nothing(row):
    """A name only (Windows without the PNP id, an old driver, a report written by hand): the value
    the name tells is right, or there is none; never another generation's."""
    (g,) = merge_gpus([(GPU(vendor=row["vendor"], name=row["name"], source="win32-videocontroller"), None)])
    assert _value(g) == (_truth(row) if row["name_tells"] else None), row["name"]


@pytest.mark.parametrize("row", [r for r in ROWS if r["vendor"] == "intel"], ids=_id)
def test_intel_xpu_support_by_name(row):
    """The engine's Intel families: Arc A/B, Core Ultra graphics and Data Center Max run XPU; Iris/UHD do not."""
    fam = next((f for f in DATA.intel_families if f.pattern.search(row["name"])), None)
    assert fam is not None and fam.xpu is row["xpu"], row["name"]


# ------------------------------------------------------------------ the name tables themselves

# More real marketing names per family (developer.nvidia.com/cuda-gpus for the capabilities; the
# AMD targets from LLVM's AMDGPU processor table): every name row must be hit by one of these or by
# a row of the fixture, and give the right value whatever the order of the rows.
NAMES = [
    ("NVIDIA GeForce GTX 770", "3.0"), ("NVIDIA GeForce GTX 780 Ti", "3.5"), ("GeForce GTX TITAN", "3.5"),
    ("Tesla K20Xm", "3.5"), ("NVIDIA Quadro K6000", "3.5"), ("GeForce 920M", "3.5"), ("Tesla K10.G1.8GB", "3.0"),
    ("NVIDIA GeForce GTX 880M", "3.0"), ("GRID K520", "3.0"), ("NVIDIA GeForce GTX 745", "5.0"),
    ("NVIDIA GeForce GTX 950M", "5.0"), ("NVIDIA GeForce GTX 850M", "5.0"), ("NVIDIA GeForce 930MX", "5.0"),
    ("NVIDIA GeForce 940M", "5.0"), ("NVIDIA GeForce 840M", "5.0"), ("NVIDIA GeForce MX110", "5.0"),
    ("Quadro K620", "5.0"), ("Quadro M1200", "5.0"), ("Quadro M2000M", "5.0"), ("Tesla M10", "5.0"),
    ("NVIDIA GeForce GTX 950", "5.2"), ("NVIDIA GeForce GTX 965M", "5.2"), ("NVIDIA GeForce GTX 980M", "5.2"),
    ("Quadro M4000", "5.2"), ("Quadro M5000M", "5.2"), ("Tesla M40 24GB", "5.2"), ("Tesla M4", "5.2"),
    ("NVIDIA GeForce GTX 1050", "6.1"), ("NVIDIA GeForce GTX 1080", "6.1"), ("NVIDIA TITAN X (Pascal)", "6.1"),
    ("NVIDIA GeForce MX150", "6.1"), ("NVIDIA GeForce MX350", "6.1"), ("Quadro P1000", "6.1"),
    ("Quadro P5000", "6.1"), ("Tesla P4", "6.1"), ("P106-100", "6.1"), ("Quadro GP100", "6.0"),
    ("Tesla V100-SXM2-32GB", "7.0"), ("Quadro GV100", "7.0"), ("NVIDIA TITAN RTX", "7.5"),
    ("NVIDIA GeForce RTX 2070 SUPER", "7.5"), ("NVIDIA GeForce GTX 1630", "7.5"), ("NVIDIA GeForce GTX 1660 SUPER", "7.5"),
    ("Quadro RTX 5000", "7.5"), ("Quadro RTX 8000", "7.5"), ("NVIDIA T400 4GB", "7.5"), ("NVIDIA T600", "7.5"),
    ("NVIDIA T1200 Laptop GPU", "7.5"), ("NVIDIA GeForce MX450", "7.5"), ("NVIDIA GeForce MX550", "7.5"),
    ("NVIDIA GeForce RTX 3060", "8.6"), ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "8.6"),
    ("NVIDIA RTX A4000", "8.6"), ("NVIDIA RTX A6000", "8.6"), ("NVIDIA RTX A500 Laptop GPU", "8.6"),
    ("NVIDIA A2", "8.6"), ("NVIDIA A16", "8.6"), ("NVIDIA A40", "8.6"), ("NVIDIA A10G", "8.6"),
    ("NVIDIA A30", "8.0"), ("NVIDIA A800 80GB PCIe", "8.0"), ("NVIDIA GeForce RTX 4050 Laptop GPU", "8.9"),
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "8.9"), ("NVIDIA RTX 2000 Ada Generation", "8.9"),
    ("NVIDIA RTX 5000 Ada Generation", "8.9"), ("NVIDIA RTX 5880 Ada Generation", "8.9"), ("NVIDIA L40", "8.9"),
    ("NVIDIA L20", "8.9"), ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA H200", "9.0"), ("NVIDIA H800", "9.0"),
    ("NVIDIA H20", "9.0"), ("NVIDIA GH200 480GB", "9.0"), ("NVIDIA GeForce RTX 5060 Ti", "12.0"),
    ("NVIDIA GeForce RTX 5090 D", "12.0"), ("NVIDIA GeForce RTX 5050 Laptop GPU", "12.0"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"), ("NVIDIA RTX PRO 4000 Blackwell", "12.0"),
    ("NVIDIA GB200", "10.0"), ("NVIDIA B100", "10.0"), ("NVIDIA GB300", "10.3"), ("NVIDIA DGX Spark", "12.1"),
    ("NVIDIA Jetson AGX Orin", "8.7"), ("NVIDIA Jetson Xavier NX", "7.2"), ("NVIDIA Jetson AGX Thor", "11.0"),
    ("NVIDIA Jetson TX2", "6.2"), ("NVIDIA Jetson Nano", "5.3"),
    ("AMD Instinct MI300A", "gfx942"), ("AMD Instinct MI325X", "gfx942"), ("AMD Instinct MI250X", "gfx90a"),
    ("AMD Instinct MI350X", "gfx950"), ("AMD Instinct MI60", "gfx906"), ("AMD Radeon Pro VII", "gfx906"),
    ("Radeon Instinct MI25", "gfx900"), ("Radeon RX Vega 56", "gfx900"), ("AMD Radeon RX 9070", "gfx1201"),
    ("AMD Radeon AI PRO R9700", "gfx1201"), ("AMD Radeon RX 9060 XT", "gfx1200"), ("AMD Radeon PRO W7900", "gfx1100"),
    ("AMD Radeon RX 7900 GRE", "gfx1100"), ("AMD Radeon RX 7700 XT", "gfx1101"), ("AMD Radeon PRO W7700", "gfx1101"),
    ("AMD Radeon RX 7600 XT", "gfx1102"), ("AMD Radeon RX 7700S", "gfx1102"), ("AMD Radeon PRO W7500", "gfx1102"),
    ("AMD Radeon RX 6950 XT", "gfx1030"), ("AMD Radeon RX 6800", "gfx1030"), ("AMD Radeon PRO W6800", "gfx1030"),
    ("AMD Radeon RX 6750 XT", "gfx1031"), ("AMD Radeon RX 6800M", "gfx1031"), ("AMD Radeon RX 6700S", "gfx1032"),
    ("AMD Radeon RX 6650 XT", "gfx1032"), ("AMD Radeon PRO W6600", "gfx1032"), ("AMD Radeon RX 6400", "gfx1034"),
    ("AMD Radeon RX 6550M", "gfx1034"), ("AMD Radeon PRO W6400", "gfx1034"), ("AMD Radeon RX 5600 XT", "gfx1010"),
    ("AMD Radeon RX 5500 XT", "gfx1012"), ("AMD Radeon RX 5300", "gfx1012"), ("Radeon RX 570 Series", "gfx803"),
    ("Radeon RX 590 Series", "gfx803"), ("AMD Radeon RX 550X", "gfx803"), ("AMD Radeon Pro WX 7100", "gfx803"),
    ("AMD Radeon 760M", "gfx1103"), ("AMD Radeon 880M", "gfx1150"), ("AMD Radeon 8050S Graphics", "gfx1151"),
    ("AMD Radeon 840M", "gfx1152"), ("AMD Radeon 660M", "gfx1035"),
]


def _best(name: str, vendor: str, rules) -> str | None:
    rule = gpu_ids.best_rule(tuple(rules), name)
    return rule.value if rule is not None else None


@pytest.mark.parametrize("name,value", NAMES)
def test_real_names_get_their_generation_whatever_the_order_of_the_rows(name, value):
    rules = DATA.amd_names if value.startswith("gfx") else DATA.nvidia_names
    vendor = "amd" if value.startswith("gfx") else "nvidia"
    assert _best(name, vendor, rules) == value
    shuffled = list(rules)
    random.Random(name).shuffle(shuffled)  # order-independent: the most specific pattern wins
    assert _best(name, vendor, shuffled) == value
    assert _best(name, vendor, reversed(rules)) == value


def test_every_name_row_is_tested_against_a_real_name():
    names = [(n, v) for n, v in NAMES] + [(r["name"], _truth(r)) for r in ROWS if r["vendor"] != "intel"]
    for rule in DATA.nvidia_names + DATA.amd_names:
        hits = [n for n, v in names if rule.pattern.search(gpu_ids.clean_name(n))]
        assert hits, f"no real name tests the row {rule.pattern.pattern!r}"


def test_names_two_rows_match_get_the_more_specific_one():
    """Where rows of different generations both match a name, the order of the rows would decide
    under "first match wins"; the longest match decides instead (an Ada RTX 3050 A is not an Ampere
    RTX 3050, a Maxwell GTX TITAN X not a Kepler GTX TITAN, a Navi 33 RX 7700S not a Navi 32 RX 7700)."""
    truths = dict(NAMES + [(r["name"], _truth(r)) for r in ROWS if r["vendor"] != "intel"])
    ambiguous = {}
    for name, truth in truths.items():
        rules = DATA.amd_names if truth.startswith("gfx") else DATA.nvidia_names
        values = {r.value for r in rules if r.pattern.search(gpu_ids.clean_name(name))}
        if len(values) > 1:
            ambiguous[name] = values
            assert _best(name, "", rules) == truth, (name, values)
    assert {"NVIDIA GeForce RTX 3050 A Laptop GPU", "NVIDIA GeForce GTX TITAN X", "AMD Radeon RX 7700S"} <= set(ambiguous)


def test_a_tie_between_rows_that_disagree_is_unknown_not_a_guess():
    import re

    from app.core.compat.data import NameRule

    rules = (NameRule(re.compile("gtx 9[0-9]0m", re.I), "5.0", "x"), NameRule(re.compile("gtx 96[05]m", re.I), "5.2", "y"))
    assert gpu_ids.best_rule(rules, "GeForce GTX 960M") is None
    assert gpu_ids.best_rule(rules, "GeForce GTX 950M").value == "5.0"


def test_pci_ids_rows_do_not_overlap_and_every_nvidia_chip_has_a_capability():
    seen: dict[tuple[str, int], str] = {}
    for row in DATA.pci_ids:
        for lo, hi in row.ranges:
            for dev in range(lo, hi + 1):
                assert (row.vendor, dev) not in seen, (row.chip, seen.get((row.vendor, dev)))
                seen[(row.vendor, dev)] = row.chip
    assert all(row.value for row in DATA.pci_ids)
