"""One exclusive lock per environment path, held from the pre-flight to the end of a run.

Two runs that touch the same environment (install, repair, upgrade, remove) must never overlap:
the loser's rollback would delete what the winner is installing into. The lock is an OS file
lock (``fcntl.flock`` / ``msvcrt.locking``) on a file in the per-user state folder, named by a
hash of the environment's resolved path, so nothing is written next to the user's folders and a
crashed run's lock goes away with its process (the OS drops it). The holder writes who it is
(pid, command, start time) into ``<hash>.holder`` next to it, so the refusal can name the holder.

On Windows ``msvcrt.locking`` locks bytes at the file's current position, so every lock and
unlock is of byte 0 (seeked to first); the record lives in its own file because Windows locks
are mandatory (no other process may read a locked byte), and Wine reports a refusal as an
OSError with errno 0: any OSError of a lock attempt means "held".
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.base.errors import BadInput
from app.core.base.paths import state_dir
from app.core.base.text import msg

__all__ = ["EnvLock", "LockHolder", "env_lock", "holder_file_for", "holder_of", "lock_file_for"]


@dataclass(frozen=True)
class LockHolder:
    pid: int
    purpose: str
    path: str
    started: str

    def describe(self) -> str:
        return f"PID {self.pid} ({self.purpose}, started {self.started})"


def _key(env_path: str | os.PathLike[str]) -> str:
    p = Path(env_path).expanduser()
    try:
        resolved = str(p.resolve())
    except OSError:
        resolved = str(p.absolute())
    if os.name == "nt":  # pragma: no cover - Windows paths are case-insensitive
        resolved = resolved.lower()
    return hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _lock_dir() -> Path:
    """The per-user state folder's ``locks``; when that folder cannot be used (a read-only or
    foreign home), a per-user folder in the system's temporary directory."""
    try:
        d = state_dir() / "locks"
        d.mkdir(parents=True, exist_ok=True)
        return d
    except OSError:
        import tempfile

        uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
        d = Path(tempfile.gettempdir()) / f"torch-setup-locks-{uid}"
        d.mkdir(mode=0o700, exist_ok=True)
        return d


def lock_file_for(env_path: str | os.PathLike[str]) -> Path:
    return _lock_dir() / f"{_key(env_path)}.lock"


def holder_file_for(lock_file: Path) -> Path:
    """Where the holder of ``lock_file`` writes who it is (a file of its own: on Windows the
    locked byte cannot be read by anyone else while it is held)."""
    return lock_file.with_suffix(".holder")


def _try_lock(fd: int) -> bool:
    """Take the lock on ``fd`` without waiting. Any OSError is "held by someone else": Windows
    says EACCES or EDEADLOCK, Wine errno 0, and a file system without locks cannot be trusted."""
    if sys.platform == "win32":  # pragma: no cover - the Windows lane runs it
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks the bytes at the current position: always byte 0
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - the Windows lane runs it
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _open_lock(file: Path) -> int:
    # binary, never inherited by the installers this run starts (a child holding it would keep the lock)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
    return os.open(file, flags, 0o600)


def holder_of(env_path: str | os.PathLike[str]) -> LockHolder | None:
    """Who holds the lock on ``env_path`` now (None: nobody)."""
    path = lock_file_for(env_path)
    if not path.exists():
        return None
    fd = _open_lock(path)
    try:
        if _try_lock(fd):
            _unlock(fd)
            return None
    finally:
        os.close(fd)
    return _read_holder(holder_file_for(path))


def _read_holder(path: Path) -> LockHolder | None:
    from app.core.base.schema import read_state  # start-up: only a lock someone holds is read

    # keep=False: the holder may be writing it at this very moment (a half-written record is read again)
    d = read_state(path, what="the lock's holder", limit=64 * 1024, keep=False).data or {}
    try:
        return LockHolder(int(d["pid"]), str(d.get("purpose", "")), str(d.get("path", "")),  # type: ignore[call-overload]
                          str(d.get("started", "")))
    except (ValueError, KeyError, TypeError):
        return None


def _holder_soon(path: Path, wait_s: float = 1.0) -> LockHolder | None:
    """The holder, read again for a moment: a run that has just taken the lock writes who it is
    right after taking it, so a competitor that lost the race by microseconds still names it."""
    deadline = time.monotonic() + wait_s
    while True:
        holder = _read_holder(path)
        if holder is not None or time.monotonic() >= deadline:
            return holder
        time.sleep(0.02)


def _write_holder(path: Path, record: dict[str, object] | None) -> None:
    """Say who holds the lock (None: nobody, at release). Written in place: only the holder
    writes it, and a reader that meets a half-written record reads again."""
    try:  # mode 0600, as every file of the assistant's own (it names the env and the program)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOINHERIT", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if os.name != "nt":
                os.fchmod(fh.fileno(), 0o600)
            if record is not None:
                json.dump(record, fh)
    except OSError:  # the lock holds without it; a refusal then says "another run"
        pass


class EnvLock:
    """An acquired lock; release() (or leaving ``env_lock``'s block) gives it back."""

    def __init__(self, env_path: Path, fd: int, file: Path) -> None:
        self.env_path = env_path
        self.file = file
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def covers(self, env_path: str | os.PathLike[str]) -> bool:
        """Whether this is the lock of ``env_path`` (another spelling of the same folder included)."""
        return _key(env_path) == _key(self.env_path)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        _write_holder(holder_file_for(self.file), None)
        try:
            _unlock(fd)
        finally:
            os.close(fd)


def acquire(env_path: str | os.PathLike[str], purpose: str) -> EnvLock:
    """Take the lock on ``env_path`` or raise :class:`BadInput` naming the run that holds it."""
    env = Path(env_path).expanduser()
    file = lock_file_for(env)
    fd = _open_lock(file)
    if not _try_lock(fd):
        os.close(fd)
        holder = _holder_soon(holder_file_for(file))
        who = (msg("locks.holder", "PID {pid} ({purpose}, started {started})", pid=holder.pid,
                   purpose=holder.purpose, started=holder.started) if holder else
               msg("locks.another_run", "another run"))
        raise BadInput(msg("locks.busy", "{path} is being changed by {who}; two runs must not change one environment "
                           "at once", path=str(env), who=who),
                       hint=msg("locks.busy_hint", "Wait for that run to finish (or cancel it), then try again."))
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    _write_holder(holder_file_for(file), {"pid": os.getpid(), "purpose": purpose, "path": str(env), "started": started,
                                          "argv0": os.path.basename(sys.argv[0]) if sys.argv else ""})
    return EnvLock(env, fd, file)


@contextmanager
def env_lock(env_path: str | os.PathLike[str], purpose: str) -> Iterator[EnvLock]:
    """``with env_lock(path, "install"):`` — exclusive for the block, released even on error."""
    lock = acquire(env_path, purpose)
    try:
        yield lock
    finally:
        lock.release()
