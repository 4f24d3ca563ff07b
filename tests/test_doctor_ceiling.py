"""The doctor on an old NVIDIA GPU: a driver past its ceiling (R590+ on Pascal) is named as the cause,
with the R580 advice and the GPU's last torch release; a build without its kernels names that release."""
from __future__ import annotations

from app.core.base.text import render
from app.core.compat.data import load_compat
from app.core.detection.system import GPU, OSInfo, SystemReport
from app.core.doctor import analyze
from app.core.measure.verify import BackendState, TorchBuild, VerifyReport

DATA = load_compat(bundled=True)


def _report(driver: str, cc: str = "6.1") -> SystemReport:
    return SystemReport(os=OSInfo(family="linux", glibc="2.39"), arch="x86_64",
                        gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", driver_version=driver,
                                  compute_capability=cc)])


def _cu132() -> VerifyReport:
    return VerifyReport(python="/env/bin/python", torch_version="2.15.0+cu132",
                        build=TorchBuild(cuda="13.2", local_tag="cu132", arch_list=("sm_75", "sm_80", "sm_90")),
                        backends={"cuda": BackendState(built=True, available=False)}, accelerator="cuda")


def test_a_driver_past_the_ceiling_is_the_cause():
    found = {f.code: f for f in analyze(verify=_cu132(), report=_report("590.48.01"), data=DATA)}
    f = found["driver-above-ceiling"]
    assert f.severity == "error"
    assert render(f.title) == "The NVIDIA driver 590.48.01 does not support your NVIDIA GeForce GTX 1080 Ti (Pascal)"
    fix = render(f.fix)
    assert "Install an R580 driver" in fix and "do not update past it" in fix
    assert "torch 2.14.1 (cu126) is the last PyTorch release built for your NVIDIA GeForce GTX 1080 Ti" in fix
    assert "580" in render(f.fix, "zh_CN") and "2.14.1" in render(f.fix, "zh_CN")
    assert any("NVIDIA/ansible-role-nvidia-driver#89" in e for e in f.evidence)
    # the wheel lacks the GPU's kernels too: that finding names the last release as well
    assert "torch 2.14.1 (cu126) is the last PyTorch release" in render(found["arch-missing"].fix)


def test_an_r580_driver_is_fine_and_turing_has_no_ceiling():
    assert "driver-above-ceiling" not in {f.code for f in analyze(verify=_cu132(), report=_report("580.95.05"),
                                                                   data=DATA)}
    assert "driver-above-ceiling" not in {f.code for f in analyze(verify=_cu132(), report=_report("595.45", "7.5"),
                                                                   data=DATA)}
