"""The one subprocess runner: streaming, decoding, timeouts, cancel of whole trees, logs."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import psutil
import pytest

from app.core.base.errors import Cancelled, UserError
from app.core.proc.runner import CancelToken, _LineSplitter, clean_env, relevant_lines, run

PY = sys.executable


def test_streams_lines_in_order_to_callback():
    seen = []
    res = run([PY, "-c", "import sys\nfor i in range(5): print(i, flush=True)\nprint('err', file=sys.stderr)"],
              on_line=lambda s, line: seen.append((s, line)))
    assert res.ok
    assert [line for s, line in seen if s == "stdout"] == ["0", "1", "2", "3", "4"]
    assert ("stderr", "err") in seen
    assert res.stdout.splitlines() == ["0", "1", "2", "3", "4"]


def test_utf8_split_across_reads_stays_whole():
    sp = _LineSplitter()
    data = "路径 with spaces ✓\n".encode()
    out = []
    for i in range(len(data)):
        out += sp.feed(data[i:i + 1])
    out += sp.close()
    assert out == ["路径 with spaces ✓"]


def test_carriage_return_progress_lines():
    sp = _LineSplitter()
    out = sp.feed(b"10%\r20%\r") + sp.feed(b"\n30%\r\nend") + sp.close()
    assert out == ["10%", "20%", "30%", "end"]  # a CRLF split across reads is one line end


def test_missing_program_is_a_result_not_an_exception():
    res = run(["/nonexistent/tool-xyz", "--version"])
    assert not res.ok and res.returncode is None
    assert "not found" in res.start_error


def test_timeout_kills_and_reports():
    t0 = time.monotonic()
    res = run([PY, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert res.timed_out and not res.ok
    assert time.monotonic() - t0 < 5
    assert "timed out" in res.describe()


def test_cancel_kills_the_whole_tree():
    token = CancelToken()
    os.environ.get("TMPDIR", "/tmp")
    code = (
        "import subprocess, sys, time\n"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(c.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    pids = []

    def on_line(stream, line):
        if stream == "stdout" and line.strip().isdigit():
            pids.append(int(line))
            token.cancel()

    t0 = time.monotonic()
    res = run([PY, "-c", code], cancel=token, on_line=on_line, timeout=30)
    assert res.cancelled and time.monotonic() - t0 < 10
    assert pids, "grandchild never started"
    time.sleep(0.2)
    assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
    with pytest.raises(Cancelled):
        res.raise_for_status("x")


def test_cancel_from_another_thread_is_prompt():
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    t0 = time.monotonic()
    res = run([PY, "-c", "import time; time.sleep(30)"], cancel=token)
    assert res.cancelled
    assert time.monotonic() - t0 < 5


def test_log_file_keeps_everything_and_error_names_it(tmp_path):
    log = tmp_path / "sub dir" / "run.log"
    res = run([PY, "-c", "import sys\nfor i in range(50): print('line', i)\nprint('ERROR: boom', file=sys.stderr)\nsys.exit(3)"],
              log_path=log)
    text = log.read_text()
    assert "line 0" in text and "line 49" in text and "ERROR: boom" in text and "[exit 3" in text
    with pytest.raises(UserError) as ei:
        res.raise_for_status("Installing failed", hint="try again")
    err = ei.value
    assert err.log_path == log
    assert any("ERROR: boom" in line for line in err.lines)
    assert "exit code 3" in err.text()


def test_clean_env_drops_leaks_and_sets_utf8(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/evil")
    monkeypatch.setenv("PIP_USER", "1")
    env = clean_env({"EXTRA": "1"})
    assert "PYTHONPATH" not in env and "PIP_USER" not in env
    assert env["PYTHONIOENCODING"] == "utf-8" and env["EXTRA"] == "1"


def test_clean_env_restores_library_path_when_frozen(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    env = clean_env(base={"LD_LIBRARY_PATH": "/bundle/_internal", "LD_LIBRARY_PATH_ORIG": "/usr/local/cuda/lib64"})
    assert env["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64"
    env = clean_env(base={"LD_LIBRARY_PATH": "/bundle/_internal"})
    assert "LD_LIBRARY_PATH" not in env


def test_arguments_are_never_shell_interpreted(tmp_path):
    nasty = tmp_path / "a b; touch pwned $(id) 'q'"
    res = run([PY, "-c", "import sys; print(sys.argv[1])", str(nasty)])
    assert res.stdout.strip() == str(nasty)
    assert not (tmp_path / "pwned").exists()


def test_relevant_lines_prefers_errors():
    lines = [f"ok {i}" for i in range(30)] + ["ERROR: No matching distribution found for torch"] + ["tail"]
    assert relevant_lines(lines, 3) == ["ERROR: No matching distribution found for torch"]
    assert relevant_lines(["a", "b", "c"], 2) == ["b", "c"]


# --------------------------------------------------------------------------- trees that resist, output that never ends

_STUBBORN = r"""
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
# a grandchild that also ignores SIGTERM, in a session of its own (out of our process group)
gc = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"],
    start_new_session=True)
print(os.getpid(), gc.pid, flush=True)
time.sleep(120)
"""


def _pids_from(res) -> list[int]:
    return [int(x) for x in res.stdout.split()[:2]]


def _dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_tree_that_ignores_sigterm_is_killed_after_the_grace_period(how):
    token = CancelToken()
    seen = []

    def on_line(stream, line):
        seen.append(line)
        if how == "cancel":
            token.cancel()

    t0 = time.monotonic()
    res = run([PY, "-c", _STUBBORN], timeout=2.0 if how == "timeout" else 60, cancel=token, on_line=on_line)
    took = time.monotonic() - t0
    assert (res.timed_out if how == "timeout" else res.cancelled), res.describe()
    child, grandchild = _pids_from(res)
    # SIGTERM is ignored by both: they are SIGKILLed after the grace period (3 s), not left running
    assert took < 12, took
    deadline = time.monotonic() + 5
    while not (_dead(child) and _dead(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _dead(child) and _dead(grandchild), "a process of the tree survived"


def test_children_still_running_at_interpreter_exit_are_killed(tmp_path):
    """A thread that was given up on (a detection job past its deadline) must not leave its
    child running once the assistant exits."""
    code = (
        "import threading, time, sys\n"
        "from app.core.proc.runner import run\n"
        f"t = threading.Thread(target=run, args=([sys.executable, '-c', {_STUBBORN!r}],),\n"
        "                      kwargs={'timeout': 300, 'on_line': lambda s, l: print(l, flush=True)}, daemon=True)\n"
        "t.start(); time.sleep(1.5)\n"
    )
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pids = [int(x) for x in out.stdout.split()[:2]]
    assert len(pids) == 2, out.stdout + out.stderr
    deadline = time.monotonic() + 5
    while not all(_dead(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_dead(p) for p in pids), "children outlived the interpreter"


def test_output_that_never_ends_is_bounded_in_memory_and_in_the_log(tmp_path, monkeypatch):
    import app.core.proc.runner as runner_mod

    monkeypatch.setattr(runner_mod, "LOG_LIMIT_BYTES", 200_000)
    log = tmp_path / "run.log"
    endless = "import sys\nwhile True: sys.stdout.write('x' * 1000 + '\\n')"
    res = run([PY, "-c", endless], timeout=2.0, log_path=log, capture_limit=100_000)
    assert res.timed_out
    assert res.truncated
    assert len(res.stdout) <= 100_000
    assert res.stdout.endswith("x" * 1000)  # the LAST lines are kept
    text = log.read_text()
    assert len(text.encode()) < 200_000 + 2_000
    assert "[log truncated: it reached" in text
    assert "[exit " in text and "[timed out: stopping the process tree]" in text


def test_a_line_that_never_ends_comes_in_bounded_pieces():
    no_newline = "import sys\nfor _ in range(40): sys.stdout.write('y' * 100_000)\nsys.stdout.flush()"
    res = run([PY, "-c", no_newline], timeout=60, capture_limit=1_500_000)
    assert res.ok
    pieces = res.stdout.split("\n")
    assert max(len(p) for p in pieces) <= runner_mod_max_line()
    assert res.truncated and len(res.stdout) <= 1_500_000 + 10
    assert all(len(t) <= 2001 for t in res.tail)  # the tail is for reading: each line shortened


def runner_mod_max_line() -> int:
    from app.core.proc.runner import MAX_LINE_CHARS

    return MAX_LINE_CHARS


def test_splitter_cuts_a_long_run_without_line_end():
    sp = _LineSplitter(max_line=10)
    out = sp.feed(b"a" * 25) + sp.feed(b"b\n") + sp.close()
    assert out == ["a" * 10, "a" * 10, "aaaaab"]


def test_a_grandchild_holding_the_output_open_does_not_hang_the_run():
    # the child exits at once; its background grandchild (same process group) keeps stdout open
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(p.pid, flush=True)\n")
    t0 = time.monotonic()
    res = run([PY, "-c", code], timeout=30)
    assert res.ok and time.monotonic() - t0 < 10
    gc = int(res.stdout.split()[0])
    deadline = time.monotonic() + 5
    while not _dead(gc) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _dead(gc)


@pytest.mark.skipif(os.name == "nt", reason="a bash script stands in for nvidia-smi")
def test_detect_with_an_nvidia_smi_that_ignores_sigterm_leaves_no_process(tmp_path):
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    nap = f"300.{os.getpid()}{time.monotonic_ns() % 10000}"  # a sleep no other process has
    fake.write_text(f"#!/bin/bash\n# {tmp_path}\ntrap '' TERM\nsleep {nap} &\nwait\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run([PY, "-m", "app.cli", "detect", "--timeout", "1", "--json"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    deadline = time.monotonic() + 5
    left: list[int] = []
    while time.monotonic() < deadline:
        left = [p.pid for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] and any(str(tmp_path) in part for part in p.info["cmdline"])]
        left += [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", nap]]
        if not left:
            break
        time.sleep(0.1)
    assert not left, "nvidia-smi (or its child) outlived the assistant"

