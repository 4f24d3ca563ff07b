"""The arithmetic of a download in pieces: connection slots per host, byte ranges, pieces.

* :class:`Stalls` (one for the process, :data:`STALLS`): the servers that stopped sending
  (a read that got nothing for the stall time) in the last :data:`STALL_MEMORY_S` seconds; their
  files are asked of other sources first.
* :class:`HostSlots` (one for the process, :data:`SLOTS`): at most :data:`MAX_PER_HOST`
  connections open to one server (``scheme://host:port``) at once, over every download of this
  process (the wizard's early fetch and an install share them). Browsers settled on six
  connections per host for HTTP/1.1 (RFC 9112 section 9.4 leaves the number to clients and asks
  them to limit it); we take the same, so a capped connection is no longer the limit, and no
  server sees more from us than from one browser. The slots go to the largest file first, over
  every download of the process (each says, by :meth:`HostSlots.bid`, the largest file it would
  fetch from each server now): the files that arrive last are small, so what is left to install
  after the last byte is small too, whichever download fetches the large one.
* :class:`Spans`: which byte ranges of a file are in (merged, sorted), and how far from byte 0
  they run without a gap (what can be hashed, and what a later run can go on from).
* :func:`carve`: the next piece to ask for from a list of byte ranges still wanted: large
  pieces while much is left, smaller ones towards the end, so the last connections finish
  together rather than one long piece alone.

Pure bookkeeping: no network, no files; :mod:`app.core.sources.download` does those.
"""
from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["FIRST_PIECE", "MAX_PER_HOST", "MAX_PIECE", "MIN_PIECE", "SLOTS", "STALLS", "HostSlots", "Spans",
           "Stalls", "carve", "host_of", "left_in"]

MAX_PER_HOST = 6
FIRST_PIECE = 4 << 20  # the first request for a file whose size is not known yet
MAX_PIECE = 16 << 20
MIN_PIECE = 1 << 20
STALL_MEMORY_S = 120.0


def host_of(url: str) -> str:
    """``https://host:443`` for any URL of that server (the key of its connection slots)."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


class HostSlots:
    """Connection slots per server, shared by every download of the process. A caller that waits
    (:meth:`acquire`) is served before any :meth:`try_acquire`: a file's size asked first is not
    starved by the pieces of a large file that keep every slot busy. Among the pieces, the largest
    file comes first: :meth:`try_acquire` for a file refuses while another download of the process
    bids for a larger one on that server (:meth:`bid`); :meth:`listen` wakes the downloads when a
    slot is freed."""

    def __init__(self, limit: int = MAX_PER_HOST) -> None:
        self.limit = limit
        self._cond = threading.Condition()
        self._open: dict[str, int] = {}
        self._peak: dict[str, int] = {}
        self._waiting: dict[str, int] = {}
        self._bids: dict[tuple[str, int], int] = {}  # (host, download) -> the size of its largest file there
        self._listeners: list[Callable[[], None]] = []

    def bid(self, who: int, sizes: dict[str, int]) -> None:
        """What the download ``who`` would take a slot for now: for each host, the size of the largest
        file it still has pieces to ask for there (an empty dict: nothing, it withdraws)."""
        with self._cond:
            for key in [k for k in self._bids if k[1] == who]:
                del self._bids[key]
            for host, size in sizes.items():
                self._bids[(host, who)] = size

    def listen(self, wake: Callable[[], None]) -> None:
        """``wake`` is called (outside the lock) each time a slot is freed."""
        with self._cond:
            self._listeners.append(wake)

    def unlisten(self, wake: Callable[[], None]) -> None:
        with self._cond:
            if wake in self._listeners:
                self._listeners.remove(wake)

    def _take(self, host: str) -> None:
        n = self._open.get(host, 0) + 1
        self._open[host] = n
        self._peak[host] = max(self._peak.get(host, 0), n)

    def try_acquire(self, host: str, *, size: int | None = None, who: int | None = None) -> bool:
        """Take a slot of ``host`` if one is free and nobody waits for one; for a file of ``size``
        bytes fetched by the download ``who``, only while no other download bids for a larger file there."""
        with self._cond:
            if self._open.get(host, 0) >= self.limit or self._waiting.get(host, 0):
                return False
            if size is not None and any(h == host and w != who and s > size for (h, w), s in self._bids.items()):
                return False
            self._take(host)
            return True

    def acquire(self, host: str, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Wait for a slot of ``host`` (first come, first served); False when ``cancelled`` says so."""
        with self._cond:
            self._waiting[host] = self._waiting.get(host, 0) + 1
            try:
                while self._open.get(host, 0) >= self.limit:
                    if cancelled():
                        return False
                    self._cond.wait(0.2)
                self._take(host)
                return True
            finally:
                self._waiting[host] -= 1

    def release(self, host: str) -> None:
        with self._cond:
            self._open[host] = max(0, self._open.get(host, 0) - 1)
            self._cond.notify_all()
            wake = list(self._listeners)
        for w in wake:  # outside the lock: a download's wake takes its own lock
            w()

    def open(self, host: str) -> int:
        with self._cond:
            return self._open.get(host, 0)

    def peak(self, host: str) -> int:
        with self._cond:
            return self._peak.get(host, 0)


SLOTS = HostSlots()


class Stalls:
    """The servers that stalled lately (shared by every download of the process)."""

    def __init__(self, memory_s: float = STALL_MEMORY_S) -> None:
        self.memory_s = memory_s
        self._lock = threading.Lock()
        self._at: dict[str, float] = {}

    def mark(self, host: str) -> None:
        with self._lock:
            self._at[host] = time.monotonic()

    def stalled(self, host: str) -> bool:
        with self._lock:
            at = self._at.get(host)
            return at is not None and time.monotonic() - at < self.memory_s

    def forget(self) -> None:
        with self._lock:
            self._at.clear()


STALLS = Stalls()


@dataclass
class Spans:
    """Byte ranges ``[start, end)`` that are in, merged and sorted."""

    items: list[tuple[int, int]] = field(default_factory=list)

    def add(self, start: int, end: int) -> None:
        if end <= start:
            return
        merged: list[tuple[int, int]] = []
        for a, b in sorted([*self.items, (start, end)]):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        self.items = merged

    def prefix(self) -> int:
        """How many bytes from byte 0 are in without a gap."""
        return self.items[0][1] if self.items and self.items[0][0] == 0 else 0

    def total(self) -> int:
        return sum(b - a for a, b in self.items)

    def clear(self) -> None:
        self.items = []


def left_in(wanted: list[list[int | None]]) -> int:
    """Bytes still wanted in byte ranges (those of unknown end count as one first piece)."""
    return sum(int(e) - int(s or 0) if e is not None else FIRST_PIECE for s, e in wanted)


def carve(wanted: list[list[int | None]], parallel: int, left: int | None = None) -> tuple[int, int | None] | None:
    """Take the next piece from ``wanted`` (byte ranges ``[start, end]``, end None for "to the end of a
    file whose size is not known"); ``wanted`` is changed in place. Pieces are a share of what is
    left (``left``: of every file still coming, default this file's; over ``parallel``
    connections), between :data:`MIN_PIECE` and :data:`MAX_PIECE`: few requests while much is left,
    smaller ones at the very end, so the connections finish together."""
    if not wanted:
        return None
    start, end = wanted[0]
    assert start is not None
    if end is None:
        wanted.pop(0)
        return start, start + FIRST_PIECE
    left = left if left is not None else left_in(wanted)
    size = min(MAX_PIECE, max(MIN_PIECE, left // max(1, parallel)))
    stop = min(end, start + size)
    if end - stop < MIN_PIECE // 2:  # no sliver left behind for a request of its own
        stop = end
    if stop >= end:
        wanted.pop(0)
    else:
        wanted[0] = [stop, end]
    return start, stop
