"""Operating-system errors in words: an errno (or a socket lookup failure) as a translated sentence.

Python's ``strerror`` is the C library's English ("No space left on device"); a person reading
Chinese gets :func:`os_error_text` instead: the common errnos each have a sentence of their own,
and anything else keeps the system's words.
"""
from __future__ import annotations

import errno
import socket

from app.core.base.text import Msg, msg

__all__ = ["errno_text", "os_error_text"]

_GAI_NONAME = {getattr(socket, "EAI_NONAME", -2), -2}
_GAI_AGAIN = {getattr(socket, "EAI_AGAIN", -3), -3}
#: Windows' own numbers (``OSError.winerror``, WSA codes) -> the errno with the same meaning.
_WINDOWS = {112: errno.ENOSPC, 5: errno.EACCES, 2: errno.ENOENT, 3: errno.ENOENT, 206: errno.ENAMETOOLONG,
            32: errno.EBUSY, 10061: errno.ECONNREFUSED, 10060: errno.ETIMEDOUT, 10054: errno.ECONNRESET,
            10051: errno.ENETUNREACH, 10065: errno.EHOSTUNREACH, 11001: -2, 11004: -2, 11002: -3}


#: errno -> its sentence. The socket lookup failures come first so that an errno of the same number
#: (EAI_AGAIN is 2, ENOENT, on macOS) keeps its own sentence.
_TEXTS: dict[int, Msg] = {
    **dict.fromkeys(_GAI_NONAME, msg("oserror.no_such_host", "the server name is not known on this network")),
    **dict.fromkeys(_GAI_AGAIN, msg("oserror.dns_again", "the server name could not be looked up just now")),
    errno.ENOSPC: msg("oserror.no_space", "the disk is full"),
    **dict.fromkeys((errno.EACCES, errno.EPERM), msg("oserror.access", "permission denied")),
    errno.ENOENT: msg("oserror.not_found", "no such file or folder"),
    errno.EROFS: msg("oserror.read_only", "the disk is read-only"),
    errno.ENAMETOOLONG: msg("oserror.name_too_long", "the path is too long"),
    errno.ECONNREFUSED: msg("oserror.refused", "the server refused the connection"),
    errno.ETIMEDOUT: msg("oserror.timed_out", "the connection timed out"),
    errno.ECONNRESET: msg("oserror.reset", "the connection was reset"),
    **dict.fromkeys((errno.ENETUNREACH, errno.EHOSTUNREACH),
                    msg("oserror.unreachable", "the network cannot be reached")),
    errno.EEXIST: msg("oserror.exists", "it already exists"),
    errno.ENOTDIR: msg("oserror.not_a_folder", "a part of the path is not a folder"),
    errno.EISDIR: msg("oserror.is_a_folder", "it is a folder"),
    errno.EBUSY: msg("oserror.busy", "another program is using it"),
    errno.ENOTEMPTY: msg("oserror.not_empty", "the folder is not empty"),
}


def errno_text(code: int | None, fallback: str = "", *, windows: bool = False) -> Msg:
    """The sentence for ``code`` (an ``errno`` value, or with ``windows`` a Windows error number),
    or the system's own words ``fallback`` when there is none."""
    if windows and code is not None:
        code = _WINDOWS.get(code, code)
    known = _TEXTS.get(code) if code is not None else None
    if known is not None:
        return known
    return msg("oserror.other", "{reason}", reason=fallback or (f"error {code}" if code is not None else "error"))


def _tls_text(exc: OSError) -> Msg | None:
    """A TLS failure (``ssl.SSLError`` is an OSError whose errno is the SSL library's own number:
    1 would read "permission denied") in words; None for any other error."""
    names = {c.__name__ for c in type(exc).__mro__}
    if "SSLError" not in names:
        return None
    reason = str(getattr(exc, "verify_message", "") or getattr(exc, "reason", "") or exc)
    if "SSLCertVerificationError" in names:
        return msg("oserror.tls_verify", "the server's certificate could not be verified ({reason})", reason=reason)
    return msg("oserror.tls", "the secure (TLS) connection failed ({reason})", reason=reason)


def os_error_text(exc: BaseException) -> Msg:
    """``exc`` (an OSError, a socket error) as a sentence; unknown ones keep their own text."""
    if isinstance(exc, OSError) and (tls := _tls_text(exc)) is not None:
        return tls
    if isinstance(exc, OSError):
        winerror = getattr(exc, "winerror", None)
        if isinstance(winerror, int):
            return errno_text(winerror, exc.strerror or str(exc), windows=True)
        return errno_text(exc.errno, exc.strerror or str(exc))
    return errno_text(None, str(exc))
