"""The compat data loader rejects malformed files with an error naming the file and the row."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.base.errors import EXIT_BAD_INPUT, BadInput
from app.core.compat import data as compat
from app.core.compat.data import load_compat

SRC = Path(__file__).resolve().parents[1] / "resources" / "compat"


@pytest.fixture
def folder(tmp_path):
    dst = tmp_path / "compat"
    shutil.copytree(SRC, dst)
    compat.clear_cache()
    yield dst
    compat.clear_cache()


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"test setup: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _section(path: Path, start: str, old: str, new: str) -> None:
    """Replace the first ``old`` after the first ``start``."""
    text = path.read_text(encoding="utf-8")
    i = text.index(start)
    j = text.index(old, i)
    path.write_text(text[:j] + new + text[j + len(old):], encoding="utf-8")


def _fails(folder, *fragments):
    with pytest.raises(BadInput) as info:
        load_compat(folder)
    msg = info.value.text()
    for f in fragments:
        assert f in msg, msg
    assert info.value.exit_code == EXIT_BAD_INPUT
    return msg


def test_shipped_data_loads_and_has_version_and_sources():
    data = load_compat(SRC)
    assert data.version and data.date
    assert next(r.torch for r in data.releases) == "2.15" and data.releases[-1].torch == "2.2"
    assert all(v.source.strip() for r in data.releases for v in r.variants)
    assert all(r.source.strip() for r in data.releases)
    assert all(f.source for f in data.driver_floors.values())


def test_bad_compute_capability_names_file_release_variant_and_platform(folder):
    f = folder / "releases.toml"
    text = f.read_text(encoding="utf-8")
    start = text.index('torch = "2.9"')
    j = text.index('name = "cu130"\nbackend = "cuda"\nplatforms = ["windows-x86_64"]', start)
    k = text.index('"9.0"', j)
    f.write_text(text[:k] + '"9.x"' + text[k + 5:], encoding="utf-8")
    msg = _fails(folder, "releases.toml", "release 2.9, variant cu130 (windows-x86_64)",
                 "'arch' entry '9.x' is not a compute capability")
    assert msg.startswith(str(f)) or msg.startswith("resources/") or "compat/releases.toml" in msg


def test_missing_source(folder):
    f = folder / "releases.toml"
    _section(f, 'torch = "2.14"', 'source = "pytorch/pytorch RELEASE.md', 'sauce = "pytorch/pytorch RELEASE.md')
    _fails(folder, "release 2.14, variant cu126", ".source' is missing")


def test_unknown_backend(folder):
    _section(folder / "releases.toml", 'torch = "2.12"', 'backend = "xpu"', 'backend = "opencl"')
    _fails(folder, "release 2.12, variant xpu", "'backend' 'opencl' is not one of")


def test_unknown_platform(folder):
    _section(folder / "releases.toml", 'torch = "2.10"', 'platforms = ["linux-x86_64"]', 'platforms = ["linux-riscv64"]')
    _fails(folder, "release 2.10, variant", "'platforms' entry 'linux-riscv64'")


def test_arch_out_of_order(folder):
    _section(folder / "releases.toml", 'torch = "2.13"', '"7.5", "8.0"', '"8.0", "7.5"')
    _fails(folder, "release 2.13, variant cu126 (linux-x86_64)", "ascending order")


def test_cuda_version_not_matching_name(folder):
    _section(folder / "releases.toml", 'torch = "2.11"', 'cuda = "12.8"', 'cuda = "12.9"')
    _fails(folder, "release 2.11, variant cu128", "does not match the variant name")


def test_pypi_default_pointing_at_a_missing_variant(folder):
    _section(folder / "releases.toml", 'torch = "2.7"', '"linux-x86_64" = "cu126"', '"linux-x86_64" = "cu999"')
    _fails(folder, "release 2.7", "'pypi_default' linux-x86_64 = 'cu999' is not a variant")


def test_python_range_inverted(folder):
    _section(folder / "releases.toml", 'torch = "2.5"', 'python_min = "3.9"', 'python_min = "3.14"')
    _fails(folder, "release 2.5", "'python_min' 3.14 is newer than 'python_max' 3.13")


def test_duplicate_release(folder):
    _edit(folder / "releases.toml", 'torch = "2.3"', 'torch = "2.4"')
    _fails(folder, "release 2.4", "appears twice")


def test_latest_not_of_the_release(folder):
    _edit(folder / "releases.toml", 'latest = "2.6.0"', 'latest = "2.7.0"')
    _fails(folder, "release 2.6", "'latest' '2.7.0' is not a 2.6.N version")


def test_gfx_target_garbage(folder):
    _section(folder / "releases.toml", 'torch = "2.8"', '"gfx1030"', '"navi21"')
    _fails(folder, "release 2.8, variant rocm6.3", "'gfx' entry 'navi21' is not a gfx target")


def test_missing_meta_version(folder):
    _edit(folder / "releases.toml", 'version = "', 'versio = "')
    _fails(folder, "releases.toml ([meta])", "'meta.version' is missing")


def test_not_toml(folder):
    _edit(folder / "drivers.toml", "[[cuda_major]]", "[[cuda_major]\n")
    _fails(folder, "drivers.toml", "not valid TOML")


def test_driver_floor_not_a_version(folder):
    _edit(folder / "drivers.toml", 'linux = "525.60.13"', 'linux = "525.60.x"')
    _fails(folder, "drivers.toml: cuda_major 12", "'linux' '525.60.x' is not a version number")


def test_cuda_major_without_floor(folder):
    text = (folder / "drivers.toml").read_text(encoding="utf-8")
    i = text.index("[[cuda_major]]\nmajor = 11")
    j = text.index("[[toolkit]]")
    (folder / "drivers.toml").write_text(text[:i] + text[j:], encoding="utf-8")
    _fails(folder, "releases.toml", "variant cu118", "no driver floor for CUDA 11.x")


def test_hsa_override_value(folder):
    _edit(folder / "hardware.toml", 'value = "10.3.0"', 'value = "10.3"')
    _fails(folder, "hardware.toml: hsa_override RDNA2 (Navi 2x)", "is not an HSA_OVERRIDE_GFX_VERSION")


def test_bad_regex(folder):
    _edit(folder / "hardware.toml", 'pattern = "mi355|mi350"', 'pattern = "mi355|(mi350"')
    _fails(folder, "hardware.toml: amd_name #1", "not a valid regular expression")


def test_tegra_entry(folder):
    _edit(folder / "hardware.toml", 'tegra = ["3.2"', 'tegra = ["orin"')
    _fails(folder, "hardware.toml: [cc_rule]", "'tegra' entry 'orin'")


def test_missing_file(folder):
    (folder / "hardware.toml").unlink()
    _fails(folder, "hardware.toml", "missing")


def test_unknown_field_is_refused(folder):
    _section(folder / "releases.toml", 'torch = "2.15"', 'ptx = true', 'ptx = true\narchs = ["7.5"]')
    _fails(folder, "release 2.15, variant cu130", "unknown field(s) 'archs'")


def test_cli_reports_a_malformed_file_with_exit_2(folder, tmp_path):
    import json
    import subprocess
    import sys

    _section(folder / "releases.toml", 'torch = "2.9"', '"9.0"', '"9.x"')
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": []}), encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "app", "recommend", "--from-report", str(report), "--compat",
                          str(folder)], capture_output=True, text=True, encoding="utf-8", timeout=60,
                         cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 2
    assert "release 2.9, variant" in res.stderr and "'9.x' is not a compute capability" in res.stderr
