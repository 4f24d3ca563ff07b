"""PySide6's own support code, compiled once instead of at every start.

shiboken6 carries its Python support code (the signature and ``__feature__`` machinery: 14
modules, about 130 KB of source) inside ``libshiboken`` and compiles it each time a process
imports PySide6: its wheels are ``abi3``, one build for every Python 3, so they cannot carry
bytecode. Compiling it is 10-20 ms here, before any window can appear, in every PySide6 program.

:func:`import_pyside` imports PySide6 with that compile step cached, the way Python caches a
module's bytecode in ``__pycache__``: the code objects are kept in one file in this package's
bytecode cache folder (``sys.pycache_prefix`` is honoured), and reused while the source PySide
hands over is the same, byte for byte. Nothing is written when Python writes no bytecode
(``-B``, ``PYTHONDONTWRITEBYTECODE``) or where the folder is not writable; then PySide compiles as
it always did. A file that is damaged or made by another Python is ignored and replaced.

Only ``compile`` calls that PySide's embedded importer makes while PySide6 is first imported are
served from the cache (``exec`` mode, with a file name inside ``shibokensupport``); every other
call goes to Python's own ``compile`` with the caller's ``from __future__`` flags, as before.
"""
from __future__ import annotations
import __future__

import builtins
import marshal
import os
import sys
import zlib
from pathlib import Path
from typing import Any

#: the first bytes of the cache file, then the CRC-32 of the marshalled payload (4 bytes)
MAGIC = b"torch-setup pyside-support 1\n"

#: the ``from __future__`` flags a ``compile`` call inherits from its caller's code
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

#: how this process loaded PySide6's support code: True from the cache, False compiled, None not
#: through :func:`import_pyside` (PySide6 was imported before ``app.gui``); the self-test shows it
loaded_from_cache: bool | None = None

#: PySide's embedded modules are compiled under file names in this package
_SUPPORT_PREFIX = "shibokensupport/"  # (zip member names: always "/")


def cache_file() -> Path:
    """Where the compiled support code is kept: beside this package's own bytecode (or under
    ``sys.pycache_prefix``), named for this Python (``cpython-311``) and its optimisation level."""
    here = Path(__file__).resolve().parent
    name = f"pyside-support.{sys.implementation.cache_tag}.opt{sys.flags.optimize}.bin"
    prefix = getattr(sys, "pycache_prefix", None)
    if prefix:
        return Path(prefix) / here.relative_to(here.anchor) / name
    return here / "__pycache__" / name


def read_cache(path: Path) -> dict[tuple, Any]:
    """The cached code objects by key, or an empty dict (no file, damaged, another format)."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    head = len(MAGIC) + 4
    if len(data) < head or not data.startswith(MAGIC):
        return {}
    payload = data[head:]
    if zlib.crc32(payload).to_bytes(4, "little") != data[len(MAGIC):head]:
        return {}  # damaged: never hand a broken file to marshal
    try:
        entries = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def write_cache(path: Path, entries: dict[tuple, Any]) -> bool:
    """Write ``entries`` atomically (a whole new file, then a rename). False when it cannot."""
    try:
        payload = marshal.dumps(entries)
    except ValueError:
        return False
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)  # __pycache__ only: never a tree of folders
        with open(tmp, "wb") as out:
            out.write(MAGIC + zlib.crc32(payload).to_bytes(4, "little") + payload)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False


class CachedCompile:
    """A stand-in for ``builtins.compile`` while PySide6 is imported: PySide's support modules
    come from ``entries`` when their source is unchanged; everything else is compiled."""

    def __init__(self, entries: dict[tuple, Any]) -> None:
        self.original = builtins.compile
        self.entries = entries
        self.used: dict[tuple, Any] = {}
        self.compiled = 0  # support modules compiled in this run (0: the cache was complete)

    def __call__(self, source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                 optimize: int = -1, **kwargs: Any) -> Any:
        if not dont_inherit:  # what the caller's code would have passed on to compile()
            flags |= sys._getframe(1).f_code.co_flags & _FUTURE_FLAGS
        if (kwargs or mode != "exec" or optimize != -1 or not isinstance(source, bytes | str)
                or not isinstance(filename, str) or not filename.startswith(_SUPPORT_PREFIX)):
            return self.original(source, filename, mode, flags, True, optimize, **kwargs)
        raw = source.encode() if isinstance(source, str) else source
        key = (filename, flags, len(raw), zlib.crc32(raw))
        code = self.entries.get(key)
        if code is None:
            code = self.original(source, filename, mode, flags, True)
            self.compiled += 1
        self.used[key] = code
        return code


def import_pyside(cache: Path | None = None, *, write: bool | None = None) -> bool:
    """Import ``PySide6.QtCore`` with PySide's support code served from ``cache`` (default:
    :func:`cache_file`). Returns True when that code came from the cache, complete.

    ``write``: keep what was compiled in ``cache`` (default: unless Python writes no bytecode;
    the frozen app's build passes True, since the frozen app itself writes none)."""
    if "PySide6.QtCore" in sys.modules or "shiboken6" in sys.modules:
        import PySide6.QtCore

        return False
    path = cache or cache_file()
    stand_in = CachedCompile(read_cache(path))
    builtins.compile = stand_in
    try:
        import PySide6.QtCore  # noqa: F401
    finally:
        builtins.compile = stand_in.original
    if write is None:
        write = not sys.dont_write_bytecode
    if write and stand_in.compiled and stand_in.used:
        write_cache(path, stand_in.used)  # only this PySide's modules: older entries go
    global loaded_from_cache
    loaded_from_cache = bool(stand_in.used) and not stand_in.compiled
    return loaded_from_cache


def main(argv: list[str]) -> int:
    """``python -I app/gui/pyside_support.py DIR``: compile PySide6's support code for this Python
    into ``DIR`` and print the file's path (build.spec bundles it into the frozen app, which
    writes no bytecode itself). Run as a script, so that PySide6 is not already loaded by the
    ``app.gui`` package. Exit 1 when nothing could be cached."""
    out = Path(argv[0]) / cache_file().name
    out.parent.mkdir(parents=True, exist_ok=True)
    import_pyside(out, write=True)
    if not read_cache(out):
        print(f"PySide6's support code could not be cached in {out}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
