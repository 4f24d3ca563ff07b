"""What an install's progress bar shows, from the core's ProgressEvents: Qt-free arithmetic.

The Install page (and any text renderer) feeds every :class:`~app.core.events.ProgressEvent`
to one :class:`InstallProgress` and draws what it says:

* ``mode``: what the bar measures now. "download" while bytes are in flight, "packages"
  when the installer counts packages done, "busy" otherwise (unpacking and linking, where
  no installer reports progress: a busy bar, never a full bar that still waits);
* ``fraction``: 0..1 within the mode, never running backwards (a new package making the
  known total larger holds the bar instead of pulling it back);
* ``line``: the current package line (its name with bytes or its place in the count);
* :meth:`eta`: seconds left from the rate so far, or None when there is nothing to go on.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from app.core.events import ProgressEvent

Mode = Literal["download", "packages", "busy"]

#: How long the rate must have been measured before a time left is worth showing.
MIN_RATE_WINDOW_S = 1.0


@dataclass(frozen=True)
class PackageLine:
    """The current-package line: ``unit`` "bytes" (done/total bytes of ``package``),
    "packages" (``done`` of ``total`` packages, ``package`` the latest) or "unpacking"."""

    unit: Literal["bytes", "packages", "unpacking"]
    package: str = ""
    done: int = 0
    total: int = 0


class InstallProgress:
    """The progress of one install run; :meth:`reset` starts over for the next run."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._bytes: dict[str, tuple[int, int]] = {}
        self._first_bytes_at: float | None = None
        self._packages: tuple[int, int] | None = None
        self._first_package_at: float | None = None
        self.mode: Mode = "busy"
        self.fraction = 0.0
        self.line: PackageLine | None = None

    def reset(self) -> None:
        self._bytes.clear()
        self._first_bytes_at = None
        self._packages = None
        self._first_package_at = None
        self.mode = "busy"
        self.fraction = 0.0
        self.line = None

    def feed(self, ev: ProgressEvent) -> None:
        now = self.clock()
        if ev.unit == "packages":
            # The installer counts packages, not bytes (done/total packages).
            self._packages = (ev.done_bytes, ev.total_bytes)
            if self._first_package_at is None and ev.done_bytes > 0:
                self._first_package_at = now
            if ev.package and ev.total_bytes > 0 and ev.done_bytes > 0:
                self.line = PackageLine("packages", ev.package, ev.done_bytes, ev.total_bytes)
        else:
            if self._first_bytes_at is None and ev.done_bytes > 0:
                self._first_bytes_at = now
            self._bytes[ev.package] = (ev.done_bytes, ev.total_bytes)
            self.line = PackageLine("bytes", ev.package, ev.done_bytes, ev.total_bytes)
        self._update()

    def downloading(self) -> bool:
        return any(t > 0 and d < t for d, t in self._bytes.values())

    def byte_totals(self) -> tuple[int, int]:
        """(bytes done, bytes in all) over the downloads whose size is known."""
        known = [(d, t) for d, t in self._bytes.values() if t > 0]
        return sum(min(d, t) for d, t in known), sum(t for _, t in known)

    def eta(self) -> float | None:
        """Seconds left, from the byte rate so far (or the package rate when the installer
        counts packages); None when there is nothing to go on."""
        if self.mode == "download":
            (done, total), start = self.byte_totals(), self._first_bytes_at
        elif self.mode == "packages" and self._packages is not None:
            (done, total), start = self._packages, self._first_package_at
        else:
            return None
        if start is None or total <= 0 or done <= 0:
            return None
        spent = self.clock() - start
        if spent < MIN_RATE_WINDOW_S:
            return None
        rate = done / spent
        return max(0.0, (total - done) / rate) if rate > 0 else None

    def _update(self) -> None:
        pk = self._packages
        if self.downloading():
            done, total = self.byte_totals()
            self._show("download", done / total)
        elif pk is not None and pk[0] > 0 and pk[1] > 0:
            self._show("packages", pk[0] / pk[1])
        else:
            self._set_mode("busy")
            if self._bytes:
                self.line = PackageLine("unpacking")

    def _set_mode(self, mode: Mode) -> None:
        if mode != self.mode:
            self.mode = mode
            self.fraction = 0.0  # each measure runs forwards on its own

    def _show(self, mode: Mode, frac: float) -> None:
        self._set_mode(mode)
        self.fraction = max(self.fraction, min(1.0, frac))  # never runs backwards
