"""What an install's progress bar shows, from the core's ProgressEvents: Qt-free arithmetic.

The Install page (and any text renderer) feeds every :class:`~app.core.base.events.ProgressEvent`
to one :class:`InstallProgress` and draws what it says:

* ``mode``: what the bar measures now. "download" while bytes are in flight, "unpack" while
  the wheels are unpacked (measured on disk by :class:`~app.core.base.progress.UnpackWatch`: what
  no installer prints), "packages" when the installer counts packages done, "busy" otherwise
  (a busy bar, never a full bar that still waits);
* ``fraction``: 0..1 within the mode, never running backwards (a new package making the
  known total larger holds the bar instead of pulling it back);
* ``line``: the current package line (its name with bytes, the bytes unpacked, or its place
  in the count);
* :meth:`done_total`, :meth:`rate`: what is done of how much, and how fast (bytes or packages
  per second);
* :meth:`eta`: seconds left from the rate so far, or None when there is nothing to go on. It
  counts down: a new estimate never raises it unless the old one has clearly run out, or the
  download has grown since (the size of another file became known); a download measured for
  :data:`SETTLED_S` says its time left as it is (the bytes left over its average rate). A download's
  time left includes what follows its last byte (:meth:`tail`), learnt from the wheels that went
  into the environment while the others still downloaded (``unit="installed"`` events).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from app.core.base.events import ProgressEvent

Mode = Literal["download", "unpack", "packages", "busy"]

#: How long the rate must have been measured before a time left is worth showing.
MIN_RATE_WINDOW_S = 1.0
#: A download's rate (its average since the first byte) is steady once measured this long: from
#: then on its time left is the bytes left over that rate, up or down (a slow second moves the
#: average by little); before, it counts down as the other measures do.
SETTLED_S = 10.0
#: After a download's last byte: its last wheel goes in, then the install step checks them all; each
#: is a uv run like the ones that put the earlier wheels in while the rest downloaded.
TAIL_RUNS = 2
#: Before it is settled, a download's countdown is kept through slow patches, but not once the bytes
#: left over the rate so far say this many times more: the estimate it counts down from was made in
#: a quick start (the first connections' burst) and is wrong, so the time left is said anew.
WRONG_BY = 1.5


@dataclass(frozen=True)
class PackageLine:
    """The current-package line: ``unit`` "bytes" (done/total bytes of ``package``),
    "packages" (``done`` of ``total`` packages, ``package`` the latest) or "unpacking" (the bytes
    unpacked of the expected total, when measured; 0/0 when not)."""

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
        self._unpack: tuple[int, int] | None = None
        self._first_unpack_at: float | None = None
        self._first_unpack_done = 0  # bytes already there at the first sample (unpacked before it)
        self._arrived: dict[str, float] = {}  # package -> when its last byte came
        self._lags: list[float] = []  # seconds from a wheel's last byte to it being in the environment
        # (mode, seconds left, when, total, settled) last said
        self._eta: tuple[Mode, float, float, int, bool] | None = None
        self.mode: Mode = "busy"
        self.fraction = 0.0
        self.line: PackageLine | None = None

    def reset(self) -> None:
        self._bytes.clear()
        self._first_bytes_at = None
        self._packages = None
        self._first_package_at = None
        self._unpack = None
        self._first_unpack_at = None
        self._first_unpack_done = 0
        self._arrived.clear()
        self._lags.clear()
        self._eta = None
        self.mode = "busy"
        self.fraction = 0.0
        self.line = None

    def feed(self, ev: ProgressEvent) -> None:
        now = self.clock()
        if ev.unit == "installed":
            # a wheel went into the environment while others download: how long after its last byte
            came = self._arrived.get(ev.package)
            if came is not None:
                self._lags.append(max(0.0, now - came))
            return
        if ev.unit == "unpacked":
            # Bytes unpacked on disk (no installer prints them), of the expected installed size.
            if self._first_unpack_at is None and ev.done_bytes > 0:
                self._first_unpack_at, self._first_unpack_done = now, ev.done_bytes
            self._unpack = (ev.done_bytes, ev.total_bytes)
        elif ev.unit == "packages":
            # The installer counts packages, not bytes (done/total packages).
            self._packages = (ev.done_bytes, ev.total_bytes)
            if self._first_package_at is None and ev.done_bytes > 0:
                self._first_package_at = now
            if ev.package and ev.total_bytes > 0 and ev.done_bytes > 0:
                self.line = PackageLine("packages", ev.package, ev.done_bytes, ev.total_bytes)
        else:
            if self._first_bytes_at is None and ev.done_bytes > 0:
                self._first_bytes_at = now
            if 0 < ev.total_bytes <= ev.done_bytes:
                self._arrived.setdefault(ev.package, now)
            self._bytes[ev.package] = (ev.done_bytes, ev.total_bytes)
            self.line = PackageLine("bytes", ev.package, ev.done_bytes, ev.total_bytes)
        self._update()

    def downloading(self) -> bool:
        return any(t > 0 and d < t for d, t in self._bytes.values())

    def byte_totals(self) -> tuple[int, int]:
        """(bytes done, bytes in all) over the downloads whose size is known."""
        known = [(d, t) for d, t in self._bytes.values() if t > 0]
        return sum(min(d, t) for d, t in known), sum(t for _, t in known)

    def done_total(self) -> tuple[int, int] | None:
        """(done, total) of what the bar measures now: bytes downloaded or unpacked, or packages."""
        if self.mode == "download":
            return self.byte_totals()
        if self.mode == "unpack" and self._unpack is not None:
            return self._unpack
        if self.mode == "packages" and self._packages is not None:
            return self._packages
        return None

    def _started(self) -> float | None:
        return {"download": self._first_bytes_at, "unpack": self._first_unpack_at,
                "packages": self._first_package_at}.get(self.mode)

    def rate(self) -> float | None:
        """Bytes (download, unpack) or packages per second so far in this mode; None before a
        second of it has passed."""
        dt, start = self.done_total(), self._started()
        if dt is None or start is None or dt[0] <= 0:
            return None
        spent = self.clock() - start
        if spent < MIN_RATE_WINDOW_S:
            return None
        # unpack progress is sampled on disk: its first sample holds bytes from before it
        since = self._first_unpack_done if self.mode == "unpack" else 0
        return max(0, dt[0] - since) / spent or None

    def eta(self) -> float | None:
        """Seconds left, from the rate so far in this mode (bytes downloaded or unpacked, or
        packages counted); None when there is nothing to go on. It counts down: a later
        estimate may lower it, and raises it only once the countdown has run out or (a download)
        the total has grown (a file whose size was not known yet). A download whose rate has been
        measured for :data:`SETTLED_S` says the bytes left over its average rate, as it is."""
        dt, rate, start = self.done_total(), self.rate(), self._started()
        if dt is None or rate is None or rate <= 0 or dt[1] <= 0 or start is None:
            return None
        now = self.clock()
        fresh = max(0.0, (dt[1] - dt[0]) / rate)
        if self.mode == "download":
            fresh += self.tail()
        settled = self.mode == "download" and now - start >= SETTLED_S
        last = self._eta
        grown = self.mode == "download" and dt[1] > last[3] if last is not None else False
        if last is not None and last[0] == self.mode and not grown and not settled:
            counted = last[1] - (now - last[2])
            wrong = self.mode == "download" and fresh > WRONG_BY * counted  # a quick start's estimate
            if counted > 0 and fresh > counted and not wrong:
                fresh = counted  # keep counting down rather than jump up on a slow patch
        self._eta = (self.mode, fresh, now, dt[1], settled)
        return fresh

    def tail(self) -> float:
        """What follows a download's last byte: its last wheel going into the environment and the
        install step's check of them all. Each goes as the wheels before went in (the latest lags from
        a wheel's last byte to it being in; 0 when none was installed while downloading)."""
        if not self._lags:
            return 0.0
        recent = sorted(self._lags[-3:])
        return TAIL_RUNS * recent[len(recent) // 2]

    def _update(self) -> None:
        pk = self._packages
        up = self._unpack
        if self.downloading():
            done, total = self.byte_totals()
            self._show("download", done / total)
        elif up is not None and up[1] > 0 and up[0] > 0 and not (pk is not None and pk[0] > 0):
            self._show("unpack", up[0] / up[1])
            self.line = PackageLine("unpacking", "", up[0], up[1])
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
