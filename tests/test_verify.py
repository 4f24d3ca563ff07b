"""Verification in a real venv holding the torch 2.13.0 CPU wheel: every CPU check passes
(the two-process gloo all_reduce included) and each accelerator check is skipped with a
reason a beginner can read."""
from __future__ import annotations

import json

import pytest

from app.core.base.events import StepEvent
from app.core.measure.verify import VerifyReport, run_verify

CPU_CHECKS = ("torch_import", "cpu_matmul", "cpu_conv2d", "cpu_training", "cpu_autocast", "gloo_all_reduce")
ACCEL_CHECKS = ("accelerator", "arch_list", "device_round_trip", "device_matmul", "device_conv2d",
                "device_training", "dnn_library", "device_autocast", "device_memory", "nccl_all_reduce")


@pytest.fixture(scope="module")
def verified(torch_env):
    _env, py = torch_env
    events = []
    report = run_verify(py, on_event=events.append)
    return report, events


@pytest.mark.slow
def test_every_cpu_check_passes(verified):
    report, _ = verified
    by_name = {c.name: c for c in report.checks}
    for name in CPU_CHECKS:
        assert by_name[name].status == "passed", (name, str(by_name[name].detail))
        assert str(by_name[name].detail) and str(by_name[name].title)
    gloo = str(by_name["gloo_all_reduce"].detail)
    assert "gloo" in gloo and "correct result" in gloo
    loss = by_name["cpu_training"].data
    assert loss["last_loss"] < loss["first_loss"]
    assert report.ok and not report.failed


@pytest.mark.slow
def test_each_accelerator_check_is_skipped_with_its_reason(verified):
    report, _ = verified
    by_name = {c.name: c for c in report.checks}
    for name in ACCEL_CHECKS:
        assert by_name[name].status == "skipped", name
        assert "CPU-only build" in str(by_name[name].detail)
    assert report.accelerator is None


@pytest.mark.slow
def test_build_facts(verified):
    report, _ = verified
    assert report.torch_version.startswith("2.13.0")
    assert report.build.local_tag == "cpu" and report.build.cuda is None and report.build.hip is None
    for b in ("cuda", "rocm", "mps", "xpu"):
        assert report.backends[b].built is False and report.backends[b].available is False
    assert report.backends["cpu"].available is True
    assert report.devices == ()
    assert report.interpreter.in_venv is True


@pytest.mark.slow
def test_step_events_stream_while_it_runs(verified):
    _, events = verified
    steps = [e for e in events if isinstance(e, StepEvent)]
    running = [e.name for e in steps if e.status == "running"]
    assert "cpu_matmul" in running and "gloo_all_reduce" in running
    done = [e.name for e in steps if e.status in ("passed", "skipped")]
    assert done.index("cpu_matmul") < done.index("gloo_all_reduce") < done.index("device_matmul")


@pytest.mark.slow
def test_report_round_trips_through_json(verified):
    report, _ = verified
    d = json.loads(json.dumps(report.to_dict()))
    again = VerifyReport.from_dict(d)
    assert again.checks == report.checks and again.ok == report.ok and d["ok"] is True


@pytest.mark.slow
def test_expect_cuda_turns_no_accelerator_into_a_failure(torch_env):
    from app.core.env import activate_vars

    env, py = torch_env
    try:  # and the probe runs with the variables the env's activation sets (issue 25)
        activate_vars.apply(env, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"})
        report = run_verify(py, expect="cuda", distributed=False)
    finally:
        activate_vars.lift(env)
    acc = report.check("accelerator")
    assert acc.status == "failed" and "CPU-only" in str(acc.detail)
    assert not report.ok
    assert report.check("gloo_all_reduce").status == "skipped"
    assert report.interpreter.env.get("CUDA_VISIBLE_DEVICES") == "1"


@pytest.mark.slow
def test_cli_verify_json_and_checklist(torch_env, capsys):
    from app.cli import main

    env, _py = torch_env
    assert main(["verify", "--env", str(env), "--json", "--no-dist"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["torch_version"].startswith("2.13.0")
    assert {c["name"] for c in data["checks"]} >= set(CPU_CHECKS) | set(ACCEL_CHECKS)
    assert main(["verify", "--env", str(env), "--no-dist", "--expect", "cuda"]) == 1
    out = capsys.readouterr().out
    assert "Matrix multiply on the CPU" in out and "Some checks FAILED" in out and "doctor" in out
