"""Our own downloader: every byte hash-checked, several connections per file, and a failure
mid-way is not the end.

:class:`Downloader` fetches :class:`Wanted` files into a download folder, trying each file's
sources in order. A file is fetched in pieces (HTTP ``Range`` requests, :mod:`.pieces`) over up
to :data:`~app.core.sources.pieces.MAX_PER_HOST` connections per server (shared by every file
and every download of the process): where a CDN caps each connection, the file comes several
times faster. The bytes stay in ``<sha256>-<file>.part`` while they arrive and are hashed in
order as they do.

* A connection that closes mid-way (a drop, a reset): the bytes it had not sent are asked for
  again (``Range`` from the byte it had), from the next source; from the same one when it is the
  last and had been sending.
* A read that gets no byte for :data:`STALL_S` seconds ends that request: a stalling source is
  left for the next one within seconds (the timeout is per read, not per file).
* A server that refuses ranges (it answers a range request with the whole file) is served over
  one connection, from byte 0.
* The finished file must have the expected sha256; when it does not, the sources that sent its
  bytes are left and the next source sends the file anew. Transient failures (reset, short
  read, timeout) of a source that had sent nothing get one more round after the others.

Progress is real bytes (:class:`~app.core.base.events.ProgressEvent`; each file's size is asked first
with a ``HEAD`` request so the totals are known from the start), and :class:`Served` says which
source served each file (and which ones failed before, and why). A file already complete in the
download folder (same sha256) is not fetched again; a failed run keeps the bytes it had from the
start of each file without a gap (``.part``), and the next run goes on from them. Two
downloaders of the process never fetch the same file at once: the second waits and then finds
it complete.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.base.errors import Cancelled, UserError
from app.core.base.events import Event, LogEvent, ProgressEvent
from app.core.base.text import Text, msg, render
from app.core.net.client import PAGE_TIMEOUT_S, Client, Failure, NetError, Response, short_read
from app.core.net.indexes import display_url
from app.core.proc.runner import CancelToken
from app.core.sources.pieces import SLOTS, STALLS, HostSlots, Spans, Stalls, carve, host_of, left_in
from app.core.sources.settings import Source

__all__ = ["STALL_S", "DownloadFailed", "Downloader", "Served", "Wanted", "file_sha256", "forget", "link_or_copy"]

CHUNK = 1 << 20  # file hashing
READ = 256 << 10  # one read from a connection
STALL_S = 5.0  # a read that gets no byte for this long: the source stalls
TRANSIENT = ("reset", "short_read", "timeout")
KEEP_GOING = 1 << 20  # a drop after this many bytes of a round from the last source: it goes on from there
PROGRESS_EVERY_S = 0.1


@dataclass(frozen=True)
class Wanted:
    """A file to fetch: its name, its sha256 (None: unknown, not checked) and where it is."""

    filename: str
    sha256: str | None
    sources: tuple[tuple[Source, str], ...]  # (source, URL), in the order to try
    package: str = ""


@dataclass(frozen=True)
class Served:
    """Who served a file: the source that sent its last byte, and what happened before."""

    filename: str
    source_id: str
    source: Text  # the source's name
    url: str  # masked
    size: int
    seconds: float
    sha256: str | None = None
    resumed_at: int = 0  # bytes already there when the serving source was asked (an HTTP Range)
    earlier: tuple[str, ...] = ()  # ids of the sources that failed first, in order
    failures: tuple[Text, ...] = ()  # why each of them failed
    cached: bool = False  # found complete in the download folder

    def to_dict(self) -> dict[str, Any]:
        return {"filename": self.filename, "source_id": self.source_id, "source": render(self.source),
                "url": self.url, "size": self.size, "seconds": round(self.seconds, 3), "sha256": self.sha256,
                "resumed_at": self.resumed_at, "earlier": list(self.earlier),
                "failures": [render(f) for f in self.failures], "cached": self.cached}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Served:
        return cls(str(d.get("filename", "")), str(d.get("source_id", "")), str(d.get("source", "")),
                   str(d.get("url", "")), int(d.get("size") or 0), float(d.get("seconds") or 0.0),
                   d.get("sha256"), int(d.get("resumed_at") or 0), tuple(str(x) for x in d.get("earlier") or ()),
                   tuple(str(x) for x in d.get("failures") or ()), bool(d.get("cached")))


class DownloadFailed(UserError):
    """No source could serve a file."""


_CLAIMS: set[str] = set()  # final paths some downloader of this process is fetching
_CLAIMS_LOCK = threading.Lock()


def _claim(path: Path) -> bool:
    with _CLAIMS_LOCK:
        if str(path) in _CLAIMS:
            return False
        _CLAIMS.add(str(path))
        return True


_CLAIM_WAITERS: list[Callable[[], None]] = []  # the downloads under way: told when a claim ends


def _unclaim(path: Path) -> None:
    with _CLAIMS_LOCK:
        _CLAIMS.discard(str(path))
        wake = list(_CLAIM_WAITERS)
    for w in wake:  # a download waiting for this file (another one fetched it) takes it at once
        w()


def forget(path: Path) -> None:
    """Remove a finished download, unless a download of this process is using it right now (the
    check and the removal under one lock: a download that claims it then finds it or not, whole)."""
    with _CLAIMS_LOCK:
        if str(path) not in _CLAIMS:
            path.unlink(missing_ok=True)


@dataclass
class _Job:
    """One file's download across its sources and its pieces (changed under the downloader's lock)."""

    wanted: Wanted
    final: Path
    part: Path
    queue: list[tuple[Source, str]]
    began: float = field(default_factory=time.monotonic)
    state: str = "new"  # new (not claimed) | prepare | run | more | finish | done | failed
    size: int | None = None
    ranges: bool | None = None  # the server honours ranges (None: not known yet, one request at a time)
    todo: list[list[int | None]] = field(default_factory=list)  # byte ranges still to ask for
    spans: Spans = field(default_factory=Spans)  # byte ranges in the .part file
    hasher: Any = field(default_factory=hashlib.sha256)
    hashed: int = 0
    hash_lock: threading.Lock = field(default_factory=threading.Lock)
    active: int = 0
    epoch: int = 0  # +1 when the bytes are dropped (wrong hash, a server that ignores ranges)
    round: int = 0  # +1 whenever the source is changed or asked again
    round_bytes: int = 0
    rounds: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[str, Text]] = field(default_factory=list)
    senders: set[str] = field(default_factory=set)
    resumed_at: int = 0
    asked_more: bool = False
    shown_at: float = 0.0
    result: tuple[Path, Served] | None = None
    error: BaseException | None = None

    @property
    def package(self) -> str:
        return self.wanted.package or self.wanted.filename

    @property
    def complete(self) -> bool:
        return self.size is not None and self.spans.prefix() >= self.size


@dataclass
class _Task:
    kind: str  # prepare | more | piece | finish
    job: _Job
    source: Source | None = None
    url: str = ""
    host: str = ""
    start: int = 0
    end: int | None = None  # exclusive; None: to the end of the file
    round: int = 0
    epoch: int = 0


class Downloader:
    """Fetches files into ``folder`` with ``net``; events go to ``emit`` (serialised).

    ``keep_partial``: a failed or cancelled file keeps its bytes (for the next run); False drops
    them, so the folder holds nothing but complete, hash-checked files. ``on_file`` is told of each
    file as soon as it is complete and checked (the others may still be arriving)."""

    def __init__(self, net: Client, folder: Path, emit: Callable[[Event], None], cancel: CancelToken,
                 more: Callable[[Wanted, Sequence[str]], list[tuple[Source, str]]] | None = None, *,
                 slots: HostSlots = SLOTS, stalls: Stalls = STALLS, stall_s: float = STALL_S,
                 keep_partial: bool = True, on_file: Callable[[Path, Served], None] | None = None) -> None:
        self.net = net
        self.folder = folder
        self._emit = emit
        self.cancel = cancel
        self.more = more  # further sources for a file whose own ones all failed (asked once)
        self.slots = slots
        self.stalls = stalls
        self.stall_s = stall_s
        self.keep_partial = keep_partial
        self.on_file = on_file  # told of each file as soon as it is complete and checked
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        folder.mkdir(parents=True, exist_ok=True)

    def emit(self, event: Event) -> None:
        with self._lock:
            self._emit(event)

    def path_for(self, w: Wanted) -> Path:
        return self.folder / (f"{w.sha256[:16]}-{w.filename}" if w.sha256 else w.filename)

    # ------------------------------------------------------------------ the calls
    def fetch(self, w: Wanted) -> tuple[Path, Served]:
        """The finished file and who served it; raises DownloadFailed or Cancelled."""
        return self.fetch_all([w])[0]

    def fetch_all(self, wanted: Sequence[Wanted]) -> list[tuple[Path, Served]]:
        """Every file, together (the first, the largest, first); the first failure is raised."""
        results = self.fetch_each(wanted)
        if any(isinstance(r, Cancelled) for r in results) or self.cancel.cancelled:
            raise Cancelled("Cancelled during the download.")
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
        return [r for r in results if isinstance(r, tuple)]

    def fetch_each(self, wanted: Sequence[Wanted], *, limit_bytes: int | None = None
                   ) -> list[tuple[Path, Served] | BaseException]:
        """Every file, together: for each, the file and who served it, or why it could not be had.
        ``limit_bytes``: fetch no more than this (the files that would go past it are left out)."""
        jobs = [_Job(w, self.path_for(w), self.path_for(w).with_name(self.path_for(w).name + ".part"),
                     list(w.sources)) for w in wanted]
        _size_up(self, jobs)
        order = sorted(jobs, key=lambda j: -(j.size or 0))  # the largest first: the last to arrive are small
        if limit_bytes is not None:
            _within(order, limit_bytes)
        hosts = {host_of(u) for j in jobs for _, u in j.queue}
        # a worker per connection slot, and two more: a file to check and hand over, or one another
        # download has just finished, is not kept waiting while every slot's piece is under way
        pool = [threading.Thread(target=self._work, args=(order,), daemon=True)
                for _ in range(max(1, min(24, self.slots.limit * max(1, len(hosts)), 4 * len(jobs) + 2)) + 2)]
        self.slots.listen(self._wake)  # a slot another download frees: asked for at once
        with _CLAIMS_LOCK:
            _CLAIM_WAITERS.append(self._wake)
        try:
            for t in pool:
                t.start()
            for t in pool:
                t.join()
        finally:
            with _CLAIMS_LOCK:
                _CLAIM_WAITERS.remove(self._wake)
            self.slots.unlisten(self._wake)
            self.slots.bid(id(self), {})
        out: list[tuple[Path, Served] | BaseException] = []
        for j in jobs:
            if j.result is None and j.error is None:
                j.error = Cancelled("Cancelled during the download.")
            if j.result is None:
                self._leave(j)
            out.append(j.result if j.result is not None else j.error or Cancelled())
        return out

    # ------------------------------------------------------------------ the workers
    def _work(self, jobs: Sequence[_Job]) -> None:
        while True:
            with self._cond:
                task = self._next(jobs)
                while task is None:
                    if self.cancel.cancelled or all(j.state in ("done", "failed") for j in jobs):
                        self._cond.notify_all()
                        return
                    self._cond.wait(0.2)
                    task = self._next(jobs)
            try:
                self._do(task)
            except Cancelled:
                pass
            except Exception as exc:  # a surprise fails the file, never the thread silently
                with self._cond:
                    task.job.state, task.job.error = "failed", exc
            finally:
                if task.kind == "piece":
                    self.slots.release(task.host)
                with self._cond:
                    self._cond.notify_all()

    def _do(self, task: _Task) -> None:
        if task.kind == "prepare":
            self._prepare(task.job)
        elif task.kind == "more":
            self._ask_more(task.job)
        elif task.kind == "finish":
            self._finish(task.job)
        else:
            self._piece(task)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _bid(self, jobs: Sequence[_Job]) -> None:
        """Tell the slots the largest file this download would ask a piece of now, per server (under
        the lock): the other downloads of the process leave the slots to a larger file."""
        sizes: dict[str, int] = {}
        if not self.cancel.cancelled:
            for job in jobs:
                if not _may_ask(job):
                    continue
                host = host_of(job.queue[0][1])
                if not self.stalls.stalled(host):
                    sizes[host] = max(sizes.get(host, 0), job.size or 0)
        self.slots.bid(id(self), sizes)

    def _next(self, jobs: Sequence[_Job]) -> _Task | None:
        """The next thing to do (under the lock): a file to start, sources to find, a file to check,
        or a piece for a server with a free connection slot (the largest file first, over every
        download of the process)."""
        task = self._pick(jobs)
        self._bid(jobs)  # as things are after this pick (a file's last piece given out: no more bid)
        return task

    def _pick(self, jobs: Sequence[_Job]) -> _Task | None:
        if self.cancel.cancelled:
            return None
        # first what lets a file begin, go on or be done (a file another download of the process
        # has just finished, a complete file to check and hand over): a free slot would otherwise
        # always go to a piece of a file before it in the order, and these would wait for the end
        for job in jobs:
            if job.state == "new" and _claim(job.final):
                job.state = "prepare"
                return _Task("prepare", job)
            if job.state == "more":
                job.state = "asking"
                return _Task("more", job)
            if job.state == "run" and job.complete and job.active == 0:
                job.state = "finish"
                return _Task("finish", job)
        for job in jobs:
            if not _may_ask(job):
                continue
            if self.stalls.stalled(host_of(job.queue[0][1])) and self._avoid_stalled(job):
                continue
            src, url = job.queue[0]
            host = host_of(url)
            if not self.slots.try_acquire(host, size=job.size or 0, who=id(self)):
                continue
            if job.ranges is False:  # the whole rest over one connection
                start, end = int(job.todo[0][0] or 0), None
                job.todo = []
            else:
                piece = carve(job.todo, self.slots.limit, sum(left_in(j.todo) for j in jobs if j.state == "run"))
                assert piece is not None
                start, end = piece
            job.active += 1
            return _Task("piece", job, src, url, host, start, end, job.round, job.epoch)
        return None

    # ------------------------------------------------------------------ one file's life
    def _prepare(self, job: _Job) -> None:
        """A claimed file: already complete here, or go on from the bytes an earlier run left."""
        w = job.wanted
        if job.final.is_file() and w.sha256 and file_sha256(job.final) == w.sha256:
            size = job.final.stat().st_size
            self.emit(ProgressEvent(job.package, size, size))
            src, url = w.sources[0] if w.sources else (None, "")
            job.result = (job.final, Served(w.filename, src.id if src else "cache", src.name if src else "",
                                            display_url(url), size, 0.0, w.sha256, cached=True))
            self._done(job)
            return
        have = _hash_into(job.part, job.hasher) if job.part.is_file() else 0
        if not job.part.is_file():
            job.part.touch()
        with self._cond:
            job.hashed, job.resumed_at = have, have
            job.spans.add(0, have)
            if job.size is not None and have > job.size:
                self._drop_bytes(job)
            job.todo = [[job.spans.prefix(), job.size]] if job.size is None or job.spans.prefix() < job.size else []
            if job.queue:
                job.rounds[job.queue[0][0].id] = 1
            job.state = "run" if job.queue else "more"

    # long: one request, what its answer says about the file, and the byte loop with progress
    def _piece(self, task: _Task) -> None:
        job = task.job
        ranged = task.start > 0 or task.end is not None
        pos = task.start
        failure: Failure | None = None
        try:
            byte_range = (task.start, task.end - 1 if task.end is not None else None) if ranged else None
            with self.net.get(task.url, byte_range=byte_range, timeout=self.stall_s) as r:
                with self._cond:
                    usable = self._learn(task, r, ranged)
                if not usable:
                    return
                pos = task.start
                with open(job.part, "r+b") as fh:
                    fh.seek(pos)
                    while task.end is None or pos < task.end:
                        if self.cancel.cancelled:
                            raise Cancelled("Cancelled during the download.")
                        chunk = r.read(READ if task.end is None else min(READ, task.end - pos))
                        if not chunk:
                            break
                        fh.write(chunk)
                        fh.flush()
                        if not self._got(task, pos, len(chunk)):
                            return
                        pos += len(chunk)
                        self._hash_some(job)
                if task.end is None:
                    with self._cond:
                        job.size = job.size if job.size is not None else pos
                    task.end = pos
                if pos < task.end:
                    failure = short_read(pos, job.size or task.end)
        except NetError as err:
            failure = err.failure
        except OSError as exc:  # the .part file: disk full, removed under us
            failure = self.net.classify(exc, task.url)
        except Cancelled:
            with self._cond:
                self._settle(task, pos)
            raise
        with self._cond:
            self._settle(task, pos, failure)

    def _learn(self, task: _Task, r: Response, ranged: bool) -> bool:
        """What an answer says (under the lock): the file's size, whether ranges are honoured. False
        when the answer is of no use any more (the file's bytes were dropped meanwhile)."""
        job = task.job
        if task.epoch != job.epoch:
            return False
        total = _total_of(r)
        whole_asked = task.start == 0 and r.status == 200 and total is not None and task.end is not None \
            and total <= task.end  # a range that covered the whole file, answered with the file: fine
        if ranged and r.range_start != task.start and not whole_asked:  # a server that ignores ranges
            job.ranges = False
            if job.spans.total():
                self._drop_bytes(job)
                task.epoch = job.epoch
            job.todo = []
            task.start, task.end = 0, total
            job.size = total if total is not None else job.size
            return True
        if ranged and job.ranges is None and r.status == 206:
            job.ranges = True
        if whole_asked:
            task.end = total
        if total is not None and job.size is None:
            job.size = total
            if task.end is not None and task.end > total:
                task.end = total
            if task.end is not None and task.end < total:
                job.todo.append([task.end, total])
                job.todo.sort(key=lambda x: int(x[0] or 0))
        return True

    def _got(self, task: _Task, pos: int, n: int) -> bool:
        """Book ``n`` bytes written at ``pos``; False when the file's bytes were dropped meanwhile."""
        job = task.job
        event = None
        with self._cond:
            if task.epoch != job.epoch:
                return False
            job.spans.add(pos, pos + n)
            job.round_bytes += n
            if task.source is not None:
                job.senders.add(task.source.id)
            now = time.monotonic()
            if now - job.shown_at >= PROGRESS_EVERY_S:
                job.shown_at = now
                event = ProgressEvent(job.package, job.spans.total(), job.size or 0)
        if event is not None:
            self.emit(event)
        return True

    def _settle(self, task: _Task, pos: int, failure: Failure | None = None) -> None:
        """A piece ended (under the lock): what it did not bring is asked for again, and a failure
        moves the file on to its next source."""
        job = task.job
        job.active -= 1
        if task.epoch != job.epoch:
            return
        if task.end is None or pos < task.end:
            job.todo.append([pos, task.end])
            job.todo.sort(key=lambda x: int(x[0] or 0))
        if failure is not None and task.round == job.round and task.source is not None:
            self._source_failed(job, task.source, task.url, failure)

    def _source_failed(self, job: _Job, src: Source, url: str, failure: Failure) -> None:
        if failure.kind in ("reset", "short_read") and job.round_bytes >= KEEP_GOING and len(job.queue) <= 1:
            self._log(job, f"{render(src.name)} stopped after {job.spans.total()} bytes "
                           f"({render(failure.text)}); asked again from there")
            job.round, job.round_bytes = job.round + 1, 0
            return
        job.failures.append((src.id, msg("sources.download_failed_at", "{source}: {why}", source=src.name,
                                         why=failure.text)))
        self._log(job, f"{render(src.name)} failed after {job.spans.total()} bytes: {render(failure.text)}")
        if failure.kind == "timeout":
            self.stalls.mark(host_of(url))
        if job.queue and job.queue[0][0].id == src.id:
            job.queue.pop(0)
        if failure.kind in TRANSIENT and job.rounds.get(src.id, 0) < 2:
            job.queue.append((src, url))  # one more round for a hiccup, after the others
        self._next_source(job)

    def _next_source(self, job: _Job) -> None:
        """The file goes on with its next source (under the lock); when only sources that failed are
        left, others are asked for first (once)."""
        job.round, job.round_bytes = job.round + 1, 0
        job.resumed_at = job.spans.total()
        failed = {sid for sid, _ in job.failures}
        if not job.queue or (all(s.id in failed for s, _ in job.queue) and self.more is not None
                             and not job.asked_more):
            job.state = "more"
            return
        sid = job.queue[0][0].id
        job.rounds[sid] = job.rounds.get(sid, 0) + 1

    def _avoid_stalled(self, job: _Job) -> bool:
        """The file's source is on a server that stalled lately: another source first (True when the
        file was moved on and must wait for its next turn)."""
        other = next((i for i, (_, u) in enumerate(job.queue) if not self.stalls.stalled(host_of(u))), None)
        if other is not None:
            job.queue.insert(0, job.queue.pop(other))
            self._next_source(job)
            return True
        if self.more is not None and not job.asked_more:
            job.state = "more"
            return True
        return False

    def _ask_more(self, job: _Job) -> None:
        """Every source failed: ask (once) for others, else the file fails."""
        found: list[tuple[Source, str]] = []
        if self.more is not None and not job.asked_more:
            job.asked_more = True
            found = self.more(job.wanted, [sid for sid, _ in job.failures])
        with self._cond:
            job.queue = [*found, *(q for q in job.queue if q[0].id not in {s.id for s, _ in found})]
            if job.queue:
                job.state = "run"
                job.round, job.round_bytes = job.round + 1, 0
                job.rounds[job.queue[0][0].id] = job.rounds.get(job.queue[0][0].id, 0) + 1
                return
            job.state = "failed"
            job.error = DownloadFailed(
                f"{job.wanted.filename} could not be downloaded from any source: "
                + "; ".join(render(t) for _, t in job.failures), hint="Check the network or the proxy, or choose "
                "other sources (mirrors); the bytes received so far are kept and the next run goes on from them.")

    def _finish(self, job: _Job) -> None:
        """Every byte is in: the hash decides (the sources that sent wrong bytes are left)."""
        self._hash_some(job, wait=True)
        with job.hash_lock:
            digest = job.hasher.hexdigest()
        w = job.wanted
        if w.sha256 and digest != w.sha256:
            with self._cond:
                self._wrong_hash(job, digest)
            return
        size = job.size or 0
        with open(job.part, "r+b") as fh:
            fh.truncate(size)
        os.replace(job.part, job.final)
        remember_sha256(job.final, digest)
        src, url = job.queue[0] if job.queue else (Source("", "", "mirror", ""), "")
        self.emit(ProgressEvent(job.package, size, size))
        with self._cond:
            job.result = (job.final, Served(w.filename, src.id, src.name, display_url(url), size,
                                            time.monotonic() - job.began, w.sha256, job.resumed_at,
                                            tuple(sid for sid, _ in job.failures),
                                            tuple(t for _, t in job.failures)))
        self._done(job)

    def _done(self, job: _Job) -> None:
        """The file is complete: told (while still claimed: nothing removes it meanwhile, see
        :func:`forget`), then let go."""
        try:
            if self.on_file is not None and job.result is not None:
                self.on_file(*job.result)
        finally:
            with self._cond:
                job.state = "done"
            _unclaim(job.final)

    def _wrong_hash(self, job: _Job, digest: str) -> None:
        text = msg("sources.err_wrong_hash", "sent bytes whose SHA-256 is {got}…, not the listed {want}…",
                   got=digest[:12], want=(job.wanted.sha256 or "")[:12])
        bad = set(job.senders) or ({job.queue[0][0].id} if job.queue else set())
        for src, _ in list(job.queue):
            if src.id in bad:
                job.failures.append((src.id, msg("sources.download_failed_at", "{source}: {why}", source=src.name,
                                                 why=text)))
                self._log(job, f"{render(src.name)} failed: {render(text)}")
        job.queue = [(s, u) for s, u in job.queue if s.id not in bad]
        self._drop_bytes(job)
        job.size, job.ranges = None, None  # what the next source says (the bad one may have sent another file)
        job.todo = [[0, None]]
        self._next_source(job)
        if job.state == "finish":
            job.state = "run"

    def _drop_bytes(self, job: _Job) -> None:
        """Start the file over (under the lock): its bytes are of no use."""
        job.epoch += 1  # first: a thread hashing the old bytes stops at its next block
        with job.hash_lock:
            job.hasher, job.hashed = hashlib.sha256(), 0
        job.spans.clear()
        job.senders.clear()
        job.resumed_at = 0
        with open(job.part, "r+b") as fh:
            fh.truncate(0)

    def _hash_some(self, job: _Job, *, wait: bool = False) -> None:
        """Hash the bytes in from the start without a gap (one thread at a time; the others go on)."""
        with self._cond:  # never the other way round: _drop_bytes takes the hash lock under this one
            upto, epoch = job.spans.prefix(), job.epoch
        if not job.hash_lock.acquire(blocking=wait):
            return
        try:
            if upto <= job.hashed or epoch != job.epoch:
                return
            with open(job.part, "rb") as fh:
                fh.seek(job.hashed)
                while job.hashed < upto and epoch == job.epoch:
                    block = fh.read(min(CHUNK, upto - job.hashed))
                    if not block:
                        break
                    job.hasher.update(block)
                    job.hashed += len(block)
        finally:
            job.hash_lock.release()

    def _leave(self, job: _Job) -> None:
        """A file that did not finish: keep the bytes from its start (for the next run), or nothing."""
        if job.state in ("prepare", "run", "more", "asking", "finish", "failed") and job.part.exists():
            try:
                if self.keep_partial and job.spans.prefix() > 0:
                    with open(job.part, "r+b") as fh:
                        fh.truncate(job.spans.prefix())
                else:
                    job.part.unlink()
            except OSError:
                pass
        if job.state != "new":
            _unclaim(job.final)

    def _log(self, job: _Job, text: str) -> None:
        self.emit(LogEvent(f"{job.wanted.filename}: {text}", "info"))


def _may_ask(job: _Job) -> bool:
    """Whether a piece of ``job`` may be asked for now (under the downloader's lock): it is running,
    has bytes to ask for and a source, and is not waiting for its first answer from a server not yet
    known to honour ranges (one request at a time until then)."""
    return job.state == "run" and bool(job.todo) and bool(job.queue) \
        and not (job.active and (job.size is None or not job.ranges))


def _within(jobs: Sequence[_Job], limit_bytes: int) -> None:
    """Leave out the files that would take the download past ``limit_bytes`` (a size not known
    counts as too large)."""
    room = limit_bytes
    for job in jobs:
        if job.final.is_file():
            continue
        if job.size is not None and job.size <= room:
            room -= job.size
            continue
        job.state = "failed"
        job.error = DownloadFailed(msg("sources.no_room", "{file} was not fetched: the disk has no room for it "
                                       "beside what the install will unpack", file=job.wanted.filename))


# ---------------------------------------------------------------------- sizes first
def _size_up(dl: Downloader, jobs: Sequence[_Job]) -> None:
    """Ask each file's size (``HEAD``, a few at a time per server), so that the totals are known
    before the first byte; a server that does not answer is asked by the first piece instead."""
    with _CLAIMS_LOCK:  # a file another download of the process is fetching: it reports that one
        todo = [j for j in jobs if j.queue and not j.final.is_file() and str(j.final) not in _CLAIMS]
    lock = threading.Lock()

    def one() -> None:
        while not dl.cancel.cancelled:
            with lock:
                if not todo:
                    return
                job = todo.pop(0)
            url = job.queue[0][1]
            host = host_of(url)
            if not dl.slots.acquire(host, lambda: dl.cancel.cancelled):
                return
            try:
                with dl.net.get(url, method="HEAD", timeout=PAGE_TIMEOUT_S) as r:
                    job.size = r.length if r.status == 200 else None
                    job.ranges = True if "bytes" in r.headers.get("Accept-Ranges", "").lower() else None
            except NetError:
                pass
            finally:
                dl.slots.release(host)
            dl.emit(ProgressEvent(job.package, 0, job.size or 0))

    threads = [threading.Thread(target=one, daemon=True) for _ in range(min(len(todo), dl.slots.limit))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _total_of(r: Response) -> int | None:
    """The whole file's size: ``Content-Range: bytes a-b/TOTAL`` of a 206, else a 200's length."""
    if r.status == 206:
        total = r.headers.get("Content-Range", "").rpartition("/")[2].strip()
        return int(total) if total.isdigit() else None
    return r.length


def _hash_into(path: Path, hasher: Any) -> int:
    n = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            hasher.update(block)
            n += len(block)
    return n


_SHA: dict[tuple[str, int, int], str] = {}


def remember_sha256(path: Path, digest: str) -> None:
    """``path`` was just written with ``digest`` (hashed while it arrived): no need to read it again."""
    st = path.stat()
    _SHA[(str(path.resolve()), st.st_size, st.st_mtime_ns)] = digest


def file_sha256(path: Path) -> str:
    """The sha256 of a file (remembered per path, size and mtime within this process)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA:
        h = hashlib.sha256()
        _hash_into(path, h)
        _SHA[key] = h.hexdigest()
    return _SHA[key]


def link_or_copy(src: Path, dest: Path) -> None:
    """``dest`` holds ``src``'s bytes (a hard link where the file system allows)."""
    dest.unlink(missing_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)
