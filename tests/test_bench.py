"""The matmul speed test in a real torch CPU env, and the peak estimates."""
from __future__ import annotations

import json

import pytest

from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.detection.system import CPUInfo, SystemReport
from app.core.measure.bench import BenchReport, BenchStatus, result_of_step, run_bench
from app.core.measure.peak import cpu_peak, gpu_peak, load_gpu_peaks


@pytest.fixture(scope="module")
def small_bench(torch_env):
    _env, py = torch_env
    events = []
    rep = run_bench(py, device="cpu", sizes=[128, 256], dtypes=["fp32", "fp16", "tf32"], budget_s=20,
                    repeats=3, warmup=1, on_event=events.append)
    return rep, events


@pytest.mark.slow
def test_cpu_sweep_measures_and_reports_peak_fraction(small_bench):
    rep, _ = small_bench
    assert rep.device == "cpu" and rep.threads >= 1
    fp32 = sorted((r for r in rep.results if r.dtype == "fp32"), key=lambda r: r.n)
    assert [r.n for r in fp32] == [128, 256]
    for r in fp32:
        # short points take more runs (at most 50 a round; a busy machine adds rounds of re-measurement)
        assert 3 <= r.runs <= 50 * (1 + rep.remeasured) and r.median_s > 0 and len(r.times_s) == r.runs
        assert r.gflops == pytest.approx(2 * r.n ** 3 / r.median_s / 1e9)
        assert r.peak_gflops == pytest.approx(rep.peak.gflops["fp32"])
        assert r.fraction_of_peak == pytest.approx(r.gflops / r.peak_gflops)
    assert rep.peak is not None and rep.peak.assumptions and "GHz" in render(rep.peak.assumptions[0])
    assert "GHz" in render(rep.peak.assumptions[0], "zh_CN") and render(rep.peak.assumptions[0], "zh_CN") != \
        render(rep.peak.assumptions[0])


@pytest.mark.slow
def test_tf32_on_cpu_is_skipped_with_a_reason(small_bench):
    rep, _ = small_bench
    tf32 = [s for s in rep.skipped if s.dtype == "tf32"]
    assert tf32 and "NVIDIA" in tf32[0].reason and tf32[0].n is None
    assert not any(r.dtype == "tf32" for r in rep.results)


@pytest.mark.slow
def test_progress_events(small_bench):
    _, events = small_bench
    names = [(e.name, e.status) for e in events if getattr(e, "kind", "") == "step"]
    assert ("matmul fp32 n=128", "running") in names and ("matmul fp32 n=256", "passed") in names


@pytest.mark.slow
def test_budget_cuts_the_largest_sizes(torch_env):
    _env, py = torch_env
    # the budget counts from the probe's start (importing torch included), as the user waits for it
    rep = run_bench(py, device="cpu", sizes=[64, 8192], dtypes=["fp32"], budget_s=6, repeats=2, warmup=1)
    assert [r.n for r in rep.results] == [64]
    cut = [s for s in rep.skipped if s.n == 8192]
    assert cut and "time budget" in cut[0].reason and rep.budget_exhausted
    assert rep.status is BenchStatus.BUDGET


@pytest.mark.slow
def test_cpu_fp16_is_limited_on_cpus_without_native_fp16(torch_env):
    """Pass the flags of a CPU without avx512_fp16/AMX: fp16 stays at tiny sizes, and says why."""
    _env, py = torch_env
    report = SystemReport(arch="x86_64", cpu=CPUInfo(cores=2, max_mhz=2500, flags=["avx2", "fma", "avx512f"]))
    rep = run_bench(py, device="cpu", sizes=[128, 512], dtypes=["fp16"], budget_s=20, repeats=1, warmup=1,
                    report=report)
    assert [r.n for r in rep.results] == [128]
    assert any(s.n == 512 and "emulated" in s.reason for s in rep.skipped)
    assert rep.peak.gflops["fp32"] == pytest.approx(2 * 2.5 * 64)


@pytest.mark.slow
def test_report_json_round_trip(small_bench):
    rep, _ = small_bench
    d = json.loads(json.dumps(rep.to_dict()))
    again = BenchReport.from_dict(d)
    assert again.results == rep.results and again.peak == rep.peak
    assert again == rep and again.status is BenchStatus.COMPLETE and d["status"] == "complete"


@pytest.mark.slow
def test_each_measurement_step_carries_its_result(small_bench):
    rep, events = small_bench
    live = [r for r in (result_of_step(e) for e in events if getattr(e, "kind", "") == "step") if r is not None]
    assert {(r.dtype, r.n) for r in live} == {(r.dtype, r.n) for r in rep.results}
    latest = {(r.dtype, r.n): r for r in live}  # a point measured again is drawn again, with all its runs
    for key, r in latest.items():
        final = next(x for x in rep.results if (x.dtype, x.n) == key)
        assert r.gflops == final.gflops and r.median_s == final.median_s and r.times_s == final.times_s


def test_result_of_step_reads_only_measurements():
    from app.core.base.events import StepEvent

    data = {"n": 256, "dtype": "fp32", "device": "cpu", "median_s": 0.001, "runs": 5, "gflops": 33.5,
            "min_s": 0.0009, "max_s": 0.0011, "times_s": [0.001]}
    r = result_of_step(StepEvent("matmul fp32 n=256", "passed", "33.5 GFLOP/s", data))
    assert r is not None
    assert (r.device, r.dtype, r.n, r.gflops, r.runs, r.min_s) == ("cpu", "fp32", 256, 33.5, 5, 0.0009)
    assert result_of_step(StepEvent("matmul fp32 n=256", "running")) is None
    assert result_of_step(StepEvent("device", "info", "cpu: x", {"device": "cpu", "threads": 2})) is None
    copy = {"direction": "host_to_device", "memory": "pinned", "bytes": 4, "median_s": 1.0, "gb_per_s": 1.0}
    assert result_of_step(StepEvent("copy host_to_device pinned", "passed", "", copy)) is None


def test_status_of_reports_written_before_it_existed():
    base = {"python": "p", "device": "cpu", "device_name": "x", "torch_version": "2.13.0", "threads": 1,
            "results": []}
    assert BenchReport.from_dict(base).status is BenchStatus.COMPLETE
    assert BenchReport.from_dict({**base, "budget_exhausted": True}).status is BenchStatus.BUDGET
    assert BenchReport.from_dict({**base, "cancelled": True}).cancelled
    with pytest.raises(ValueError):
        BenchReport.from_dict({**base, "status": "finished"})


@pytest.mark.parametrize("kw, words", [
    ({"device": "tpu"}, "device"), ({"dtypes": ["fp8"]}, "dtype"), ({"sizes": ["big"]}, "whole number"),
    ({"sizes": [0]}, "out of range"), ({"budget_s": 0}, "more than 0"),
])
def test_bad_arguments_are_bad_input(kw, words, tmp_path):
    with pytest.raises(BadInput) as ei:
        run_bench(tmp_path / "python", **kw)
    assert words in ei.value.text()


@pytest.mark.slow
def test_cpu_device_request_for_missing_cuda_is_a_clear_error(torch_env):
    from app.core.measure.probe import ProbeFailed

    _env, py = torch_env
    with pytest.raises(ProbeFailed) as ei:
        run_bench(py, device="cuda", sizes=[64], budget_s=5)
    assert "CUDA is not available" in ei.value.text() and "doctor" in ei.value.hint


@pytest.mark.slow
def test_cli_bench_json(torch_env, capsys):
    from app.cli import main

    env, _ = torch_env
    assert main(["bench", "--env", str(env), "--device", "cpu", "--sizes", "128", "--dtypes", "fp32",
                 "--budget-s", "10", "--repeats", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == "cpu" and data["results"][0]["n"] == 128 and data["results"][0]["gflops"] > 0
    assert data["peak"]["gflops"]["fp32"] > 0
    assert main(["bench", "--env", str(env), "--device", "cpu", "--sizes", "128", "--dtypes", "fp32",
                 "--budget-s", "10", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "GFLOP/s" in out and "Estimated peak" in out and "of the estimated fp32 peak" in out


# ---------------------------------------------------------------- peaks

@pytest.mark.parametrize("flags, arch, model, fpc", [
    (["avx512f", "avx2", "fma"], "x86_64", "Xeon", 64),
    (["avx2", "fma"], "x86_64", "Ryzen", 32),
    (["avx"], "x86_64", "Sandy Bridge", 16),
    ([], "x86_64", "old", 8),
    (["neon"], "arm64", "Apple M2", 32),
    (["asimd"], "aarch64", "Cortex-A72", 16),
])
def test_cpu_peak_from_flags(flags, arch, model, fpc):
    p = cpu_peak(cores=4, mhz=3000, flags=flags, arch=arch, model=model)
    assert p.gflops["fp32"] == pytest.approx(4 * 3.0 * fpc)
    assert p.assumptions


def test_cpu_peak_bf16_fp16_and_threads():
    amx = cpu_peak(cores=8, mhz=2000, flags=["avx512f", "amx_bf16", "avx512_fp16"], threads_used=2)
    assert amx.gflops["fp32"] == pytest.approx(2 * 2.0 * 64)  # limited to the threads used
    assert amx.gflops["bf16"] == pytest.approx(2 * 2.0 * 1024)
    assert amx.gflops["fp16"] == pytest.approx(2 * amx.gflops["fp32"])
    plain = cpu_peak(cores=8, mhz=2000, flags=["avx2", "fma"])
    assert plain.gflops["bf16"] == plain.gflops["fp32"] == plain.gflops["fp16"]
    with pytest.raises(BadInput):
        cpu_peak(cores=0, mhz=2000, flags=[])


@pytest.mark.parametrize("name, row, fp32", [
    ("NVIDIA H200", "NVIDIA H200 SXM", 67.0), ("NVIDIA H200 NVL", "NVIDIA H200 NVL", 60.0),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM", 67.0), ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 51.0),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100", 19.5), ("Tesla V100-SXM2-16GB", "NVIDIA V100 SXM2", 15.7),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 82.6),
    ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", 35.6),
    ("NVIDIA GeForce GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti", 11.3),
    ("AMD Instinct MI300X", "AMD Instinct MI300X", 163.4), ("Apple M1 Max", "Apple M1 Max", 10.4),
])
def test_gpu_peak_table_matches_torch_device_names(name, row, fp32):
    p = gpu_peak(name)
    assert p is not None and p.name == row and p.gflops["fp32"] == pytest.approx(fp32 * 1000)
    assert p.source


def test_gpu_peak_unknown_and_no_false_matches():
    assert gpu_peak("NVIDIA GeForce RTX 3090 Ti").name == "NVIDIA GeForce RTX 3090 Ti"  # not the 3090's row
    assert gpu_peak("NVIDIA GeForce RTX 4070 SUPER") is None  # not the 4070's numbers
    assert gpu_peak("NVIDIA L40S").name == "NVIDIA L40S" and gpu_peak("NVIDIA L4").name == "NVIDIA L4"
    assert gpu_peak("NVIDIA A100 80GB PCIe").name == "NVIDIA A100"
    assert gpu_peak("NVIDIA A10").name == "NVIDIA A10"
    assert gpu_peak("Quadro RTX 6000") is None


def test_gpu_peak_table_rows_have_sources_and_dense_values():
    rows = load_gpu_peaks()
    assert len(rows) >= 20
    for r in rows:
        assert r.source and r.match and "fp32" in r.tflops
        if "fp16" in r.tflops and "tf32" in r.tflops:
            assert r.tflops["fp16"] >= r.tflops["tf32"]


def test_gpu_peak_table_errors(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('[[gpu]]\nname = "X"\nmatch = ["X"]\nfp32 = 1.0\n', encoding="utf-8")
    with pytest.raises(BadInput, match="needs name, match and source"):
        load_gpu_peaks(bad)
    bad.write_text('[[gpu]]\nname = "X"\nmatch = ["X"]\nfp32 = -1\nsource = "s"\n', encoding="utf-8")
    with pytest.raises(BadInput, match="positive"):
        load_gpu_peaks(bad)


@pytest.mark.slow
def test_cancel_stops_the_sweep_and_leaves_no_process(torch_env):
    import threading
    import time

    import psutil

    from app.core.proc.runner import CancelToken

    _env, py = torch_env
    cancel = CancelToken()
    seen = threading.Event()
    caught = []
    returned = []

    def on_event(ev):
        if getattr(ev, "kind", "") == "step" and ev.status == "passed":
            seen.set()

    def work():
        try:
            returned.append(run_bench(py, device="cpu", sizes=[64, 128, 256, 512, 1024, 2048, 4096],
                                      dtypes=["fp32"], budget_s=300, repeats=20, on_event=on_event, cancel=cancel))
        except BaseException as exc:
            caught.append(exc)

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    th = threading.Thread(target=work)
    th.start()
    assert seen.wait(120), "no measurement arrived"
    probes = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert probes, "the probe process should be running"
    cancel.cancel()
    th.join(30)
    assert not th.is_alive() and not caught, caught
    # the probe stops between runs on SIGTERM; run_bench returns what it measured, marked cancelled
    partial = returned[0]
    assert partial.status is BenchStatus.CANCELLED and partial.cancelled and partial.results
    assert partial.results[0].n == 64 and partial.results[0].gflops > 0
    assert partial.results[-1].n < 4096 and partial.log_path
    assert BenchReport.from_dict(json.loads(json.dumps(partial.to_dict()))) == partial
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                                              for p in probes):
        time.sleep(0.05)
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in probes)


def test_every_gpu_peak_row_is_found_by_its_own_name():
    """Generated from the table itself: each row's name resolves to that row (no pattern of
    another row shadows it)."""
    rows = load_gpu_peaks()
    for row in rows:
        p = gpu_peak(row.name, rows=rows)
        assert p is not None and p.name == row.name, (row.name, p and p.name)


@pytest.mark.slow
def test_cli_ctrl_c_prints_the_partial_results_and_exits_130(torch_env, tmp_path):
    """`torch-setup bench` stopped with Ctrl-C: what was measured is printed (marked partial), exit 130."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env, _ = torch_env
    home = tmp_path / "home"
    child_env = {**os.environ, "TORCH_SETUP_HOME": str(home)}
    child_env.pop("PYTHONPATH", None)
    proc = subprocess.Popen([sys.executable, "-m", "app", "bench", "--env", str(env), "--device", "cpu",
                             "--sizes", "64", "128", "256", "512", "1024", "2048", "4096", "--dtypes", "fp32",
                             "--budget-s", "300", "--repeats", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", env=child_env)
    try:
        deadline = time.monotonic() + 120
        measured = False
        while time.monotonic() < deadline and not measured and proc.poll() is None:
            time.sleep(0.2)
            logs = list((home / "logs").glob("probe-bench-*.log")) if (home / "logs").is_dir() else []
            measured = any('"status": "passed"' in p.read_text(encoding="utf-8", errors="replace") for p in logs)
        assert measured, "no measurement arrived"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "partial results" in out and "GFLOP/s" in out
    assert "fp32" in out and "    64 " in out


def test_cli_text_of_a_partial_and_of_an_empty_stopped_run():
    from app.commands.bench import render
    from tests.factories import make_bench_report, make_bench_result

    partial = make_bench_report([make_bench_result(256, 90.0)], status=BenchStatus.CANCELLED, log_path="/tmp/l.log")
    text = render(partial)
    assert text.splitlines()[1].startswith("Stopped before the end") and "partial results" in text
    assert "    90.0" in text and "Full log: /tmp/l.log" in text
    assert "Stopped" not in render(make_bench_report([make_bench_result(256, 90.0)]))
    empty = make_bench_report([], status=BenchStatus.CANCELLED, log_path="/tmp/l.log")
    assert render(empty) == "The speed test was stopped before its first measurement.\nFull log: /tmp/l.log"


def test_a_run_cancelled_before_the_probe_started_is_an_empty_cancelled_report():
    import sys

    from app.core.proc.runner import CancelToken

    cancel = CancelToken()
    cancel.cancel()
    rep = run_bench(sys.executable, device="cpu", sizes=[64], cancel=cancel)
    assert rep.status is BenchStatus.CANCELLED and rep.results == () and rep.cpu_results == ()
    assert rep.device == "cpu" and rep.log_path
