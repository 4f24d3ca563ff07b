"""Real core result objects for tests, built with the real constructors.

Tests that need a Recommendation, an InstallResult, a VerifyReport or a BenchReport take them
from here instead of writing dicts or look-alike classes, so a renamed or retyped field
breaks the tests that use it. Every factory takes keyword overrides for any field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.install import InstallResult
from app.core.measure.bench import BenchReport, BenchResult, BenchStatus, Speedup
from app.core.measure.verify import Check, VerifyReport
from app.core.recommend import Recommendation


def make_recommendation(**kw: Any) -> Recommendation:
    backend = kw.pop("backend", "cpu")
    variant = kw.pop("variant", "cpu" if backend == "cpu" else "cu126")
    torch = kw.pop("torch_version", "2.13.0")
    fields: dict[str, Any] = {
        "backend": backend, "variant": variant, "torch_version": torch, "python_ok": True, "env_python": None,
        "index_url": f"https://download.pytorch.org/whl/{variant}", "packages": (f"torch=={torch}",),
        "command": ("pip", "install", f"torch=={torch}", "--index-url",
                    f"https://download.pytorch.org/whl/{variant}"),
        "reasons": ("No GPU was found, so the CPU build is the one that works here.",), "warnings": (),
        "alternatives": (), "compat_data_version": "test",
    }
    fields.update(kw)
    return Recommendation(**fields)


def make_install_result(env: str | Path = "/tmp/env", python: str | Path | None = None, **kw: Any) -> InstallResult:
    env = Path(env)
    torch = kw.pop("torch_version", "2.13.0+cpu")
    fields: dict[str, Any] = {
        "env_path": env, "python": Path(python) if python is not None else env / "bin" / "python",
        "torch_version": torch, "log_path": None, "duration_s": 7.0, "packages": {"torch": torch},
    }
    fields.update(kw)
    return InstallResult(**fields)


def make_check(name: str, status: str = "passed", detail: str = "", title: str = "", **kw: Any) -> Check:
    """A check as the verify probe reports it (every check has a title; by default its name)."""
    return Check(name=name, status=status, detail=detail, title=title or name, **kw)


def make_verify_report(checks: Any = None, **kw: Any) -> VerifyReport:
    if checks is None:
        checks = [make_check("import", "passed", "torch 2.13.0+cpu imported", "Import PyTorch"),
                  make_check("cuda", "skipped", "no GPU", "CUDA")]
    fields: dict[str, Any] = {
        "python": "/tmp/env/bin/python", "torch_version": "2.13.0+cpu", "checks": tuple(checks), "accelerator": None,
    }
    fields.update(kw)
    return VerifyReport(**fields)


def make_bench_result(n: int, gflops: float, dtype: str = "fp32", device: str = "cpu", **kw: Any) -> BenchResult:
    median_s = 2 * n**3 / gflops / 1e9 if gflops > 0 else 1.0
    fields: dict[str, Any] = {"device": device, "dtype": dtype, "n": n, "median_s": median_s, "gflops": gflops,
                              "runs": 5}
    fields.update(kw)
    return BenchResult(**fields)


def make_speedup(n: int, dtype: str, cpu_gflops: float, device_gflops: float) -> Speedup:
    return Speedup(n=n, dtype=dtype, cpu_gflops=cpu_gflops, device_gflops=device_gflops,
                   speedup=device_gflops / cpu_gflops)


def make_bench_report(results: Any = None, **kw: Any) -> BenchReport:
    if results is None:
        results = [make_bench_result(256, 101.5)]
    fields: dict[str, Any] = {
        "python": "/tmp/env/bin/python", "device": "cpu", "device_name": "Test CPU", "torch_version": "2.13.0+cpu",
        "threads": 2, "results": tuple(results), "status": BenchStatus.COMPLETE,
    }
    for key in ("cpu_results", "speedup", "skipped", "copy"):
        if key in kw:
            kw[key] = tuple(kw[key])
    fields.update(kw)
    return BenchReport(**fields)
