"""The command line's own output never fails on a character the stream cannot encode.

On Windows a console gets UTF-16 from Python, so anything prints; a **redirected** stream (a pipe,
``> file``, a CI log) is written in the ANSI code page (cp1252 on an English machine, cp936 on a
Chinese one), and ``PYTHONIOENCODING`` can name any code page (cp437, the OEM one). Python's
default for stdout is ``errors="strict"`` (``surrogateescape`` in a C locale), so a path such as
``C:\\Users\\张伟\\…`` in a cp1252 stream, or an em dash in a cp437 one, ended the command with a
``UnicodeEncodeError`` traceback.

Decision: such a stream keeps its encoding (what other Windows programs write there and what
the reader of a redirected file or pipe expects), and what it cannot encode is written as a
backslash escape (``\\u5f20``) instead of raising: nothing is lost, a JSON document stays valid
(``\\uXXXX`` is JSON's own escape for a character of the Basic Multilingual Plane), and a person
reading it can still tell what was there (``?`` would not). UTF-8 streams are left alone.
"""
from __future__ import annotations

import codecs
import sys
from typing import Any

__all__ = ["stdin_is_terminal", "tolerant", "tolerant_streams"]


def stdin_is_terminal() -> bool:
    """Whether a person can answer on standard input. On Windows ``isatty()`` is True for NUL too
    (a character device: what a service, a scheduled task or ``< NUL`` gives): only a console
    handle answers GetConsoleMode, so that is asked as well."""
    stream = sys.stdin
    try:
        if stream is None or not stream.isatty():
            return False
        fd = stream.fileno()
    except (OSError, ValueError):  # closed, or not a real file
        return False
    if sys.platform == "win32":
        import ctypes
        import msvcrt

        try:
            handle = msvcrt.get_osfhandle(fd)
        except OSError:
            return False
        mode = ctypes.c_uint32()
        return bool(ctypes.windll.kernel32.GetConsoleMode(ctypes.c_void_p(handle), ctypes.byref(mode)))
    return True

ESCAPE = "backslashreplace"
# the error handlers that raise on a character the encoding lacks ("surrogateescape" is Python's
# choice for a C locale, and Wine's Windows Python has it)
_RAISING = (None, "strict", "surrogateescape")


def _is_utf(encoding: str | None) -> bool:
    try:
        name = codecs.lookup(encoding or "").name
    except LookupError:
        return False
    return name.startswith("utf")


def tolerant(stream: Any) -> bool:
    """Make ``stream`` write what its encoding cannot hold as backslash escapes; True when it was
    changed. A UTF-8 stream, one already tolerant, None (a windowed program) or one that cannot
    be reconfigured is left as it is."""
    if stream is None or _is_utf(getattr(stream, "encoding", None)):
        return False
    if getattr(stream, "errors", None) not in _RAISING:
        return False
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None:
        return False
    try:
        reconfigure(errors=ESCAPE)
    except (OSError, ValueError, TypeError):  # closed, or a stream that takes no such option
        return False
    return True


def tolerant_streams(*streams: Any) -> None:
    """:func:`tolerant` for each of ``streams`` (the CLI's stdout and stderr)."""
    for stream in streams:
        tolerant(stream)
