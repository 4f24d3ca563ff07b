"""Small helpers several test modules share (real processes and envs, no fakes)."""
from __future__ import annotations

from pathlib import Path

import psutil

from app.cli import main
from app.core.distinfo import distributions


def leftover_processes(needle: str) -> list[str]:
    """The running processes whose command line mentions ``needle`` ("pid: cmdline")."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if p.info["cmdline"] and any(needle in part for part in p.info["cmdline"]):
                found.append(f"{p.info['pid']}: {' '.join(p.info['cmdline'])[:200]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def torch_in(env: Path) -> str | None:
    """The torch version installed in ``env`` (read from its dist-info), None when there is none."""
    d = distributions(env).get("torch")
    return d.version if d else None


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``torch-setup ARGV`` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err
