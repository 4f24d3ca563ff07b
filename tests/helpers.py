"""Small helpers several test modules share (real processes and envs, no fakes)."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from app.cli import main
from app.core.distinfo import distributions


@contextmanager
def scratch(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A temp folder for a module- or session-scoped fixture, removed when the fixture ends
    (``with scratch(tmp_path_factory, "bundle") as folder: ... yield ...``); kept when it fails. The suite makes many real environments (a
    torch install is about 1 GB) on CI machines that share their disk, so what a module made does
    not outlive it (pyproject's tmp_path_retention_policy does the same for each test's tmp_path)."""
    path = factory.mktemp(name)
    yield path
    shutil.rmtree(path, ignore_errors=True)


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
