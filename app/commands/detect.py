"""``torch-setup detect [--json] [--out FILE] [--target PATH] [--timeout S]``."""
from __future__ import annotations

import sys

from app.commands._args import add_command, add_json


def register(sub) -> None:
    p = add_command(sub, "detect", "describe this machine: OS, CPU, memory, disk, GPUs and drivers, Pythons, tools",
                    "Detect this machine the way an expert would: GPUs with driver and compute "
                    "capability / gfx target, the newest CUDA the NVIDIA driver supports, Python "
                    "interpreters, environment tools, and the environment variables that change what "
                    "PyTorch sees. Every probe has a time limit; problems are reported, never fatal.", run)
    add_json(p, "print the SystemReport as JSON (schema_version 1)")
    p.add_argument("--out", metavar="FILE", help="also write the SystemReport JSON to FILE "
                                                  "(for recommend --from-report on another machine)")
    p.add_argument("--target", metavar="PATH", help="where environments will be created: free disk "
                                                     "space is measured there (default: your home folder)")
    p.add_argument("--timeout", metavar="S", type=float, default=3.0,
                   help="time limit for each probe in seconds (at most 3; default 3)")


def run(args) -> int:
    from pathlib import Path

    from app.core.base.errors import BadInput
    from app.core.base.serial import dumps
    from app.core.detection.detect import detect, explain

    if args.timeout is not None and not (args.timeout > 0):
        raise BadInput(f"--timeout must be a positive number of seconds, not {args.timeout}")
    out_path = None
    if args.out:
        out_path = Path(args.out).expanduser()
        if out_path.is_dir():
            raise BadInput(f"--out {args.out} is a folder; give a file name such as "
                           f"{out_path / 'system.json'}")
        if not out_path.parent.exists():
            raise BadInput(f"--out: the folder {out_path.parent} does not exist",
                           hint="create it first or choose another path")
    report = detect(args.target, timeout_s=args.timeout)
    text = dumps(report.to_dict())
    if out_path is not None:
        from app.core.base.secrets import write_private

        try:
            write_private(out_path, text + "\n")  # masked, mode 0600
        except OSError as exc:
            raise BadInput(f"cannot write {out_path}: {exc.strerror}",
                           hint="choose a folder you can write to") from None
    if args.json:
        sys.stdout.write(text + "\n")
        return 0
    ex = explain(report).render("en")
    lines = ["What this machine has:"]
    lines += [f"  {s}" for s in ex["found"]]
    lines.append("")
    lines.append("What it means:")
    lines += [f"  {s}" for s in ex["meaning"]]
    if ex["problems"]:
        lines.append("")
        lines.append("What looks wrong:")
        lines += [f"  ! {s}" for s in ex["problems"]]
    if out_path is not None:
        lines.append("")
        lines.append(f"Report written to {out_path}")
    else:
        lines.append("")
        lines.append("Full details: torch-setup detect --json")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
