"""Our own downloader: every byte hash-checked, and a failure mid-way is not the end.

:class:`Downloader` fetches one :class:`Wanted` file at a time (several in threads) into a
download folder, trying its sources in order. The bytes stay in ``<sha256>-<file>.part``
while they arrive; when a source fails mid-way (``403`` / ``404``, a reset, a timeout, a short
read) the next source is asked for the rest with an HTTP ``Range`` request (every source of a
file lists the same sha256, so its bytes are the same); a source that ignores the range sends
the whole file again. The finished file must have the expected sha256: when it does not, the
bytes are dropped and the next source sends the file anew. Transient failures (reset, short
read, timeout) get one more round over the sources. Progress is real bytes
(:class:`~app.core.base.events.ProgressEvent`), and :class:`Served` says which source served each
file (and which ones failed before, and why).

A file already complete in the download folder (same sha256) is not fetched again; a failed
run leaves its ``.part`` files, so the next run resumes them.
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
from app.core.net.client import Client, Failure, NetError, short_read
from app.core.net.indexes import display_url
from app.core.proc.runner import CancelToken
from app.core.sources.settings import Source

__all__ = ["DownloadFailed", "Downloader", "Served", "Wanted", "file_sha256", "link_or_copy"]

CHUNK = 1 << 20
TRANSIENT = ("reset", "short_read", "timeout")
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


@dataclass
class _Attempt:
    """The state of one file's download across its sources."""

    wanted: Wanted
    part: Path
    hasher: Any = field(default_factory=hashlib.sha256)
    have: int = 0
    failures: list[tuple[str, Text]] = field(default_factory=list)

    def reset(self) -> None:
        self.hasher = hashlib.sha256()
        self.have = 0
        self.part.unlink(missing_ok=True)


class Downloader:
    """Fetches files into ``folder`` with ``net``; events go to ``emit`` (serialised)."""

    def __init__(self, net: Client, folder: Path, emit: Callable[[Event], None], cancel: CancelToken,
                 more: Callable[[Wanted, Sequence[str]], list[tuple[Source, str]]] | None = None) -> None:
        self.net = net
        self.folder = folder
        self._emit = emit
        self.cancel = cancel
        self.more = more  # further sources for a file whose own ones all failed (asked once)
        self._lock = threading.Lock()
        folder.mkdir(parents=True, exist_ok=True)

    def emit(self, event: Event) -> None:
        with self._lock:
            self._emit(event)

    def path_for(self, w: Wanted) -> Path:
        return self.folder / (f"{w.sha256[:16]}-{w.filename}" if w.sha256 else w.filename)

    # ------------------------------------------------------------------ one file
    def fetch(self, w: Wanted) -> tuple[Path, Served]:
        """The finished file and who served it; raises DownloadFailed or Cancelled."""
        final = self.path_for(w)
        began = time.monotonic()
        if final.is_file() and w.sha256 and file_sha256(final) == w.sha256:
            size = final.stat().st_size
            self.emit(ProgressEvent(w.package or w.filename, size, size))
            src, url = w.sources[0] if w.sources else (None, "")
            return final, Served(w.filename, src.id if src else "cache", src.name if src else "", display_url(url),
                                 size, 0.0, w.sha256, cached=True)
        a = _Attempt(w, final.with_name(final.name + ".part"))
        if a.part.is_file():  # a run before this one stopped here: go on from its bytes
            a.have = _hash_into(a.part, a.hasher)
        queue = list(w.sources)
        asked_more = False
        rounds: dict[str, int] = {}
        while True:
            while queue:
                src, url = queue.pop(0)
                rounds[src.id] = rounds.get(src.id, 0) + 1
                resumed_at = a.have
                failure = self._from(a, src, url)
                if failure is None:
                    os.replace(a.part, final)
                    remember_sha256(final, a.hasher.hexdigest())
                    earlier = tuple(sid for sid, _ in a.failures)
                    return final, Served(w.filename, src.id, src.name, display_url(url), a.have,
                                         time.monotonic() - began, w.sha256, resumed_at, earlier,
                                         tuple(t for _, t in a.failures))
                a.failures.append((src.id, msg("sources.download_failed_at", "{source}: {why}", source=src.name,
                                                why=failure.text)))
                self.emit(LogEvent(f"{w.filename}: {render(src.name)} failed after {a.have} bytes: "
                                   f"{render(failure.text)}", "info"))
                if failure.kind in TRANSIENT and rounds[src.id] < 2:
                    queue.append((src, url))  # one more round for a hiccup, after the others
            if self.more is not None and not asked_more:
                asked_more = True
                queue = self.more(w, [sid for sid, _ in a.failures])
                if queue:
                    continue
            raise DownloadFailed(
                f"{w.filename} could not be downloaded from any source: "
                + "; ".join(render(t) for _, t in a.failures), hint="Check the network or the proxy, or choose "
                "other sources (mirrors); the bytes received so far are kept and the next run goes on from them.")

    # long: one request, its range bookkeeping, the byte loop with hashing and progress
    def _from(self, a: _Attempt, src: Source, url: str) -> Failure | None:
        """Ask ``src`` for the file (the rest of it); None when the file is complete and right."""
        w = a.wanted
        last = 0.0
        try:
            with self.net.get(url, byte_range=(a.have, None) if a.have else None) as r:
                if a.have and r.range_start != a.have:
                    a.reset()  # the range was not honoured: the whole file comes again
                length = r.length
                total = a.have + length if length is not None else 0
                with open(a.part, "ab") as fh:
                    while True:
                        if self.cancel.cancelled:
                            raise Cancelled("Cancelled during the download.")
                        chunk = r.read(CHUNK)
                        if not chunk:
                            break
                        fh.write(chunk)
                        a.hasher.update(chunk)
                        a.have += len(chunk)
                        now = time.monotonic()
                        if now - last >= PROGRESS_EVERY_S:
                            last = now
                            self.emit(ProgressEvent(w.package or w.filename, a.have, total))
                if total and a.have < total:
                    return short_read(a.have, total)
        except NetError as err:
            return err.failure
        except (OSError, ValueError) as exc:  # a reset or timeout while reading
            return self.net.classify(exc, url)
        self.emit(ProgressEvent(w.package or w.filename, a.have, a.have))
        digest = a.hasher.hexdigest()
        if w.sha256 and digest != w.sha256:
            a.reset()
            return Failure("wrong_hash", msg("sources.err_wrong_hash", "sent bytes whose SHA-256 is {got}…, not the "
                                             "listed {want}…", got=digest[:12], want=w.sha256[:12]))
        return None

    # ------------------------------------------------------------------ many files
    def fetch_all(self, wanted: Sequence[Wanted], *, threads: int = 4) -> list[tuple[Path, Served]]:
        """Every file (the first, the largest, starts at once; the rest share ``threads``)."""
        results: list[tuple[Path, Served] | BaseException | None] = [None] * len(wanted)
        todo = list(range(len(wanted)))
        lock = threading.Lock()

        def worker() -> None:
            while True:
                with lock:
                    if not todo or self.cancel.cancelled:
                        return
                    i = todo.pop(0)
                try:
                    results[i] = self.fetch(wanted[i])
                except BaseException as exc:  # carried to the caller's thread
                    results[i] = exc

        pool = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, min(threads, len(wanted))))]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        errors = [r for r in results if isinstance(r, BaseException)]
        if any(isinstance(e, Cancelled) for e in errors) or self.cancel.cancelled:
            raise Cancelled("Cancelled during the download.")
        if errors:
            raise errors[0]
        return [r for r in results if isinstance(r, tuple)]


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
