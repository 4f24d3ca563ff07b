"""The env lock excludes a second run on Windows as on Linux (app.core.base.locks).

On Windows ``msvcrt.locking`` locks the byte at the file's current position: a lock file opened
for appending, once the first holder had written who it is, made every later run lock another
byte and "acquire" the lock too. These run on both OSes (the Windows lane runs them under Wine,
where a refusal also comes as an OSError with errno 0): a holder in another process is refused
to every later run, in-process and in another process alike, each naming the holder's PID.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.base import locks
from app.core.base.errors import BadInput
from app.core.base.text import render

REPO = Path(__file__).resolve().parents[1]

_TRY = textwrap.dedent("""
    import sys
    from app.core.base import locks
    from app.core.base.errors import BadInput
    from app.core.base.text import render
    try:
        lock = locks.acquire(sys.argv[1], "repair")
    except BadInput as exc:
        print(render(exc.text()))
        sys.exit(2)
    print("ACQUIRED")
    lock.release()
""")


def _try_elsewhere(env: Path) -> subprocess.CompletedProcess[str]:
    """Another process trying to take the lock, the way a second run would."""
    return subprocess.run([sys.executable, "-c", _TRY, str(env)], cwd=REPO, capture_output=True, text=True,
                          encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, "the holder process ended before it took the lock"
        assert time.monotonic() < deadline, "the holder process did not take the lock in time"
        time.sleep(0.05)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A process holding the lock of ``tmp_path/env`` (it has written who it is) until killed."""
    env, ready = tmp_path / "env", tmp_path / "ready"
    code = textwrap.dedent(f"""
        import pathlib, time
        from app.core.base import locks
        lock = locks.acquire({str(env)!r}, "install")
        pathlib.Path({str(ready)!r}).write_text("x", encoding="utf-8")
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        _wait_for(ready, proc)
        yield env, proc
    finally:
        proc.kill()
        proc.wait()


def test_a_holder_in_another_process_is_refused_to_every_later_run_naming_it(holder):
    env, proc = holder
    for _ in range(2):  # the bug: the first refusal moved nothing, the second run got another byte
        second = _try_elsewhere(env)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "ACQUIRED" not in second.stdout
        assert f"PID {proc.pid} (install" in second.stdout, second.stdout
    with pytest.raises(BadInput) as err:
        locks.acquire(env, "repair")
    assert f"PID {proc.pid} (install" in render(err.value.text())
    found = locks.holder_of(env)
    assert found is not None and found.pid == proc.pid and found.purpose == "install"


def test_a_released_lock_is_free_for_the_next_run_and_names_nobody(tmp_path):
    env = tmp_path / "env"
    with locks.env_lock(env, "install"):
        assert _try_elsewhere(env).returncode == 2
    assert locks.holder_of(env) is None
    again = _try_elsewhere(env)
    assert again.returncode == 0 and "ACQUIRED" in again.stdout, again.stdout + again.stderr
    assert locks.holder_of(env) is None


def test_in_one_process_a_second_take_is_refused_while_the_first_holds(tmp_path):
    env = tmp_path / "env"
    first = locks.acquire(env, "install")
    try:
        for _ in range(3):
            with pytest.raises(BadInput, match="install"):
                locks.acquire(env, "upgrade")
    finally:
        first.release()
    with locks.env_lock(env, "upgrade"):
        pass


def test_the_holders_record_is_readable_while_the_lock_is_held(holder):
    """Windows locks are mandatory: the record must not sit in the locked byte."""
    env, proc = holder
    record = locks.holder_file_for(locks.lock_file_for(env))
    assert f'"pid": {proc.pid}' in record.read_text(encoding="utf-8")


def test_a_child_of_the_holder_does_not_keep_the_lock_after_the_holder_died(tmp_path):
    """Installers started by a run must not inherit its lock: when the run is gone, so is the lock."""
    env, ready = tmp_path / "env", tmp_path / "ready"
    code = textwrap.dedent(f"""
        import pathlib, subprocess, sys
        from app.core.base import locks
        lock = locks.acquire({str(env)!r}, "install")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        pathlib.Path({str(ready)!r}).write_text(str(child.pid), encoding="utf-8")
    """)  # exits at once, leaving the child running
    parent = subprocess.run([sys.executable, "-c", code], cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)
    assert parent.returncode == 0
    import psutil

    child = psutil.Process(int(ready.read_text(encoding="utf-8")))
    try:
        assert child.is_running()
        after = _try_elsewhere(env)
        assert after.returncode == 0 and "ACQUIRED" in after.stdout, after.stdout + after.stderr
    finally:
        child.kill()
        child.wait(30)
