"""``run_bench``: the matmul speed test, run as a probe inside the target environment.

The probe measures; this module adds what needs the assistant's view of the machine: the
estimated peak (CPU from cores x clock x SIMD width, GPUs from resources/gpu_peaks.toml)
and each result's fraction of it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from app.core.errors import BadInput
from app.core.events import EventCallback
from app.core.peak import DTYPES, Peak, cpu_peak_for, gpu_peak
from app.core.probe import ProbeCancelled, run_probe
from app.core.runner import CancelToken
from app.core.serial import to_jsonable

DEVICES = ("auto", "cpu", "cuda", "mps", "xpu")


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


@dataclass(frozen=True)
class Skipped:
    device: str
    dtype: str
    n: int | None  # None: the whole dtype
    reason: str


@dataclass(frozen=True)
class CopyResult:
    direction: str  # host_to_device | device_to_host
    memory: str  # pageable | pinned
    bytes: int
    gb_per_s: float


@dataclass(frozen=True)
class BenchReport:
    python: str
    device: str  # what ran: cpu | cuda | mps | xpu
    device_name: str
    torch_version: str
    threads: int | None
    results: list[BenchResult]
    skipped: list[Skipped] = field(default_factory=list)
    cpu_results: list[BenchResult] = field(default_factory=list)  # CPU baseline when device != cpu
    speedup: list[dict] = field(default_factory=list)  # {n, dtype, cpu_gflops, device_gflops, speedup}
    copy: list[CopyResult] = field(default_factory=list)
    peak: Peak | None = None
    cpu_peak: Peak | None = None
    budget_s: float = 60.0
    elapsed_s: float = 0.0
    budget_exhausted: bool = False
    compute_capability: str | None = None
    log_path: str | None = None
    cancelled: bool = False  # a partial result: the run was cancelled part-way

    def best(self, dtype: str | None = None) -> BenchResult | None:
        rs = [r for r in self.results if dtype is None or r.dtype == dtype]
        return max(rs, key=lambda r: r.gflops) if rs else None

    def to_dict(self) -> dict:
        return {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, d: dict) -> "BenchReport":
        def peak(p):
            return Peak(**p) if isinstance(p, dict) else None

        def res(rs):
            return [BenchResult(**{k: v for k, v in r.items() if k in BenchResult.__dataclass_fields__})
                    for r in rs or []]

        return cls(
            python=d.get("python", ""), device=d.get("device", ""), device_name=d.get("device_name", ""),
            torch_version=d.get("torch_version", ""), threads=d.get("threads"),
            results=res(d.get("results")),
            skipped=[Skipped(**s) for s in d.get("skipped") or []],
            cpu_results=res(d.get("cpu_results")), speedup=list(d.get("speedup") or []),
            copy=[CopyResult(**c) for c in d.get("copy") or []], peak=peak(d.get("peak")),
            cpu_peak=peak(d.get("cpu_peak")), budget_s=d.get("budget_s", 60.0),
            elapsed_s=d.get("elapsed_s", 0.0), budget_exhausted=bool(d.get("budget_exhausted")),
            compute_capability=d.get("compute_capability"), log_path=d.get("log_path"),
            cancelled=bool(d.get("cancelled")))


def _parse_sizes(sizes) -> list[int]:
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


def _with_peak(rs: list[dict], device: str, peak: Peak | None) -> list[BenchResult]:
    out = []
    for r in rs:
        p = peak.gflops.get(r["dtype"]) if peak else None
        out.append(BenchResult(device=r.get("device", device), dtype=r["dtype"], n=int(r["n"]),
                               median_s=float(r["median_s"]), gflops=float(r["gflops"]), runs=int(r["runs"]),
                               min_s=r.get("min_s"), max_s=r.get("max_s"), peak_gflops=p,
                               fraction_of_peak=(r["gflops"] / p) if p else None))
    return out


def run_bench(python: str | os.PathLike, *, device: str = "auto", sizes=None, dtypes=None,
              budget_s: float = 60, on_event: EventCallback | None = None, cancel: CancelToken | None = None,
              report=None, repeats: int = 5, warmup: int = 2, copy: bool = True,
              cpu_baseline: bool = True, timeout_s: float | None = None) -> BenchReport:
    """Run the matmul sweep in the environment of ``python``.

    ``report`` (a SystemReport) supplies the CPU facts for the peak estimate when the
    benchmark describes another machine's numbers; by default this machine is read.
    Raises BadInput for bad arguments, ProbeFailed when the probe cannot run, Cancelled on cancel.
    """
    if device not in DEVICES:
        raise BadInput(f"device {device!r} is not one of {', '.join(DEVICES)}")
    if dtypes is not None:
        dtypes = [str(d).lower() for d in dtypes]
        bad = [d for d in dtypes if d not in DTYPES]
        if bad:
            raise BadInput(f"dtype {bad[0]!r} is not one of {', '.join(DTYPES)}")
    if sizes is not None:
        sizes = _parse_sizes(sizes)
        if not sizes:
            raise BadInput("give at least one matrix size")
    try:
        budget = float(budget_s)
    except (TypeError, ValueError):
        raise BadInput(f"time budget {budget_s!r} is not a number") from None
    if not budget > 0:
        raise BadInput("the time budget must be more than 0 seconds")

    cpu_pk = cpu_peak_for(report)
    args = ["--device", device, "--budget-s", str(budget), "--repeats", str(repeats), "--warmup", str(warmup)]
    if sizes:
        args += ["--sizes", ",".join(map(str, sizes))]
    if dtypes:
        args += ["--dtypes", ",".join(dtypes)]
    if not copy:
        args.append("--no-copy")
    if not cpu_baseline:
        args.append("--no-cpu-baseline")
    if report is not None and report.cpu.flags:
        args += ["--cpu-flags", " ".join(report.cpu.flags)]
    # A timed run can overrun the budget by one measurement; allow for torch import and CUDA init.
    timeout = timeout_s if timeout_s is not None else budget * 2 + 180
    try:
        out = run_probe("bench", python, args, on_event=on_event, cancel=cancel, timeout_s=timeout,
                        what="the speed test")
    except ProbeCancelled as exc:
        # the probe stops between runs on SIGTERM and prints what it measured: keep it on the error
        if exc.partial is not None:
            exc.partial_report = _report(exc.partial, python, device, report, cpu_pk, budget, exc.log_path)
        raise
    return _report(out.result, python, device, report, cpu_pk, budget, out.log_path)


def _report(r: dict, python, device: str, report, cpu_pk, budget: float, log_path) -> BenchReport:
    dev = r.get("device", device)
    threads = r.get("threads")
    if cpu_pk is not None and threads:
        cpu_pk = cpu_peak_for(report, threads_used=int(threads))
    pk = cpu_pk if dev == "cpu" else gpu_peak(r.get("device_name", ""), "rocm" if r.get("hip") else dev)
    return BenchReport(
        python=str(python), device=dev, device_name=r.get("device_name", ""),
        torch_version=str(r.get("torch", "")), threads=threads,
        results=_with_peak(r.get("results", []), dev, pk),
        skipped=[Skipped(s.get("device", dev), s["dtype"], s.get("n"), s["reason"]) for s in r.get("skipped", [])],
        cpu_results=_with_peak(r.get("cpu_results", []), "cpu", cpu_pk),
        speedup=list(r.get("speedup", [])),
        copy=[CopyResult(c["direction"], c["memory"], int(c["bytes"]), float(c["gb_per_s"]))
              for c in r.get("copy", [])],
        peak=pk, cpu_peak=cpu_pk, budget_s=budget, elapsed_s=float(r.get("elapsed_s", 0.0)),
        budget_exhausted=bool(r.get("budget_exhausted")), compute_capability=r.get("compute_capability"),
        log_path=str(log_path) if log_path else None, cancelled=bool(r.get("cancelled")))
