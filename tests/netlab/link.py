"""A paced link for netlab servers: what a slow, far or throttled network does, done in the server.

The kernel here has no netem, so the pacing is in the server's byte loop. One :class:`Link`
may be shared by several servers (two mirrors on the same user's line):

* ``total_bps``: every byte through the link, all connections together (the line's speed);
* ``per_conn_bps``: each connection alone (a CDN that caps every connection far below the line);
* ``latency_s``: waited before each answer (a request's round trip to a far server).

:meth:`Link.pace` is called before every chunk a connection sends and sleeps until the chunk
may leave: no connection sends faster than ``per_conn_bps`` and the chunks of all connections
together never faster than ``total_bps``. Sleeps end at once when the server stops.

Profiles (:data:`PROFILES`) are the links of ``benchmarks/links.py``, by name.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

MBIT = 1_000_000 // 8  # bytes per second in one Mbit/s

__all__ = ["MBIT", "PROFILES", "ConnPace", "Link", "LinkProfile"]


@dataclass
class ConnPace:
    """One connection's place in its own schedule (when its next chunk may start)."""

    next_at: float = 0.0


@dataclass
class Link:
    total_bps: float | None = None
    per_conn_bps: float | None = None
    latency_s: float = 0.0
    _next_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait_latency(self, stopping: threading.Event) -> bool:
        """Wait one request's latency; False when the server stops meanwhile."""
        return not (self.latency_s > 0 and stopping.wait(self.latency_s))

    def pace(self, conn: ConnPace, n: int, stopping: threading.Event) -> bool:
        """Sleep until ``n`` more bytes may leave on ``conn``; False when the server stops meanwhile."""
        now = time.monotonic()
        done = now
        if self.per_conn_bps:
            done = max(now, conn.next_at) + n / self.per_conn_bps
        if self.total_bps:
            with self._lock:  # the line's time, reserved chunk after chunk for all connections
                self._next_at = max(now, self._next_at) + n / self.total_bps
                done = max(done, self._next_at)
        conn.next_at = done
        wait = done - time.monotonic()
        return not (wait > 0 and stopping.wait(wait))


@dataclass(frozen=True)
class LinkProfile:
    """A named link for the benchmarks: its pacing and what goes wrong on it."""

    name: str
    title: str
    total_mbit: float | None
    per_conn_mbit: float | None
    latency_ms: float
    drop_at: float | None = None  # the large wheel's first answer closes at this fraction of it
    stall_at: float | None = None  # the first mirror stops sending at this fraction of each large file

    def link(self) -> Link:
        return Link(self.total_mbit * MBIT if self.total_mbit else None,
                    self.per_conn_mbit * MBIT if self.per_conn_mbit else None, self.latency_ms / 1000)


PROFILES = {p.name: p for p in (
    LinkProfile("clean", "clean 100 Mbit/s, 40 ms", 100, None, 40),
    LinkProfile("capped", "10 Mbit/s per connection, 200 Mbit/s in all, 40 ms", 200, 10, 40),
    LinkProfile("drop", "capped as above, the large wheel's connection dropped at 70 %", 200, 10, 40, drop_at=0.7),
    LinkProfile("drop-clean", "clean 100 Mbit/s, the large wheel's connection dropped at 70 %", 100, None, 40,
                drop_at=0.7),
    LinkProfile("stall", "clean 100 Mbit/s; the first of two mirrors stops sending mid-file", 100, None, 40,
                stall_at=0.25),
)}
