"""Small helpers several test modules share (real processes and envs, no fakes)."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from app.cli import main
from app.core.env.distinfo import distributions

WINDOWS = os.name == "nt"
SCRIPTS = "Scripts" if WINDOWS else "bin"  # where a venv keeps python and its programs on this OS
EXE = ".exe" if WINDOWS else ""

# Python source that crashes its process on every OS: SIGSEGV on POSIX, an access violation
# (0xC0000005) on Windows, where ctypes turns a fault inside a foreign call (string_at(0)) into
# OSError; SetErrorMode(SEM_NOGPFAULTERRORBOX): no crash dialog or debugger there.
CRASH = ("import ctypes, os\n"
         "if os.name == 'nt':\n    ctypes.windll.kernel32.SetErrorMode(2)\n"
         "ctypes.c_int.from_address(8).value\n")
CRASH_SIGNAL = "an access violation" if WINDOWS else "SIGSEGV"  # how the product names that crash

# a wheel platform tag this machine installs (the wheel folders' fits are judged for this machine)
PLATFORM_TAG = "win_amd64" if WINDOWS else "manylinux_2_28_x86_64"


def venv_python(env: str | os.PathLike[str]) -> Path:
    """Where a venv's interpreter is on this OS (``bin/python``, ``Scripts\\python.exe``): the layout
    tests build or expect, stated apart from the product's ``app.core.env.backends.env_python``."""
    return Path(env) / SCRIPTS / f"python{EXE}"


def site_packages(env: str | os.PathLike[str], python: str = "3.11") -> Path:
    """A venv's site-packages on this OS (``lib/python3.11/site-packages``, ``Lib\\site-packages``)."""
    return Path(env) / ("Lib/site-packages" if WINDOWS else f"lib/python{python}/site-packages")


def real_site_packages(env: str | os.PathLike[str]) -> Path:
    """The site-packages of a venv that a real Python made (any version)."""
    if WINDOWS:
        return Path(env) / "Lib" / "site-packages"
    return next(Path(env).glob("lib/python3*/site-packages"))


def bare_venv(root: Path) -> Path:
    """A venv without pip at ``root``, made by uv from this interpreter (not the stdlib's venv,
    which some Pythons lack: Debian's without python3-venv, the embeddable Windows build).
    Returns its python."""
    from uv import find_uv_bin

    subprocess.run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(root)], check=True,
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    return venv_python(root)


def venv_program(env: str | os.PathLike[str], name: str) -> Path:
    """A console program a package put in a venv (``bin/pip``, ``Scripts\\pip.exe``)."""
    return Path(env) / SCRIPTS / f"{name}{EXE}"


def fake_program(bindir: Path, name: str, source: str) -> Path:
    """A program ``name`` in ``bindir`` that runs the Python ``source`` (sys.argv as usual) with
    this interpreter, found by PATH lookups on every OS: a shell script on POSIX, ``name.cmd`` on
    Windows. The edge stand-in for a real tool (nvidia-smi, conda, ...). Returns its path."""
    bindir.mkdir(parents=True, exist_ok=True)
    script = bindir / f"{name}-fake.py"
    script.write_text(source, encoding="utf-8")
    if WINDOWS:
        exe = bindir / f"{name}.cmd"
        exe.write_text(f'@"{sys.executable}" "{script}" %*\r\n@exit /b %ERRORLEVEL%\r\n', encoding="utf-8")
    else:
        exe = bindir / name
        exe.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{script}' \"$@\"\n", encoding="utf-8")
        exe.chmod(0o755)
    return exe


@functools.cache
def can_symlink() -> bool:
    """Whether this system makes working symbolic links: not Windows without the privilege (the
    call fails), not Wine (the call succeeds and nothing is there)."""
    with tempfile.TemporaryDirectory() as d:
        link = Path(d) / "link"
        try:
            link.symlink_to(d, target_is_directory=True)
        except OSError:
            return False
        return link.is_symlink() and link.is_dir()


def symlink(link: Path, target: str | os.PathLike[str], *, directory: bool = False) -> None:
    """``link.symlink_to(target)``, or skip the test where symbolic links cannot be made."""
    if not can_symlink():
        pytest.skip("this system makes no working symbolic links (Windows without the privilege, or Wine)")
    link.symlink_to(target, target_is_directory=directory)


def torch_alone(wheels: Path, folder: Path) -> Path:
    """``folder`` holding the torch wheel of ``wheels`` and nothing else (hard-linked where the file
    system allows): a wheel folder that lacks torch's dependencies, whatever ``wheels`` holds (the
    Windows lane's holds them all)."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = next(wheels.glob("torch-*.whl"))
    try:
        os.link(wheel, folder / wheel.name)
    except OSError:
        shutil.copyfile(wheel, folder / wheel.name)
    return folder


@contextmanager
def scratch(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A temp folder for a module- or session-scoped fixture, removed when the fixture ends
    (``with scratch(tmp_path_factory, "bundle") as folder: ... yield ...``); kept when it fails. The suite makes many real environments (a
    torch install is about 1 GB) on CI machines that share their disk, so what a module made does
    not outlive it (pyproject's tmp_path_retention_policy does the same for each test's tmp_path)."""
    path = factory.mktemp(name)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def bench_budget(py: str | os.PathLike[str], measuring_s: float, busy: bool = False) -> float:
    """A bench budget counts from the probe's start, torch's import included. On a fresh env (no bytecode
    yet) or a loaded machine that import alone can take seconds, so a test's budget is its seconds of
    measuring on top of what starting torch takes on this machine now (a first import warms the env,
    the second is timed; beside two CPU burners on two cores it takes about twice as long again)."""
    subprocess.run([str(py), "-c", "import torch"], check=True, timeout=240)
    t0 = time.monotonic()
    subprocess.run([str(py), "-c", "import torch"], check=True, timeout=240)
    return measuring_s + (4 if busy else 2) * (time.monotonic() - t0)


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
