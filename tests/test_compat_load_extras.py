"""The loader's new rows (AMD builds, driver ceilings, PCI vendors, freshness URLs) are validated like
the others, and load_compat() prefers a verified newer per-user copy, else the bundled data."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.compat import data as compat
from app.core.compat.data import load_compat
from app.core.pipeline.answers import parse_answers

SRC = Path(__file__).resolve().parents[1] / "resources" / "compat"
BUNDLED = load_compat(bundled=True)


@pytest.fixture
def folder(tmp_path):
    dst = tmp_path / "compat"
    shutil.copytree(SRC, dst)
    compat.clear_cache()
    yield dst
    compat.clear_cache()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"test setup: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("file,old,new,fragments", [
    ("releases.toml", 'device_extra = "device-{gfx}"', 'device_extra = "device-gfx1100"',
     ["release 2.14, variant rocm10.0-amd (windows-x86_64)", "must look like device-{gfx}"]),
    ("releases.toml", 'python_min = "3.13"\npython_max = "3.13"', 'python_min = "3.14"\npython_max = "3.13"',
     ["variant rocm10.0-amd", "newer than 'python_max'"]),
    ("releases.toml", 'provider = "amd"', 'provider = "amd-ish"', ["'provider' 'amd-ish' is not one of"]),
    ("releases.toml", "install_mb = 19000", "install_mb = 19", ["'install_mb' 19 is not a size"]),
    ("releases.toml", 'status_url = "https://download.pytorch.org/whl"', 'status_url = "http://x/whl"',
     ["[meta]", "'status_url'"]),
    ("drivers.toml", 'cc_min = "6.0"\ncc_max = "6.9"', 'cc_min = "5.5"\ncc_max = "6.9"',
     ["arch_ceiling Pascal", "overlaps"]),
    ("drivers.toml", 'beyond = "590"', 'beyond = "570"', ["arch_ceiling Maxwell", "must be a newer branch"]),
    ("hardware.toml", 'id = "1ed5"', 'id = "1ed"', ["pci_vendor 1ed", "4-digit hexadecimal"]),
    ("hardware.toml", 'id = "17cb"', 'id = "5143"', ["pci_vendor 5143", "appears twice"]),
    ("hardware.toml", 'vendor = "moorethreads"', 'vendor = "Moore Threads"', ["must be a lowercase word"]),
    ("hardware.toml", 'names = ["qualcomm", "adreno"]', 'names = ["Adreno"]', ["'names' must be a list"]),
    ("hardware.toml", 'chip = "GP104"\nids = ["1b80-1be1"]', 'chip = "GP104"\nids = ["1b70-1be1"]',
     ["nvidia_pci GP104", "overlap those of 'GP102'"]),
    ("hardware.toml", 'chip = "GP104"\nids = ["1b80-1be1"]', 'chip = "GP114"\nids = ["1b80-1be1"]',
     ["nvidia_pci GP114", "has no nvidia_chip row"]),
    ("hardware.toml", 'ids = ["1b00-1b78"]', 'ids = ["1b78-1b00"]', ["nvidia_pci GP102", "ends before it starts"]),
    ("hardware.toml", 'ids = ["7590"]', 'ids = ["0x7590"]', ["amd_pci Navi 44", "not a device id"]),
    ("hardware.toml", 'chip = "Navi 44"\ngfx = "gfx1200"', 'chip = "Navi 44"\ngfx = "navi44"',
     ["amd_pci Navi 44", "not a gfx target"]),
    ("hardware.toml", 'chips = ["GP100"]', 'chips = ["gp100"]', ["nvidia_chip", "chip codes like GP102"]),
])
def test_bad_new_rows_name_file_and_row(folder, file, old, new, fragments):
    _edit(folder / file, old, new)
    with pytest.raises(BadInput) as info:
        load_compat(folder)
    assert file in info.value.message
    for f in fragments:
        assert f in info.value.message, info.value.message


# ------------------------------------------------------------------ the per-user copy


def _install_copy(home: Path, version: str, *, tamper: bool = False, broken: bool = False) -> Path:
    files = {name: (SRC / name).read_text(encoding="utf-8") for name in compat.FILES}
    files["releases.toml"] = files["releases.toml"].replace(f'version = "{BUNDLED.version}"', f'version = "{version}"')
    if broken:
        files["hardware.toml"] = "[[pci_vendor]\n"
    doc = json.dumps({"format": 1, "version": version, "date": "2099-01-01", "files": files}).encode()
    folder = home / "data" / "compat"
    folder.mkdir(parents=True)
    (folder / compat.DOCUMENT).write_bytes(doc + (b" " if tamper else b""))
    (folder / compat.MARKER).write_text(json.dumps({"version": version, "date": "2099-01-01",
                                                    "sha256": hashlib.sha256(doc).hexdigest()}), encoding="utf-8")
    return folder


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TORCH_SETUP_COMPAT", raising=False)
    compat.clear_cache()
    yield tmp_path / "home"
    compat.clear_cache()


def test_a_verified_newer_copy_is_preferred_and_the_bundled_one_stays_reachable(home, monkeypatch):
    _install_copy(home, "2099.01.01")
    data = load_compat()
    assert (data.version, data.origin) == ("2099.01.01", "downloaded")
    assert load_compat(bundled=True).version == BUNDLED.version
    monkeypatch.setenv("TORCH_SETUP_COMPAT", "bundled")
    assert load_compat().origin == "bundled"


@pytest.mark.parametrize("version,kw", [("2020.01.01", {}), ("2099.01.01", {"tamper": True}),
                                        ("2099.01.01", {"broken": True}), (BUNDLED.version, {})])
def test_an_older_tampered_or_invalid_copy_is_ignored(home, version, kw):
    _install_copy(home, version, **kw)
    assert load_compat().origin == "bundled"


def test_answer_files_accept_amds_builds(tmp_path):
    a = parse_answers('[environment]\npath = "e"\n[torch]\nbackend = "rocm10.0-amd"\n', base=tmp_path)
    assert (a.backend, a.variant) == ("rocm", "rocm10.0-amd")
