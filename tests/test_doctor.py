"""doctor: faults planted on this machine (real env, real probe) and, for causes that need a
GPU, recorded facts (collect_env outputs, probe results) fed to the analysis."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.detection.system import GPU, OSInfo, SystemReport
from app.core.doctor import Diagnosis, analyze, diagnose, from_collect_env, scan_library_path
from app.core.measure.verify import BackendState, Device, TorchBuild, VerifyReport
from tests.helpers import CRASH, bare_venv, real_site_packages

NVIDIA_REPORT = SystemReport(os=OSInfo(family="linux"), arch="x86_64", gpus=[
    GPU(vendor="nvidia", name="NVIDIA GeForce RTX 3090", driver_version="550.54.14", compute_capability="8.6")])


def _clean(extra: dict | None = None, drop=("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "PYTHONPATH")) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra or {})
    return env


@pytest.fixture(scope="module")
def cpu_facts(torch_env):
    """The facts-only verify probe result of the real torch env (shared by the planted tests)."""
    from app.core.measure.verify import run_verify

    return run_verify(torch_env[1], facts_only=True)


def _finding(diag: Diagnosis, code: str):
    found = [f for f in diag.findings if f.code == code]
    assert found, f"{code} not in {diag.codes()}"
    return found[0]


def _cuda_unavailable(v: VerifyReport, **build) -> VerifyReport:
    """The same facts with a CUDA build PyTorch says it cannot use."""
    return replace(v, build=replace(v.build, **build),
                   backends={**v.backends, "cuda": BackendState(built=True, available=False)})


# ---------------------------------------------------------------- planted here

@pytest.mark.slow
def test_clean_cpu_env_on_a_cpu_machine_has_no_errors(torch_env, cpu_facts):
    env, _py = torch_env
    diag = diagnose(env, report=SystemReport(os=OSInfo(family="linux"), arch="x86_64"), verify=cpu_facts,
                    env=_clean(), check_path=False)
    assert diag.ok and diag.findings == () and diag.accelerator_ok is False


@pytest.mark.slow
def test_cpu_wheel_with_a_report_saying_nvidia_gpu(torch_env):
    env, _py = torch_env
    diag = diagnose(env, report=NVIDIA_REPORT, env=_clean(), check_path=False)  # runs the real probe
    f = _finding(diag, "cpu-wheel-with-gpu")
    assert f.severity == "error" and "CPU-only PyTorch (+cpu)" in str(f.title) and "NVIDIA GPU" in str(f.title)
    assert "RTX 3090" in str(f.explanation) and "torch-setup install" in str(f.fix)
    assert not diag.ok


@pytest.mark.slow
def test_empty_cuda_visible_devices(torch_env, cpu_facts):
    env, _py = torch_env
    diag = diagnose(env, report=NVIDIA_REPORT, verify=cpu_facts, env=_clean({"CUDA_VISIBLE_DEVICES": ""}),
                    check_path=False)
    f = _finding(diag, "cuda-visible-devices")
    assert f.severity == "error" and "empty string" in str(f.title) and "hides every GPU" in str(f.title)
    assert "unset CUDA_VISIBLE_DEVICES" in str(f.fix)


@pytest.mark.slow
def test_shadowing_ld_library_path(torch_env, cpu_facts, tmp_path):
    env, _py = torch_env
    libdir = tmp_path / "cuda-11.8" / "lib64"
    libdir.mkdir(parents=True)
    (libdir / "libcudart.so.12").write_bytes(b"\x7fELF fake")
    diag = diagnose(env, report=NVIDIA_REPORT, verify=cpu_facts,
                    env=_clean({"LD_LIBRARY_PATH": f"/nonexistent:{libdir}"}), check_path=False)
    f = _finding(diag, "ld-library-path-shadowing")
    assert "LD_LIBRARY_PATH" in str(f.title) and any(str(libdir) in e and "libcudart.so.12" in e for e in f.evidence)
    # with the CPU wheel it is a warning (harmless now); with a CUDA wheel it is an error
    assert f.severity == "warning"
    cuda_facts = replace(cpu_facts, build=replace(cpu_facts.build, cuda="12.6", local_tag="cu126"))
    found = analyze(verify=cuda_facts, report=NVIDIA_REPORT, lib_dirs=scan_library_path(str(libdir)))
    assert [x.severity for x in found if x.code == "ld-library-path-shadowing"] == ["error"]


def test_env_own_library_folders_are_not_shadowing(tmp_path):
    own = tmp_path / "env" / "lib" / "nvidia" / "cuda_runtime" / "lib"
    own.mkdir(parents=True)
    (own / "libcudart.so.12").write_bytes(b"")
    assert scan_library_path(str(own), exclude_under=[str(tmp_path / "env")]) == {}
    assert str(own) in scan_library_path(str(own))


def test_wrong_interpreter_path_is_not_an_env(tmp_path, capsys):
    from app.cli import main

    (tmp_path / "project").mkdir()
    diag = diagnose(tmp_path / "project", env=_clean(), check_path=False)
    assert diag.codes() == ["not-an-env"] and "not a Python environment" in str(diag.findings[0].title)
    assert main(["doctor", "--env", str(tmp_path / "project")]) == 1
    assert "not a Python environment" in capsys.readouterr().out
    assert main(["doctor", "--env", str(tmp_path / "missing")]) == 2


@pytest.mark.slow
def test_wrong_interpreter_torch_from_outside_the_env(torch_env, tmp_path):
    """An env without torch, but PYTHONPATH points at another env's site-packages: a plain
    `python` imports that torch. The doctor names both facts."""
    env, _py = torch_env
    other_site = real_site_packages(env)
    bare = tmp_path / "bare"
    bare_venv(bare)
    diag = diagnose(bare, report=NVIDIA_REPORT, env=_clean({"PYTHONPATH": str(other_site)}), check_path=False)
    assert _finding(diag, "torch-missing").severity == "error"
    f = _finding(diag, "torch-outside-env")
    assert str(other_site) in str(f.explanation) and "PYTHONPATH" in str(f.explanation)
    assert "Unset PYTHONPATH" in str(f.fix)


@pytest.mark.slow
def test_wrong_interpreter_python_on_path_differs(torch_env, cpu_facts, tmp_path):
    env, py = torch_env
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "python").symlink_to(sys.executable)
    diag = diagnose(env, verify=cpu_facts, env=_clean({"PATH": f"{other}{os.pathsep}{os.environ['PATH']}"}))
    f = _finding(diag, "path-python-differs")
    assert str(other / "python") in str(f.explanation) and "activate" in str(f.fix)
    # and with the env's own bin first on PATH, nothing to say
    diag = diagnose(env, verify=cpu_facts, env=_clean({"PATH": f"{py.parent}{os.pathsep}{os.environ['PATH']}"}))
    assert "path-python-differs" not in diag.codes()


@pytest.mark.slow
def test_cli_doctor_from_report_json(torch_env, tmp_path, capsys, monkeypatch):
    from app.cli import main

    env, _ = torch_env
    rep = tmp_path / "report.json"
    rep.write_text(json.dumps(NVIDIA_REPORT.to_dict()), encoding="utf-8")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    assert main(["doctor", "--env", str(env), "--from-report", str(rep), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    codes = [f["code"] for f in data["findings"]]
    assert "cpu-wheel-with-gpu" in codes and "cuda-visible-devices" in codes and data["ok"] is False
    cvd = next(f for f in data["findings"] if f["code"] == "cuda-visible-devices")
    assert "names no GPU that exists" in cvd["title"] and "1 GPU" in cvd["title"]
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["doctor", "--env", str(env), "--from-report", str(bad)]) == 2


# ---------------------------------------------------------------- recorded facts (need a GPU)

FIX = Path(__file__).parent / "fixtures" / "collect-env"


def _collect(name: str):
    return from_collect_env((FIX / name).read_text(encoding="utf-8"))


def test_collect_env_reader():
    v, r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    assert v.torch_version == "1.12.1+cu116" and v.build.cuda == "11.6"
    assert [g.name for g in r.gpus] == ["NVIDIA GeForce RTX 3090"] * 3
    assert r.gpus[0].driver_version == "515.65.01" and v.backends["cuda"].available is True
    v, r = _collect("rocm6.1-wsl2-rx6800xt-torch2.1.2-cut.txt")
    assert v.build.hip and r.gpus[0].vendor == "amd" and r.gpus[0].name == "AMD Radeon RX 6800 XT"
    v, r = _collect("macos13-arm64-mps-torch1.14-nightly.txt")
    assert r.os.family == "macos" and r.os.version == "13.0" and r.arch == "arm64" and r.gpus == []


def test_working_cuda_machine_has_no_findings():
    v, r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    assert analyze(verify=v, report=r) == []


def test_driver_too_old_for_the_wheel():
    v, r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    # the same machine with a CUDA 12.6 wheel: driver 515 is below the 12.x floor 525.60.13
    v12 = replace(_cuda_unavailable(v, cuda="12.6", local_tag="cu126"), torch_version="2.5.1+cu126")
    found = analyze(verify=v12, report=r)
    f = next(x for x in found if x.code == "driver-too-old")
    assert "515.65.01" in str(f.title) and "12.6" in str(f.title) and "525.60.13" in str(f.fix)
    # Windows uses the Windows floor
    rw = SystemReport(os=OSInfo(family="windows"), gpus=[GPU(vendor="nvidia", name="RTX", driver_version="526.98")])
    assert "527.41" in str(next(x for x in analyze(verify=v12, report=rw) if x.code == "driver-too-old").fix)
    # the quadro 455.32 driver with its cu101 wheel is fine
    vq, rq = _collect("cuda-quadro-rtx6000-torch1.7.0-cu101-ubuntu20.04.txt")
    assert [x.code for x in analyze(verify=vq, report=rq)] == []


def test_driver_too_old_from_torchs_own_warning():
    v, _r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    msg = ("CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
           "Please update your GPU driver")
    v2 = replace(_cuda_unavailable(v, cuda="12.1"), init_warnings={"cuda": (msg,)})
    r2 = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce RTX 3090")])
    f = next(x for x in analyze(verify=v2, report=r2) if x.code == "driver-too-old")
    assert "CUDA 11.4" in str(f.explanation)


def test_compute_capability_missing_from_arch_list():
    v, _ = _collect("cuda-quadro-rtx6000-torch1.7.0-cu101-ubuntu20.04.txt")
    pascal = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", driver_version="570.86.10",
                                    compute_capability="6.1")])
    cu128 = replace(v, torch_version="2.7.0+cu128",
                    build=TorchBuild(cuda="12.8", local_tag="cu128",
                                     arch_list=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")))
    f = next(x for x in analyze(verify=cu128, report=pascal) if x.code == "arch-missing")
    assert "6.1" in str(f.title) and "GTX 1080 Ti" in str(f.title) and "no kernel image" in str(f.explanation)
    assert "sm_61" in str(f.fix)
    ampere = SystemReport(gpus=[GPU(vendor="nvidia", name="RTX 3090", driver_version="570.86.10",
                                    compute_capability="8.6")])
    assert "arch-missing" not in [x.code for x in analyze(verify=cu128, report=ampere)]
    # from the probe's own device list too
    dev = replace(cu128, devices=(Device(index=0, backend="cuda", name="Tesla P100", compute_capability="6.0"),))
    assert any(x.code == "arch-missing" and "P100" in str(x.title) for x in analyze(verify=dev, report=None))


def test_rocm_gfx_target_unsupported():
    v, _r = _collect("rocm6.1-wsl2-rx6800xt-torch2.1.2-cut.txt")
    v2 = replace(v, build=replace(v.build, arch_list=("gfx900", "gfx906", "gfx908", "gfx90a", "gfx1100")))
    r2 = SystemReport(gpus=[GPU(vendor="amd", name="AMD Radeon RX 6700 XT", gfx_target="gfx1031")])
    f = next(x for x in analyze(verify=v2, report=r2) if x.code == "rocm-gfx-unsupported")
    assert "gfx1031" in str(f.title) and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in str(f.fix)
    assert "not supported" in str(f.fix)
    r3 = SystemReport(gpus=[GPU(vendor="amd", name="AMD Radeon RX 7900 XTX", gfx_target="gfx1100")])
    assert "rocm-gfx-unsupported" not in [x.code for x in analyze(verify=v2, report=r3)]


def test_wrong_vendor_wheel():
    v, _ = _collect("rocm6.1-wsl2-rx6800xt-torch2.1.2-cut.txt")
    assert any(x.code == "wrong-vendor-wheel" and "NVIDIA" in str(x.title)
               for x in analyze(verify=v, report=NVIDIA_REPORT))


def test_mps_built_but_unavailable_on_old_macos():
    v, r = _collect("macos13-arm64-mps-torch1.14-nightly.txt")
    old = replace(v, backends={**v.backends, "mps": BackendState(built=True, available=False)},
                  interpreter=replace(v.interpreter, mac_ver="12.1"))
    f = next(x for x in analyze(verify=old, report=r) if x.code == "mps-unavailable")
    assert "12.1" in str(f.title) and "12.3" in str(f.title) and "Update macOS" in str(f.fix)
    new = replace(old, interpreter=replace(old.interpreter, mac_ver="13.0"))
    f = next(x for x in analyze(verify=new, report=r) if x.code == "mps-unavailable")
    assert "older than" not in str(f.title) and "virtual machine" in str(f.explanation)


def test_rosetta_python_on_apple_silicon():
    v, r = _collect("macos13-arm64-mps-torch1.14-nightly.txt")
    x86 = replace(v, interpreter=replace(v.interpreter, machine="x86_64"))
    assert any(x.code == "rosetta-python" for x in analyze(verify=x86, report=r))


@pytest.mark.parametrize("value, count, severity, words", [
    ("", 2, "error", "empty string"), ("-1", 2, "error", "hides every GPU"),
    ("2", 2, "error", "names no GPU"), ("0,abc,1", 2, "warning", "'abc' is not a valid device"),
    ("GPU-8a1b2c3d-0000-1111-2222-333344445555", 1, None, None), ("0,1", 2, None, None),
])
def test_cuda_visible_devices_values(value, count, severity, words):
    r = SystemReport(gpus=[GPU(vendor="nvidia", name=f"GPU{i}") for i in range(count)])
    found = [x for x in analyze(report=r, env={"CUDA_VISIBLE_DEVICES": value}) if x.code == "cuda-visible-devices"]
    if severity is None:
        assert found == []
    else:
        assert found[0].severity == severity and words in str(found[0].title)


def test_cuda_init_failure_fallback_quotes_torch():
    v, r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    v2 = replace(_cuda_unavailable(v), init_warnings={"cuda": ("CUDA unknown error - this may be due to an "
                                                               "incorrectly set up environment",)})
    f = next(x for x in analyze(verify=v2, report=r) if x.code == "cuda-init-failed")
    assert "CUDA unknown error" in str(f.explanation) and "nvidia-smi" in str(f.fix)


def test_devices_from_probe_feed_arch_check():
    d = Device(index=0, backend="cuda", name="NVIDIA H200", compute_capability="9.0")
    v = VerifyReport(python="p", torch_version="2.4.0+cu118", build=TorchBuild(cuda="11.8", arch_list=("sm_50", "sm_80")),
                     backends={"cuda": BackendState(built=True, available=True)}, devices=(d,), accelerator="cuda")
    assert [x.code for x in analyze(verify=v)] == ["arch-missing"]


def test_cudnn_version_mismatch_message_points_at_ld_library_path():
    """torch.backends.cudnn.version() raises this when a system cuDNN shadows the wheel's."""
    v, r = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    msg = ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime "
           "version (8, 2, 1). PyTorch already comes bundled with cuDNN. Looks like your LD_LIBRARY_PATH contains "
           "incompatible version of cudnn.")
    v2 = replace(v, init_warnings={"cudnn": (msg,)})
    f = next(x for x in analyze(verify=v2, report=r) if x.code == "ld-library-path-shadowing")
    assert f.severity == "error" and any("cuDNN version incompatibility" in e for e in f.evidence)


def test_visible_devices_with_hidden_uuids_from_a_report_are_valid():
    r = SystemReport(gpus=[GPU(vendor="nvidia", name="A100")])
    assert [x for x in analyze(report=r, env={"CUDA_VISIBLE_DEVICES": "GPU-<uuid>"})] == []
    found = analyze(report=r, env={"CUDA_VISIBLE_DEVICES": "GPU-8a1b2c3d-0000-1111-2222-333344445555,zz"})
    assert found and "8a1b2c3d" not in " ".join([str(found[0].title), *found[0].evidence])


@pytest.mark.parametrize("init, code, words", [
    (CRASH, "torch-crashes", "crashes the Python process"),
    ("raise ImportError('libtorch_cuda.so: cannot open shared object file')\n", "torch-import-failed",
     "cannot be loaded"),
])
def test_doctor_on_a_torch_that_crashes_or_cannot_load(tmp_path, init, code, words):
    root = tmp_path / "env"
    bare_venv(root)
    site = real_site_packages(root)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(init, encoding="utf-8")
    diag = diagnose(root, report=NVIDIA_REPORT, env=_clean(), check_path=False)
    f = _finding(diag, code)
    assert words in str(f.title) and f.severity == "error" and str(f.fix)
    # the torch inside the env is the one found: no "outside the env" finding
    assert "torch-outside-env" not in diag.codes()


def test_driver_too_old_from_the_drivers_cuda_version_alone():
    v, _ = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    v12 = _cuda_unavailable(v, cuda="12.4")
    r = SystemReport(gpus=[GPU(vendor="nvidia", name="Tesla T4")], nvidia_cuda_version="11.4")
    f = next(x for x in analyze(verify=v12, report=r) if x.code == "driver-too-old")
    assert "up to 11.4" in str(f.title) and "12.4" in str(f.title) and "CUDA 11.x" in str(f.fix)
    r_ok = SystemReport(gpus=[GPU(vendor="nvidia", name="Tesla T4")], nvidia_cuda_version="12.2")
    assert "driver-too-old" not in [x.code for x in analyze(verify=v12, report=r_ok)]


def test_cuda_wheel_on_a_machine_without_nvidia_gpu():
    v, _ = _collect("cuda-3x-rtx3090-torch1.12.1-cu116-ubuntu22.04.txt")
    v2 = replace(_cuda_unavailable(v), init_warnings={"cuda": ("Found no NVIDIA driver on your system.",)})
    found = analyze(verify=v2, report=SystemReport(os=OSInfo(family="linux"), arch="x86_64"))
    assert [x.code for x in found] == ["cuda-wheel-without-gpu"]
    assert "no NVIDIA GPU was found" in str(found[0].title) and "CPU build" in str(found[0].fix)
