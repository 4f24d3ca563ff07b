"""One exclusive lock per environment path, held from the pre-flight to the end of a run.

Two runs that touch the same environment (install, repair, upgrade, remove) must never overlap:
the loser's rollback would delete what the winner is installing into. The lock is an OS file
lock (``fcntl.flock`` / ``msvcrt.locking``) on a file in the per-user state folder, named by a
hash of the environment's resolved path, so nothing is written next to the user's folders and a
crashed run's lock goes away with its process (the OS drops it). The file records who holds it
(pid, command, start time) so the refusal can name the holder.
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
from typing import IO

from app.core.errors import BadInput
from app.core.paths import state_dir
from app.core.text import msg

__all__ = ["EnvLock", "LockHolder", "env_lock", "holder_of", "lock_file_for"]


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


def _try_lock(fh: IO[str]) -> bool:
    if sys.platform == "win32":  # pragma: no cover
        import msvcrt

        try:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(fh: IO[str]) -> None:
    if sys.platform == "win32":  # pragma: no cover
        import msvcrt

        try:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
        return
    import fcntl

    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def holder_of(env_path: str | os.PathLike[str]) -> LockHolder | None:
    """Who holds the lock on ``env_path`` now (None: nobody)."""
    path = lock_file_for(env_path)
    if not path.exists():
        return None
    with open(path, "a+", encoding="utf-8") as fh:
        if _try_lock(fh):
            _unlock(fh)
            return None
        return _read_holder(path)


def _read_holder(path: Path) -> LockHolder | None:
    try:
        d = json.loads(path.read_text(encoding="utf-8") or "{}")
        return LockHolder(int(d["pid"]), str(d.get("purpose", "")), str(d.get("path", "")),
                          str(d.get("started", "")))
    except (OSError, ValueError, KeyError, TypeError):
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


class EnvLock:
    """An acquired lock; release() (or leaving ``env_lock``'s block) gives it back."""

    def __init__(self, env_path: Path, fh: IO[str], file: Path) -> None:
        self.env_path = env_path
        self.file = file
        self._fh: IO[str] | None = fh

    @property
    def held(self) -> bool:
        return self._fh is not None

    def covers(self, env_path: str | os.PathLike[str]) -> bool:
        """Whether this is the lock of ``env_path`` (another spelling of the same folder included)."""
        return _key(env_path) == _key(self.env_path)

    def release(self) -> None:
        fh, self._fh = self._fh, None
        if fh is None:
            return
        try:
            fh.seek(0)
            fh.truncate()
            fh.flush()
        except OSError:
            pass
        try:
            _unlock(fh)
        finally:
            fh.close()


def acquire(env_path: str | os.PathLike[str], purpose: str) -> EnvLock:
    """Take the lock on ``env_path`` or raise :class:`BadInput` naming the run that holds it."""
    env = Path(env_path).expanduser()
    file = lock_file_for(env)
    fh = open(file, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the lock's life
    if not _try_lock(fh):
        fh.close()
        holder = _holder_soon(file)
        who = (msg("locks.holder", "PID {pid} ({purpose}, started {started})", pid=holder.pid,
                   purpose=holder.purpose, started=holder.started) if holder else
               msg("locks.another_run", "another run"))
        raise BadInput(msg("locks.busy", "{path} is being changed by {who}; two runs must not change one environment "
                           "at once", path=str(env), who=who),
                       hint=msg("locks.busy_hint", "Wait for that run to finish (or cancel it), then try again."))
    fh.seek(0)
    fh.truncate()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    json.dump({"pid": os.getpid(), "purpose": purpose, "path": str(env), "started": started,
               "argv0": os.path.basename(sys.argv[0]) if sys.argv else ""}, fh)
    fh.flush()
    return EnvLock(env, fh, file)


@contextmanager
def env_lock(env_path: str | os.PathLike[str], purpose: str) -> Iterator[EnvLock]:
    """``with env_lock(path, "install"):`` — exclusive for the block, released even on error."""
    lock = acquire(env_path, purpose)
    try:
        yield lock
    finally:
        lock.release()
