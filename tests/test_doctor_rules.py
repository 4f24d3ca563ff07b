"""The doctor's rule table calls the one home of each domain rule: arch coverage and driver floors
(app.core.compat.cuda with the compat data), *_VISIBLE_DEVICES (app.core.base.visible), HSA override values
(the compat data). Generated cases state that the doctor's verdict is the rule module's; the
findings are texts by code, rendered in the language asked for."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.base import visible
from app.core.base.text import Msg, render
from app.core.compat import cuda
from app.core.compat.data import load_compat
from app.core.detection.system import GPU, OSInfo, SystemReport
from app.core.doctor import Facts, analyze
from app.core.doctor import rules as doctor_rules
from app.core.measure.verify import BackendState, Device, TorchBuild, VerifyReport

DATA = load_compat()
CJK = re.compile(r"[\u4e00-\u9fff]")

ccs = st.tuples(st.integers(3, 12), st.integers(0, 9))
arch_entries = st.one_of(ccs.map(lambda c: f"sm_{c[0]}{c[1]}"), ccs.map(lambda c: f"compute_{c[0]}{c[1]}"),
                         ccs.map(lambda c: f"sm_{c[0]}{c[1]}a"))


def _cuda_verify(arch: tuple[str, ...], cuda_v: str = "12.8", devices: tuple[Device, ...] = ()) -> VerifyReport:
    return VerifyReport(python="/env/bin/python", torch_version=f"2.7.0+cu{cuda_v.replace('.', '')}",
                        build=TorchBuild(cuda=cuda_v, local_tag=f"cu{cuda_v.replace('.', '')}", arch_list=arch),
                        backends={"cuda": BackendState(built=True, available=True)}, devices=devices,
                        accelerator="cuda")


# ------------------------------------------------------------------ arch coverage: cuda.arch_covers

@settings(max_examples=150, deadline=None)
@given(cc=ccs, arch=st.lists(arch_entries, min_size=1, max_size=6, unique=True))
def test_arch_missing_is_cuda_arch_covers(cc, arch):
    cc_text = f"{cc[0]}.{cc[1]}"
    report = SystemReport(gpus=[GPU(vendor="nvidia", name="GPU X", driver_version="590.10",
                                    compute_capability=cc_text)])
    found = [f for f in analyze(verify=_cuda_verify(tuple(arch)), report=report, data=DATA)
             if f.code == "arch-missing"]
    covered = cuda.arch_covers(cc_text, arch, tegra=DATA.tegra)
    assert bool(found) == (covered is False)
    if found:
        assert f"sm_{cc[0]}{cc[1]}" in str(found[0].fix) and cc_text in str(found[0].title)


def test_ptx_alone_does_not_serve_a_gpu_and_tegra_needs_an_exact_match():
    """docs/compat-decisions.md 3 and 4, as app.core.compat.cuda states them."""
    blackwell = SystemReport(gpus=[GPU(vendor="nvidia", name="RTX 5090", compute_capability="12.0")])
    ptx_only = _cuda_verify(("sm_80", "sm_90", "compute_90"))
    assert "arch-missing" in [f.code for f in analyze(verify=ptx_only, report=blackwell, data=DATA)]
    orin = Device(index=0, backend="cuda", name="Orin", compute_capability="8.7")
    assert "8.7" in DATA.tegra
    found = analyze(verify=_cuda_verify(("sm_80", "sm_86"), devices=(orin,)), data=DATA)
    assert [f.code for f in found] == ["arch-missing"]


# ------------------------------------------------------------------ driver floors: the compat data

@pytest.mark.parametrize("major", sorted(DATA.driver_floors))
@pytest.mark.parametrize("family", ["linux", "windows"])
def test_driver_floor_is_the_compat_rows(major, family):
    floor, row = cuda.driver_floor(f"{major}.0", family, DATA)
    first = int(floor.split(".")[0])
    below, at = f"{first - 1}.99", floor
    for driver, too_old in ((below, True), (at, False)):
        report = SystemReport(os=OSInfo(family=family),
                              gpus=[GPU(vendor="nvidia", name="GPU", driver_version=driver)])
        verify = replace(_cuda_verify((), cuda_v=f"{major}.0"), backends={"cuda": BackendState(built=True)})
        found = [f for f in analyze(verify=verify, report=report, data=DATA) if f.code == "driver-too-old"]
        assert bool(found) == too_old, (driver, floor)
        if found:
            assert floor in str(found[0].fix) and f"floor source: {row.source}" in found[0].evidence


def test_without_compat_data_no_floor_is_guessed():
    report = SystemReport(gpus=[GPU(vendor="nvidia", name="GPU", driver_version="400.10")])
    verify = _cuda_verify((), cuda_v="12.6")
    assert "driver-too-old" in [f.code for f in analyze(verify=verify, report=report, data=DATA)]
    facts = Facts(verify=verify, report=report)
    assert doctor_rules.driver_too_old(facts, None) is None


# ------------------------------------------------------------------ HSA override values: the compat data

@pytest.mark.parametrize("row", DATA.hsa_overrides, ids=lambda r: r.family)
def test_hsa_override_value_is_the_compat_row(row):
    for gfx in row.gfx:
        verify = VerifyReport(python="p", torch_version="2.5.0+rocm6.2",
                              build=TorchBuild(hip="6.2", arch_list=("gfx90a", "gfx942")),
                              backends={"rocm": BackendState(built=True)})
        report = SystemReport(gpus=[GPU(vendor="amd", name="Radeon", gfx_target=gfx)])
        f = next(x for x in analyze(verify=verify, report=report, data=DATA) if x.code == "rocm-gfx-unsupported")
        assert f"HSA_OVERRIDE_GFX_VERSION={row.value}" in str(f.fix)
    assert doctor_rules.hsa_override("gfx1031", None) is None


# ------------------------------------------------------------------ visible devices: app.core.base.visible

tokens = st.one_of(st.integers(0, 5).map(str), st.sampled_from(["abc", "-1", "none", "GPU-<uuid>", "zz", " ",
                                                                 "MIG-<uuid>", "NoDevFiles", "GPU-8a1b2c3d"]))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), parts=st.lists(tokens, min_size=0, max_size=5))
def test_visible_devices_finding_is_parse_visible(n, parts):
    value = ",".join(parts)
    report = SystemReport(gpus=[GPU(vendor="nvidia", name=f"GPU{i}") for i in range(n)])
    found = [f for f in analyze(report=report, env={"CUDA_VISIBLE_DEVICES": value}, data=DATA)
             if f.code == "cuda-visible-devices"]
    vis = visible.parse_visible(value, n)
    if vis.state in (visible.Visibility.ALL, visible.Visibility.UNSET):
        assert found == []
        return
    assert len(found) == 1
    f = found[0]
    assert f.severity == ("warning" if vis.state is visible.Visibility.PARTIAL else "error")
    title = str(f.title)
    if vis.state is visible.Visibility.PARTIAL:
        assert f"the first {vis.count} entr" in title and f"'{vis.invalid}'" in title
    elif vis.state is visible.Visibility.NONE_VALID:
        assert "names no GPU that exists" in title
    else:
        assert "hides every GPU" in title


def test_uuid_then_garbage_keeps_the_uuid_and_hides_it():
    value = "GPU-8a1b2c3d-0000-1111-2222-333344445555,abc"
    vis = visible.parse_visible(value, 2)
    assert vis.state is visible.Visibility.PARTIAL and vis.count == 1 and vis.invalid == "abc"
    report = SystemReport(gpus=[GPU(vendor="nvidia", name="A100"), GPU(vendor="nvidia", name="A100")])
    (f,) = analyze(report=report, env={"CUDA_VISIBLE_DEVICES": value}, data=DATA)
    assert f.code == "cuda-visible-devices" and f.severity == "warning"
    assert str(f.title) == ("CUDA_VISIBLE_DEVICES='GPU-<uuid>,abc': only the first 1 entry are used; 'abc' is not a "
                            "valid device and hides the rest")
    assert "8a1b2c3d" not in " ".join([str(f.title), *f.evidence])
    assert analyze(report=report, env={"CUDA_VISIBLE_DEVICES": "GPU-<uuid>"}, data=DATA) == []


def test_minus_one_and_other_disabling_words_hide_everything():
    report = SystemReport(gpus=[GPU(vendor="nvidia", name="A100")])
    for value in ("-1", "-3", "none", "NONE", "NoDevFiles", "void"):
        (f,) = analyze(report=report, env={"CUDA_VISIBLE_DEVICES": value}, data=DATA)
        assert f.severity == "error" and "hides every GPU" in str(f.title), value
    # nothing to hide on a machine without a GPU yet: a warning
    (f,) = analyze(report=SystemReport(), env={"HIP_VISIBLE_DEVICES": "-1"}, data=DATA)
    assert f.code == "visible-devices-hidden" and f.severity == "warning"


# ------------------------------------------------------------------ the table and the texts

def test_every_rule_is_in_the_table_once():
    names = [r.__name__ for r in doctor_rules.RULES + doctor_rules.FALLBACKS]
    assert len(names) == len(set(names))
    assert names[0] == "probe_failed" and names[-1] == "cuda_init_failed"


def test_findings_are_texts_by_code_and_json_keeps_english():
    report = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", driver_version="570.86.10",
                                    compute_capability="6.1")])
    (f,) = analyze(verify=_cuda_verify(("sm_75", "sm_80")), report=report, data=DATA)
    assert isinstance(f.title, Msg) and f.title.code == "doctor.arch_missing.title"
    d = f.to_dict()
    assert d == {"code": "arch-missing", "severity": "error", "title": render(f.title),
                 "explanation": render(f.explanation), "fix": render(f.fix), "evidence": list(f.evidence),
                 "actions": [a.to_dict() for a in f.actions]}
    assert [a["kind"] for a in d["actions"]] == ["set_variant"]  # the build for this machine's GPU
    assert d["title"] == "NVIDIA GeForce GTX 1080 Ti (compute capability 6.1) is not supported by this PyTorch build"


def test_doctor_findings_in_chinese():
    """Moved from test_core_i18n: the same findings, rendered in Chinese with the values kept."""
    pascal = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", driver_version="570.86.10",
                                    compute_capability="6.1")])
    cu128 = VerifyReport.from_dict({"torch_version": "2.7.0+cu128", "python": "/env/bin/python",
                                    "build": {"cuda": "12.8", "local_tag": "cu128",
                                              "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_120"]},
                                    "backends": {"cuda": {"built": True, "available": True}}})
    found = analyze(verify=cu128, report=pascal, env={"CUDA_VISIBLE_DEVICES": ""})
    assert {f.code for f in found} >= {"arch-missing", "cuda-visible-devices"}
    for f in found:
        for text in (f.title, f.explanation, f.fix):
            zh, en = render(text, "zh_CN"), render(text, "en")
            assert CJK.search(zh) and not CJK.search(en) and zh != en, f
    arch = next(f for f in found if f.code == "arch-missing")
    assert "NVIDIA GeForce GTX 1080 Ti" in render(arch.title, "zh_CN") and "6.1" in render(arch.title, "zh_CN")
    assert "sm_61" in render(arch.fix, "zh_CN")
    assert render(arch.title) == \
        "NVIDIA GeForce GTX 1080 Ti (compute capability 6.1) is not supported by this PyTorch build"
    # the language is a parameter of rendering: analysing again gives the same findings
    assert analyze(verify=cu128, report=pascal, env={"CUDA_VISIBLE_DEVICES": ""}) == found


# ------------------------------------------------------------------ the build the env was installed for

def _cpu_verify() -> VerifyReport:
    return VerifyReport(python="/env/bin/python", torch_version="2.13.0+cpu", build=TorchBuild(local_tag="cpu"),
                        backends={"cuda": BackendState(built=False, available=False)})


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_a_cpu_build_in_an_env_installed_for_cuda_is_named(lang):
    """No GPU is seen (a driver gone, a container without --gpus): the one cause left is that the env
    holds another build than the one installed; it is an error with the build action, in both languages."""
    found = analyze(verify=_cpu_verify(), report=SystemReport(), data=DATA, env_dir="/env", expected="cuda")
    codes = [f.code for f in found]
    assert codes[0] == "build-not-as-installed" and found[0].severity == "error"
    title, fix = render(found[0].title, lang), render(found[0].fix, lang)
    assert "CUDA" in title and "/env" in fix
    assert ("仅 CPU" in title and CJK.search(fix)) if lang == "zh_CN" else ("CPU-only" in title)
    assert [a.kind.value for a in found[0].actions] == ["set_variant"]
    # the same env, installed for the CPU build (or unknown): nothing to say about the build
    assert "build-not-as-installed" not in [f.code for f in analyze(verify=_cpu_verify(), report=SystemReport(),
                                                                     data=DATA, env_dir="/env")]


def test_the_build_rule_stays_quiet_when_the_build_matches_or_a_gpu_rule_already_named_it():
    cuda_ok = _cuda_verify(("sm_80", "sm_90"))
    assert "build-not-as-installed" not in [f.code for f in analyze(verify=cuda_ok, report=SystemReport(),
                                                                     data=DATA, expected="cuda")]
    # installed for ROCm, holds CUDA: named with its CUDA version
    found = [f for f in analyze(verify=cuda_ok, report=SystemReport(), data=DATA, expected="rocm")
             if f.code == "build-not-as-installed"]
    assert found and "CUDA 12.8" in render(found[0].title) and "ROCm" in render(found[0].title)
    # an NVIDIA GPU with a CPU build: cpu-wheel-with-gpu names it, once
    gpu = SystemReport(gpus=[GPU(vendor="nvidia", name="RTX 4090", driver_version="590.10",
                                 compute_capability="8.9")])
    codes = [f.code for f in analyze(verify=_cpu_verify(), report=gpu, data=DATA, expected="cuda")]
    assert "cpu-wheel-with-gpu" in codes and "build-not-as-installed" not in codes
