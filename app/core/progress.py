"""Turn uv's and pip's output lines into :class:`~app.core.events.ProgressEvent` s.

What each installer tells us when its output is not a terminal (what the runner sees):

* uv: ``Resolved 10 packages in 219ms``, then for every download over about 1 MiB
  ``Downloading torch (181.5MiB)`` and `` Downloaded torch`` (no bytes in between),
  ``Prepared 2 packages``, ``Installed 10 packages``, then `` + name==version`` per package.
  So: bytes per package at start and end of each download, and packages done/total.
* pip >= 24.1 with ``--progress-bar raw``: ``Progress 1234 of 5678`` lines for the file
  named by the ``Downloading`` line before them (real byte progress).
* older pip: ``Downloading torch-2.13.0-...whl (191.8 MB)``: the size; the download is over
  when pip moves on to the next line of work. ``Installing collected packages: a, b`` and
  ``Successfully installed a-1 b-2`` give the package count.

Nothing here guesses: where an installer gives no bytes, events count packages
(``unit="packages"``).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from app.core.events import Event, ProgressEvent

_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2,
          "gib": 1024**3, "kbytes": 1000, "mbytes": 1000**2}

_PATTERNS = {
    "UV_RESOLVED": r"^Resolved (\d+) packages?",
    "UV_DOWNLOADING": r"^\s*Downloading (\S+) \(([\d.]+)\s*([KMG]i?B)\)",
    "UV_DOWNLOADED": r"^\s*Downloaded (\S+)\s*$",
    "UV_INSTALLED_N": r"^Installed (\d+) packages?",
    "UV_PLUS": r"^ \+ ([A-Za-z0-9_.\-]+)==(\S+)",
    "PIP_DOWNLOADING": r"^\s*Downloading (\S+?)(?: \(([\d.]+)\s*([kKMG]i?B)\))?\s*$",
    "PIP_PROGRESS": r"^\s*Progress (\d+) of (\d+)\s*$",
    # pip's rich bar, which it also draws when not on a terminal: "━━━━ 244.6/244.6 kB 85.5 MB/s"
    "PIP_RICH": r"^\s*\S*[━╸╺─-]+\S*\s+([\d.]+)/([\d.]+)\s*(kB|MB|GB)\b",
    "PIP_INSTALLING": r"^\s*Installing collected packages: (.+)$",
    "PIP_SUCCESS": r"^\s*Successfully installed (.+)$",
    "PIP_NEXT": r"^\s*(Collecting|Processing|Requirement already|Installing collected|"
                r"Downloading|Building|Using cached|Obtaining)\b",
}
_COMPILED: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    """Patterns are compiled on first use (compiling all at import costs start-up time)."""
    pat = _COMPILED.get(name)
    if pat is None:
        pat = _COMPILED[name] = re.compile(_PATTERNS[name])
    return pat


def _size(num: str, unit: str) -> int:
    return int(float(num) * _UNITS.get(unit.lower(), 1))


def _name_from_file(filename: str) -> str:
    """``torch-2.13.0+cpu-cp311-...whl`` or a URL -> ``torch``."""
    base = filename.rsplit("/", 1)[-1]
    return re.split(r"-\d", base, maxsplit=1)[0] if "-" in base else base


class ProgressParser:
    """Feed it lines (``feed(line)``); it calls ``emit(event)`` for progress it can prove."""

    def __init__(self, installer: str, emit: Callable[[Event], None]) -> None:
        self.installer = installer
        self.emit = emit
        self.total_packages = 0
        self.done_packages = 0
        self._current: tuple[str, int] | None = None  # pip: the file being downloaded
        self._sizes: dict[str, int] = {}

    def feed(self, line: str) -> None:
        if self.installer == "uv":
            self._feed_uv(line)
        else:
            self._feed_pip(line)

    # ------------------------------------------------------------------ uv
    def _feed_uv(self, line: str) -> None:
        m = _rx("UV_RESOLVED").match(line)
        if m:
            self.total_packages = int(m.group(1))
            self.emit(ProgressEvent("", 0, self.total_packages, unit="packages"))
            return
        m = _rx("UV_DOWNLOADING").match(line)
        if m:
            size = _size(m.group(2), m.group(3))
            self._sizes[m.group(1)] = size
            self.emit(ProgressEvent(m.group(1), 0, size))
            return
        m = _rx("UV_DOWNLOADED").match(line)
        if m:
            size = self._sizes.get(m.group(1), 0)
            self.emit(ProgressEvent(m.group(1), size, size))
            return
        m = _rx("UV_INSTALLED_N").match(line)
        if m:
            self.total_packages = max(self.total_packages, int(m.group(1)))
            return
        m = _rx("UV_PLUS").match(line)
        if m:
            self.done_packages += 1
            total = max(self.total_packages, self.done_packages)
            self.emit(ProgressEvent(m.group(1), self.done_packages, total, unit="packages"))

    # ------------------------------------------------------------------ pip
    def _finish_current(self) -> None:
        if self._current is not None:
            name, size = self._current
            self.emit(ProgressEvent(name, size, size))
            self._current = None

    def _feed_pip(self, line: str) -> None:
        m = _rx("PIP_PROGRESS").match(line)
        if m and self._current is not None:
            done, total = int(m.group(1)), int(m.group(2))
            name = self._current[0]
            self._current = (name, total)
            self.emit(ProgressEvent(name, done, total))
            return
        m = _rx("PIP_RICH").match(line)
        if m and self._current is not None:
            total = _size(m.group(2), m.group(3))
            done = min(total, _size(m.group(1), m.group(3)))
            self._current = (self._current[0], total)
            self.emit(ProgressEvent(self._current[0], done, total))
            return
        if _rx("PIP_NEXT").match(line):
            self._finish_current()
        m = _rx("PIP_DOWNLOADING").match(line)
        if m:
            name = _name_from_file(m.group(1))
            size = _size(m.group(2), m.group(3)) if m.group(2) else 0
            self._current = (name, size)
            self.emit(ProgressEvent(name, 0, size))
            return
        m = _rx("PIP_INSTALLING").match(line)
        if m:
            names = [n.strip() for n in m.group(1).split(",") if n.strip()]
            self.total_packages = len(names)
            self.emit(ProgressEvent("", 0, self.total_packages, unit="packages"))
            return
        m = _rx("PIP_SUCCESS").match(line)
        if m:
            n = len(m.group(1).split())
            self.done_packages = n
            self.emit(ProgressEvent("", n, max(n, self.total_packages), unit="packages"))

    def close(self) -> None:
        self._finish_current()
