"""Verification checks are texts by code, and the arch check is the assistant's rule.

The probe reports each check as a stable name, a status and an outcome code with plain values
(it also writes English for people reading raw output); app.core.measure.verify turns that into checks
whose title and detail render in any language, and decides ``arch_list`` with
app.core.compat.cuda.arch_covers (NVIDIA) or gfx membership (ROCm) from the facts the probe recorded.
The recorded probe output is a real run of the torch 2.13.0 CPU wheel; the GPU cases are
derived from it by replacing the build, devices and accelerator checks."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.base.events import StepEvent
from app.core.base.paths import probes_dir
from app.core.base.text import Msg, render
from app.core.compat import cuda
from app.core.compat.data import load_compat
from app.core.measure.verify import Check, VerifyReport, check_from_step, check_title, detail_codes

RECORDED = Path(__file__).parent / "fixtures" / "verify-probe" / "result-torch2.13.0-cpu-linux.json"
CJK = re.compile(r"[\u4e00-\u9fff]")
TEGRA = load_compat().tegra


def _probe_module():
    spec = importlib.util.spec_from_file_location("verify_probe", probes_dir() / "verify.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PROBE = _probe_module()


def recorded() -> dict:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def derived_gpu_result(backend: str, devices: list[dict], arch_list: list[str]) -> dict:
    """The recorded result as a GPU build would report it: the accelerator check passed and
    its checks ran (no arch_list check: the probe leaves that to the assistant)."""
    raw = recorded()
    raw["torch"].update({"local_tag": "cu128" if backend == "cuda" else "rocm6.4",
                         "cuda": "12.8" if backend == "cuda" else None,
                         "hip": "6.4.1" if backend == "rocm" else None, "arch_list": arch_list})
    raw["backends"][backend] = {"built": True, "available": True, "device_count": len(devices)}
    raw["devices"] = devices
    raw["accelerator"] = backend
    names = ", ".join(d["name"] for d in devices)
    checks = [c for c in raw["checks"] if not c["name"].startswith(("device_", "dnn_", "nccl_", "accelerator"))]
    checks.append({"name": "accelerator", "title": PROBE.title_text("accelerator"), "status": "passed",
                   "detail": PROBE.detail_text("accelerator_ok", {"backend": backend, "devices": names}),
                   "code": "accelerator_ok", "params": {"backend": backend, "devices": names}})
    params = {"device": "cuda", "ms": 1.5}
    checks.append({"name": "device_round_trip", "title": PROBE.title_text("device_round_trip"), "status": "passed",
                   "detail": PROBE.detail_text("round_trip_ok", params), "code": "round_trip_ok", "params": params})
    raw["checks"] = checks
    return raw


# ------------------------------------------------------------------ one set of templates

def test_the_core_writes_the_probes_english_read_from_the_probe_itself():
    """One home: the core's titles and details are the probe's tables (read from its source),
    plus the outcomes of the arch check, which only the core decides."""
    from app.core.measure import verify as core

    for code, template in PROBE.DETAILS.items():
        params = {f: 1.5 if spec else "x" for _, f, spec, _ in string.Formatter().parse(template) if f}
        assert render(core.detail_text(code, params, "fallback")) == PROBE.detail_text(code, params), code
    for name in PROBE.TITLES:
        assert render(check_title(name)) == PROBE.title_text(name), name
    assert detail_codes() - set(PROBE.DETAILS) == {"arch_covered", "arch_missing", "arch_list_unknown",
                                                   "arch_not_applicable"}


def test_probe_tables_must_be_literal_dicts(tmp_path, monkeypatch):
    from app.core.measure import probe

    (tmp_path / "p.py").write_text('TITLES = {"a": "A"}\nDETAILS = dict(a="b")\n', encoding="utf-8")
    monkeypatch.setattr(probe, "probes_dir", lambda: tmp_path)
    assert probe.probe_tables("p", ("TITLES",)) == {"TITLES": {"a": "A"}}
    with pytest.raises(LookupError, match="DETAILS"):
        probe.probe_tables("p", ("TITLES", "DETAILS"))


def test_the_probe_has_no_arch_rule_of_its_own():
    assert not hasattr(PROBE, "arch_supported")
    src = (probes_dir() / "verify.py").read_text(encoding="utf-8")
    assert "arch_supported" not in src and '"arch_list", ' not in src.split("def main", 1)[1]


def test_recorded_cpu_run_renders_the_same_english_as_the_probe_wrote():
    raw = recorded()
    report = VerifyReport.from_dict(raw)
    by_probe = {c["name"]: c for c in raw["checks"]}
    for c in report.checks:
        if c.name == "arch_list":
            continue
        assert isinstance(c.title, Msg) and isinstance(c.detail, Msg), c.name
        assert render(c.title) == by_probe[c.name]["title"] and render(c.detail) == by_probe[c.name]["detail"]
    arch = report.check("arch_list")
    assert arch.status == "skipped" and arch.code == "no_accelerator"
    assert render(arch.detail) == "no accelerator is usable: This PyTorch (+cpu) is a CPU-only build, so it cannot " \
                                  "use a GPU"
    assert [c.name for c in report.checks].index("arch_list") == [c.name for c in report.checks].index(
        "accelerator") + 1


def test_json_keeps_english_strings_and_adds_codes():
    report = VerifyReport.from_dict(recorded())
    d = json.loads(json.dumps(report.to_dict()))
    check = next(c for c in d["checks"] if c["name"] == "cpu_training")
    assert check["title"] == "A training step on the CPU (loss goes down)"
    assert check["detail"].startswith("20 SGD steps on a tiny MLP: loss ") and check["code"] == "training_ok"
    assert set(check["params"]) == {"first", "last"} and check["data"]["last_loss"] < check["data"]["first_loss"]
    assert VerifyReport.from_dict(d) == report  # a saved report reads back to the same values


def test_checks_in_chinese_keep_measured_values():
    """Moved from test_core_i18n: titles and skip reasons in Chinese; numbers and names kept."""
    report = VerifyReport.from_dict(recorded())
    title = report.check("device_matmul").title
    assert render(title) == "Matrix multiply on the accelerator matches the CPU"
    assert render(title, "zh_CN") == "加速器上的矩阵乘法结果与 CPU 一致"
    reason = report.check("device_matmul").detail
    assert CJK.search(render(reason, "zh_CN")) and "(+cpu)" in render(reason, "zh_CN")
    assert render(report.check("cpu_matmul").title, "zh_CN") == "在 CPU 上做矩阵乘法"
    matmul = render(report.check("cpu_matmul").detail, "zh_CN")
    assert CJK.search(matmul) and report.check("cpu_matmul").params["errors"] in matmul
    for c in report.checks:
        assert CJK.search(render(c.title, "zh_CN")) and CJK.search(render(c.detail, "zh_CN")), c.name
    # an unknown check or code keeps the probe's own words
    unknown = Check.from_dict({"name": "new_check", "title": "Some new check", "status": "passed",
                               "detail": "it ran", "code": "new_code"})
    assert render(unknown.title, "zh_CN") == "Some new check" and render(unknown.detail, "zh_CN") == "it ran"
    broken = Check.from_dict({"name": "cpu_matmul", "status": "failed", "detail": "raw", "code": "matmul_differs",
                              "params": {"dtype": "float32"}})  # a value missing: the probe's words
    assert broken.detail == "raw" and render(broken.title) == "Matrix multiply on the CPU"


def test_step_events_become_checks_with_their_text():
    ev = StepEvent("dnn_library", "running", "", {"title": "MIOpen convolution",
                                                  "text": {"title_params": {"library": "MIOpen"}}})
    c = check_from_step(ev)
    assert render(c.title) == "MIOpen convolution" and render(c.title, "zh_CN") == "MIOpen 卷积"
    ev = StepEvent("cpu_training", "passed", "20 SGD steps on a tiny MLP: loss 1.0000 -> 0.5000",
                   {"first_loss": 1.0, "last_loss": 0.5, "title": "A training step on the CPU (loss goes down)",
                    "text": {"code": "training_ok", "params": {"first": 1.0, "last": 0.5}}})
    c = check_from_step(ev)
    assert c.data == {"first_loss": 1.0, "last_loss": 0.5} and c.code == "training_ok"
    assert render(c.detail) == ev.detail and "1.0000 -> 0.5000" in render(c.detail, "zh_CN")
    assert render(check_title("nccl_all_reduce")) == "Two-process all_reduce across GPUs (NCCL)"


# ------------------------------------------------------------------ the arch rule: app.core.compat.cuda

ccs = st.tuples(st.integers(3, 12), st.integers(0, 9))
entries = st.one_of(ccs.map(lambda c: f"sm_{c[0]}{c[1]}"), ccs.map(lambda c: f"compute_{c[0]}{c[1]}"),
                    ccs.map(lambda c: f"sm_{c[0]}{c[1]}a"))


@settings(max_examples=150, deadline=None)
@given(devices=st.lists(ccs, min_size=1, max_size=3), arch=st.lists(entries, min_size=1, max_size=6, unique=True))
def test_arch_check_is_cuda_arch_covers(devices, arch):
    devs = [{"index": i, "backend": "cuda", "name": f"GPU {i}", "compute_capability": f"{a}.{b}"}
            for i, (a, b) in enumerate(devices)]
    report = VerifyReport.from_dict(derived_gpu_result("cuda", devs, arch))
    served = [cuda.arch_covers(d["compute_capability"], arch, tegra=TEGRA) for d in devs]
    assert [d.arch_supported for d in report.devices] == served
    check = report.check("arch_list")
    assert check.status == ("failed" if False in served else "passed")
    assert check.code == ("arch_missing" if False in served else "arch_covered")
    assert " ".join(arch) in render(check.detail)


@pytest.mark.parametrize("cc, arch, ok", [
    ("8.6", ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_90"], True),  # sm_80 cubin runs on 8.6
    ("8.9", ["sm_80", "sm_90"], True),
    ("6.1", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], False),  # Pascal on cu128
    ("12.0", ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], False),  # Blackwell on cu124
    # PTX alone does not count (docs/compat-decisions.md 3; the probe's old rule JIT-counted it)
    ("12.0", ["sm_80", "sm_90", "compute_90"], False),
    ("9.0", ["sm_86"], False),
    ("8.7", ["sm_80", "sm_86"], False),  # Jetson Orin: Tegra, exact match only
])
def test_arch_named_cases(cc, arch, ok):
    dev = {"index": 0, "backend": "cuda", "name": "NVIDIA GPU", "compute_capability": cc}
    report = VerifyReport.from_dict(derived_gpu_result("cuda", [dev], arch))
    assert report.devices[0].arch_supported is ok
    check = report.check("arch_list")
    assert check.passed is ok
    if not ok:
        assert f"NVIDIA GPU ({cc})" in render(check.detail) and "no kernel image" in render(check.detail)
        assert "NVIDIA GPU" in render(check.detail, "zh_CN") and CJK.search(render(check.detail, "zh_CN"))


def test_arch_check_for_rocm_is_gfx_membership():
    devs = [{"index": 0, "backend": "rocm", "name": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100"},
            {"index": 1, "backend": "rocm", "name": "AMD Radeon RX 6700 XT", "gfx_target": "gfx1031"}]
    report = VerifyReport.from_dict(derived_gpu_result("rocm", devs, ["gfx90a", "gfx942", "gfx1100:xnack-"]))
    assert [d.arch_supported for d in report.devices] == [True, False]
    check = report.check("arch_list")
    assert check.status == "failed" and "AMD Radeon RX 6700 XT (gfx1031)" in render(check.detail)


def test_arch_check_skips_with_a_reason():
    raw = derived_gpu_result("cuda", [{"index": 0, "backend": "cuda", "name": "GPU", "compute_capability": "8.6"}],
                             [])
    check = VerifyReport.from_dict(raw).check("arch_list")
    assert (check.status, check.code) == ("skipped", "arch_list_unknown")
    raw = derived_gpu_result("cuda", [], ["sm_80"])
    raw["accelerator"] = "mps"
    check = VerifyReport.from_dict(raw).check("arch_list")
    assert (check.status, check.code) == ("skipped", "arch_not_applicable")
    assert render(check.detail) == "mps has no compiled architecture list"
    # facts only (the doctor's run): no checks ran, none is added
    raw = recorded()
    raw["checks"] = raw["checks"][:1]
    assert [c.name for c in VerifyReport.from_dict(raw).checks] == ["torch_import"]


def test_a_decided_report_is_not_decided_again():
    dev = {"index": 0, "backend": "cuda", "name": "GPU", "compute_capability": "6.1"}
    report = VerifyReport.from_dict(derived_gpu_result("cuda", [dev], ["sm_75", "sm_80"]))
    again = VerifyReport.from_dict(copy.deepcopy(report.to_dict()))
    assert again == report and [c.name for c in again.checks].count("arch_list") == 1
