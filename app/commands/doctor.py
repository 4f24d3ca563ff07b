"""``torch-setup doctor --env PATH [--from-report FILE] [--json]``: why is the GPU not used?

Exit codes: 0 no problem found, 1 at least one problem (an "error" finding), 2 bad input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.commands._args import add_command, add_from_report, add_json
from app.commands._render import mark
from app.core.base.errors import EXIT_FAILED, EXIT_OK
from app.core.base.serial import dumps
from app.core.base.text import render as render_text

if TYPE_CHECKING:  # pragma: no cover
    from app.core.doctor import Diagnosis


def register(sub) -> None:
    p = add_command(sub, "doctor", "find out why PyTorch does not use the GPU in an environment",
                    "Look at the environment's PyTorch build, the machine's GPUs and drivers and "
                    "the environment variables, and name the cause and the fix in words.", run,
                    env="the environment folder or its python executable")
    add_from_report(p, "a SystemReport JSON (torch-setup detect --json) describing the machine, when it is "
                       "not this one")
    add_json(p, "print the Diagnosis as JSON")


def render(diag: Diagnosis) -> str:
    lines = [f"Environment: {diag.env_path}"]
    f = diag.facts
    if f.torch_version:
        b = f.build
        kind = (f"CUDA {b.cuda}" if b.cuda else f"ROCm {b.hip}" if b.hip
                else "CPU-only" if b.local_tag == "cpu" else "no CUDA/ROCm")
        lines.append(f"PyTorch {f.torch_version} ({kind})")
    if f.gpus:
        lines.append("GPUs: " + ", ".join(g.name or "?" for g in f.gpus))
    if diag.accelerator_ok:
        lines.append("PyTorch can use an accelerator in this environment.")
    lines.append("")
    if not diag.findings:
        lines.append("No problem found.")
    for i, x in enumerate(diag.findings, 1):
        lines.append(f"{mark(x.severity)} {i}. {render_text(x.title)}")
        lines.append(f"     Why: {render_text(x.explanation)}")
        lines.append(f"     Fix: {render_text(x.fix)}")
        for e in x.evidence:
            if e:
                lines.append(f"     - {e}")
        lines.append("")
    return "\n".join(lines).rstrip()


def run(args) -> int:
    from app.core.detection.system import load_report
    from app.core.doctor import diagnose

    report = load_report(args.from_report) if args.from_report else None
    diag = diagnose(args.env, report=report)
    print(dumps(diag) if args.json else render(diag))
    return EXIT_OK if diag.ok else EXIT_FAILED
