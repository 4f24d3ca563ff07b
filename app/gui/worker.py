"""Run one core call off the GUI thread and bring its events and result back to it.

The core call has the shape ``fn(on_event, cancel) -> result``. Events it reports from
the worker thread are delivered to the GUI thread through one queued channel (the only
way back), so pages never touch widgets from another thread and never call
``processEvents()``.

    task = Task(lambda on_event, cancel: install(plan, on_event=on_event, cancel=cancel), page)
    task.event.connect(page.on_event)
    task.succeeded.connect(page.on_done)
    task.failed.connect(page.on_error)      # a UserError
    task.start()
    ...
    task.cancel()                           # sets the CancelToken; the core rolls back

A core call that answers a cancel with a value instead of :class:`Cancelled` (the speed
test returns the measurements made so far) has that value delivered by ``partial`` just
before ``cancelled``.

Lifetimes, safe by construction: the worker thread never touches a Task's Qt object (nor a
page's). It emits only on the relay, one QObject made in the GUI thread and never destroyed
while the process runs, through a queued connection; the relay, in the GUI thread, re-emits
each delivery on its Task, there and then, unless the Task or the page that owns it (the
``owner`` given when it was made) has been destroyed meanwhile: then the delivery is dropped.
A Task is never a Qt child of its page (a page's destruction cannot destroy a Task whose
thread still runs), and the relay holds every started Task until its thread has ended, so a
Task is always destroyed in the GUI thread. The outcome (``succeeded``, ``failed``, ``partial``
and ``cancelled``) and ``finished`` come in one delivery: no page is seen with its result but
not yet its end.
"""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import cast

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal

from app.core.base.cancel import CancelToken
from app.core.base.errors import Cancelled, UserError
from app.core.base.events import Event
from app.core.base.text import msg

CoreCall = Callable[[Callable[[Event], None], CancelToken], object]

_END = ""  # the delivery that ends a Task's run: its outcome, then "finished", in one go


class _Relay(QObject):
    """The one object worker threads emit on. It lives in the GUI thread for the whole process
    (made with the first Task, kept by this module, no parent: nothing destroys it before the
    interpreter ends), so the object a thread emits on always outlives the thread.

    Each delivery names its Task and the signal to emit there; the relay emits it in the GUI
    thread, where the Task and its owner are destroyed too, so whether they still exist is
    known for sure (no race with a destructor in another thread)."""

    deliver = Signal(object, str, object)  # the Task, the name of its signal, the arguments (a tuple)

    def __init__(self) -> None:
        super().__init__()
        self.running: set[Task] = set()
        self.deliver.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def _deliver(self, task: Task, name: str, args: tuple[object, ...]) -> None:
        if name != _END:
            self._emit(task, name, args)
            return
        # the outcome (succeeded, failed, partial + cancelled) and "finished" in one turn of the event
        # loop: no page is ever seen with its result but not its end
        outcome = cast("tuple[tuple[str, tuple[object, ...]], ...]", args[0])
        task._running = False  # in the GUI thread, in the same turn as the outcome: never "done" without it
        for signal, values in (*outcome, ("finished", ())):
            self._emit(task, signal, values)
        if task._thread is not None:
            task._thread.join()  # the worker's last lines: after this it holds no reference
        self.running.discard(task)  # the last reference may go here, in the GUI thread

    @staticmethod
    def _emit(task: Task, name: str, args: tuple[object, ...]) -> None:
        if task.receiving():  # else its page (or the Task itself) was destroyed while the work ran
            getattr(task, name).emit(*args)


_relay: _Relay | None = None


def _the_relay() -> _Relay:
    global _relay
    if _relay is None:  # the first Task is made in the GUI thread, and so is the relay
        _relay = _Relay()
        app = QCoreApplication.instance()
        if app is not None and _relay.thread() is not app.thread():
            _relay.moveToThread(app.thread())
    return _relay


class Task(QObject):
    """One core call in a worker thread. ``owner`` (a page) is not the Task's Qt parent: it only
    says whose slots listen, so that nothing is delivered once the owner has been destroyed."""

    event = Signal(object)  # type: ignore[assignment]  # (shadows QObject.event, a name every page uses)
    succeeded = Signal(object)
    failed = Signal(object)  # UserError
    partial = Signal(object)  # what a cancelled call returned (a result that ended early)
    cancelled = Signal()
    finished = Signal()  # always emitted last

    def __init__(self, fn: CoreCall, owner: QObject | None = None, name: str = "task") -> None:
        super().__init__()  # no parent: the owner's destruction must not destroy a running Task
        self._fn = fn
        self._name = name
        self._owner = owner
        self.token = CancelToken()
        self._thread: threading.Thread | None = None
        self._running = False
        self._relay = _the_relay()

    def start(self) -> None:
        if self._running:
            raise RuntimeError(f"{self._name} is already running")
        self._running = True
        self._relay.running.add(self)
        self._thread = threading.Thread(target=self._run, name=f"torch-setup-{self._name}", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self.token.cancel()

    def is_running(self) -> bool:
        return self._running

    def receiving(self) -> bool:
        """The Task and its owner still exist (GUI thread only: both are destroyed there)."""
        return shiboken6.isValid(self) and (self._owner is None or shiboken6.isValid(self._owner))

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends (tests and shutdown only). On the GUI thread its
        outcome is then delivered at once (the queued deliveries of the relay), so a Task that
        was waited for is not running any more and its page has had its result."""
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        if self._running and QThread.currentThread() is self._relay.thread():
            QCoreApplication.sendPostedEvents(self._relay, 0)  # 0: every kind (the queued calls)
        return True

    # ---- the worker thread: only plain Python state and the relay ----
    def _send(self, name: str, *args: object) -> None:
        self._relay.deliver.emit(self, name, args)

    def _on_event(self, event: Event) -> None:
        self._send("event", event)

    def _run(self) -> None:
        outcome: list[tuple[str, tuple[object, ...]]] = []
        try:
            result = self._fn(self._on_event, self.token)
        except Cancelled:
            outcome.append(("cancelled", ()))
        except UserError as err:
            outcome.append(("failed", (err,)))
        except Exception as exc:  # a bug in the core: show it, never crash the GUI
            outcome.append(("failed", (UserError(msg("gui.unexpected", "Unexpected error: {error}", error=str(exc)),
                                                 hint=msg("gui.bug_hint", "This is a bug in Torch Setup Assistant; "
                                                          "please report it with the saved report."),
                                                 lines=traceback.format_exc().splitlines()[-8:]),)))
        else:
            if self.token.cancelled:
                if result is not None:
                    outcome.append(("partial", (result,)))
                outcome.append(("cancelled", ()))
            else:
                outcome.append(("succeeded", (result,)))
        finally:
            # the last delivery: the outcome, "finished", then the Task is let go of in the GUI thread;
            # it stays "running" until then (a page that is not busy any more has had its result)
            self._send(_END, tuple(outcome))
