"""A small on-disk cache for facts about executables (an interpreter's version, a tool's
version), keyed by the file's path, size and modification time, so that a second
``detect`` starts no process for a program that has not changed."""
from __future__ import annotations

import json
import os
import threading
from typing import Any

from app.core.base.schema import read_state
from app.core.base.secrets import write_private

_LOCK = threading.Lock()
_VERSION = 1


class StampCache:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._data: dict[str, Any] = {}  # JSON from the cache file
        self._dirty = False
        if path:
            data = read_state(path, what="the detection cache").data or {}  # a damaged one kept aside
            entries = data.get("entries")
            if data.get("version") == _VERSION and isinstance(entries, dict):
                self._data = entries

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
        if isinstance(e, dict) and e.get("stamp") == st:
            return e.get("value")
        return None

    def put(self, kind: str, exe: str, value: object) -> None:
        st = self.stamp(exe)
        if st is None:
            return
        with _LOCK:
            self._data[f"{kind}:{exe}"] = {"stamp": st, "value": value}
            self._dirty = True

    def save(self) -> None:
        if not self.path or not self._dirty:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with _LOCK:
                payload = json.dumps({"version": _VERSION, "entries": self._data})
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
