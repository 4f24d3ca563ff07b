"""Progress with time left during local and cached installs, from REAL installer runs.

uv and pip print nothing while they unpack a wheel (uv ~10 s for the 190 MB torch wheel into
an empty cache, pip ~30 s into the environment); :class:`app.core.base.progress.UnpackWatch`
measures that on disk. Here the real torch 2.13.0 CPU wheel and its dependencies (the netlab
wheelhouse, a local folder: no network) are installed with uv (empty cache, then warm) and
with pip, the parser and the watch feed :class:`InstallProgress` exactly as the install code
does, and every state the Install page would draw is recorded: done and total bytes, the
fraction, the rate and the time left must move forwards (the time left counting down)."""
from __future__ import annotations

import itertools
import math
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.base.events import ProgressEvent
from app.core.base.progress import UNPACKING, ProgressParser, UnpackWatch, unpack_watch, uv_cache_dir
from app.core.base.progress_model import InstallProgress, PackageLine
from app.core.install.sizing import WHEEL_TO_INSTALLED
from app.core.proc import runner

ORDER = {"busy": 0, "download": 1, "unpack": 2, "packages": 3}


@dataclass(frozen=True)
class Seen:
    t: float
    mode: str
    fraction: float
    done: int | None
    total: int | None
    rate: float | None
    eta: float | None


class Recorder:
    """The Install page's view of the model: a state after every event and every 0.25 s."""

    def __init__(self) -> None:
        self.model = InstallProgress()
        self.lock = threading.Lock()
        self.seen: list[Seen] = []
        self.events: list[ProgressEvent] = []
        self._stop = threading.Event()
        self._tick = threading.Thread(target=self._run, daemon=True)

    def __call__(self, ev) -> None:
        if isinstance(ev, ProgressEvent):
            with self.lock:
                self.events.append(ev)
                self.model.feed(ev)
                self._snap()

    def _snap(self) -> None:
        m = self.model
        dt = m.done_total()
        self.seen.append(Seen(time.monotonic(), m.mode, m.fraction, dt[0] if dt else None, dt[1] if dt else None,
                              m.rate(), m.eta()))

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            with self.lock:
                self._snap()

    def __enter__(self) -> Recorder:
        self._tick.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._tick.join()


def _install(argv: list[str], installer: str, env: Path, expected_mb: float, child_env: dict) -> Recorder:
    rec = Recorder()
    parser = ProgressParser(installer, rec, watch=unpack_watch(installer, env, expected_mb, rec, child_env))
    with rec:
        try:
            res = runner.run(argv, env=child_env, timeout=900, on_line=lambda _s, line: parser.feed(line))
        finally:
            parser.close()
    assert res.ok, res.tail[-20:]
    return rec


def _check_forwards(rec: Recorder, mode: str) -> list[Seen]:
    """The states of ``mode``: done, total and fraction never run backwards, the time left counts
    down, the rate is a real positive number; modes only move forwards."""
    modes = [s.mode for s in rec.seen if s.mode != "busy"]
    assert [ORDER[m] for m in modes] == sorted(ORDER[m] for m in modes), modes
    run = [s for s in rec.seen if s.mode == mode]
    assert run, f"no {mode} progress was shown"
    for a, b in itertools.pairwise(run):
        assert b.done >= a.done and b.fraction >= a.fraction and b.total >= a.total
        if a.eta is not None and b.eta is not None and a.eta - (b.t - a.t) > 0:
            assert b.eta <= a.eta + 1e-9, (a, b)  # counts down (a new estimate only once it ran out)
    rates = [s.rate for s in run if s.rate is not None]
    assert rates and all(r > 0 and math.isfinite(r) for r in rates)
    etas = [s.eta for s in run if s.eta is not None]
    assert etas and etas[-1] <= etas[0]
    return run


def _venv(tmp_path: Path) -> Path:
    from uv import find_uv_bin

    env = tmp_path / "env"
    runner.run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(env)],
               timeout=120).raise_for_status("uv venv")
    return env


@pytest.mark.slow
def test_uv_local_install_into_an_empty_cache_shows_bytes_rate_and_time_left(torch_wheelhouse, tmp_path):
    from uv import find_uv_bin

    env = _venv(tmp_path)
    cache = tmp_path / "uv-cache"
    child_env = runner.clean_env({"UV_CACHE_DIR": str(cache), "UV_NO_PROGRESS": "1"})
    expected_mb = torch_wheelhouse.torch.stat().st_size / 1e6 * WHEEL_TO_INSTALLED * 1.1  # the plan's estimate
    argv = [find_uv_bin(), "pip", "install", "--python", str(env / "bin" / "python"), "--offline", "--no-index",
            "--find-links", str(torch_wheelhouse.folder), torch_wheelhouse.requirement]
    rec = _install(argv, "uv", env, expected_mb, child_env)
    unpacked = [e for e in rec.events if e.unit == "unpacked"]
    assert unpacked and all(e.package == UNPACKING for e in unpacked)
    assert unpacked[-1].done_bytes > 0.5 * torch_wheelhouse.torch.stat().st_size * WHEEL_TO_INSTALLED
    run = _check_forwards(rec, "unpack")
    assert run[-1].done >= 300e6  # hundreds of MB of torch, measured while uv was silent
    assert rec.model.line is not None
    # then uv's own count of installed packages ends it
    assert rec.seen[-1].mode == "packages" and rec.seen[-1].fraction == 1.0
    # A second install from the now warm cache: uv only links; the watch sees the env grow.
    env2 = _venv(tmp_path / "again")
    argv[argv.index("--python") + 1] = str(env2 / "bin" / "python")
    warm = _install(argv, "uv", env2, expected_mb, child_env)
    assert warm.seen[-1].mode == "packages" and warm.seen[-1].fraction == 1.0


@pytest.mark.slow
def test_pip_local_install_shows_bytes_rate_and_time_left(torch_wheelhouse, tmp_path):
    env = tmp_path / "env"
    runner.run([sys.executable, "-m", "venv", str(env)], timeout=300).raise_for_status("venv")
    expected_mb = torch_wheelhouse.torch.stat().st_size / 1e6 * WHEEL_TO_INSTALLED * 1.1
    argv = [str(env / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
            "--isolated", "--no-index", "--find-links", str(torch_wheelhouse.folder), torch_wheelhouse.requirement]
    rec = _install(argv, "pip", env, expected_mb, runner.clean_env())
    run = _check_forwards(rec, "unpack")
    assert run[-1].done >= 300e6
    assert len(run) >= 5  # pip unpacks for many seconds: the bar moved all along
    assert rec.seen[-1].mode == "packages" and rec.seen[-1].fraction == 1.0


def test_unpack_events_drive_the_model_with_bytes_rate_and_time_left():
    class Clock:
        t = 0.0

        def __call__(self) -> float:
            return self.t

    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("", 0, 10, unit="packages"))  # uv: "Resolved 10 packages"
    assert m.mode == "busy"
    m.feed(ProgressEvent(UNPACKING, 100, 1000, unit="unpacked"))
    assert m.mode == "unpack" and m.fraction == 0.1 and m.line == PackageLine("unpacking", "", 100, 1000)
    assert m.rate() is None and m.eta() is None  # under a second of it
    clock.t = 2.0
    m.feed(ProgressEvent(UNPACKING, 300, 1000, unit="unpacked"))
    # 200 bytes in the 2 s since the first sample (whose 100 were unpacked before it)
    assert m.done_total() == (300, 1000) and m.rate() == pytest.approx(100.0)
    assert m.eta() == pytest.approx(700 / 100)
    clock.t = 3.0  # a slow second: the estimate would jump up, the countdown goes on
    m.feed(ProgressEvent(UNPACKING, 310, 1000, unit="unpacked"))
    assert m.eta() == pytest.approx(700 / 100 - 1.0)
    m.feed(ProgressEvent("torch", 10, 10, unit="packages"))  # " + torch": uv is done
    assert m.mode == "packages" and m.fraction == 1.0


def test_the_watch_counts_new_bytes_in_the_env_and_in_uvs_unpack_folders(tmp_path):
    env, cache = tmp_path / "env", tmp_path / "cache"
    (env / "lib").mkdir(parents=True)
    (env / "lib" / "old.py").write_bytes(b"x" * 5000)  # there before: not counted
    (cache / "archive-v0" / "old").mkdir(parents=True)
    (cache / "archive-v0" / "old" / "f").write_bytes(b"x" * 9000)
    events = []
    w = UnpackWatch(env, 100_000, events.append, uv_cache=cache, interval_s=30).start()
    try:
        (cache / ".tmpABC" / "torch").mkdir(parents=True)
        (cache / ".tmpABC" / "torch" / "a.so").write_bytes(b"y" * 40_000)  # uv unzipping
        w.sample()
        assert events[-1] == ProgressEvent(UNPACKING, 40_000, 100_000, unit="unpacked")
        (cache / ".tmpABC").rename(cache / "archive-v0" / "new")  # done: moved into the archive
        w.sample()
        assert len(events) == 1  # the same bytes, not counted twice
        (env / "lib" / "torch").mkdir()
        (env / "lib" / "torch" / "a.so").write_bytes(b"y" * 120_000)  # linked into the env: more than thought
        w.sample()
        assert events[-1].done_bytes == 120_000 and events[-1].total_bytes >= 120_000
    finally:
        w.stop()


def test_uv_cache_dir_follows_uv():
    assert uv_cache_dir({"UV_CACHE_DIR": "/x/y"}) == Path("/x/y")
    if sys.platform != "win32":
        assert uv_cache_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/uv")
