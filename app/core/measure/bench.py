"""``run_bench``: the matmul speed test, run as a probe inside the target environment.

The probe measures; this module adds what needs the assistant's view of the machine: the
estimated peak (CPU from cores x clock x SIMD width, GPUs from resources/gpu_peaks.toml)
and each result's fraction of it.

A run that ends early is still a result: :attr:`BenchReport.status` says how it ended
(complete, cut by the time budget, or cancelled part-way) and the report holds every
measurement made until then.

Honest numbers on a busy machine: while the probe runs, :class:`~app.core.measure.machine_load.LoadWatch`
measures the CPU that OTHER programs use (the busy verdict rests on that, not on the timings);
every result keeps its per-run times and their spread; when the machine is busy or the runs
scatter, the probe measures again until the time budget is spent, and each result is the
median of all its runs. The number quoted is that median at the largest size measured
(:meth:`BenchReport.headline`), never the single fastest run or point; the sentences that say
how certain it is (:func:`notes`) are texts by code, shared by the GUI, the CLI and the report.
"""
from __future__ import annotations

import math
import os
import shutil
import statistics
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from app.core.base.errors import BadInput
from app.core.base.events import EventCallback, StepEvent
from app.core.base.serial import to_jsonable
from app.core.base.text import Msg, Text, msg
from app.core.detection.system import SystemReport
from app.core.env.activate_vars import probe_env
from app.core.measure.machine_load import BUSY_SHARE, LoadSummary, LoadWatch
from app.core.measure.peak import DTYPES, Peak, cpu_peak_for, gpu_peak
from app.core.measure.probe import run_probe
from app.core.proc.runner import CancelToken

__all__ = ["BUSY_SHARE", "SPREAD_HIGH", "BenchReport", "BenchResult", "BenchStatus", "CopyResult", "LoadSummary",
           "Skipped", "Speedup", "busy_text", "dtype_lines", "emulated_text", "headline_text", "notes",
           "peak_text", "result_of_step", "run_bench", "speedup_lines", "spread_of", "spread_text", "warnings_of"]

DEVICES = ("auto", "cpu", "cuda", "mps", "xpu")

#: Runs of one measurement scattering more than this (relative half inter-quartile range:
#: 0.10 = ±10 %) make it "less certain"; the probe re-measures above the same value.
SPREAD_HIGH = 0.10


def spread_of(times: Sequence[float]) -> float | None:
    """How much the runs of one measurement scatter: half the inter-quartile range of the run
    times over their median (0.05 = ±5 %). None with fewer than 3 runs."""
    ts = sorted(float(t) for t in times if t > 0 and math.isfinite(t))
    if len(ts) < 3:
        return None
    q1, _, q3 = statistics.quantiles(ts, n=4, method="inclusive")
    med = statistics.median(ts)
    return (q3 - q1) / 2 / med if med > 0 else None


class BenchStatus(str, Enum):
    """How a speed test ended."""

    COMPLETE = "complete"  # every size and dtype asked for was measured (or skipped for a reason)
    BUDGET = "budget"  # the time budget ran out: the largest sizes were left out
    CANCELLED = "cancelled"  # stopped part-way (the user): the measurements so far

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class BenchResult:
    device: str  # cpu | cuda | mps | xpu
    dtype: str  # fp32 | tf32 | fp16 | bf16
    n: int  # the matrices are n x n
    median_s: float  # seconds for one n x n matmul: the median of times_s
    gflops: float  # 2 n^3 / median_s, in GFLOP/s
    runs: int  # timed runs, after the warm-up
    min_s: float | None = None
    max_s: float | None = None
    peak_gflops: float | None = None
    fraction_of_peak: float | None = None
    times_s: tuple[float, ...] = ()  # every timed run (the median of these is the result)
    spread: float | None = None  # spread_of(times_s): ±fraction

    def band(self) -> tuple[float, float] | None:
        """(low, high) GFLOP/s of the middle half of the runs (their quartile times), for drawing."""
        ts = sorted(t for t in self.times_s if t > 0)
        if len(ts) < 3:
            return None
        q1, _, q3 = statistics.quantiles(ts, n=4, method="inclusive")
        work = 2.0 * self.n ** 3 / 1e9
        return work / q3, work / q1

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchResult:
        times = tuple(float(t) for t in d.get("times_s") or ())
        spread = d.get("spread")
        return cls(device=str(d["device"]), dtype=str(d["dtype"]), n=int(d["n"]), median_s=float(d["median_s"]),
                   gflops=float(d["gflops"]), runs=int(d["runs"]), min_s=_opt_float(d.get("min_s")),
                   max_s=_opt_float(d.get("max_s")), peak_gflops=_opt_float(d.get("peak_gflops")),
                   fraction_of_peak=_opt_float(d.get("fraction_of_peak")), times_s=times,
                   spread=float(spread) if spread is not None else spread_of(times))


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
    cpu_name: str = ""  # the CPU's model (the device itself when it is the CPU)
    emulated_dtypes: tuple[str, ...] = ()  # measured dtypes without native arithmetic on the device
    load: LoadSummary | None = None  # what other programs used while the test ran
    spread: float | None = None  # the typical (median) spread of the measurements, ±fraction
    remeasured: int = 0  # extra rounds the probe measured because of load or spread

    @property
    def cancelled(self) -> bool:
        """Stopped part-way: the results are the measurements made until then."""
        return self.status is BenchStatus.CANCELLED

    @property
    def busy(self) -> bool:
        """Other programs used a large share of the CPU during the test (measured, see machine_load)."""
        return self.load is not None and self.load.busy

    @property
    def spread_high(self) -> bool:
        return self.spread is not None and self.spread > SPREAD_HIGH

    def best(self, dtype: str | None = None) -> BenchResult | None:
        """The single fastest measurement (kept for readers of old reports; quote :meth:`headline`)."""
        rs = [r for r in self.results if dtype is None or r.dtype == dtype]
        return max(rs, key=lambda r: r.gflops) if rs else None

    def dtypes(self) -> list[str]:
        """The device's measured dtypes, in the order of DTYPES."""
        have = {r.dtype for r in self.results}
        return [d for d in DTYPES if d in have] + sorted(have - set(DTYPES))

    def headline(self, dtype: str | None = None) -> BenchResult | None:
        """The number to quote: for ``dtype``, its measurement at the largest size measured (the
        median of that size's runs: what large matrices get); without ``dtype``, the dtype that is
        fastest there. Never the single fastest run or point."""
        if dtype is None:
            heads = [h for h in (self.headline(d) for d in self.dtypes()) if h is not None]
            return max(heads, key=lambda r: r.gflops) if heads else None
        rs = [r for r in self.results if r.dtype == dtype and r.gflops > 0 and math.isfinite(r.gflops)]
        return max(rs, key=lambda r: r.n) if rs else None

    def all_results(self) -> tuple[BenchResult, ...]:
        """The device's measurements, then the CPU baseline's."""
        return self.results + self.cpu_results

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        d["cancelled"] = self.cancelled  # readers of the earlier JSON look for it
        d["busy"] = self.busy
        d["spread_high"] = self.spread_high
        head = self.headline()
        d["headline"] = to_jsonable(head) if head is not None else None
        d["notes"] = [m.to_dict() for m in notes(self)]
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
            log_path=d.get("log_path"), status=BenchStatus(status), cpu_name=str(d.get("cpu_name") or ""),
            emulated_dtypes=tuple(str(x) for x in d.get("emulated_dtypes") or ()),
            load=LoadSummary.from_dict(d["load"]) if isinstance(d.get("load"), dict) else None,
            spread=_opt_float(d.get("spread")), remeasured=int(d.get("remeasured") or 0))


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
        times = tuple(float(t) for t in r.get("times_s") or ())
        out.append(BenchResult(device=str(r.get("device", device)), dtype=str(r["dtype"]), n=int(r["n"]),
                               median_s=float(r["median_s"]), gflops=gflops, runs=int(r["runs"]),
                               min_s=_opt_float(r.get("min_s")), max_s=_opt_float(r.get("max_s")),
                               peak_gflops=p, fraction_of_peak=(gflops / p) if p else None,
                               times_s=times, spread=spread_of(times)))
    return tuple(out)


# long: the arguments are checked one by one, then the probe runs under the load watch
def run_bench(python: str | os.PathLike[str], *, device: str = "auto", sizes: Iterable[int | str] | None = None,
              dtypes: Iterable[str] | None = None, budget_s: float = 60, on_event: EventCallback | None = None,
              cancel: CancelToken | None = None, report: SystemReport | None = None, repeats: int = 5,
              warmup: int = 2, copy: bool = True, cpu_baseline: bool = True,
              timeout_s: float | None = None, watch_load: bool = True) -> BenchReport:
    """Run the matmul sweep in the environment of ``python``.

    ``report`` (a SystemReport) supplies the CPU facts for the peak estimate when the
    benchmark describes another machine's numbers; by default this machine is read.
    While the probe runs, the CPU used by other programs is measured (``watch_load``) and
    passed to the probe, which measures again while the machine is busy or the runs scatter,
    until the time budget is spent.
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
    args = ["--device", device, "--budget-s", str(budget), "--repeats", str(repeats), "--warmup", str(warmup),
            "--spread-high", str(SPREAD_HIGH)]
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
    folder = Path(tempfile.mkdtemp(prefix="torch-setup-load-")) if watch_load else None
    watch = _start_watch(folder / "load" if folder is not None else None)
    if watch is not None and watch.path is not None:
        args += ["--load-file", str(watch.path)]
    try:
        # The probe stops between runs on a cancel (SIGTERM) and prints what it measured.
        out = run_probe("bench", python, args, on_event=on_event, cancel=cancel, timeout_s=timeout,
                        env=probe_env(python), what="the speed test", keep_partial=True)
    finally:
        load = watch.stop() if watch is not None else None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return _report(out.result, str(python), device, report, cpu_pk, budget,
                   str(out.log_path) if out.log_path else None, cancelled=out.cancelled, load=load)


def _start_watch(path: Path | None) -> LoadWatch | None:
    """The load watch, or None where psutil cannot read this machine's CPU times."""
    if path is None:
        return None
    try:
        return LoadWatch(path=path).start()
    except Exception:  # psutil missing or refused (a sandbox): the test runs without the verdict
        return None


def _report(r: dict[str, Any], python: str, device: str, report: SystemReport | None, cpu_pk: Peak | None,
            budget: float, log_path: str | None, *, cancelled: bool = False,
            load: LoadSummary | None = None) -> BenchReport:
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
    results = _with_peak(r.get("results", ()), dev, pk)
    spreads = [x.spread for x in results if x.spread is not None]
    measured = {x.dtype for x in results}
    native = r.get("native_dtypes") or {}
    return BenchReport(
        python=python, device=dev, device_name=str(r.get("device_name", "")),
        torch_version=str(r.get("torch", "")), threads=int(threads) if threads is not None else None,
        results=results,
        skipped=tuple(Skipped(str(s.get("device", dev)), str(s["dtype"]), s.get("n"), str(s["reason"]))
                      for s in r.get("skipped", ())),
        cpu_results=_with_peak(r.get("cpu_results", ()), "cpu", cpu_pk),
        speedup=tuple(Speedup.from_dict(s) for s in r.get("speedup", ())),
        copy=tuple(CopyResult.from_dict(c) for c in r.get("copy", ())),
        peak=pk, cpu_peak=cpu_pk, budget_s=budget, elapsed_s=float(r.get("elapsed_s", 0.0)),
        budget_exhausted=budget_exhausted, compute_capability=r.get("compute_capability"),
        log_path=log_path, status=status, cpu_name=str(r.get("cpu_name") or (r.get("device_name") if dev == "cpu"
                                                                               else "") or ""),
        emulated_dtypes=tuple(d for d in DTYPES if d in measured and native.get(d) is False),
        load=load, spread=statistics.median(spreads) if spreads else None,
        remeasured=int(r.get("remeasured") or 0))


# ------------------------------------------------------------------------------ what to say

def _pct(x: float) -> float:
    return round(100.0 * x, 1)


def headline_text(rep: BenchReport, result: BenchResult | None = None) -> Msg | None:
    """"<device>: 112.3 GFLOP/s in fp32 at 2048×2048 (the median of 12 runs, ±3 %)."""
    r = result or rep.headline()
    if r is None:
        return None
    name = (rep.cpu_name or rep.device_name or r.device) if r.device == "cpu" else (rep.device_name or r.device)
    if r.runs == 1:
        return msg("bench.headline_one_run", "{device}: {gflops:,.1f} GFLOP/s in {dtype} at {n}×{n} (one run).",
                   device=name, gflops=r.gflops, dtype=r.dtype, n=r.n)
    if r.spread is None:
        return msg("bench.headline", "{device}: {gflops:,.1f} GFLOP/s in {dtype} at {n}×{n} (the median of {runs} "
                   "runs).", device=name, gflops=r.gflops, dtype=r.dtype, n=r.n, runs=r.runs)
    return msg("bench.headline_spread", "{device}: {gflops:,.1f} GFLOP/s in {dtype} at {n}×{n} (the median of {runs} "
               "runs, ±{spread:.0f} %).", device=name, gflops=r.gflops, dtype=r.dtype, n=r.n, runs=r.runs,
               spread=_pct(r.spread))


def dtype_lines(rep: BenchReport) -> list[Msg]:
    """One line per measured dtype: its headline (the median at its largest size) and spread."""
    out = []
    for d in rep.dtypes():
        r = rep.headline(d)
        if r is None:
            continue
        if r.runs == 1:
            out.append(msg("bench.dtype_line_one_run", "{dtype}: {gflops:,.1f} GFLOP/s at {n}×{n} (one run)",
                           dtype=d, gflops=r.gflops, n=r.n))
        elif r.spread is None:
            out.append(msg("bench.dtype_line", "{dtype}: {gflops:,.1f} GFLOP/s at {n}×{n} (median of {runs} runs)",
                           dtype=d, gflops=r.gflops, n=r.n, runs=r.runs))
        else:
            out.append(msg("bench.dtype_line_spread", "{dtype}: {gflops:,.1f} GFLOP/s at {n}×{n} (median of {runs} "
                           "runs, ±{spread:.0f} %)", dtype=d, gflops=r.gflops, n=r.n, runs=r.runs,
                           spread=_pct(r.spread)))
    return out


def busy_text(load: LoadSummary) -> Msg:
    return msg("bench.busy", "The machine was busy: other programs used {share:.0f} % of its CPU during the test "
               "({cpus:.1f} of {total} CPUs), so the results are lower and less certain than on a quiet machine.",
               share=_pct(load.other_share), cpus=load.other_cpus, total=load.cpus)


def emulated_text(rep: BenchReport, dtype: str) -> Msg | None:
    """Why ``dtype`` is slow on the measured device (no native arithmetic for it)."""
    if dtype not in rep.emulated_dtypes:
        return None
    if rep.device == "cpu" and dtype == "bf16":
        return msg("bench.cpu_no_native_bf16", "bf16 is slow here: this CPU has no native bfloat16 arithmetic (no "
                   "AVX512_BF16 or AMX), so PyTorch emulates it in software.")
    if rep.device == "cpu" and dtype == "fp16":
        return msg("bench.cpu_no_native_fp16", "fp16 is slow here: this CPU has no native half-precision arithmetic "
                   "(no AVX512_FP16 or AMX-FP16), so PyTorch emulates it in software.")
    return msg("bench.no_native_dtype", "{dtype} is slow here: {device} has no native arithmetic for it.",
               dtype=dtype, device=rep.device_name or rep.device)


def peak_text(rep: BenchReport) -> Msg | None:
    """The headline's share of the estimated peak, or why there is none."""
    r = rep.headline()
    if r is None:
        return None
    if r.fraction_of_peak is None:
        return msg("bench.peak_unknown", "The peak of {device} is not known, so no share of it is shown.",
                   device=rep.device_name or rep.device)
    if r.peak_gflops is None:
        return msg("bench.of_peak_share", "That is {pct:.0f} % of the estimated {dtype} peak.",
                   pct=_pct(r.fraction_of_peak), dtype=r.dtype)
    return msg("bench.of_peak", "That is {pct:.0f} % of the estimated {dtype} peak of {peak:,.0f} GFLOP/s.",
               pct=_pct(r.fraction_of_peak), dtype=r.dtype, peak=r.peak_gflops)


def speedup_lines(rep: BenchReport) -> list[Msg]:
    """The accelerator against the CPU, per dtype at the largest size measured on both."""
    per: dict[str, Speedup] = {}
    for sp in rep.speedup:
        if sp.dtype not in per or sp.n > per[sp.dtype].n:
            per[sp.dtype] = sp
    return [msg("bench.speedup", "{device} is {x:.1f}× faster than the CPU in {dtype} (at {n}×{n}).",
                device=rep.device_name or rep.device, x=sp.speedup, dtype=d, n=sp.n)
            for d, sp in sorted(per.items(), key=lambda kv: DTYPES.index(kv[0]) if kv[0] in DTYPES else 99)]


def notes(rep: BenchReport) -> list[Msg]:
    """What the reader must know about how certain these numbers are, most important first."""
    out: list[Msg] = []
    if rep.load is not None and rep.load.busy:
        out.append(busy_text(rep.load))
    if rep.spread is not None and rep.spread_high:
        head = rep.headline()
        out.append(spread_text(rep.spread, head.spread if head is not None else None))
    if rep.remeasured == 1:
        out.append(msg("bench.remeasured_one", "Measured again within the time budget (one more round); each "
                       "result is the median of all its runs."))
    elif rep.remeasured:
        out.append(msg("bench.remeasured", "Measured again within the time budget ({rounds} more rounds); each "
                       "result is the median of all its runs.", rounds=rep.remeasured))
    if rep.load is not None and not rep.load.busy:
        out.append(msg("bench.quiet", "The machine was quiet during the test: other programs used {share:.0f} % of "
                       "its CPU.", share=_pct(rep.load.other_share)))
    for d in rep.dtypes():
        why = emulated_text(rep, d)
        if why is not None:
            out.append(why)
    if rep.cancelled:
        out.append(msg("bench.partial", "Partial results: the speed test was stopped before it finished."))
    elif rep.status is BenchStatus.BUDGET:
        out.append(msg("bench.budget", "The time budget ran out: the largest sizes were left out."))
    return out


def spread_text(spread: float, headline: float | None = None) -> Msg:
    """"The runs varied by ±14 % ... (more than ±10 %)": the typical spread of the test's measurements,
    shown with a decimal where its rounding would make it look no larger than the limit (±10.4 %, not
    ±10 %). ``headline``: the spread of the headline's own runs, said too where it rounds otherwise (the
    headline shows its own spread: two numbers with no word on what each is about read as a contradiction)."""
    pct, limit = _pct(spread), _pct(SPREAD_HIGH)
    own: Text = ""
    if headline is not None and round(_pct(headline)) != round(pct):
        own = msg("bench.spread_headline", " The headline's own runs varied by ±{spread:.0f} %.",
                  spread=_pct(headline))
    if round(pct) > round(limit):
        return msg("bench.spread_high", "The runs varied by ±{spread:.0f} % from one to the next in a typical "
                   "measurement of this test (more than ±{limit:.0f} %): the results are less certain.{headline}",
                   spread=pct, limit=limit, headline=own)
    return msg("bench.spread_high_fine", "The runs varied by ±{spread:.1f} % from one to the next in a typical "
               "measurement of this test (more than ±{limit:.0f} %): the results are less certain.{headline}",
               spread=pct, limit=limit, headline=own)


def warnings_of(rep: BenchReport) -> list[Text]:
    """The notes that lower the trust in the numbers (busy machine, scattered runs)."""
    return [m for m in notes(rep) if m.code in ("bench.busy", "bench.spread_high", "bench.spread_high_fine")]
