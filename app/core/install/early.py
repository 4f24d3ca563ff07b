"""Early downloads: the recommended build's wheels come while the user reads the wizard's pages.

:class:`Ahead` says what to fetch: a recommendation's packages and index, the new environment's
Python, the user's sources and package index. It is also the key: the wizard starts one
:class:`Prefetch` per key and cancels the one before when the choice changes. A prefetch does
what the install will do, early: it verifies the sources for the pinned torch wheels (as the
pre-flight does), resolves the whole set with uv (as the install does), and downloads every file
into the download folder with our downloader. The install that follows finds them there,
complete and hash-checked, and fetches only what is missing (a file the prefetch is still
fetching is waited for, never fetched twice).

* Cancelled (the choice changed, the wizard closed): it stops within a read; the files it
  completed stay (complete and hash-checked: the same choice again, or another that shares
  them, finds them), the partial ones are removed, so the folder holds nothing else.
* It never fills the disk: it fetches no more than leaves room for unpacking what it fetched
  (the pre-flight's estimate: :data:`~app.core.install.sizing.WHEEL_TO_INSTALLED` times the
  download, with its :data:`~app.core.install.sizing.MARGIN`).
* :func:`early_allowed` says whether to fetch at all: not when the user turned it off
  (:mod:`app.core.base.prefs`), nor on a connection that looks metered (:mod:`app.core.detection.metered`).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base import disk
from app.core.base.errors import Cancelled, UserError
from app.core.base.events import Event, ProgressEvent, ignore
from app.core.base.requirements import requirement_name
from app.core.base.text import Text, msg
from app.core.env.distinfo import TORCH_FAMILY
from app.core.install.sizing import MARGIN, WHEEL_TO_INSTALLED
from app.core.net.client import Client, NetError
from app.core.proc import runner
from app.core.sources import SourceSettings
from app.core.sources.download import Downloader, Served
from app.core.sources.routing import verify
from app.core.sources.wheelhouse import alternatives, download_folder, resolve, wanted_for

__all__ = ["Ahead", "Prefetch", "early_allowed"]


@dataclass(frozen=True)
class Ahead:
    """What to fetch early (and the key of a prefetch: another one means another prefetch)."""

    requirements: tuple[str, ...]  # the recommendation's packages, pinned
    index_url: str  # the recommendation's torch index
    python: str  # "3.11": the new environment's Python
    sources: SourceSettings = field(default_factory=SourceSettings)
    default_index: str | None = None  # the package index for the rest (PyPI or the user's mirror)
    extra_index_urls: tuple[str, ...] = ()

    @property
    def pins(self) -> tuple[str, ...]:
        """The torch packages the verified routing looks for (torch first)."""
        pins = [r for r in self.requirements if requirement_name(r) in TORCH_FAMILY and "==" in r]
        return tuple(sorted(pins, key=lambda r: requirement_name(r) != "torch"))


def early_allowed(enabled: bool, metered: Callable[[], bool | None]) -> tuple[bool, Text]:
    """Whether to fetch early, and why not: turned off, or a connection that looks metered."""
    if not enabled:
        return False, msg("prefetch.off", "Early downloads are turned off.")
    if metered():
        return False, msg("prefetch.metered", "Not downloading early: this connection looks metered.")
    return True, ""


def room_bytes(folder: Path) -> int | None:
    """How much may be fetched into ``folder`` and still leave room to unpack it (None: not known)."""
    free = disk.free_mb(folder)
    if free is None:
        return None
    return int(free * 1e6 / (1 + WHEEL_TO_INSTALLED * MARGIN))


class Prefetch:
    """One early download (see the module docstring). ``state``: waiting, checking, resolving,
    downloading, done, cancelled, skipped (nothing to fetch, or no verified source) or failed;
    ``why`` says why for the last three; ``done_bytes`` / ``total_bytes`` are its progress."""

    def __init__(self, ahead: Ahead, *, uv: str | None, proxy: str | None = None, ca_bundle: str | None = None,
                 emit: Callable[[Event], None] = ignore, check: Callable[[], tuple[bool, Text]] | None = None) -> None:
        self.ahead = ahead
        self.check = check  # asked first, in the prefetch's thread: whether to fetch at all (early_allowed)
        self.uv = uv
        self.net = Client(proxy, ca_bundle)
        self.emit = emit
        self.token = runner.CancelToken()
        self.state = "waiting"
        self.why: Text = ""
        self.files: list[tuple[Path, Served]] = []
        self._bytes: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def done_bytes(self) -> int:
        with self._lock:
            return sum(d for d, _ in self._bytes.values())

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(t for _, t in self._bytes.values())

    def start(self) -> Prefetch:
        self._thread = threading.Thread(target=self._run, name="early-downloads", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop (at once: the thread ends within a read)."""
        self.token.cancel()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether it has ended (within ``timeout`` seconds)."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is None or not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _progress(self, e: Event) -> None:
        if isinstance(e, ProgressEvent) and e.unit == "bytes":
            with self._lock:
                self._bytes[e.package] = (e.done_bytes, e.total_bytes)
        self.emit(e)

    def _run(self) -> None:
        try:
            self._fetch()
        except Cancelled:
            self.state = "cancelled"
        except (UserError, NetError, OSError) as exc:
            self.state = "failed"
            self.why = exc.message if isinstance(exc, UserError) else str(exc)
        if self.token.cancelled and self.state not in ("done", "skipped", "failed"):
            self.state = "cancelled"

    def _fetch(self) -> None:
        a = self.ahead
        if self.check is not None:
            ok, why = self.check()
            if not ok:
                self.state, self.why = "skipped", why
                return
        if not a.pins:
            self.state, self.why = "skipped", msg("prefetch.nothing", "Nothing to download early.")
            return
        self.state = "checking"
        route = verify(a.sources, a.index_url, a.pins, a.python, net=self.net)
        self.token.raise_if_cancelled()
        if route.chosen is None:
            self.state, self.why = "skipped", msg("prefetch.no_source", "No source was verified for {want}.",
                                                  want=a.pins)
            return
        self.state = "resolving"
        locked = resolve(self.uv, a.requirements, a.python, route, default_index=a.default_index,
                         extra_index_urls=a.extra_index_urls, find_links=a.sources.find_links,
                         cancel=self.token) if self.uv else None
        self.token.raise_if_cancelled()
        wanted, _here = wanted_for(route, locked, a.sources.folders)
        self.state = "downloading"
        dl = Downloader(self.net, download_folder(), self._progress, self.token,
                        more=alternatives(route, self.net), keep_partial=False)
        got = dl.fetch_each(wanted, limit_bytes=room_bytes(download_folder()))
        self.files = [g for g in got if isinstance(g, tuple)]
        self.token.raise_if_cancelled()
        self.state = "done"
