"""Delete files and trees the way every OS needs, for the rollback and the removal of an
environment (:mod:`app.core.install.transaction`, :mod:`app.core.lifecycle.remove`) and the
rollback of a bundle (:mod:`app.core.install.bundle`).

What the callers decide stays theirs: what may be deleted at all, which entries are ours.
:func:`delete_tree` never follows a link or a junction and never enters another file system;
:func:`delete_entry` is how one entry goes away:

* **read-only**: a permission refusal makes the entry writable (on Windows that clears the
  read-only attribute that ``os.unlink`` refuses; a link is never changed, its target is not
  ours) and its folder too when that folder is inside what is being deleted, then it is tried
  again;
* **busy** (Windows only): a file another program has open (an antivirus scan, the search
  indexer, an editor, a python.exe that is still exiting) refuses with WinError 32 (sharing
  violation) or 5 (access denied, also a delete still pending), a folder whose last file is
  going with 145 (not empty yet). Tried again after short pauses, :data:`RETRY_DELAYS_S`,
  about 4 s in all, then reported;
* **long paths** (Windows only): a path of :data:`LONG_PATH` characters or more is given to
  the OS in its extended form ``\\\\?\\C:\\...`` (``\\\\?\\UNC\\server\\share\\...``), so a tree
  deeper than MAX_PATH (260) is deleted without LongPathsEnabled. Messages show the path as
  the user knows it.

Another file system is told by its device number, and on Linux also by the kernel's own list of
mount points (``/proc/self/mountinfo``): a bind mount of a folder of the same disk (``mount
--bind ~/data env/data``) has the same device as the folder around it and would otherwise be
walked into and emptied. :func:`mount_points_under` lists them.
"""
from __future__ import annotations

import ntpath
import os
import re
import stat
import time
from collections.abc import Callable

from app.core.base.cancel import CancelToken

__all__ = ["LONG_PATH", "RETRY_DELAYS_S", "delete_entry", "delete_tree", "extended_path", "is_link",
           "mount_points_under", "os_path", "shown_path"]


def _unescape_mountinfo(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash come as octal escapes (\\040 ...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_points_under(root: str | os.PathLike[str], *, mountinfo: str = "/proc/self/mountinfo") -> set[str]:
    """The mount points strictly inside ``root`` (bind mounts of the same disk included), as the
    kernel lists them; empty where there is no such list (not Linux)."""
    top = os.path.realpath(root)
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return set()
    out = set()
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            point = _unescape_mountinfo(fields[4])
            if point != top and _inside(point, top):
                out.add(point)
    return out

#: Pauses between the tries of a busy entry on Windows (seconds).
RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.0)
#: From this length on a Windows path goes to the OS in its extended form (MAX_PATH 260 less the
#: 12 characters CreateDirectory keeps for an 8.3 name; shorter paths keep their usual form).
LONG_PATH = 248

_EXTENDED = "\\\\?\\"
_EXTENDED_UNC = "\\\\?\\UNC\\"
#: WinError codes of "busy, try again": sharing violation, access denied, lock violation, dir not empty
_BUSY = frozenset({32, 5, 33, 145})


def extended_path(path: str) -> str:
    """The ``\\\\?\\`` form of an absolute Windows path (``C:\\a`` -> ``\\\\?\\C:\\a``, ``\\\\srv\\share\\a``
    -> ``\\\\?\\UNC\\srv\\share\\a``), normalised first (that form takes every character as it is:
    no ``/``, ``.`` or ``..`` is resolved in it); a relative or drive-relative path, or one
    already in a device form, is returned as it is. Pure string work: testable on any OS."""
    if path.startswith((_EXTENDED, "\\\\.\\", "//?/", "//./")):
        return path
    drive, rest = ntpath.splitdrive(path)
    if not drive or not rest.startswith(("\\", "/")):
        return path
    norm = ntpath.normpath(path)
    if norm.startswith("\\\\"):
        return _EXTENDED_UNC + norm[2:]
    return _EXTENDED + norm


def shown_path(path: str) -> str:
    """A path as the user knows it: the ``\\\\?\\`` prefix taken off again."""
    if path.startswith(_EXTENDED_UNC):
        return "\\\\" + path[len(_EXTENDED_UNC):]
    return path[len(_EXTENDED):] if path.startswith(_EXTENDED) else path


def os_path(path: str | os.PathLike[str], *, windows: bool | None = None, min_length: int = LONG_PATH) -> str:
    """``path`` as given to the OS: on Windows, when it is ``min_length`` characters or longer,
    in the extended form (a walk passes 0 for its top folder: everything found below it then
    has that form, however deep it goes)."""
    p = os.fspath(path)
    win = os.name == "nt" if windows is None else windows
    if not win or len(p) < min_length:
        return p
    return extended_path(p if ntpath.isabs(p) else os.path.abspath(p))


def _make_writable(target: str, parent: str | None) -> None:
    """Clear what refuses the deletion: the entry's read-only flag (never through a link) and,
    inside the tree being deleted, its folder's missing write permission."""
    try:
        if not stat.S_ISLNK(os.lstat(target).st_mode):
            os.chmod(target, stat.S_IREAD | stat.S_IWRITE | stat.S_IEXEC)
    except OSError:
        pass
    if parent is not None:
        try:
            os.chmod(parent, stat.S_IRWXU)
        except OSError:
            pass


def _busy(exc: OSError) -> bool:
    return os.name == "nt" and getattr(exc, "winerror", None) in _BUSY


def delete_entry(path: str | os.PathLike[str], *, is_dir: bool, problems: list[str], within: str | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> bool:
    """Remove one file, link or empty folder (``is_dir``: ``os.rmdir``, else ``os.unlink``, which
    takes a link as a link). True when it is gone (it was gone already: fine); else the reason is
    added to ``problems`` as ``"<path>: <why>"``.

    ``within``: the folder being deleted; the entry's own folder is made writable on a refusal
    only when it lies inside it (a folder that is not ours is never changed)."""
    shown = os.fspath(path)
    target = os_path(shown)
    parent = os.path.dirname(shown)
    inside = within is not None and _inside(parent, within)
    remove = os.rmdir if is_dir else os.unlink
    writable_made = False
    delays = iter(RETRY_DELAYS_S)
    while True:
        try:
            remove(target)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if isinstance(exc, PermissionError) and not writable_made:
                writable_made = True
                _make_writable(target, os_path(parent) if inside else None)
                continue
            delay = next(delays, None) if _busy(exc) else None
            if delay is None:
                problems.append(f"{shown_path(shown)}: {exc.strerror or exc}")
                return False
            sleep(delay)


def _inside(child: str, root: str) -> bool:
    c = os.path.normcase(os.path.abspath(child))
    r = os.path.normcase(os.path.abspath(root))
    return c == r or c.startswith(r.rstrip(os.sep) + os.sep)


def is_link(path: str | os.PathLike[str]) -> bool:
    """A symbolic link or a Windows junction: an entry never followed, removed as itself."""
    if os.path.islink(path):
        return True
    is_junction = getattr(os.path, "isjunction", None)  # Python 3.12+
    return bool(is_junction and is_junction(path))


def _entry_is_junction(entry: os.DirEntry[str]) -> bool:
    is_junction = getattr(entry, "is_junction", None)  # Python 3.12+ (Windows junctions)
    return bool(is_junction and is_junction())


def delete_tree(root: str | os.PathLike[str], *, cancel: CancelToken | None = None) -> list[str]:
    """Delete ``root`` and what is under it without following links or leaving its filesystem:
    a walk with ``os.scandir``, a link or junction unlinked as itself, a folder on another
    device (a mount point) never entered, each entry by :func:`delete_entry`. Returns the
    problems met (empty: all gone). Raises ValueError when ``root`` is a link.
    """
    if is_link(root):
        raise ValueError(f"{os.fspath(root)} is a link; refusing to delete through it")
    if not os.path.exists(root):
        return []
    top = os.path.abspath(root)
    dev = os.lstat(os_path(top, min_length=0)).st_dev
    problems: list[str] = []
    real_top = os.path.realpath(top)
    mounts = mount_points_under(top)  # bind mounts of the same disk have the same device

    def walk(folder: str) -> bool:
        """Empty ``folder``; True when all of it is gone (else its problems are said already)."""
        try:
            it = os.scandir(os_path(folder, min_length=0))
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
            return False
        with it:
            entries = list(it)
        emptied = True
        for e in entries:
            if cancel is not None and cancel.cancelled:
                return False
            path = os.path.join(folder, e.name)
            try:  # not e.stat(): on Windows its st_dev is always 0
                st = os.lstat(os_path(path))
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and not _entry_is_junction(e):
                if st.st_dev != dev or (mounts and os.path.join(real_top, os.path.relpath(path, top)) in mounts):
                    problems.append(f"{path}: another filesystem, not entered")
                    emptied = False
                elif walk(path):  # a folder still holding what could not go is not tried (no noise, no wait)
                    emptied = delete_entry(path, is_dir=True, problems=problems, within=top) and emptied
                else:
                    emptied = False
            else:  # a link goes as a link
                emptied = delete_entry(path, is_dir=False, problems=problems, within=top) and emptied
        return emptied

    if walk(top):
        delete_entry(top, is_dir=True, problems=problems)  # its folder is not ours: never made writable
    return problems
