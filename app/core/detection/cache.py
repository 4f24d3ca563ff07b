"""A small on-disk cache for facts about executables (an interpreter's version, a tool's
version), keyed by the file's path, size and modification time, so that a second
``detect`` starts no process for a program that has not changed.

The file is read as every document is (:mod:`app.core.base.schema`: bounded, each field checked);
a damaged one, or one of another version, is an empty cache (it is only a cache)."""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field

from app.core.base.errors import BadInput
from app.core.base.schema import Record, document, read_state, set_aside, spec
from app.core.base.secrets import write_private

_LOCK = threading.Lock()
_VERSION = 1
MAX_ENTRIES = 1 << 16


@dataclass(frozen=True)
class Entry(Record):
    """What was learnt of one executable, and the stamp (mtime, size, inode) it was learnt for."""

    stamp: tuple[int, ...] = field(metadata=spec(max_items=4))
    value: object = None


@dataclass(frozen=True)
class CacheFile(Record):
    version: int
    entries: dict[str, Entry] = field(default_factory=dict, metadata=spec(max_items=MAX_ENTRIES))


def read_cache(path: str) -> dict[str, Entry]:
    """The entries of the cache file at ``path`` ({} when it is missing or of another version); a
    damaged one, a field of the wrong type included, is kept aside (:func:`~app.core.base.schema.read_state`)."""
    what = document("probe_cache", path)
    data = read_state(path, what=what).data
    if data is None or data.get("version") != _VERSION:
        return {}
    try:
        return CacheFile.from_dict(data, what=what).entries
    except BadInput as err:
        set_aside(path, str(err.message))
        return {}


class StampCache:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._data: dict[str, Entry] = read_cache(path) if path else {}
        self._dirty = False

    @staticmethod
    def stamp(exe: str) -> list[int] | None:
        try:
            st = os.stat(exe)
        except OSError:
            return None
        return [st.st_mtime_ns, st.st_size, st.st_ino]

    def get(self, kind: str, exe: str) -> object:
        st = self.stamp(exe)
        if st is None:
            return None
        with _LOCK:
            e = self._data.get(f"{kind}:{exe}")
        if e is not None and list(e.stamp) == st:
            return e.value
        return None

    def put(self, kind: str, exe: str, value: object) -> None:
        st = self.stamp(exe)
        if st is None:
            return
        with _LOCK:
            self._data[f"{kind}:{exe}"] = Entry(tuple(st), value)
            self._dirty = True

    def save(self) -> None:
        if not self.path or not self._dirty:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with _LOCK:
                payload = json.dumps(CacheFile(_VERSION, dict(self._data)).to_dict())
            # mode 0600: tools' outputs, read back exact (write_private leaves no temporary file on failure)
            write_private(self.path, payload, masked=False)
            self._dirty = False
        except OSError:
            pass


def default_cache() -> StampCache:
    if os.environ.get("TORCH_SETUP_NO_CACHE", "").strip() not in ("", "0"):
        return StampCache(None)
    try:
        from app.core.base.paths import cache_dir

        return StampCache(os.path.join(str(cache_dir()), "detect-cache.json"))
    except Exception:
        return StampCache(None)
