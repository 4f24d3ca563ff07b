"""Recommendations from partial facts: a report that lacks a GPU's compute capability or gfx target
never gets a build whose kernels may not serve the GPU's true generation, and the recommendation says
which fact is missing and how to give it (issue 25). The GPUs are the real ones of
tests/fixtures/gpu-ids.toml, each reported the ways a machine without the vendor's tools reports it:
by PCI id only (detection's PCI path), by name only (Windows' adapter list), and by neither."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from app.core.base.text import render
from app.core.compat import cuda
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, recommend
from app.core.recommend.types import code_of
from tests.helpers import run_cli

DATA = load_compat(bundled=True)
FIXTURES = Path(__file__).parent / "fixtures"
ROWS = [r for r in tomllib.loads((FIXTURES / "gpu-ids.toml").read_text(encoding="utf-8"))["gpu"]
        if r["vendor"] in ("nvidia", "amd")]
OS = {"linux": {"family": "linux", "glibc": "2.39"}, "windows": {"family": "windows", "version": "10.0.26100"}}


def _report(family: str, gpu: dict, driver: str | None = None) -> SystemReport:
    g = {"index": 0, **gpu}
    if driver and gpu["vendor"] == "nvidia":
        g["driver_version"] = driver
    return SystemReport.from_dict({"os": OS[family], "arch": "x86_64", "python": {"version": "3.12.4"}, "gpus": [g]})


def _codes(rec) -> set[str]:
    return {code_of(t) for t in (*rec.reasons, *rec.warnings)}


def _serves_truth(rec, row: dict) -> bool:
    """Does the chosen build carry kernels for the row's true generation?"""
    rel = DATA.release(rec.torch_release)
    v = next(v for v in rel.variants if v.name == rec.variant and rec.platform in v.platforms)
    if row["vendor"] == "nvidia":
        return bool(cuda.arch_covers(row["cc"], v.arch, tegra=DATA.tegra))
    if row["gfx"] in v.gfx:
        return True
    ov = next((o for o in DATA.hsa_overrides if row["gfx"] in o.gfx), None)  # served as a listed sibling
    return ov is not None and rec.env_vars.get("HSA_OVERRIDE_GFX_VERSION") == ov.value and ov.as_gfx in v.gfx


def _check(rec, row: dict, fact_known: bool) -> None:
    if rec.backend in ("cuda", "rocm"):
        assert _serves_truth(rec, row), (row["name"], rec.variant, rec.torch_version, row.get("cc") or row.get("gfx"))
    if not fact_known:
        missing = "rec.cc_missing" if row["vendor"] == "nvidia" else "rec.gfx_missing"
        assert missing in _codes(rec), [render(t) for t in rec.reasons + rec.warnings]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['pci']}-{r['name']}")
@pytest.mark.parametrize("how", ["pci-only", "name-only"])
def test_a_gpu_known_only_by_its_pci_id_or_name_never_gets_a_build_without_its_kernels(row, how):
    if how == "pci-only":  # what detection writes for a GPU seen only on the PCI bus, its name not in pci.ids
        gpu = {"vendor": row["vendor"], "name": f"{row['vendor'].upper()} GPU {row['pci']}", "pci_id": row["pci"],
               "source": "pci"}
        known = True
    else:
        gpu = {"vendor": row["vendor"], "name": row["name"]}
        known = row["name_tells"]
    for family in ("linux", "windows"):
        rec = recommend(_report(family, gpu, driver="580.95.05"), DATA)
        _check(rec, row, known)


@pytest.mark.parametrize("family", ["linux", "windows"])
def test_a_radeon_known_by_a_name_that_tells_nothing_gets_the_cpu_build_and_the_missing_fact(family):
    rec = recommend(_report(family, {"vendor": "amd", "name": "AMD Radeon(TM) Graphics", "integrated": True}), DATA)
    assert rec.backend == "cpu" and "rec.gfx_missing" in _codes(rec)
    words = " ".join(rec.texts().reasons)
    assert "gfx_target" in words and "pci_id" in words  # how to give the fact
    assert "installed with the  extra" not in words


@pytest.mark.parametrize("driver,variant,torch", [("550.54.14", "cu126", "2.14.1"), ("595.45.04", "cu132", "2.15.0"),
                                                  (None, "cu118", "2.7.1")])
def test_an_nvidia_gpu_of_unknown_capability_gets_the_widest_build_its_driver_runs(driver, variant, torch):
    """Not the newest build (it lacks Maxwell/Pascal kernels): the one whose kernels cover the most
    generations the driver can run. A driver past R580 runs no Maxwell/Pascal/Volta GPU, one past
    R470 no Kepler GPU (drivers.toml [[arch_ceiling]])."""
    rec = recommend(_report("linux", {"vendor": "nvidia", "name": "NVIDIA Graphics Device"}, driver), DATA)
    assert (rec.variant, rec.torch_version) == (variant, torch)
    assert {"rec.cc_unknown_widest", "rec.cc_missing"} <= _codes(rec)
    assert rec.driver_upgrade is None  # a newer driver promises nothing for a GPU of unknown generation


def test_asking_for_rocm_with_an_unknown_gfx_is_refused_with_the_missing_fact():
    report = _report("linux", {"vendor": "amd", "name": "AMD Radeon(TM) Graphics"})
    from app.core.base.errors import BadInput

    with pytest.raises(BadInput) as info:
        recommend(report, DATA, Choices(backend="rocm"))
    assert "gfx target of your Radeon Graphics is unknown" in info.value.text()


# ------------------------------------------------------------------ the command line, on report files

REPORTS = FIXTURES / "reports"


def test_cli_windows_with_only_a_radeon_name(capsys):
    """Windows' adapter list names an R9 390 (Hawaii: no ROCm build has its kernels) and nothing else:
    before this issue it got AMD's 6 GB ROCm 10.0 install with an empty device extra."""
    rc, out, err = run_cli(capsys, "recommend", "--from-report", str(REPORTS / "windows-radeon-r9-390.json"))
    assert rc == 0, err
    head, _, rest = out.partition("Why:")
    assert head.startswith("Recommended: torch 2.15.0 — the CPU-only build") and "rocm" not in head.lower()
    assert "The GPU generation (gfx target) of your Radeon R9 390 Series is unknown" in rest
    assert '"gfx_target"' in rest and '"pci_id"' in rest and "installed with the  extra" not in out


def test_cli_windows_with_an_integrated_radeon_and_a_discrete_one(capsys):
    rc, out, err = run_cli(capsys, "recommend", "--from-report", str(REPORTS / "windows-radeon-names-only.json"))
    assert rc == 0, err
    assert out.startswith("Recommended: torch 2.15.0 — the CPU-only build")
    assert "The GPU generation (gfx target) of your Radeon Graphics is unknown" in out  # the iGPU: nothing tells it
    assert "no kernels for your Radeon RX 6800 XT (gfx1030)" in out  # the dGPU: its name tells it


def test_cli_pci_only_nvidia(capsys):
    rc, out, err = run_cli(capsys, "recommend", "--from-report", str(REPORTS / "linux-pci-only-nvidia.json"),
                           "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert (doc["variant"], doc["torch_version"]) == ("cu126", "2.14.1")  # GP107 (6.1): CUDA 13 builds lack it
    assert any("taken from its PCI id 10de:1c82 (GP107): 6.1" in u for u in doc["unknowns"])


def test_an_intel_macs_amd_gpu_is_mps_and_the_verification_and_speed_test_expect_it(tmp_path):
    """PyTorch's MPS ran on "Mac computers with Apple silicon or AMD GPUs, macOS 12.3 or later" up to the
    last macOS x86_64 wheels (2.2.2): the engine says MPS is expected, so the verification fails instead
    of skipping when MPS is not usable, and the speed test's auto device is MPS."""
    from app.core.env.backends import backend_for
    from app.core.install import InstallPlan, InstallRequest
    from app.core.sources.settings import SourceSettings

    report = SystemReport.from_dict({"os": {"family": "macos", "version": "13.6.1"}, "arch": "x86_64",
                                     "python": {"version": "3.12.4"},
                                     "gpus": [{"vendor": "amd", "name": "AMD Radeon Pro 5500M", "index": 0}]})
    rec = recommend(report, DATA)
    assert (rec.backend, rec.variant, rec.torch_version) == ("mps", "mps", "2.2.2")
    assert "pip install torch==2.2.2" in " ".join(rec.command) and "download.pytorch.org" not in rec.index_url
    plan = InstallPlan(request=InstallRequest(env_path=tmp_path / "env", recommendation=rec),
                       env_path=tmp_path / "env", backend=backend_for("venv", "uv"), python=None,
                       python_request="3.12", packages=tuple(rec.packages), index=SourceSettings(), new_env=True,
                       estimate_mb=500, estimate_why="test")
    assert plan.expected_accelerator == "mps"
    no_gpu = recommend(SystemReport.from_dict({"os": {"family": "macos", "version": "13.6.1"}, "arch": "x86_64",
                                               "python": {"version": "3.12.4"}, "gpus": []}), DATA)
    assert no_gpu.backend == "cpu"  # an Intel Mac without an AMD GPU: no MPS claimed
