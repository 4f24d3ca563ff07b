"""The runner on Windows (and its portable parts on POSIX too): no console windows, whole trees
ended through a Job Object, output pipes held by a leftover process, the frozen app's DLL search.

Windows-only tests run under the Windows lane (``scripts/wine-lane run python -m pytest ...``);
the rest run on both.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from app.core.proc.runner import CancelToken, clean_env, run

PY = sys.executable
REPO = Path(__file__).resolve().parents[1]
WINDOWS = os.name == "nt"
windows_only = pytest.mark.skipif(not WINDOWS, reason="Windows behaviour (runs in the Windows lane)")

CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_BREAKAWAY_FROM_JOB = 0x01000000


def _dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not _dead(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _dead(pid)


def _end(pid: int) -> None:
    try:
        psutil.Process(pid).kill()
    except psutil.Error:
        pass


def _pid_from(res) -> int:
    words = res.stdout.split()
    assert words and words[0].isdigit(), (res.describe(), res.stdout, res.stderr)
    return int(words[0])


# --------------------------------------------------------------------------- 1. no console window

_CONSOLE_PROBE = r'''
import ctypes, json, os, subprocess, sys, threading, time
from ctypes import wintypes
sys.path.insert(0, sys.argv[2])
import psutil
from app.core.proc.runner import run

user32 = ctypes.WinDLL("user32", use_last_error=True)
PROC = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.HWND, wintypes.LPARAM)
user32.EnumWindows.argtypes = [PROC, wintypes.LPARAM]
user32.GetClassNameW.argtypes = [wintypes.HWND, wintypes.LPWSTR, ctypes.c_int]
user32.GetWindowTextW.argtypes = [wintypes.HWND, wintypes.LPWSTR, ctypes.c_int]
user32.GetWindowThreadProcessId.argtypes = [wintypes.HWND, ctypes.POINTER(wintypes.DWORD)]
user32.IsWindowVisible.argtypes = [wintypes.HWND]
CONSOLE_CLASSES = ("WineConsoleClass", "ConsoleWindowClass")


def console_windows(ours):
    found = []

    def each(hwnd, _):
        cls = ctypes.create_unicode_buffer(256)
        user32.GetClassNameW(hwnd, cls, 256)
        if cls.value in CONSOLE_CLASSES:
            pid = wintypes.DWORD()
            user32.GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
            title = ctypes.create_unicode_buffer(512)
            user32.GetWindowTextW(hwnd, title, 512)
            if pid.value in ours:  # a window of another run sharing this desktop is not ours
                found.append({"class": cls.value, "title": title.value, "pid": pid.value,
                              "visible": bool(user32.IsWindowVisible(hwnd))})
        return True

    user32.EnumWindows(PROC(each), 0)
    return found


def watch(threads, me):
    """The console windows of our descendants while any of ``threads`` runs."""
    seen, polls, children_seen = [], 0, 0
    while any(t.is_alive() for t in threads):
        time.sleep(0.2)
        try:
            ours = {p.pid for p in me.children(recursive=True)}
        except psutil.Error:
            continue
        children_seen = max(children_seen, len(ours))
        seen += [w for w in console_windows(ours) if w not in seen]
        polls += 1
    return seen, polls, children_seen


def control():
    """A console child started the way the runner used to (its own process group, nothing
    else): it gets a console window wherever this desktop can show one."""
    t = threading.Thread(target=subprocess.run, args=(["cmd", "/c", "ping", "-n", "3", "127.0.0.1"],),
                         kwargs={"capture_output": True, "stdin": subprocess.DEVNULL, "creationflags": 0x200})
    t.start()
    return watch([t], psutil.Process())[0]


def probe():
    python = os.path.join(os.path.dirname(sys.executable), "python.exe")
    commands = [["cmd", "/c", "ping", "-n", "4", "127.0.0.1"],
                [python, "-c", "import subprocess, sys, time; "
                               "subprocess.run(['cmd', '/c', 'ping', '-n', '3', '127.0.0.1']); time.sleep(1)"]]
    results = {}
    threads = [threading.Thread(target=lambda i=i, c=c: results.__setitem__(i, run(c, timeout=60).describe()))
               for i, c in enumerate(commands)]
    control_windows = control()
    for t in threads:
        t.start()
    seen, polls, children_seen = watch(threads, psutil.Process())
    return {"windows": seen, "polls": polls, "children_seen": children_seen, "control": control_windows,
            "results": [results.get(i) for i in range(len(commands))], "gui": sys.executable}


try:
    report = probe()
except BaseException:  # pythonw has no stderr: the report carries the error
    import traceback
    report = {"error": traceback.format_exc()}
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    json.dump(report, fh)
'''


@windows_only
def test_no_console_window_for_children_of_the_windowed_app(tmp_path):
    """Started from pythonw.exe (what the windowed app is), a console program and the console
    programs it starts itself get no console window (closing one would kill uv mid-install)."""
    pythonw = Path(PY).with_name("pythonw.exe")
    assert pythonw.is_file(), f"no pythonw.exe beside {PY}"
    script = tmp_path / "console_probe.py"
    script.write_text(_CONSOLE_PROBE, encoding="utf-8")
    report = tmp_path / "report.json"
    subprocess.run([str(pythonw), str(script), str(report), str(REPO)], timeout=120, check=False)
    assert report.is_file(), "the windowed probe wrote no report"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert "error" not in data, data.get("error")
    if not data["control"]:  # e.g. a Wine session that a run without a display started
        pytest.skip("this desktop shows no console window even for a child started the old way")
    assert data["results"] == ["exit code 0", "exit code 0"], data
    assert data["polls"] > 2 and data["children_seen"] >= 2, data  # we looked while they ran
    assert data["windows"] == [], f"console windows appeared: {data['windows']}"


# --------------------------------------------------------------------------- 2. whole trees end

_ORPHANING_CHILD = textwrap.dedent("""
    import subprocess, sys, time
    # a middle process starts the grandchild and exits at once: nothing links the grandchild to
    # this process any more (its parent id names a process that has gone)
    mid = subprocess.run([sys.executable, "-c",
        "import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(90)'],"
        " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"],
        capture_output=True, text=True)
    print(mid.stdout.strip(), flush=True)
    time.sleep(90)
""")


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_cancel_and_timeout_end_a_grandchild_whose_parent_has_exited(how):
    token = CancelToken()
    pids: list[int] = []

    def on_line(stream, line):
        if stream == "stdout" and line.strip().isdigit():
            pids.append(int(line))
            if how == "cancel":
                token.cancel()

    res = run([PY, "-c", _ORPHANING_CHILD], cancel=token, on_line=on_line, timeout=60 if how == "cancel" else 8)
    assert res.cancelled if how == "cancel" else res.timed_out, res.describe()
    assert pids, f"the grandchild never started: {res.stderr}"
    try:
        assert _wait_dead(pids[0]), "the grandchild outlived the cancelled run"
    finally:
        _end(pids[0])


@windows_only
def test_a_program_that_breaks_away_from_the_job_still_starts_and_is_ended_on_cancel():
    """A tool may start a helper with CREATE_BREAKAWAY_FROM_JOB: it must not be refused its start,
    and cancel still ends it (the runner looks for descendants as well as ending the job)."""
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(90)'], creationflags={CREATE_BREAKAWAY_FROM_JOB},"
            " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(90)\n")
    token = CancelToken()
    pids: list[int] = []

    def on_line(stream, line):
        if stream == "stdout" and line.strip().isdigit():
            pids.append(int(line))
            token.cancel()

    res = run([PY, "-c", code], cancel=token, on_line=on_line, timeout=60)
    assert pids, f"the breakaway start was refused: {res.stderr}"
    try:
        assert res.cancelled
        assert _wait_dead(pids[0]), "the helper that left the job outlived the cancelled run"
    finally:
        _end(pids[0])


@windows_only
def test_what_the_command_left_running_ends_with_the_run_on_windows():
    """The job is the run's: a helper left behind (not even holding the output) ends when the
    run ends, so it cannot keep files of an env open (a rollback could not delete them)."""
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(90)'],"
            " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(p.pid, flush=True)\n")
    res = run([PY, "-c", code], timeout=60)
    gc = _pid_from(res)
    try:
        assert res.ok, res.describe()
        assert _wait_dead(gc), "the helper outlived the run"
    finally:
        _end(gc)


# --------------------------------------------------------------------------- 3. held output pipes

def _escaping_holder() -> str:
    """A child whose grandchild leaves the child's process group (POSIX: its own session;
    Windows: out of the job) and keeps the output open for 40 s; the child exits at once."""
    escape = f"creationflags={CREATE_BREAKAWAY_FROM_JOB | CREATE_NEW_PROCESS_GROUP}" if WINDOWS \
        else "start_new_session=True"
    return ("import subprocess, sys\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(40)'], {escape})\n"
            "print(p.pid, flush=True)\n")


@pytest.mark.timeout(120)
def test_a_grandchild_outside_the_group_holding_the_output_does_not_hang_the_run(tmp_path):
    log = tmp_path / "run.log"
    res = run([PY, "-c", _escaping_holder()], timeout=60, log_path=log)
    gc = _pid_from(res)
    try:
        assert not _dead(gc), "the run waited for the process holding its output to end"
        assert res.ok, res.describe()
        assert "no longer read" in log.read_text(encoding="utf-8")
    finally:
        _end(gc)


@pytest.mark.timeout(120)
def test_leave_running_keeps_what_the_command_started():
    """A command that opens something meant to stay (a terminal window) returns, and what it
    started lives on, although it inherited the output."""
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(40)'])\n"
            "print(p.pid, flush=True)\n")
    res = run([PY, "-c", code], timeout=60, leave_running=True)
    gc = _pid_from(res)
    try:
        assert res.ok, res.describe()
        time.sleep(0.5)
        assert not _dead(gc), "what the command started was ended"
    finally:
        _end(gc)


# --------------------------------------------------------------------------- 4. the frozen app

def test_clean_env_drops_the_bundle_folders_from_path_when_frozen(monkeypatch, tmp_path):
    bundle = tmp_path / "_MEI12345"
    user = tmp_path / "Tom Smith" / "bin"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    path = os.pathsep.join([str(bundle), str(bundle / "PySide6"), str(user), str(tmp_path / "_MEI12345x")])
    env = clean_env(base={"PATH": path})
    assert env["PATH"].split(os.pathsep) == [str(user), str(tmp_path / "_MEI12345x")]
    monkeypatch.setattr(sys, "frozen", False)
    assert clean_env(base={"PATH": path})["PATH"] == path  # from source nothing is taken away


_FROZEN_PROBE = r'''
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[2])
bundle = sys.argv[3]
k32 = ctypes.WinDLL("kernel32", use_last_error=True)
k32.SetDllDirectoryW.argtypes = [ctypes.c_wchar_p]
k32.GetDllDirectoryW.argtypes = [ctypes.c_uint32, ctypes.c_wchar_p]


def dll_directory():
    buf = ctypes.create_unicode_buffer(32768)
    return buf.value if k32.GetDllDirectoryW(len(buf), buf) else ""


# what PyInstaller's bootloader and a run-time hook do in the frozen app
sys.frozen, sys._MEIPASS = True, bundle
k32.SetDllDirectoryW(bundle)
os.environ["PATH"] = os.pathsep.join([bundle, os.path.join(bundle, "PySide6"), os.environ.get("PATH", "")])
at_create = []
# observe the process at the moment the child is created (an audit hook sees CreateProcess)
sys.addaudithook(lambda event, args: at_create.append(dll_directory()) if event == "_winapi.CreateProcess" else None)
from app.core.proc.runner import run
res = run([sys.executable, "-c", "import os; print(os.environ['PATH'])"], timeout=60)
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    json.dump({"result": res.describe(), "child_path": res.stdout.strip(), "at_create": at_create,
               "after": dll_directory()}, fh)
'''


@windows_only
def test_a_child_of_the_frozen_app_inherits_neither_its_dll_directory_nor_its_bundle_path(tmp_path):
    bundle = tmp_path / "_MEI4242"
    bundle.mkdir()
    script = tmp_path / "frozen_probe.py"
    script.write_text(_FROZEN_PROBE, encoding="utf-8")
    report = tmp_path / "report.json"
    out = subprocess.run([PY, str(script), str(report), str(REPO), str(bundle)], capture_output=True, text=True,
                         timeout=120)
    assert report.is_file(), out.stdout + out.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["result"] == "exit code 0", data
    assert data["at_create"] == [""], f"the child was created with the DLL directory {data['at_create']}"
    entries = [os.path.normcase(e) for e in data["child_path"].split(os.pathsep)]
    assert not [e for e in entries if e.startswith(os.path.normcase(str(bundle)))], data["child_path"]
    assert os.path.normcase(data["after"]) == os.path.normcase(str(bundle)), "the app's own DLL search was not restored"
