"""``torch-setup verify --env PATH [--expect BACKEND] [--json]``: run the checks inside an env.

Exit codes: 0 every check passed or was skipped, 1 a check failed (or the probe could not
run), 2 the env path is wrong, 130 cancelled.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from app.commands._args import add_command, positive_float
from app.commands._render import mark
from app.core.base.errors import EXIT_FAILED, EXIT_OK
from app.core.base.serial import dumps
from app.core.base.text import render as render_text

if TYPE_CHECKING:  # pragma: no cover
    from app.core.measure.verify import VerifyReport


def register(sub) -> None:
    p = add_command(sub, "verify", "check that PyTorch works in an environment (CPU and accelerator)",
                    "Run a real computation on the CPU and on the accelerator inside the "
                    "environment, and say which checks passed, failed or were skipped, and why.", run,
                    env="the environment folder (venv or conda) or its python executable",
                    json_help="print the VerifyReport as JSON")
    p.add_argument("--expect", choices=("cuda", "rocm", "mps", "xpu", "cpu"),
                   help="the accelerator this env was installed for: if it is not usable, that is a failure")
    p.add_argument("--no-dist", action="store_true", help="skip the two-process all_reduce check")
    p.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                   help="give up after S seconds (300; more than 0)")


def render(report: VerifyReport) -> str:
    lines = [f"PyTorch {report.torch_version} in {report.python}"]
    build = report.build
    if build.cuda:
        lines.append(f"  built for CUDA {build.cuda}" + (f" (architectures: {' '.join(build.arch_list)})"
                                                         if build.arch_list else ""))
    elif build.hip:
        lines.append(f"  built for ROCm/HIP {build.hip}")
    elif build.local_tag == "cpu" or not any(report.backend(b).built for b in ("cuda", "rocm", "mps", "xpu")):
        lines.append("  CPU-only build")
    backs = [f"{name}: {'available' if v.available else ('built, not available' if v.built else 'not built')}"
             for name, v in report.backends.items() if name in ("cuda", "rocm", "mps", "xpu")]
    lines.append("  " + "; ".join(backs))
    for d in report.devices:
        mem = f", {d.total_memory / 2**30:.0f} GiB" if d.total_memory else ""
        cc = f", CC {d.compute_capability}" if d.compute_capability else (f", {d.gfx_target}" if d.gfx_target else "")
        lines.append(f"  device {d.index}: {d.name}{cc}{mem}")
    lines.append("")
    titles = [render_text(c.title) or c.name for c in report.checks]
    width = max((len(t) for t in titles), default=10)
    for c, title in zip(report.checks, titles, strict=True):
        detail = "skipped: no accelerator (see above)" if c.status == "skipped" and c.code == "no_accelerator" \
            else render_text(c.detail)
        lines.append(f" {mark(c.status)} {title.ljust(width)}  {detail}")
    lines.append("")
    n = {s: sum(1 for c in report.checks if c.status == s) for s in ("passed", "failed", "skipped")}
    verdict = "All checks passed" if report.ok else "Some checks FAILED"
    lines.append(f"{verdict}: {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped.")
    if not report.ok:
        lines.append("Run `torch-setup doctor --env ...` for the likely cause and the fix.")
    if report.log_path:
        lines.append(f"Full log: {report.log_path}")
    return "\n".join(lines)


def _show_step(ev: object) -> None:
    """Each check's title on stderr as it starts (English, like the rest of the CLI)."""
    from app.core.base.events import StepEvent
    from app.core.measure.verify import check_from_step

    if isinstance(ev, StepEvent) and ev.status == "running":
        print(f"  … {render_text(check_from_step(ev).title)}", file=sys.stderr)


def run(args) -> int:
    from app.core.measure.probe import resolve_python
    from app.core.measure.verify import run_verify

    live = not args.json and sys.stderr.isatty()
    report = run_verify(resolve_python(args.env), on_event=_show_step if live else None, timeout_s=args.timeout,
                        expect=args.expect, distributed=not args.no_dist)
    print(dumps(report) if args.json else render(report))
    return EXIT_OK if report.ok else EXIT_FAILED
