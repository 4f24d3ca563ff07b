"""The late-2026 facts of resources/compat, pinned with the source each rests on (docs/compat-decisions.md,
"Late 2026"). A change of one of these rows must be a decision, with its source, not an accident."""
from __future__ import annotations

import pytest

from app.core.base.enums import Backend
from app.core.compat.data import load_compat
from app.core.env.backends import EnvBackend
from app.core.install.sizing import estimate
from app.core.recommend import recommend

DATA = load_compat(bundled=True)


def _rows(torch: str, backend: str | None = None):
    rel = DATA.release(torch)
    assert rel is not None
    return [v for v in rel.variants if backend is None or v.backend == backend]


def test_torch_2_15_rocm_lines_are_7_14_and_10_0_assumed_and_without_vega():
    rocm = {v.name: v for v in _rows("2.15", "rocm")}
    assert set(rocm) == {"rocm7.14", "rocm10.0"}  # pytorch/pytorch#194919, pytorch/test-infra#8670: no rocm7.2
    for v in rocm.values():
        assert v.assumed and v.therock and "gfx900" not in v.gfx and "gfx906" not in v.gfx
        assert "pytorch/pytorch#194919" in v.source and v.install_mb == 19000
    assert rocm["rocm10.0"].index_url == "https://download.pytorch.org/whl/rocm10.0"


def test_torch_2_14_keeps_rocm_7_2_with_vega_and_7_14_without():
    rocm = {v.name: v for v in _rows("2.14", "rocm") if v.provider == "pytorch"}
    assert set(rocm) == {"rocm7.2", "rocm7.14"}
    assert {"gfx900", "gfx906"} <= set(rocm["rocm7.2"].gfx) and not rocm["rocm7.2"].assumed
    assert "pytorch/test-infra#8498" in rocm["rocm7.2"].source  # release/2.14 builds ROCm 7.2 and 7.14
    assert "gfx900" not in rocm["rocm7.14"].gfx and rocm["rocm7.14"].install_mb == 19000


def test_amd_multi_arch_index_rows_replace_rocm_therock():
    assert all(v.name != "rocm-therock" for r in DATA.releases for v in r.variants)
    multi = [(r.torch, v) for r in DATA.releases for v in r.variants if v.name == "rocm7.14-amd"]
    assert [t for t, _ in multi] == ["2.12", "2.11", "2.10"]  # ROCm/TheRock#6278
    for _, v in multi:
        assert (v.provider, v.explicit, v.device_extra, v.rocm) == ("amd", True, "device-{gfx}", "7.14")
        assert v.index_url == "https://repo.amd.com/rocm/whl-multi-arch/"  # flat: ROCm/rocm-cli#271
        assert set(v.platforms) == {"linux-x86_64", "windows-x86_64"} and v.install_mb == 6000
        assert "ROCm/TheRock#5289" in v.source


def test_windows_rocm_10_row():
    (v,) = [v for v in _rows("2.14", "rocm") if v.name == "rocm10.0-amd"]
    assert v.platforms == ("windows-x86_64",) and not v.explicit and v.provider == "amd"
    assert v.gfx == ("gfx1100", "gfx1101", "gfx1102", "gfx1151", "gfx1200", "gfx1201")  # Comfy-Org/docs#1656
    assert (v.python_min, v.python_max, v.windows_min) == ("3.13", "3.13", "10.0.22000")
    assert v.index_url == "https://stable.repo.amd.com/rocm/whl-next/" and v.device_extra == "device-{gfx}"
    assert v.assumed and "Comfy-Org/docs#1656" in v.source


def test_xpu_is_validated_on_wsl2_from_2_14():
    wsl = {r.torch: next(v.wsl for v in r.variants if v.backend == "xpu") for r in DATA.releases
           if any(v.backend == "xpu" for v in r.variants)}
    assert wsl["2.14"] and wsl["2.15"] and not any(wsl[t] for t in wsl if t not in ("2.14", "2.15"))
    assert "pytorch/pytorch#192398" in next(v.source for v in _rows("2.14", "xpu"))


def test_torch_2_14_wheels_stop_at_python_3_14_although_its_notes_list_3_15():
    rel = DATA.release("2.14")
    assert (rel.python_min, rel.python_max) == ("3.10", "3.14")
    assert "release notes list 3.15" in rel.source
    assert DATA.release("2.15").python_max == "3.15"


def test_driver_ceiling_rows():
    rows = {c.architecture: c for c in DATA.driver_ceilings}
    assert set(rows) == {"Kepler", "Maxwell", "Pascal", "Volta"}
    assert {(c.cc_min, c.cc_max, c.branch, c.beyond) for c in rows.values()} == {
        ("3.0", "3.9", "470", "495"), ("5.0", "5.9", "580", "590"), ("6.0", "6.9", "580", "590"),
        ("7.0", "7.2", "580", "590")}
    assert all("NVIDIA/ansible-role-nvidia-driver#89" in c.source for n, c in rows.items() if n != "Kepler")
    assert "NixOS/nixos-hardware#1880" in rows["Pascal"].source
    assert "NixOS/nixpkgs#142565" in rows["Kepler"].source  # R470 is the last branch for Kepler


@pytest.mark.parametrize("variant,mb", [("rocm10.0", 19000), ("rocm10.0-amd", 6000), ("rocm7.2", 15000)])
def test_rocm_install_sizes_feed_the_disk_estimate(variant, mb):
    rel = "2.14" if variant != "rocm10.0" else "2.15"
    v = next(v for v in _rows(rel, "rocm") if v.name == variant)
    got, _why = estimate(["torch"], EnvBackend(), Backend.ROCM, [], build_mb=v.install_mb)
    assert got == int((1 + mb) * 1.1)  # uv env (1 MB) + torch, with the 10 % margin


def test_the_recommendation_carries_the_size():
    gpu = {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100"}
    rec = recommend({"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": "3.12", "gpus": [gpu]},
                    DATA)
    assert rec.install_size_mb == 19000 and rec.to_dict()["install_size_mb"] == 19000


def test_every_new_row_names_its_source_and_date():
    checked = [v for r in DATA.releases for v in r.variants if v.provider == "amd" or v.wsl or v.install_mb]
    assert checked and all("2026-12-01" in v.source for v in checked)
    assert all("2026-12-01" in c.source or "2026-12-02" in c.source for c in DATA.driver_ceilings)


def test_an_amd_index_build_is_planned_with_pip_and_its_size(tmp_path):
    """AMD's index answers 403 for torch's other dependencies: pip moves on to the default index, uv
    stops there; the recommendation gives only a pip command, and the plan installs with pip."""
    from app.core.install import InstallRequest, plan

    gpu = {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX"}
    rec = recommend({"os": {"family": "windows", "version": "10.0.22631"}, "arch": "x86_64", "python": "3.13.1",
                     "gpus": [gpu]}, DATA)
    assert rec.variant == "rocm10.0-amd" and "uv" not in rec.commands
    p = plan(InstallRequest(env_path=tmp_path / "env", recommendation=rec))
    assert p.backend.installer == "pip" and p.index.torch_index == rec.index_url
    assert p.packages[0] == "torch[device-gfx1100]==2.14.*"
    assert 6000 <= p.estimate_mb < 8000
    cpu = recommend({"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": "3.12", "gpus": []}, DATA)
    assert plan(InstallRequest(env_path=tmp_path / "env2", recommendation=cpu)).backend.installer == "uv"


# ------------------------------------------------------------------ the corrections of 2026-12-02 (issue 25)

@pytest.mark.parametrize("torch,variant", [("2.4", "cu124"), ("2.5", "cu124"), ("2.6", "cu126")])
def test_aarch64_cuda_builds_of_2_4_to_2_6_are_sm_90_only(torch, variant):
    (v,) = [v for v in _rows(torch, "cuda") if "linux-aarch64" in v.platforms]
    assert (v.name, v.arch, v.platforms) == (variant, ("9.0",), ("linux-aarch64",))
    assert "pytorch/test-infra" in v.source and "2026-12-02" in v.source


def test_torch_2_7_aarch64_cu128_has_no_sm_80():
    (v,) = [v for v in _rows("2.7", "cuda") if "linux-aarch64" in v.platforms]
    assert v.arch == ("9.0", "10.0", "12.0") and "pytorch/pytorch#146378" in v.source


def test_gfx1103_is_in_torch_2_14_rocm_7_2_and_not_in_2_12():
    (v214,) = [v for v in _rows("2.14", "rocm") if v.name == "rocm7.2"]
    (v212,) = [v for v in _rows("2.12", "rocm") if v.name == "rocm7.2"]
    assert "gfx1103" in v214.gfx and "pytorch/pytorch#179653" in v214.source
    assert "gfx1103" not in v212.gfx


def test_the_windows_cuda_12_floor_is_nvidias_minor_version_table():
    floor = DATA.driver_floors[12]
    assert (floor.linux, floor.windows) == ("525.60.13", "527.41")
    assert "docs.nvidia.com/deploy/cuda-compatibility" in floor.source


def test_torch_2_2_has_mps_for_an_intel_macs_amd_gpu():
    rel = DATA.release("2.2")
    (v,) = [v for v in rel.variants if v.backend == "mps" and "macos-x86_64" in v.platforms]
    assert v.mps_macos_min == "12.3" and "AMD GPUs" in v.source and rel.pypi_default["macos-x86_64"] == "mps"
