"""benchmarks/speedtest_screens.py: the Speed test page after a real CPU speed test, with other
programs burning the CPU beside it (issue 16, must-show 3)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from app.core.measure.machine_load import LoadWatch

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "speedtest_screens.py"


def _script():
    spec = importlib.util.spec_from_file_location("speedtest_screens", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE  # (reaped by its new parent, or not)
    except psutil.Error:
        return False


@pytest.mark.skipif(os.name == "nt", reason="the burners are started by sh")
def test_the_burners_are_other_programs_to_the_speed_test():
    """The speed test counts its own process tree as its own work; the burners must not be in
    it (a child in a session of its own still is), or a busy machine reads as quiet."""
    burning = _script().burners(2, 20)
    pids = [p.pid for p in burning]
    try:
        assert len(pids) == 2 and all(p.is_running() for p in burning)
        ours = {p.pid for p in psutil.Process().children(recursive=True)}
        assert not ours & set(pids)
        with LoadWatch(interval_s=0.2) as watch:
            time.sleep(1.5)
        load = watch.summary()
        assert load is not None and load.busy, load
    finally:
        _script().stop(burning)
    deadline = time.monotonic() + 5
    while any(_running(p) for p in pids):
        assert time.monotonic() < deadline, "a burner outlived stop()"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="the burners are started by sh")
def test_a_speed_test_beside_burning_programs_says_the_machine_was_busy(torch_env, tmp_path):
    _env, py = torch_env
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, str(SCRIPT), "--env", str(py), "--out", str(tmp_path), "--name", "busy",
                          "--burn", "2", "--sizes", "64", "128", "--budget-s", "3"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "status done" in out.stdout
    assert "The machine was busy: other programs used" in out.stdout, out.stdout
    assert "The machine was quiet" not in out.stdout
    shots = sorted(p.name for p in tmp_path.glob("busy-*.png"))
    assert shots == ["busy-en.png", "busy-zh_CN.png"]
    assert all((tmp_path / s).stat().st_size > 10_000 for s in shots)
