"""Run one core call off the GUI thread and bring its events and result back to it.

The core call has the shape ``fn(on_event, cancel) -> result``. Events it reports from
the worker thread are delivered to the GUI thread through queued signals (the only
channel back), so pages never touch widgets from another thread and never call
``processEvents()``.

    task = Task(lambda on_event, cancel: install(plan, on_event=on_event, cancel=cancel))
    task.event.connect(page.on_event)
    task.succeeded.connect(page.on_done)
    task.failed.connect(page.on_error)      # a UserError
    task.start()
    ...
    task.cancel()                           # sets the CancelToken; the core rolls back

A core call that answers a cancel with a value instead of :class:`Cancelled` (the speed
test returns the measurements made so far) has that value delivered by ``partial`` just
before ``cancelled``.
"""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.core.cancel import CancelToken
from app.core.errors import Cancelled, UserError
from app.core.events import Event
from app.core.text import msg

CoreCall = Callable[[Callable[[Event], None], CancelToken], object]


class _Keeper(QObject):
    """Holds every started Task until its thread has ended and its last signal has reached the
    GUI thread, so that a Task is always destroyed there, never in its worker thread.

    Without it, the worker thread could drop the last reference to a Task its page had already
    let go of: PySide then deletes the QObject in the worker thread, while the GUI thread may
    still be delivering that Task's queued signals. A QObject must be destroyed in its own
    thread. The keeper lives in the GUI thread (it is made with the first Task), and each worker
    hands its Task back to it through a queued signal as the very last thing it does."""

    release = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.running: set[Task] = set()
        self.release.connect(self._release)

    def _release(self, task: Task) -> None:
        if task._thread is not None:
            task._thread.join()  # the worker's last lines: after this it holds no reference
        self.running.discard(task)


_keeper: _Keeper | None = None


def _the_keeper() -> _Keeper:
    global _keeper
    if _keeper is None:  # the first Task is made in the GUI thread, and so is its keeper
        _keeper = _Keeper()
    return _keeper


class Task(QObject):
    event = Signal(object)  # type: ignore[assignment]  # (shadows QObject.event, a name every page uses)
    succeeded = Signal(object)
    failed = Signal(object)  # UserError
    partial = Signal(object)  # what a cancelled call returned (a result that ended early)
    cancelled = Signal()
    finished = Signal()  # always emitted last

    def __init__(self, fn: CoreCall, parent: QObject | None = None, name: str = "task") -> None:
        super().__init__(parent)
        self._fn = fn
        self._name = name
        self.token = CancelToken()
        self._thread: threading.Thread | None = None
        self._running = False
        self._keeper = _the_keeper()

    def start(self) -> None:
        if self._running:
            raise RuntimeError(f"{self._name} is already running")
        self._running = True
        self._keeper.running.add(self)
        self._thread = threading.Thread(target=self._run, name=f"torch-setup-{self._name}", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self.token.cancel()

    def is_running(self) -> bool:
        return self._running

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends (tests and shutdown only)."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _emit(self, signal: SignalInstance, *args: object) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the Task's owner (a page) was deleted while the work ran: nobody listens
            pass

    def _on_event(self, event: Event) -> None:
        self._emit(self.event, event)

    def _run(self) -> None:
        # Signals emitted from this thread are queued to the receivers' (GUI) thread.
        try:
            result = self._fn(self._on_event, self.token)
        except Cancelled:
            self._running = False
            self._emit(self.cancelled)
        except UserError as err:
            self._running = False
            self._emit(self.failed, err)
        except Exception as exc:  # a bug in the core: show it, never crash the GUI
            self._running = False
            self._emit(self.failed, UserError(msg("gui.unexpected", "Unexpected error: {error}", error=str(exc)),
                                              hint=msg("gui.bug_hint", "This is a bug in Torch Setup Assistant; "
                                                       "please report it with the saved report."),
                                              lines=traceback.format_exc().splitlines()[-8:]))
        else:
            self._running = False
            if self.token.cancelled:
                if result is not None:
                    self._emit(self.partial, result)
                self._emit(self.cancelled)
            else:
                self._emit(self.succeeded, result)
        finally:
            self._running = False
            self._emit(self.finished)
            self._keeper.release.emit(self)  # after every signal of this Task: destroyed in the GUI thread
