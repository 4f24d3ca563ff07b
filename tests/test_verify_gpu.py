"""GPU smoke, run when TORCH_SETUP_GPU_ENV names an env with a CUDA/ROCm/MPS/XPU torch
(on a GPU box: `TORCH_SETUP_GPU_ENV=/path/to/env pytest tests/test_verify_gpu.py`).
Without it, these tests skip: this project's machines have no GPU."""
from __future__ import annotations

import os

import pytest

from app.core.measure.bench import run_bench
from app.core.measure.verify import run_verify

GPU_ENV = os.environ.get("TORCH_SETUP_GPU_ENV")
pytestmark = pytest.mark.skipif(not GPU_ENV, reason="set TORCH_SETUP_GPU_ENV to an env with a GPU torch")


def test_verify_on_the_gpu():
    from app.core.measure.probe import resolve_python

    rep = run_verify(resolve_python(GPU_ENV))
    assert rep.accelerator in ("cuda", "rocm", "mps", "xpu"), [c.detail for c in rep.checks]
    assert rep.devices and rep.devices[0].name
    for name in ("device_round_trip", "device_matmul", "device_conv2d", "device_training", "device_autocast",
                 "device_memory"):
        assert rep.check(name).status == "passed", (name, rep.check(name).detail)
    if rep.accelerator in ("cuda", "rocm"):
        assert rep.check("dnn_library").status == "passed"
        assert rep.check("arch_list").status == "passed"
    assert rep.ok


def test_bench_on_the_gpu():
    from app.core.measure.probe import resolve_python

    rep = run_bench(resolve_python(GPU_ENV), sizes=[1024, 4096], dtypes=["fp32", "tf32", "fp16", "bf16"], budget_s=60)
    assert rep.device != "cpu" and rep.results
    fp32 = rep.best("fp32")
    assert fp32 is not None and fp32.gflops > 0
    if rep.peak is not None and fp32.fraction_of_peak is not None:
        assert 0.05 < fp32.fraction_of_peak < 1.5
    assert rep.copy and all(c.gb_per_s > 0 for c in rep.copy)
    assert rep.speedup and rep.speedup[0]["speedup"] > 0
