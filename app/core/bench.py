"""``run_bench``: the matmul speed test, run as a probe inside the target environment.

The probe measures; this module adds what needs the assistant's view of the machine: the
estimated peak (CPU from cores x clock x SIMD width, GPUs from resources/gpu_peaks.toml)
and each result's fraction of it.

A run that ends early is still a result: :attr:`BenchReport.status` says how it ended
(complete, cut by the time budget, or cancelled part-way) and the report holds every
measurement made until then.
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.core.errors import BadInput
from app.core.events import EventCallback, StepEvent
from app.core.peak import DTYPES, Peak, cpu_peak_for, gpu_peak
from app.core.probe import run_probe
from app.core.runner import CancelToken
from app.core.serial import to_jsonable
from app.core.system import SystemReport

DEVICES = ("auto", "cpu", "cuda", "mps", "xpu")


class BenchStatus(str, Enum):
    """How a speed test ended."""

    COMPLETE = "complete"  # every size and dtype asked for was measured (or skipped for a reason)
    BUDGET = "budget"  # the time budget ran out: the largest sizes were left out
    CANCELLED = "cancelled"  # stopped part-way (the user): the measurements so far

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class BenchResult:
    device: str
    dtype: str  # fp32 | tf32 | fp16 | bf16
    n: int
    median_s: float
    gflops: float
    runs: int
    min_s: float | None = None
    max_s: float | None = None
    peak_gflops: float | None = None
    fraction_of_peak: float | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchResult:
        return cls(device=str(d["device"]), dtype=str(d["dtype"]), n=int(d["n"]), median_s=float(d["median_s"]),
                   gflops=float(d["gflops"]), runs=int(d["runs"]), min_s=_opt_float(d.get("min_s")),
                   max_s=_opt_float(d.get("max_s")), peak_gflops=_opt_float(d.get("peak_gflops")),
                   fraction_of_peak=_opt_float(d.get("fraction_of_peak")))


@dataclass(frozen=True)
class Skipped:
    device: str
    dtype: str
    n: int | None  # None: the whole dtype
    reason: str

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Skipped:
        n = d.get("n")
        return cls(device=str(d["device"]), dtype=str(d["dtype"]), n=int(n) if n is not None else None,
                   reason=str(d["reason"]))


@dataclass(frozen=True)
class CopyResult:
    direction: str  # host_to_device | device_to_host
    memory: str  # pageable | pinned
    bytes: int
    gb_per_s: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CopyResult:
        return cls(direction=str(d["direction"]), memory=str(d["memory"]), bytes=int(d["bytes"]),
                   gb_per_s=float(d["gb_per_s"]))


@dataclass(frozen=True)
class Speedup:
    """The accelerator against the CPU baseline at one size and dtype."""

    n: int
    dtype: str
    cpu_gflops: float
    device_gflops: float
    speedup: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Speedup:
        return cls(n=int(d["n"]), dtype=str(d["dtype"]), cpu_gflops=float(d["cpu_gflops"]),
                   device_gflops=float(d["device_gflops"]), speedup=float(d["speedup"]))


@dataclass(frozen=True)
class BenchReport:
    python: str
    device: str  # what ran: cpu | cuda | mps | xpu
    device_name: str
    torch_version: str
    threads: int | None
    results: tuple[BenchResult, ...]
    skipped: tuple[Skipped, ...] = ()
    cpu_results: tuple[BenchResult, ...] = ()  # CPU baseline when device != cpu
    speedup: tuple[Speedup, ...] = ()
    copy: tuple[CopyResult, ...] = ()
    peak: Peak | None = None
    cpu_peak: Peak | None = None
    budget_s: float = 60.0
    elapsed_s: float = 0.0
    budget_exhausted: bool = False
    compute_capability: str | None = None
    log_path: str | None = None
    status: BenchStatus = BenchStatus.COMPLETE

    @property
    def cancelled(self) -> bool:
        """Stopped part-way: the results are the measurements made until then."""
        return self.status is BenchStatus.CANCELLED

    def best(self, dtype: str | None = None) -> BenchResult | None:
        rs = [r for r in self.results if dtype is None or r.dtype == dtype]
        return max(rs, key=lambda r: r.gflops) if rs else None

    def all_results(self) -> tuple[BenchResult, ...]:
        """The device's measurements, then the CPU baseline's."""
        return self.results + self.cpu_results

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        d["cancelled"] = self.cancelled  # readers of the earlier JSON look for it
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchReport:
        """From :meth:`to_dict` output (a saved report)."""
        def peak(p: Any) -> Peak | None:
            return Peak.from_dict(p) if isinstance(p, dict) else None

        budget_exhausted = bool(d.get("budget_exhausted"))
        status = d.get("status")
        if status is None:  # written before the status existed
            status = "cancelled" if d.get("cancelled") else ("budget" if budget_exhausted else "complete")
        threads = d.get("threads")
        return cls(
            python=str(d.get("python", "")), device=str(d.get("device", "")),
            device_name=str(d.get("device_name", "")), torch_version=str(d.get("torch_version", "")),
            threads=int(threads) if threads is not None else None,
            results=tuple(BenchResult.from_dict(r) for r in d.get("results") or ()),
            skipped=tuple(Skipped.from_dict(s) for s in d.get("skipped") or ()),
            cpu_results=tuple(BenchResult.from_dict(r) for r in d.get("cpu_results") or ()),
            speedup=tuple(Speedup.from_dict(s) for s in d.get("speedup") or ()),
            copy=tuple(CopyResult.from_dict(c) for c in d.get("copy") or ()),
            peak=peak(d.get("peak")), cpu_peak=peak(d.get("cpu_peak")),
            budget_s=float(d.get("budget_s", 60.0)), elapsed_s=float(d.get("elapsed_s", 0.0)),
            budget_exhausted=budget_exhausted, compute_capability=d.get("compute_capability"),
            log_path=d.get("log_path"), status=BenchStatus(status))


def result_of_step(ev: StepEvent) -> BenchResult | None:
    """The measurement a bench probe step carries (its "passed" matmul steps), else None.

    The speed test page draws these while the sweep runs; the final report is the truth.
    """
    data = ev.data or {}
    if ev.status != "passed" or not {"n", "dtype", "device", "median_s", "gflops", "runs"} <= data.keys():
        return None
    r = BenchResult.from_dict(data)
    return r if r.n > 0 and math.isfinite(r.gflops) and r.gflops > 0 else None


def _opt_float(v: Any) -> float | None:
    return float(v) if v is not None else None


def _parse_sizes(sizes: Iterable[int | str]) -> list[int]:
    out = []
    for s in sizes:
        try:
            n = int(s)
        except (TypeError, ValueError):
            raise BadInput(f"matrix size {s!r} is not a whole number") from None
        if not 1 <= n <= 65536:
            raise BadInput(f"matrix size {n} is out of range (1..65536)")
        out.append(n)
    return out


def _parse_dtypes(dtypes: Iterable[str]) -> list[str]:
    out = [str(d).lower() for d in dtypes]
    bad = [d for d in out if d not in DTYPES]
    if bad:
        raise BadInput(f"dtype {bad[0]!r} is not one of {', '.join(DTYPES)}")
    return out


def _parse_budget(budget_s: float | str) -> float:
    try:
        budget = float(budget_s)
    except (TypeError, ValueError):
        raise BadInput(f"time budget {budget_s!r} is not a number") from None
    if not budget > 0:
        raise BadInput("the time budget must be more than 0 seconds")
    return budget


def _with_peak(rs: Iterable[dict[str, Any]], device: str, peak: Peak | None) -> tuple[BenchResult, ...]:
    out = []
    for r in rs:
        p = peak.gflops.get(r["dtype"]) if peak else None
        gflops = float(r["gflops"])
        out.append(BenchResult(device=str(r.get("device", device)), dtype=str(r["dtype"]), n=int(r["n"]),
                               median_s=float(r["median_s"]), gflops=gflops, runs=int(r["runs"]),
                               min_s=_opt_float(r.get("min_s")), max_s=_opt_float(r.get("max_s")),
                               peak_gflops=p, fraction_of_peak=(gflops / p) if p else None))
    return tuple(out)


def run_bench(python: str | os.PathLike[str], *, device: str = "auto", sizes: Iterable[int | str] | None = None,
              dtypes: Iterable[str] | None = None, budget_s: float = 60, on_event: EventCallback | None = None,
              cancel: CancelToken | None = None, report: SystemReport | None = None, repeats: int = 5,
              warmup: int = 2, copy: bool = True, cpu_baseline: bool = True,
              timeout_s: float | None = None) -> BenchReport:
    """Run the matmul sweep in the environment of ``python``.

    ``report`` (a SystemReport) supplies the CPU facts for the peak estimate when the
    benchmark describes another machine's numbers; by default this machine is read.
    A cancel is not an error: the report comes back with status "cancelled" and the
    measurements made so far (none when the probe was stopped before its first one).
    Raises BadInput for bad arguments and ProbeFailed when the probe cannot run.
    """
    if device not in DEVICES:
        raise BadInput(f"device {device!r} is not one of {', '.join(DEVICES)}")
    dtype_list = _parse_dtypes(dtypes) if dtypes is not None else None
    size_list = _parse_sizes(sizes) if sizes is not None else None
    if size_list is not None and not size_list:
        raise BadInput("give at least one matrix size")
    budget = _parse_budget(budget_s)

    cpu_pk = cpu_peak_for(report)
    args = ["--device", device, "--budget-s", str(budget), "--repeats", str(repeats), "--warmup", str(warmup)]
    if size_list:
        args += ["--sizes", ",".join(map(str, size_list))]
    if dtype_list:
        args += ["--dtypes", ",".join(dtype_list)]
    if not copy:
        args.append("--no-copy")
    if not cpu_baseline:
        args.append("--no-cpu-baseline")
    if report is not None and report.cpu.flags:
        args += ["--cpu-flags", " ".join(report.cpu.flags)]
    # A timed run can overrun the budget by one measurement; allow for torch import and CUDA init.
    timeout = timeout_s if timeout_s is not None else budget * 2 + 180
    # The probe stops between runs on a cancel (SIGTERM) and prints what it measured.
    out = run_probe("bench", python, args, on_event=on_event, cancel=cancel, timeout_s=timeout,
                    what="the speed test", keep_partial=True)
    return _report(out.result, str(python), device, report, cpu_pk, budget,
                   str(out.log_path) if out.log_path else None, cancelled=out.cancelled)


def _report(r: dict[str, Any], python: str, device: str, report: SystemReport | None, cpu_pk: Peak | None,
            budget: float, log_path: str | None, *, cancelled: bool = False) -> BenchReport:
    dev = str(r.get("device", device))
    threads = r.get("threads")
    if cpu_pk is not None and threads:
        cpu_pk = cpu_peak_for(report, threads_used=int(threads))
    pk = cpu_pk if dev == "cpu" else gpu_peak(str(r.get("device_name", "")), "rocm" if r.get("hip") else dev)
    budget_exhausted = bool(r.get("budget_exhausted"))
    if cancelled or r.get("cancelled"):
        status = BenchStatus.CANCELLED
    elif budget_exhausted:
        status = BenchStatus.BUDGET
    else:
        status = BenchStatus.COMPLETE
    return BenchReport(
        python=python, device=dev, device_name=str(r.get("device_name", "")),
        torch_version=str(r.get("torch", "")), threads=int(threads) if threads is not None else None,
        results=_with_peak(r.get("results", ()), dev, pk),
        skipped=tuple(Skipped(str(s.get("device", dev)), str(s["dtype"]), s.get("n"), str(s["reason"]))
                      for s in r.get("skipped", ())),
        cpu_results=_with_peak(r.get("cpu_results", ()), "cpu", cpu_pk),
        speedup=tuple(Speedup.from_dict(s) for s in r.get("speedup", ())),
        copy=tuple(CopyResult.from_dict(c) for c in r.get("copy", ())),
        peak=pk, cpu_peak=cpu_pk, budget_s=budget, elapsed_s=float(r.get("elapsed_s", 0.0)),
        budget_exhausted=budget_exhausted, compute_capability=r.get("compute_capability"),
        log_path=log_path, status=status)
