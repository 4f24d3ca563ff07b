"""The cancellation flag every long step takes (the runner, the install, the wizard's tasks).

Its own small module: the wizard's first window and the session need it before anything runs,
without loading :mod:`subprocess` and the runner (start-up time).
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from app.core.base.errors import Cancelled
from app.core.base.text import Text

__all__ = ["CancelToken"]


class CancelToken:
    """Thread-safe cancellation flag; :meth:`cancel` also wakes every waiting runner."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a callback must never break cancellation
                pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def on_cancel(self, cb: Callable[[], None]) -> Callable[[], None]:
        """Register ``cb``; returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(cb)
                registered = True
            else:
                registered = False
        if not registered:
            cb()

        def remove() -> None:
            with self._lock:
                if cb in self._callbacks:
                    self._callbacks.remove(cb)

        return remove

    def raise_if_cancelled(self, message: Text | None = None) -> None:
        if self.cancelled:
            raise Cancelled(message)
