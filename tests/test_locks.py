"""One lock per environment path (app.core.base.locks): a second holder is refused by name, across
processes too, and a dead holder's lock is gone with it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.core.base import locks
from app.core.base.errors import BadInput

REPO = Path(__file__).resolve().parents[1]


def test_second_lock_in_the_same_process_is_refused_naming_the_holder(tmp_path):
    env = tmp_path / "env"
    with locks.env_lock(env, "install") as lock:
        assert lock.held
        with pytest.raises(BadInput) as err:
            locks.acquire(env, "repair")
        assert "install" in err.value.text() and "PID" in err.value.text()
        assert err.value.exit_code == 2
        holder = locks.holder_of(env)
        assert holder is not None and holder.purpose == "install"
    assert locks.holder_of(env) is None
    with locks.env_lock(env, "again"):
        pass


def test_the_same_folder_by_another_spelling_is_the_same_lock(tmp_path):
    (tmp_path / "a").mkdir()
    with locks.env_lock(tmp_path / "a", "install"), pytest.raises(BadInput):
        locks.acquire(tmp_path / "a" / ".." / "a", "install")


def test_other_paths_do_not_conflict(tmp_path):
    with locks.env_lock(tmp_path / "one", "install"), locks.env_lock(tmp_path / "two", "install"):
        pass


def test_a_lock_held_by_another_process_is_refused_and_dies_with_it(tmp_path):
    env = tmp_path / "env"
    ready = tmp_path / "ready"
    code = textwrap.dedent(f"""
        import pathlib, time
        from app.core.base import locks
        lock = locks.acquire({str(env)!r}, "install")
        pathlib.Path({str(ready)!r}).write_text("x")
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(BadInput) as err:
            locks.acquire(env, "install")
        assert f"PID {proc.pid}" in err.value.text()
    finally:
        proc.kill()
        proc.wait()
    with locks.env_lock(env, "install"):  # the OS dropped the dead process's lock
        pass


def test_nothing_is_written_next_to_the_environment(tmp_path):
    env = tmp_path / "env"
    with locks.env_lock(env, "install"):
        assert list(tmp_path.iterdir()) == []
