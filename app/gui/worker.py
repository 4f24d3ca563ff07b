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
"""
from __future__ import annotations

import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from app.core.errors import Cancelled, UserError
from app.core.runner import CancelToken

CoreCall = Callable[[Callable[[Any], None], CancelToken], Any]


class Task(QObject):
    event = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)  # UserError
    cancelled = Signal()
    finished = Signal()  # always emitted last

    def __init__(self, fn: CoreCall, parent: QObject | None = None, name: str = "task") -> None:
        super().__init__(parent)
        self._fn = fn
        self._name = name
        self.token = CancelToken()
        self._thread: threading.Thread | None = None
        self._running = False

    def start(self) -> None:
        if self._running:
            raise RuntimeError(f"{self._name} is already running")
        self._running = True
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

    def _emit(self, signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the Task's owner (a page) was deleted while the work ran: nobody listens
            pass

    def _on_event(self, event) -> None:
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
            self._emit(self.failed, UserError(f"Unexpected error: {exc}",
                                              hint="This is a bug in Torch Setup Assistant; please report it "
                                                   "with the saved report.",
                                              lines=traceback.format_exc().splitlines()[-8:]))
        else:
            self._running = False
            if self.token.cancelled:
                self._emit(self.cancelled)
            else:
                self._emit(self.succeeded, result)
        finally:
            self._running = False
            self._emit(self.finished)
