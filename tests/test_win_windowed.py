"""The windowed app has no console: ``sys.stdout`` and ``sys.stderr`` are None.

That is so in PyInstaller's windowed exe (``torch-setup-gui.exe``, ``console=False``) and under
``pythonw.exe``. The masker wrapped and flushed them anyway, so the first print or warning raised
``AttributeError`` and closing the app ended in an "Unhandled exception" dialog. Now every print,
warning and traceback of such a run goes to a log file (``<TORCH_SETUP_HOME>/logs/gui-*.log``),
and the run ends with exit code 0.

The lane test starts the wizard with the lane's ``pythonw.exe`` under its Xvfb display, with a
print and a warning on the way (at the first paint, inside a Qt slot); on Linux the same run
starts with its stdout and stderr closed, which gives Python the same None streams.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from app.core.base.secrets import MaskingStream, forget_all, remember
from tests.conftest import REPO

# The windowed run: it records which streams it started with, then runs the real entry point
# with a print and a warning at the first paint. A watchdog ends a run that hangs (a slot that
# raised before it closed the window) with exit code 86, so the test fails at once, not at its timeout.
CHILD = r'''
import json, os, sys, threading, warnings
from pathlib import Path

Path(sys.argv[1]).write_text(json.dumps({"stdout": repr(sys.stdout), "stderr": repr(sys.stderr)}),
                             encoding="utf-8")
watchdog = threading.Timer(float(sys.argv[2]), os._exit, (86,))
watchdog.daemon = True
watchdog.start()
warnings.simplefilter("always")

import app.gui.app as gui_app

first_paint = gui_app.print_startup


def print_startup(**kw):
    print("a print from the windowed app: https://tom:Windowed-Secret-1@127.0.0.1/simple")
    warnings.warn("a warning from the windowed app", UserWarning, stacklevel=1)
    first_paint(**kw)


gui_app.print_startup = print_startup
from app.cli import main

sys.exit(main(sys.argv[3:]))  # and the interpreter's own flush of the streams at exit
'''

HANG_S = 60


def _windowed_command(script: Path, facts: Path, args: list[str]) -> list[str]:
    """The command that starts ``script`` as a windowed program."""
    if os.name == "nt":
        pythonw = Path(sys.executable).with_name("pythonw.exe")
        assert pythonw.is_file(), f"no pythonw.exe beside {sys.executable}"
        return [str(pythonw), str(script), str(facts), str(HANG_S), *args]
    # POSIX: Python sets sys.stdout / sys.stderr to None when their descriptors are closed at start
    return ["/bin/sh", "-c", 'exec "$0" "$@" >&- 2>&-', sys.executable, str(script), str(facts), str(HANG_S), *args]


def _no_std_handles() -> dict:
    """Popen's arguments for a child with no standard handles at all, as Explorer starts a windowed
    exe (a child of a console would otherwise get the console's handles, and Python real streams)."""
    if os.name != "nt":
        return {}  # (closed by the shell in _windowed_command)
    info = subprocess.STARTUPINFO(dwFlags=subprocess.STARTF_USESTDHANDLES)  # with NULL handles
    return {"startupinfo": info, "close_fds": True}


def _child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "TORCH_SETUP_REPORT_FIRST_PAINT")}
    env.update(TORCH_SETUP_HOME=str(home), PYTHONPATH=str(REPO), **extra)
    if os.name == "nt":
        env.pop("QT_QPA_PLATFORM", None)  # the real Windows platform plugin, on the lane's Xvfb display
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    return env


@pytest.mark.gui
@pytest.mark.timeout(300)
@pytest.mark.parametrize("args,extra", [
    (["gui", "--quit-after-show"], {}),
    ([], {"TORCH_SETUP_REPORT_FIRST_PAINT": "1"}),  # what a double-click on the windowed exe runs
], ids=["gui-quit-after-show", "no-arguments"])
def test_the_windowed_wizard_logs_prints_and_warnings_and_closes_cleanly(tmp_path, args, extra):
    home = tmp_path / "home"
    script, facts = tmp_path / "windowed.py", tmp_path / "facts.json"
    script.write_text(CHILD, encoding="utf-8")
    proc = subprocess.run(_windowed_command(script, facts, args), cwd=tmp_path, env=_child_env(home, **extra),
                          timeout=HANG_S + 60, **_no_std_handles())
    started = json.loads(facts.read_text(encoding="utf-8"))
    assert started == {"stdout": "None", "stderr": "None"}, f"not a windowed start: {started}"
    logs = sorted((home / "logs").glob("gui-*.log"))
    texts = {p.name: p.read_text(encoding="utf-8") for p in logs}
    assert proc.returncode != 86, f"the windowed app hung after the first paint; its log: {texts}"
    assert proc.returncode == 0, f"exit code {proc.returncode}; its log: {texts}"
    assert len(logs) == 1, f"one log for the run: {sorted(texts)}"
    log = next(iter(texts.values()))
    assert "a warning from the windowed app" in log and "UserWarning" in log
    assert "a print from the windowed app" in log and '"shown_at"' in log
    assert "Windowed-Secret-1" not in log and "https://***@127.0.0.1/simple" in log  # masked, as on a console
    everything = [p for p in home.rglob("*") if p.is_file()] + [p for p in tmp_path.iterdir() if p.is_file()]
    tracebacks = [p.name for p in everything if "Traceback" in p.read_text(encoding="utf-8", errors="replace")]
    assert not tracebacks, f"a traceback was written: {tracebacks}"


# ------------------------------------------------------------------ the parts, in this process
def test_the_masker_over_no_stream_drops_text_and_never_raises():
    forget_all()
    s = MaskingStream(None)
    assert s.write("a line\npart") == 11
    s.flush()
    assert not s.isatty()
    with pytest.raises(io.UnsupportedOperation):
        s.fileno()
    assert s.encoding == "utf-8"


def test_print_and_a_warning_over_no_stream_do_not_raise(monkeypatch):
    monkeypatch.setattr(sys, "stdout", MaskingStream(None))
    monkeypatch.setattr(sys, "stderr", MaskingStream(None))
    print("nowhere to go")
    # what warnings' default display does (pytest records the warnings themselves)
    print(warnings.formatwarning("nowhere to go either", UserWarning, __file__, 1), file=sys.stderr, end="")
    sys.stdout.flush()
    sys.stderr.flush()


def test_console_streams_route_the_missing_ones_to_one_log(tmp_path, monkeypatch):
    from app.core.base.streams import LogFile, console_streams

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path))
    real = io.StringIO()
    assert console_streams(real, real) == (real, real, None)
    out, err, log = console_streams(None, None)
    assert out is log and err is log and isinstance(log, LogFile)
    assert not list(tmp_path.rglob("*.log")), "nothing written: no file"
    forget_all()
    remember("Log-Secret-22")
    masked_out, masked_err = MaskingStream(out), MaskingStream(err)
    masked_out.write("first Log-Secret-22\n")
    masked_err.write("second, from stderr\n")
    log.close()
    assert log.path is not None and log.path.parent == tmp_path / "logs" and log.path.name.startswith("gui-")
    assert log.path.read_text(encoding="utf-8") == "first ***\nsecond, from stderr\n"
    out2, err2, log2 = console_streams(real, None)
    assert out2 is real and err2 is log2
    log2.close()
    forget_all()


def test_a_log_that_cannot_be_made_loses_its_text_quietly(tmp_path, monkeypatch):
    from app.core.base.streams import LogFile

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the home folder would be", encoding="utf-8")
    monkeypatch.setenv("TORCH_SETUP_HOME", str(blocker))
    log = LogFile()
    assert log.write("lost\n") == 5
    log.flush()
    log.close()
    assert log.path is None
