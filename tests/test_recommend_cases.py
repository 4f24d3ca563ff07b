"""Edge cases of the engine's inputs: CUDA_VISIBLE_DEVICES forms, override validation, unknown
and malformed report fields, patch pins, hybrid machines."""
from __future__ import annotations

import pytest

from app.core.base.errors import BadInput
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, recommend

DATA = load_compat()


def _rep(gpus=(), env=None, **kw):
    d = {"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": {"version": "3.12.3"},
         "gpus": list(gpus), "env": env or {}}
    d.update(kw)
    return SystemReport.from_dict(d)


def _nv(name, cc, idx, drv="590.48.01"):
    return {"vendor": "nvidia", "name": name, "compute_capability": cc, "driver_version": drv, "index": idx}


TWO = [_nv("NVIDIA GeForce GTX 1080", "6.1", 0), _nv("NVIDIA GeForce RTX 4090", "8.9", 1)]


def test_cvd_valid_then_bogus_id_keeps_the_valid_prefix_and_warns():
    rec = recommend(_rep(TWO, {"CUDA_VISIBLE_DEVICES": "0,7,1"}), DATA)
    assert [g.index for g in rec.served_gpus] == [0]
    assert rec.variant == "cu126"  # only the GTX 1080 is visible
    assert any("'7'" in w and "ignores that entry" in w for w in rec.texts().warnings)


@pytest.mark.parametrize("value", ["-1", "9", "abc"])
def test_cvd_hiding_everything_warns_and_plans_for_the_hardware(value):
    rec = recommend(_rep(TWO, {"CUDA_VISIBLE_DEVICES": value}), DATA)
    assert len(rec.served_gpus) == 2 and rec.variant == "cu126"
    assert any("names no GPU" in w for w in rec.texts().warnings)


def test_cvd_uuids_cannot_be_checked():
    rec = recommend(_rep(TWO, {"CUDA_VISIBLE_DEVICES": "GPU-8b5e2c1a-0000"}), DATA)
    assert any("UUID" in w for w in rec.texts().warnings) and len(rec.served_gpus) == 2


def test_cvd_repeated_index_stops_the_list_as_cuda_does():
    """app.core.base.visible's rule: a repeated index is not a device; CUDA stops reading there."""
    rec = recommend(_rep(TWO, {"CUDA_VISIBLE_DEVICES": "1,1,0"}), DATA)
    assert [g.index for g in rec.served_gpus] == [1]
    words = rec.texts()
    assert any("'1' twice" in w for w in words.warnings)
    assert any("limits PyTorch to GPU 1 (RTX 4090); GPU 0 (GTX 1080) is not considered" in r for r in words.reasons)


def test_cvd_minus_one_hides_every_gpu_on_purpose():
    rec = recommend(_rep(TWO, {"CUDA_VISIBLE_DEVICES": "-1"}), DATA)
    assert len(rec.served_gpus) == 2
    assert rec.warning_codes[0] == "rec.cvd_disabled" and "on purpose" in rec.texts().warnings[0]


def test_package_list_is_read_by_the_requirements_rules():
    rec = recommend(_rep(), DATA, Choices(packages="torch numpy>=1.26,<3 TorchVision pkg[extra]>=1"))
    assert rec.packages == ("torch==2.14.1+cpu", "torchvision==0.29.1+cpu", "numpy>=1.26,<3", "pkg[extra]>=1")
    with pytest.raises(BadInput, match="installer option"):
        recommend(_rep(), DATA, Choices(packages=["-e /etc"]))


def test_python_override_forms_and_packages_as_text():
    rec = recommend(_rep(), DATA, Choices(python="python3.13", packages="torch torchvision"))
    assert rec.env_python == "3.13" and rec.torch_version == "2.14.1"
    assert rec.packages == ("torch==2.14.1+cpu", "torchvision==0.29.1+cpu")


@pytest.mark.parametrize("choices,fragment", [
    (Choices(backend="tpu"), "is not one of"),
    (Choices(backend="rocm", variant="cu126"), "is a cuda build"),
    (Choices(variant="rocm10.0-amd"), "no such build exists"),
    (Choices(variant="rocm-therock"), "is not a build the compatibility data knows"),
    (Choices(packages=["torch>=2"]), "pin torch with --torch"),
    (Choices(packages=["torchvision>=0.20"]), "pinned to match torch automatically"),
    (Choices(packages=["not a package!"]), "is not a package name"),
    (Choices(torch="2.14.9"), "newer than the newest 2.14 release"),
    (Choices(torch="3.0"), "not in the compatibility data"),
    (Choices(python="3"), "is not a Python version"),
])
def test_bad_overrides_are_refused_with_the_reason(choices, fragment):
    with pytest.raises(BadInput) as info:
        recommend(_rep(), DATA, choices)
    assert fragment in info.value.text()


def test_patch_pin_pins_companions_by_minor():
    rec = recommend(_rep([_nv("NVIDIA GeForce RTX 4090", "8.9", 0)]), DATA,
                    Choices(torch="2.14.0", packages=["torchvision"]))
    assert rec.torch_version == "2.14.0" and "torchvision==0.29.*" in rec.packages


def test_unknown_and_malformed_fields_are_said():
    rep = SystemReport.from_dict({"os": {"family": "linux"}, "gpus": [
        {"vendor": "nvidia", "name": "NVIDIA Mystery Accelerator", "compute_capability": "sm_86"}]})
    rec = recommend(rep, DATA)
    words = rec.texts()
    assert {"arch", "os.glibc", "python.version", "gpus[].driver_version"} <= set(words.unknowns)
    assert rec.python_ok is None and rec.env_python is None
    assert any("'sm_86'" in w for w in words.warnings)
    assert any("compute capability of your Mystery Accelerator is unknown" in w for w in words.warnings)
    assert any("assuming x86_64" in w for w in words.warnings)


def test_unsupported_arch_and_missing_os():
    with pytest.raises(BadInput, match="architecture"):
        recommend(SystemReport.from_dict({"os": "linux", "arch": "riscv64", "gpus": []}), DATA)
    with pytest.raises(BadInput, match="operating system"):
        recommend(SystemReport.from_dict({"arch": "x86_64", "gpus": []}), DATA)


def test_report_as_dict_is_accepted():
    rec = recommend({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": []}, DATA)
    assert rec.backend == "cpu"


def test_amd_on_windows_with_backend_rocm_uses_amds_index():
    rep = SystemReport.from_dict({"os": {"family": "windows"}, "arch": "x86_64", "python": "3.12",
                                  "gpus": [{"vendor": "amd", "name": "AMD Radeon RX 6800 XT"}]})
    rec = recommend(rep, DATA, Choices(backend="rocm"))
    # gfx1030 is not in AMD's ROCm 10.0 Windows packages; asking for ROCm opens AMD's ROCm 7.14 index
    assert rec.variant == "rocm7.14-amd" and rec.index_url.startswith("https://repo.amd.com/")
    assert rec.command[2].startswith("torch[device-gfx1030]==") and "--extra-index-url" in rec.command
    assert any("not built or validated by the PyTorch team" in w for w in rec.texts().warnings)
    assert rec.env_vars == {}


def test_amd_igpu_beside_nvidia_and_amd_igpu_alone():
    hybrid = _rep([{"vendor": "amd", "name": "AMD Radeon Graphics", "gfx_target": "gfx1036", "integrated": True},
                   _nv("NVIDIA GeForce RTX 4070 Laptop GPU", "8.9", 0)])
    rec = recommend(hybrid, DATA)
    assert rec.backend == "cuda" and any("integrated" in r for r in rec.texts().reasons)
    alone = _rep([{"vendor": "amd", "name": "AMD Radeon Graphics", "gfx_target": "gfx1036", "integrated": True}])
    rec = recommend(alone, DATA)
    assert rec.backend == "cpu" and any("integrated" in r for r in rec.texts().reasons)


def test_driver_upgrade_hint_names_the_smallest_driver_for_the_newest_torch():
    rec = recommend(_rep([_nv("NVIDIA GeForce RTX 3060", "8.6", 0, drv="470.82.01")]), DATA)
    assert (rec.variant, rec.torch_version) == ("cu118", "2.7.1")
    up = rec.driver_upgrade
    assert up.driver == "580" and up.torch_version == DATA.newest.latest and up.current == "470.82.01"
    assert any("Updating the NVIDIA driver to 580" in r for r in rec.texts().reasons)


def test_no_upgrade_hint_when_the_gpu_is_the_limit():
    rec = recommend(_rep([_nv("NVIDIA GeForce GTX 1080 Ti", "6.1", 0, drv="580.82.07")]), DATA)
    assert rec.driver_upgrade is None


def test_env_python_prefers_an_interpreter_on_the_machine():
    rep = _rep(python={"version": "3.9.2"}, interpreters=[{"version": "3.14.0", "executable": "/opt/py314"},
                                                          {"version": "3.11.9", "executable": "/usr/bin/python3.11"}])
    rec = recommend(rep, DATA)
    assert rec.env_python == "3.11" and any("/usr/bin/python3.11" in r for r in rec.texts().reasons)


def test_empty_hip_visible_devices_warns():
    rep = _rep([{"vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}],
               {"HIP_VISIBLE_DEVICES": ""})
    rec = recommend(rep, DATA)
    assert rec.backend == "rocm" and any("HIP_VISIBLE_DEVICES" in w for w in rec.texts().warnings)


def test_windows_wmi_driver_form_is_read_as_the_nvidia_number():
    rep = SystemReport.from_dict({"os": {"family": "windows"}, "arch": "x86_64", "python": "3.12",
                                  "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4070",
                                            "compute_capability": "8.9", "driver_version": "32.0.15.7680"}]})
    rec = recommend(rep, DATA)
    assert (rec.variant, rec.torch_version) == ("cu126", "2.14.1")  # 576.80: CUDA 12 yes, 13 (580) no
    assert rec.driver_upgrade.current == "576.80"
    assert any("NVIDIA driver 576.80" in r for r in rec.texts().reasons)
