"""Must-show 1 of issue 11: two installs into one path, in both orders and timings.

A slow index on 127.0.0.1 serves the real torch wheel (and its dependencies), answering the torch
wheel only after a delay, so the first install is really in the middle of its work when the second
starts. Every run uses ``--index-url``/``--default-index-url`` of that server and nothing else, and
builds its env from a THROWAWAY base interpreter (a venv made for the test, with a package in it,
given as ``--python``). Each time: one run refuses (exit 2, naming the other's PID), the other's
env imports torch, no process of either is left, and the base's ``site-packages`` is byte-identical
afterwards.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.core.env import backends as envs
from tests.helpers import leftover_processes
from tests.netlab import Slow
from tests.netlab.clients import clean_env, make_venv, uv_install

REPO = Path(__file__).resolve().parents[1]
DELAY_S = 4.0  # the torch wheel's first byte comes this late: the first run is mid-install for seconds

pytestmark = pytest.mark.slow


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root``: file -> sha256, link -> target, folder -> "dir"."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(autouse=True)
def _free_the_disk(tmp_path):
    """Each test unpacks torch into fresh caches and envs (GBs): removed at once, not kept by pytest."""
    yield
    for child in tmp_path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


@pytest.fixture
def runs():
    """Every run a test starts; any still going at the end is killed (and its pipe closed)."""
    started: list[Run] = []
    yield started
    for r in started:
        r.stop()


@pytest.fixture
def world(tmp_path, index_server, torch_wheelhouse, tiny_wheels):
    """(slow index, throwaway base python, digest of its site-packages before)."""
    index = index_server([*torch_wheelhouse.files, *tiny_wheels.glob("*.whl")],
                         behaviours={"torch-*": Slow(delay_s=DELAY_S)})
    base_py = make_venv(tmp_path / "throwaway base")
    r = uv_install(base_py, index.simple_url(), ["netlab-dep==0.5"])
    assert r.returncode == 0, r.stderr
    site = envs.site_packages(tmp_path / "throwaway base")[0]
    assert (site / "netlab_dep").is_dir()
    return index, base_py, site, tree_digest(site)


@dataclass
class Run:
    proc: subprocess.Popen
    started: float
    lines: list[str] = field(default_factory=list)
    ended: float = 0.0
    reader: threading.Thread | None = None

    def seen(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def finish(self, timeout: float = 280) -> int:
        self.proc.wait(timeout=timeout)
        if self.reader is not None:
            self.reader.join(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self.ended = self.ended or time.monotonic()
        return self.proc.returncode

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.finish(timeout=60)

    @property
    def err(self) -> str:
        return "".join(self.lines)


def start(runs: list[Run], tmp_path: Path, env: Path, index, base_py: Path, installer: str, *,
          verify: bool = False) -> Run:
    args = [sys.executable, "-m", "app.cli", "install", "--env", str(env), "--installer", installer,
            "--python", str(base_py), "--packages", "torch==2.13.0", "--index-url", index.whl_url("cpu"),
            "--default-index-url", index.simple_url(), "--yes"]
    if not verify:
        args.append("--no-verify")
    cache = tmp_path / f"cache {installer} {time.monotonic_ns()}"  # a cold cache: the slow download really happens
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            stdin=subprocess.DEVNULL,
                            env=clean_env(UV_CACHE_DIR=str(cache), PIP_CACHE_DIR=str(cache),
                                          TORCH_SETUP_HOME=os.environ["TORCH_SETUP_HOME"]))
    run = Run(proc, time.monotonic())

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            run.lines.append(line)
        run.ended = time.monotonic()

    run.reader = threading.Thread(target=read, daemon=True)
    run.reader.start()
    runs.append(run)
    return run


def wait_for(run: Run, text: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not run.seen(text):
        assert run.proc.poll() is None, f"ended before {text!r}:\n{run.err}"
        assert time.monotonic() < deadline, f"no {text!r} within {timeout} s:\n{run.err}"
        time.sleep(0.05)


def imports_torch(env: Path) -> str:
    out = subprocess.run([str(envs.env_python(env)), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def check_outcome(winner: Run, loser: Run, env: Path, site: Path, digest: dict[str, str]) -> None:
    assert loser.finish() == 2, loser.err
    assert f"is being changed by PID {winner.proc.pid} (install" in loser.err, loser.err
    assert winner.finish() == 0, winner.err
    assert "Nothing was left behind" not in winner.err
    assert imports_torch(env) == "2.13.0+cpu"
    assert leftover_processes(str(env)) == []
    assert tree_digest(site) == digest, "the base interpreter's site-packages changed"


@pytest.mark.parametrize("first,second", [("uv", "pip"), ("pip", "uv")])
def test_a_second_install_during_the_first_ones_download_is_refused(tmp_path, world, runs, first, second):
    index, base_py, site, digest = world
    env = tmp_path / "one env"
    a = start(runs, tmp_path, env, index, base_py, first)
    wait_for(a, "==> Installing")
    time.sleep(1.0)  # the installer is waiting for the slow torch wheel now
    assert a.proc.poll() is None and env.exists()
    b = start(runs, tmp_path, env, index, base_py, second)
    b.finish()
    # refused at once, not after waiting for the first run: that one is still installing (no wall time)
    assert a.proc.poll() is None, "the first run must still be installing while the second is refused"
    check_outcome(a, b, env, site, digest)


def test_two_installs_started_at_the_same_moment(tmp_path, world, runs):
    index, base_py, site, digest = world
    env = tmp_path / "raced env"
    pair = [start(runs, tmp_path, env, index, base_py, "uv") for _ in range(2)]
    codes = [r.finish() for r in pair]
    assert sorted(codes) == [0, 2], [r.err for r in pair]
    winner, loser = (pair[0], pair[1]) if codes[0] == 0 else (pair[1], pair[0])
    check_outcome(winner, loser, env, site, digest)


def test_a_second_install_during_the_first_ones_verification_is_refused(tmp_path, world, runs):
    index, base_py, site, digest = world
    env = tmp_path / "verified env"
    a = start(runs, tmp_path, env, index, base_py, "uv", verify=True)
    wait_for(a, "==> Verifying")
    b = start(runs, tmp_path, env, index, base_py, "uv")
    check_outcome(a, b, env, site, digest)
