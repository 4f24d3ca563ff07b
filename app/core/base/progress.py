"""Turn uv's and pip's output lines into :class:`~app.core.base.events.ProgressEvent` s.

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

What no installer prints is the longest part of a local or cached install: unpacking the
wheels (uv unzips a 190 MB torch wheel into its cache for ~10 s, pip into the environment for
~30 s, both silently). :class:`UnpackWatch` measures it on disk: the bytes that appeared in the
environment and in uv's cache (its ``.tmp*`` unpack folders and its new archive entries) since
the install started, against the plan's installed-size estimate, as ``unit="unpacked"`` events.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from app.core.base.events import Event, ProgressEvent

_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2,
          "gib": 1024**3, "kbytes": 1000, "mbytes": 1000**2}

_PATTERNS = {
    "UV_RESOLVED": r"^Resolved (\d+) packages?",
    "UV_DOWNLOADING": r"^\s*Downloading (\S+) \(([\d.]+)\s*([KMG]i?B)\)",
    "UV_DOWNLOADED": r"^\s*Downloaded (\S+)\s*$",
    "UV_INSTALLED_N": r"^Installed (\d+) packages?",
    "UV_PREPARED_N": r"^Prepared (\d+) packages?",
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


#: The package name of the unpack events (one stream of its own beside the downloads).
UNPACKING = "(unpacking)"


def _tree_bytes(root: Path) -> int:
    """The apparent size of every file under ``root`` (hard links counted as the files they are)."""
    total = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:  # removed meanwhile (an installer's temporary file)
                        continue
        except OSError:
            continue
    return total


def uv_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where uv keeps its cache: UV_CACHE_DIR, else its default for this OS."""
    env = os.environ if env is None else env
    if env.get("UV_CACHE_DIR"):
        return Path(env["UV_CACHE_DIR"])
    if os.name == "nt":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "uv" / "cache"
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv"


class UnpackWatch:
    """The bytes an installer has unpacked so far, measured on disk every ``interval_s``.

    ``env_path`` grows as pip (or uv's final linking) writes the packages; ``uv_cache`` (when the
    installer is uv) grows first, while uv unzips wheels it has not cached yet. The larger of
    the two growths is the work done (a warm uv cache only links, a cold one unpacks and then
    links the same bytes), against ``expected_bytes`` (the plan's installed-size estimate;
    raised when the real install is larger). Emits ``ProgressEvent(UNPACKING, done, total,
    unit="unpacked")`` when the number changes.
    """

    def __init__(self, env_path: str | os.PathLike[str], expected_bytes: int, emit: Callable[[Event], None], *,
                 uv_cache: str | os.PathLike[str] | None = None, interval_s: float = 1.0) -> None:
        self.env_path = Path(env_path)
        self.expected = max(1, int(expected_bytes))
        self.emit = emit
        self.uv_cache = Path(uv_cache) if uv_cache is not None else None
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._env0 = 0
        self._archive0: set[str] = set()
        self._lock = threading.Lock()  # the watch's thread and the parser's both sample
        self.done = 0

    def _cache_new_bytes(self) -> int:
        cache = self.uv_cache
        if cache is None:
            return 0
        total = 0
        try:
            with os.scandir(cache) as it:
                tmp = [Path(e.path) for e in it if e.name.startswith(".tmp") and e.is_dir(follow_symlinks=False)]
        except OSError:
            tmp = []
        for folder in tmp:
            total += _tree_bytes(folder)
        archive = cache / "archive-v0"
        try:
            new = [archive / n for n in os.listdir(archive) if n not in self._archive0]
        except OSError:
            new = []
        for folder in new:
            total += _tree_bytes(folder)
        return total

    def measure(self) -> int:
        """Bytes unpacked since :meth:`start` (never less than the last measure)."""
        env = max(0, _tree_bytes(self.env_path) - self._env0) if self.env_path.exists() else 0
        self.done = max(self.done, env, self._cache_new_bytes())
        return self.done

    def sample(self) -> None:
        with self._lock:
            before = self.done
            done = self.measure()
            if done != before:
                self.emit(ProgressEvent(UNPACKING, done, max(self.expected, int(done * 1.02)), unit="unpacked"))

    def start(self) -> UnpackWatch:
        self._env0 = _tree_bytes(self.env_path) if self.env_path.exists() else 0
        if self.uv_cache is not None:
            try:
                self._archive0 = set(os.listdir(self.uv_cache / "archive-v0"))
            except OSError:
                self._archive0 = set()
        self._thread = threading.Thread(target=self._run, name="unpack-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def unpack_watch(installer: str, env_path: str | os.PathLike[str], estimate_mb: float,
                 emit: Callable[[Event], None], child_env: Mapping[str, str] | None = None,
                 margin: float = 1.1) -> UnpackWatch:
    """The watch for one install: ``estimate_mb`` is the plan's estimate (with its safety margin)."""
    expected = int(estimate_mb / margin * 1e6)
    return UnpackWatch(env_path, expected, emit, uv_cache=uv_cache_dir(child_env) if installer == "uv" else None)


class ProgressParser:
    """Feed it lines (``feed(line)``); it calls ``emit(event)`` for progress it can prove.

    With a ``watch`` (:class:`UnpackWatch`), the unpacking is measured on disk from the first
    line to :meth:`close`.
    """

    def __init__(self, installer: str, emit: Callable[[Event], None], watch: UnpackWatch | None = None) -> None:
        self.installer = installer
        self.emit = emit
        self.total_packages = 0
        self.done_packages = 0
        self._current: tuple[str, int] | None = None  # pip: the file being downloaded
        self._sizes: dict[str, int] = {}
        self._watch = watch
        self._watching = False

    def feed(self, line: str) -> None:
        if self._watch is not None and not self._watching:
            self._watching = True
            self._watch.start()
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
        m = _rx("UV_PREPARED_N").match(line)
        if m and self._watch is not None and self._watching:
            self._watch.sample()  # everything is unpacked now: show it before the linking starts
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
        if self._watch is not None and self._watching:
            self._watch.stop()
            self._watching = False
        self._finish_current()
