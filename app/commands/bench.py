"""``torch-setup bench --env PATH [--device D] [--sizes N ...] [--dtypes T ...] [--budget-s S] [--json]``.

Ctrl-C stops the sweep: what was measured until then is printed (marked partial) and the
command exits 130.
"""
from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from app.commands._args import positive_float, positive_int
from app.core.base.errors import EXIT_CANCELLED, EXIT_OK
from app.core.base.serial import dumps

if TYPE_CHECKING:  # the core's modules load when the command runs (a cheap --help)
    from app.core.base.events import Event
    from app.core.measure.bench import BenchReport
    from app.core.proc.runner import CancelToken


def register(sub) -> None:
    p = sub.add_parser("bench", help="measure matrix-multiply speed in an environment (GFLOP/s)",
                       description="A matmul sweep inside the environment: the median of several timed runs per "
                                   "size and dtype, GFLOP/s, and the share of the hardware's estimated peak.")
    p.add_argument("--env", required=True, metavar="PATH", help="the environment folder or its python executable")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda", "mps", "xpu"),
                   help="where to run (auto: the accelerator if one works, else the CPU)")
    p.add_argument("--sizes", nargs="+", metavar="N", type=positive_int,
                   help="matrix sizes (default 256 512 ... 8192)")
    p.add_argument("--dtypes", nargs="+", metavar="T", choices=("fp32", "tf32", "fp16", "bf16"),
                   help="fp32 tf32 fp16 bf16 (default: all the device supports)")
    p.add_argument("--budget-s", type=positive_float, default=60.0, metavar="S",
                   help="time budget in seconds; larger sizes are skipped to stay within it (60)")
    p.add_argument("--repeats", type=positive_int, default=5, metavar="N",
                   help="timed runs per point; the median counts (5)")
    p.add_argument("--json", action="store_true", help="print the BenchReport as JSON")
    p.set_defaults(func=run)


def render(rep: BenchReport) -> str:
    from app.core.base.text import render as text
    from app.core.measure.bench import dtype_lines, headline_text, notes, peak_text, speedup_lines, warnings_of

    if rep.cancelled and not rep.all_results():
        return "The speed test was stopped before its first measurement." + (
            f"\nFull log: {rep.log_path}" if rep.log_path else "")
    lines = [f"Matmul speed on {rep.device}: {rep.device_name} (torch {rep.torch_version}, {rep.threads} threads)", ""]
    if rep.cancelled:
        lines[1:1] = ["Stopped before the end: these are the measurements made until then (partial results)."]
    # The warnings first, where they cannot be missed: a busy machine, scattered runs.
    for w in warnings_of(rep):
        lines[-1:-1] = [f"!! {text(w)}"]
    lines.append(f"  {'dtype':<6} {'n':>6} {'median ms':>10} {'GFLOP/s':>10} {'spread':>7} {'runs':>5} {'of peak':>8}")
    for r in sorted(rep.results + rep.cpu_results, key=lambda r: (r.device != rep.device, r.dtype, r.n)):
        frac = f"{r.fraction_of_peak * 100:.0f} %" if r.fraction_of_peak is not None else "?"
        spread = f"±{r.spread * 100:.0f} %" if r.spread is not None else "?"
        dev = "" if r.device == rep.device else f" ({r.device})"
        lines.append(f"  {r.dtype:<6} {r.n:>6} {r.median_s * 1000:>10.2f} {r.gflops:>10.1f} {spread:>7} {r.runs:>5} "
                     f"{frac:>8}{dev}")
    for s in rep.skipped:
        lines.append(f"  – {s.dtype} {'n=' + str(s.n) if s.n else '(all sizes)'}: {s.reason}")
    for sp in speedup_lines(rep):
        lines.append(f"  {text(sp)}")
    for c in rep.copy:
        lines.append(f"  copy {c.direction.replace('_', ' ')} ({c.memory}): {c.gb_per_s:.1f} GB/s")
    lines.append("")
    if rep.peak is not None:
        pk = ", ".join(f"{k} {v:,.0f}" for k, v in rep.peak.gflops.items())
        lines.append(f"Estimated peak ({rep.peak.name}): {pk} GFLOP/s")
        for a in rep.peak.assumptions:
            lines.append(f"  assumption: {text(a)}")
        lines.append(f"  source: {rep.peak.source}")
    head = headline_text(rep)
    if head is not None:
        lines.append(f"Result: {text(head)}")
        for d in dtype_lines(rep):
            lines.append(f"  {text(d)}")
        share = peak_text(rep)
        if share is not None:
            lines.append(f"  {text(share)}")
        top = rep.headline()
        if top is not None and top.fraction_of_peak is not None and top.fraction_of_peak > 1.0:
            lines.append("  (above the estimate: the chip ran faster than the clock the OS reports, e.g. turbo "
                         "in a virtual machine, or a matrix unit the estimate does not count)")
    elif rep.peak is None:
        lines.append(f"The peak of {rep.device_name} is not in the table, so no share of it is shown.")
    for n in notes(rep):
        if n not in warnings_of(rep):
            lines.append(text(n))
    if rep.log_path:
        lines.append(f"Full log: {rep.log_path}")
    return "\n".join(lines)


@contextmanager
def _ctrl_c_cancels(cancel: CancelToken) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) stops the sweep between runs so its results are kept;
    a second one interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Any] = {}

    def on_signal(signum: int, _frame: object) -> None:
        print("\nStopping the speed test (Ctrl-C again to abort)…", file=sys.stderr)
        signal.signal(signal.SIGINT, previous.get(signal.SIGINT, signal.default_int_handler))
        cancel.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(args: Any) -> int:
    from app.core.base.events import StepEvent
    from app.core.measure.bench import run_bench
    from app.core.measure.probe import resolve_python
    from app.core.proc.runner import CancelToken

    python = resolve_python(args.env)

    def show_step(ev: Event) -> None:
        if isinstance(ev, StepEvent) and ev.status in ("passed", "skipped", "failed"):
            print(f"  {ev.name}: {ev.detail}", file=sys.stderr)

    on_event = show_step if not args.json and sys.stderr.isatty() else None
    cancel = CancelToken()
    with _ctrl_c_cancels(cancel):
        rep = run_bench(python, device=args.device, sizes=args.sizes, dtypes=args.dtypes, budget_s=args.budget_s,
                        on_event=on_event, repeats=args.repeats, cancel=cancel)
    print(dumps(rep) if args.json else render(rep))
    return EXIT_CANCELLED if rep.cancelled else EXIT_OK
