"""The worker bridge: results and events arrive on the GUI thread; cancel reaches the core."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import QThread

from app.core.base.errors import UserError
from app.core.base.events import LogEvent
from app.gui.worker import Task


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
    assert "Unexpected error" in blocker.args[0].text()


def test_a_cancelled_call_that_returns_a_value_delivers_it_as_partial(qtbot):
    """The speed test answers Stop with the measurements so far: they arrive (partial), then
    cancelled; never as a success."""
    started = threading.Event()

    def fn(on_event, cancel):
        started.set()
        cancel.wait(10)
        return "measured so far"

    task = Task(fn)
    got = []
    task.partial.connect(lambda r: got.append(("partial", r)))
    task.succeeded.connect(lambda r: got.append(("succeeded", r)))
    task.cancelled.connect(lambda: got.append(("cancelled",)))
    with qtbot.waitSignal(task.finished, timeout=5000):
        task.start()
        assert started.wait(5)
        task.cancel()
    assert got == [("partial", "measured so far"), ("cancelled",)]


def test_a_cancel_raised_as_cancelled_has_no_partial(qtbot):
    task = Task(lambda e, c: (c.wait(10), c.raise_if_cancelled()))
    got = []
    task.partial.connect(got.append)
    with qtbot.waitSignal(task.cancelled, timeout=5000):
        task.start()
        task.cancel()
    qtbot.wait(50)
    assert got == []


def test_a_task_its_owner_let_go_of_is_destroyed_in_the_gui_thread(qtbot):
    """A page that drops its Task while the work runs (a new look-up replaces the old one, the page
    goes away): the worker thread must not drop the last reference. PySide would then delete the
    QObject in the worker thread, with its queued signals still on their way to the GUI thread."""
    import gc
    import weakref

    from PySide6.QtCore import Qt

    release = threading.Event()
    destroyed_in: list[bool] = []

    def fn(on_event, cancel):
        release.wait(10)
        return "done"

    task = Task(fn, name="dropped")
    task.destroyed.connect(lambda: destroyed_in.append(threading.current_thread() is threading.main_thread()),
                           Qt.ConnectionType.DirectConnection)
    gone = weakref.ref(task)
    task.start()
    thread = task._thread
    del task  # the owner lets go while the work runs
    gc.collect()
    assert gone() is not None, "a running Task is kept alive"
    release.set()
    thread.join(10)
    assert not thread.is_alive()
    assert gone() is not None and destroyed_in == [], "the worker thread must not destroy its Task"
    qtbot.waitUntil(lambda: gone() is None, timeout=5000)  # handed back to the GUI thread, then released
    assert destroyed_in == [True], "destroyed in the GUI thread"


def test_a_task_is_running_until_its_outcome_reaches_the_gui_thread(qtbot):
    """A page is "not busy" only once its result has been handled: the worker thread may end
    while the outcome still waits in the GUI thread's queue (seen under load: the Verify page not
    busy with its diagnosis still empty)."""
    seen = []
    task = Task(lambda on_event, cancel: "result")
    task.succeeded.connect(lambda r: seen.append((r, task.is_running())))
    task.start()
    task._thread.join(10)  # the worker thread has ended; the GUI thread has not had the outcome yet
    assert task.is_running() and seen == []
    qtbot.waitUntil(lambda: not task.is_running(), timeout=5000)
    assert seen == [("result", False)]  # not running once its outcome is handled, in the same turn
    # wait() on the GUI thread (closing, shutdown): the outcome is delivered before it returns
    again = Task(lambda on_event, cancel: "again")
    again.succeeded.connect(lambda r: seen.append((r, again.is_running())))
    again.start()
    assert again.wait(10) and not again.is_running() and seen[-1] == ("again", False)
