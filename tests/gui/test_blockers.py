"""Issue 28's blockers, each walked through the real wizard with clicks and key presses.

0. A worker that outlives its page (the user goes Back, closes or the window is destroyed while
   detection still reports) never crashes the wizard: run in a child pytest, so a segfault fails
   the test here instead of killing the run.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.core.events import LogEvent
from app.gui.state import WizardState

pytestmark = pytest.mark.gui

Button = QWizard.WizardButton
CHILD = "TSA_BLOCKERS_CHILD"


def _click(qtbot, wiz, which) -> None:
    button = wiz.button(which)
    assert button.isVisible() and button.isEnabled(), f"{which} is not there to click"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("torch-setup-")]


# ------------------------------------------------------------------ 0. a worker outlives its page
FLOOD_EVENTS = 60_000  # a detection that reports this many lines as fast as it can, whatever cancel says


def _flooding_scan(started: threading.Event):
    def scan(on_event, cancel, _session):
        started.set()
        for i in range(FLOOD_EVENTS):  # a core call blocked where a cancel cannot reach it at once
            on_event(LogEvent(f"probe line {i}"))
        cancel.raise_if_cancelled()
        return None

    return scan


@pytest.mark.skipif(os.environ.get(CHILD) != "outlive", reason="run in a child process by "
                    "test_a_worker_that_outlives_its_page_never_crashes_the_wizard")
def test_child_worker_outlives_its_page(qtbot, monkeypatch):
    from app.gui.pages import system
    from app.gui.wizard import SetupWizard

    rounds = int(os.environ.get("TSA_BLOCKERS_ROUNDS", "10"))
    for r in range(rounds):
        started = threading.Event()
        monkeypatch.setattr(system, "scan", _flooding_scan(started))
        wiz = SetupWizard(state=WizardState(), lang="en")  # detection starts after its first paint
        wiz.show()
        qtbot.waitUntil(started.is_set, timeout=10000)
        _click(qtbot, wiz, Button.NextButton)  # to "Your system" while detection still reports
        qtbot.waitUntil(lambda w=wiz: w.currentPage() is w.system_page)
        _click(qtbot, wiz, Button.BackButton)  # and back, detection still going
        if r % 2:  # the window's Cancel: closes once the work it cancelled has ended
            _click(qtbot, wiz, Button.CancelButton)
        wiz.deleteLater()  # the window goes, its pages with it, while the worker may still report
        qtbot.wait(20)
        qtbot.waitUntil(lambda: not _worker_threads(), timeout=60000)
        qtbot.wait(20)  # whatever the workers queued is delivered (or dropped) now
    print(f"{rounds} rounds, no crash")


def test_a_worker_that_outlives_its_page_never_crashes_the_wizard():
    """Next, Back, Cancel and the window destroyed while detection floods the GUI thread with
    events, ten times over: no segfault (the worker's thread emits only through an object that
    outlives it), nothing raised in a slot."""
    env = {**os.environ, CHILD: "outlive", "TSA_BLOCKERS_ROUNDS": "10", "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-W", "error",
                           f"{__file__}::test_child_worker_outlives_its_page"], env=env, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=280)
    out = proc.stdout + proc.stderr
    assert "Fatal Python error" not in out and proc.returncode == 0, out[-4000:]
    assert "10 rounds, no crash" in out and "1 passed" in out, out[-4000:]
