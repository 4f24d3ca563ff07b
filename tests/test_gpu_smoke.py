"""benchmarks/gpu_smoke.py, its CPU path (no GPU here): verify and bench through the product,
the independent torch.mm timing, and a venv made from an interpreter's own torch."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers import bench_budget

REPO = Path(__file__).resolve().parents[1]


def _smoke():
    spec = importlib.util.spec_from_file_location("gpu_smoke", REPO / "benchmarks" / "gpu_smoke.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_cpu_path_from_an_interpreter_with_torch(torch_env, tmp_path, capsys):
    """--python: a --system-site-packages venv that sees that interpreter's torch (here a venv's
    own, shared by a .pth), then verify, bench and the independent timing, in one run."""
    _env, py = torch_env
    budget = f"{bench_budget(py, 4):.1f}"  # 4 s of measuring beyond torch's import on this machine now
    rc = _smoke().main(["--python", str(py), "--budget-s", budget, "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert "(system site-packages of" in out and "torch 2.13.0+cpu" in out
    assert "verify: torch 2.13.0+cpu" in out and "passed gloo_all_reduce" in out
    assert "the CPU path" in out and "independent torch.mm fp32 512x512" in out and "bench / independent = " in out
    assert rc == 0, out
    smoke = json.loads((tmp_path / "out" / "smoke.json").read_text(encoding="utf-8"))
    assert smoke["device"] == "cpu" and smoke["n"] == 512 and smoke["ratio"] > 0
    assert len(smoke["independent_gflops"]) == 2 and smoke["verify_ok"]
    assert json.loads((tmp_path / "out" / "bench.json").read_text(encoding="utf-8"))["results"]


def test_the_independent_timing_is_the_benchs_work():
    """Same operation (a fresh torch.mm(a, b)), same dtype mapping, CUDA events on CUDA, tf32
    off for an fp32 reference; bf16 at 8192 on CUDA."""
    mod = _smoke()
    assert "torch.mm(a, b)" in mod.INDEPENDENT and "torch.cuda.Event(enable_timing=True)" in mod.INDEPENDENT
    assert "allow_tf32 = False" in mod.INDEPENDENT
    assert "statistics.median" in mod.INDEPENDENT
    probe = (REPO / "app" / "probes" / "bench.py").read_text(encoding="utf-8")
    assert "torch.mm(a, b)" in probe and "elapsed_time(end)" in probe
