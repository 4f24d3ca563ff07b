"""Is a source location a local path or a URL? The one rule, for every place that takes a wheel
folder, a bundle or an index (``--find-links``, ``--from-bundle``, ``--index-url``, the wizard's
folder fields, an answer file's ``find_links`` and ``bundle``).

:func:`local_path` answers with the local path a location names, or None for a network URL:

* ``file:`` URLs are local. Their path is converted as the standard library's ``url2pathname`` does on
  the OS: on Windows ``file:///C:/wheels`` is ``C:\\wheels``, ``file://server/share/w`` is
  ``\\\\server\\share\\w`` and ``%20`` is a space; on POSIX ``file:///srv/w%20h`` is
  ``/srv/w h`` (``file://localhost/...`` is the same as ``file:///...``). The conversion is
  written out here (not ``nturl2path``, deprecated in Python 3.14) so both forms can be tested
  on either OS.
* A location with no URL scheme is local: ``/srv/wheels``, ``./wheels``, ``wheels``,
  ``\\\\server\\share\\wheels`` (UNC), ``//server/share``, ``\\\\?\\C:\\wheels``.
* A one-letter "scheme" is never a URL scheme (none exists): on Windows it is a drive
  (``C:\\wheels``, ``d:/bundle``, ``C:wheels``); on POSIX a string such as ``C:\\wheels`` is
  a plain relative file name there, so it is checked as a path ("C:\\wheels does not exist"),
  never refused as "unsupported URL scheme 'c'". It is not translated to a POSIX path: a
  Windows drive means nothing on another OS.
* A URL is a scheme of two letters or more followed by ``//`` (``https://``, ``ftp://``, a
  mistyped ``htps://``), or ``http:`` / ``https:`` without it. A folder whose name holds a
  colon (``wheels:old``) stays a path.

What goes to uv and pip is the location as the user gave it: both take Windows paths, UNC paths
and ``file://`` URLs (such as :meth:`pathlib.Path.as_uri` writes) for ``--find-links``.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path

__all__ = ["file_url_path", "folder_path", "is_url", "local_path", "url_scheme"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_SCHEMES_WITHOUT_SLASHES = frozenset({"http", "https", "file"})
_NT_DRIVE_AFTER_SLASHES = re.compile(r"^\\*([A-Za-z])[:|](.*)$", re.DOTALL)


def url_scheme(location: str) -> str:
    """The URL scheme of ``location`` in lower case ("" for a local path, see the module's rule)."""
    m = _SCHEME.match(location)
    if m is None or len(m.group(1)) == 1:
        return ""
    scheme = m.group(1).lower()
    return scheme if location[m.end():].startswith("//") or scheme in _SCHEMES_WITHOUT_SLASHES else ""


def file_url_path(url: str, *, windows: bool | None = None) -> str:
    """The local path of a ``file:`` URL, for Windows (``windows``; default: this OS) or POSIX."""
    win = os.name == "nt" if windows is None else windows
    parts = urllib.parse.urlsplit(url)
    host = "" if parts.netloc.lower() in ("", "localhost") else parts.netloc
    path = urllib.parse.unquote(parts.path)
    if not win:
        return f"//{host}{path}" if host else path
    path = path.replace("/", "\\")
    if host:  # file://server/share/w -> \\server\share\w
        return "\\\\" + host + path
    drive = _NT_DRIVE_AFTER_SLASHES.match(path)
    if drive:  # file:///C:/w (also the old file:///C|/w) -> C:\w
        return drive.group(1).upper() + ":" + drive.group(2)
    if path.startswith("\\\\"):  # file:////server/share/w -> \\server\share\w
        return "\\\\" + path.lstrip("\\")
    return path


def local_path(location: str | os.PathLike[str], *, windows: bool | None = None) -> str | None:
    """The local path ``location`` names (a ``file:`` URL converted), or None when it is a URL."""
    s = os.fspath(location)
    scheme = url_scheme(s)
    if scheme == "file":
        try:
            return file_url_path(s, windows=windows)
        except ValueError:  # a broken host part ("file://[x/w"): the text itself, which names no folder
            return s
    return None if scheme else s


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a network URL (http, https, or another scheme), not a local path."""
    return local_path(location) is None


def folder_path(location: str | os.PathLike[str]) -> Path:
    """A folder given as a path or a ``file:`` URL, as a :class:`~pathlib.Path` (for ``--from-bundle``)."""
    s = os.fspath(location)
    return Path(local_path(s) or s)
