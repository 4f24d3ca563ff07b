"""The one subprocess runner: streaming, decoding, timeouts, cancel of whole trees, logs."""
from __future__ import annotations

import os
import sys
import threading
import time

import psutil
import pytest

from app.core.errors import Cancelled, UserError
from app.core.runner import CancelToken, _LineSplitter, clean_env, relevant_lines, run

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
