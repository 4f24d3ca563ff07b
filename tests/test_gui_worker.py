"""The worker bridge: results and events arrive on the GUI thread; cancel reaches the core."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import QThread  # noqa: E402

from app.core.errors import UserError  # noqa: E402
from app.core.events import LogEvent  # noqa: E402
from app.gui.worker import Task  # noqa: E402


def test_events_and_result_arrive_on_gui_thread(qtbot):
    gui_thread = QThread.currentThread()
    seen = []

    def fn(on_event, cancel):
        assert threading.current_thread() is not threading.main_thread()
        for i in range(3):
            on_event(LogEvent(f"line {i}"))
        return 42

    task = Task(fn)
    task.event.connect(lambda e: seen.append((e.text, QThread.currentThread() is gui_thread)))
    with qtbot.waitSignal(task.succeeded, timeout=5000) as blocker:
        task.start()
    assert blocker.args == [42]
    qtbot.waitUntil(lambda: len(seen) == 3)
    assert all(on_gui for _, on_gui in seen)


def test_cancel_reaches_core_and_emits_cancelled(qtbot):
    def fn(on_event, cancel):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            cancel.raise_if_cancelled()
            time.sleep(0.01)
        return "never"

    task = Task(fn)
    with qtbot.waitSignal(task.cancelled, timeout=5000):
        task.start()
        task.cancel()
    assert not task.is_running()


def test_user_error_and_bugs_become_failed(qtbot):
    task = Task(lambda e, c: (_ for _ in ()).throw(UserError("nope", hint="h")))
    with qtbot.waitSignal(task.failed, timeout=5000) as blocker:
        task.start()
    assert blocker.args[0].message == "nope"

    task2 = Task(lambda e, c: 1 / 0)
    with qtbot.waitSignal(task2.failed, timeout=5000) as blocker:
        task2.start()
    assert "Unexpected error" in blocker.args[0].message
