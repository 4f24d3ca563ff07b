"""Run detection sources side by side, with one shared deadline: the one concurrency helper.

Each job runs in its own **daemon** thread and completes a :class:`concurrent.futures.Future`;
:meth:`Jobs.wait` waits for all of them until the deadline and names the ones still running.
A hung driver call or tool therefore delays detection by at most the deadline and can never
keep the process alive at exit (a ``ThreadPoolExecutor`` joins its threads at exit, so it is
not used). Results are read with :func:`result_of`, which never blocks.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TypeVar

__all__ = ["Jobs", "error_of", "result_of"]

T = TypeVar("T")


class Jobs:
    """Jobs started by name; ``wait(deadline)`` returns the names of the ones that overran."""

    def __init__(self, prefix: str = "detect") -> None:
        self._prefix = prefix
        self.futures: dict[str, Future[object]] = {}

    def start(self, name: str, fn: Callable[[], T]) -> Future[T]:
        fut: Future[T] = Future()
        fut.set_running_or_notify_cancel()

        def body() -> None:
            try:
                fut.set_result(fn())
            except BaseException as exc:  # handed to the caller through the future
                fut.set_exception(exc)

        self.futures[name] = fut  # type: ignore[assignment]  # stored for wait(); typed where started
        threading.Thread(target=body, name=f"{self._prefix}-{name}", daemon=True).start()
        return fut

    def wait(self, deadline: float) -> list[str]:
        """Wait until every job is done or ``deadline`` (time.monotonic()) passes; the late ones."""
        wait(list(self.futures.values()), timeout=max(0.0, deadline - time.monotonic()))
        return [name for name, fut in self.futures.items() if not fut.done()]


def result_of(fut: Future[T]) -> T | None:
    """The job's result when it finished without raising; None while running or after an error."""
    if not fut.done() or fut.exception() is not None:
        return None
    return fut.result()


def error_of(fut: Future[T]) -> BaseException | None:
    return fut.exception() if fut.done() else None
