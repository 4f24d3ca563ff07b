"""The one place that starts subprocesses.

* Commands are argument lists, never shell strings.
* The child's environment is cleaned (:func:`clean_env`): no PYTHONPATH / PYTHONHOME /
  PIP_TARGET / PIP_USER leaks, UTF-8 I/O, and when the assistant runs frozen by
  PyInstaller, the library search path the user had before the bundle changed it.
* Output is decoded incrementally as UTF-8 (a multi-byte character split across reads
  stays whole), split into lines on ``\\n`` and ``\\r`` (progress bars redraw with
  ``\\r``), and streamed to a callback as it arrives.
* A :class:`CancelToken` or a timeout terminates the child's whole process tree, then
  kills what is left after a grace period.
* Everything the child printed can be appended to a log file whose path travels with
  every error (:meth:`RunResult.raise_for_status`).
"""
from __future__ import annotations

import codecs
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from app.core import remedies
from app.core.errors import Cancelled, Hint, UserError
from app.core.text import Text, msg

if TYPE_CHECKING:
    import psutil

LineCallback = Callable[[str, str], None]  # (stream, line)

# Variables that make a child Python or pip behave differently from what we asked for.
_LEAKY_VARS = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONNOUSERSITE",
    "PYTHONEXECUTABLE",
    "__PYVENV_LAUNCHER__",
    "PIP_TARGET",
    "PIP_USER",
    "PIP_PREFIX",
    "PIP_REQUIRE_VIRTUALENV",
    "VIRTUAL_ENV",
    "UV_PROJECT_ENVIRONMENT",
)
# Variables PyInstaller's bootloader rewrites; it keeps the user's value in NAME_ORIG.
_FROZEN_PATH_VARS = ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "LIBPATH")

TERMINATE_GRACE_S = 3.0


class CancelToken:
    """Thread-safe cancellation flag; :meth:`cancel` also wakes every waiting runner."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a callback must never break cancellation
                pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def on_cancel(self, cb: Callable[[], None]) -> Callable[[], None]:
        """Register ``cb``; returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(cb)
                registered = True
            else:
                registered = False
        if not registered:
            cb()

        def remove() -> None:
            with self._lock:
                if cb in self._callbacks:
                    self._callbacks.remove(cb)

        return remove

    def raise_if_cancelled(self, message: Text | None = None) -> None:
        if self.cancelled:
            raise Cancelled(message)


def clean_env(extra: Mapping[str, str] | None = None, *, base: Mapping[str, str] | None = None,
              drop: Iterable[str] = ()) -> dict[str, str]:
    """The environment for a child process: ``base`` (default ``os.environ``) cleaned."""
    env = dict(os.environ if base is None else base)
    if getattr(sys, "frozen", False):
        for var in _FROZEN_PATH_VARS:
            orig = env.pop(var + "_ORIG", None)
            if orig is not None:
                env[var] = orig
            else:
                env.pop(var, None)
    for var in (*_LEAKY_VARS, *drop):
        env.pop(var, None)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONUTF8"] = "1"
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    if extra:
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
    return env


@dataclass
class RunResult:
    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    cancelled: bool = False
    start_error: str | None = None  # the program could not be started at all
    log_path: Path | None = None
    tail: list[str] = field(default_factory=list)  # last lines of both streams, interleaved

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.cancelled

    def describe(self) -> str:
        """One phrase saying what happened, for probe records and logs."""
        if self.start_error:
            return self.start_error
        if self.cancelled:
            return "cancelled"
        if self.timed_out:
            return f"timed out after {self.duration_s:.1f} s"
        if self.returncode and self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"killed by signal {name}"
        return f"exit code {self.returncode}"

    def raise_for_status(self, message: Text, hint: Hint = "", lines: int = 12) -> RunResult:
        """Raise (Cancelled, or a UserError with the remedy catalogue's reading of the output)
        unless the command succeeded."""
        if self.cancelled:
            raise Cancelled(log_path=self.log_path)
        if not self.ok:
            found = remedies.diagnose([*self.tail, self.start_error or ""])
            outcome = remedies.run_outcome(self.returncode, timed_out=self.timed_out, duration_s=self.duration_s,
                                           start_error=self.start_error)
            raise UserError(msg("install.failed_with", "{what} ({outcome})", what=message, outcome=outcome),
                            hint="" if found and not hint else hint,
                            lines=remedies.failure_lines(self.tail, max(lines, 12)), log_path=self.log_path,
                            remedies=found)
        return self


_ERROR_WORDS = ("error", "failed", "exception", "traceback", "denied", "no space", "not found",
                "could not", "cannot", "unable", "refused", "timed out", "no matching", "killed")


def relevant_lines(lines: Sequence[str], limit: int = 12) -> list[str]:
    """The few lines a person needs: those that look like errors, else the last ones."""
    flagged = [ln for ln in lines if any(w in ln.lower() for w in _ERROR_WORDS)]
    picked = flagged[-limit:] if flagged else list(lines)[-limit:]
    return [ln[:300] for ln in picked]


class _LineSplitter:
    """Incremental UTF-8 decoding and line splitting on \\n, \\r\\n and \\r."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""

    def feed(self, data: bytes) -> list[str]:
        self._buf += self._decoder.decode(data)
        return self._drain(final=False)

    def close(self) -> list[str]:
        self._buf += self._decoder.decode(b"", final=True)
        return self._drain(final=True)

    def _drain(self, final: bool) -> list[str]:
        out: list[str] = []
        buf = self._buf
        start = 0
        i = 0
        n = len(buf)
        while i < n:
            ch = buf[i]
            if ch == "\n":
                out.append(buf[start:i])
                start = i + 1
            elif ch == "\r":
                if i + 1 < n:
                    out.append(buf[start:i])
                    start = i + 2 if buf[i + 1] == "\n" else i + 1
                    i = start - 1
                elif final:
                    out.append(buf[start:i])
                    start = i + 1
                else:
                    break  # wait: the next byte may be \n
            i += 1
        rest = buf[start:]
        if final and rest:
            out.append(rest)
            rest = ""
        self._buf = rest
        return out


def _popen_kwargs() -> dict[str, Any]:
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    return {"start_new_session": True}


def kill_tree(proc: subprocess.Popen[bytes], grace_s: float = TERMINATE_GRACE_S) -> None:
    """Terminate ``proc`` and every descendant, then kill what survives ``grace_s``."""
    import psutil  # a dependency; imported here to keep it off the start-up path

    descendants: list[psutil.Process] = []
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except Exception:
        descendants = []
    if os.name != "nt":
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    else:  # pragma: no cover - Windows
        try:
            proc.terminate()
        except OSError:
            pass
    for d in descendants:
        try:
            d.terminate()
        except Exception:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        alive = proc.poll() is None or any(_alive(d) for d in descendants)
        if not alive:
            break
        time.sleep(0.05)
    if os.name != "nt":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    for target in [*descendants]:
        try:
            target.kill()
        except Exception:
            pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def _alive(p: psutil.Process) -> bool:
    try:
        return bool(p.is_running() and p.status() != "zombie")
    except Exception:
        return False


class _Log:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh = None
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # kept open for the whole run, closed by close(): a context manager cannot span it
            self._fh = open(path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115

    def write(self, text: str) -> None:
        if self._fh is not None:
            with self._lock:
                self._fh.write(text + "\n")
                self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


# long: one child's whole life (start, reader threads, wait/cancel/timeout, log) kept in one place
def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    on_line: LineCallback | None = None,
    cancel: CancelToken | None = None,
    log_path: Path | None = None,
    input: bytes | None = None,
    capture: bool = True,
    tail_lines: int = 200,
) -> RunResult:
    """Run ``argv`` and wait for it; never raises for the child's failure.

    ``env`` defaults to :func:`clean_env` (). ``on_line(stream, line)`` is called from
    reader threads as lines arrive. The result's ``tail`` keeps the last ``tail_lines``
    lines of both streams, interleaved in arrival order.
    """
    args = [os.fspath(a) for a in argv]
    if not args:
        raise ValueError("empty command")
    log = _Log(log_path)
    log.write(f"$ {subprocess.list2cmdline(args)}")
    if cwd is not None:
        log.write(f"  (in {os.fspath(cwd)})")
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=tail_lines)
    chunks: dict[str, list[str]] = {"stdout": [], "stderr": []}

    if cancel is not None and cancel.cancelled:
        log.write("[cancelled before start]")
        log.close()
        return RunResult(args, None, "", "", 0.0, cancelled=True, log_path=log_path)

    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else clean_env(),
            cwd=os.fspath(cwd) if cwd is not None else None,
            **_popen_kwargs(),
        )
    except (OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            msg = f"{args[0]} was not found"
        elif isinstance(exc, PermissionError):
            msg = f"{args[0]} could not be started: permission denied"
        else:
            msg = f"{args[0]} could not be started: {exc}"
        log.write(f"[{msg}]")
        log.close()
        return RunResult(args, None, "", "", time.monotonic() - started, start_error=msg,
                         log_path=log_path, tail=[msg])

    lock = threading.Lock()

    def reader(stream_name: str, pipe: IO[bytes]) -> None:
        splitter = _LineSplitter()
        read = getattr(pipe, "read1", pipe.read)
        try:
            while True:
                data = read(65536)
                if not data:
                    break
                for line in splitter.feed(data):
                    _emit(stream_name, line)
        except (OSError, ValueError):
            pass
        for line in splitter.close():
            _emit(stream_name, line)

    def _emit(stream_name: str, line: str) -> None:
        with lock:
            tail.append(line)
            if capture:
                chunks[stream_name].append(line)
        log.write(line if stream_name == "stdout" else f"[stderr] {line}")
        if on_line is not None:
            try:
                on_line(stream_name, line)
            except Exception:  # a broken consumer must not kill the reader
                pass

    threads = [
        threading.Thread(target=reader, args=("stdout", proc.stdout), daemon=True),
        threading.Thread(target=reader, args=("stderr", proc.stderr), daemon=True),
    ]
    for t in threads:
        t.start()
    if input is not None and proc.stdin is not None:
        try:
            proc.stdin.write(input)
            proc.stdin.close()
        except OSError:
            pass

    wake = threading.Event()
    unregister = cancel.on_cancel(wake.set) if cancel is not None else (lambda: None)

    def _waiter() -> None:  # wakes the loop below the moment the child exits (no poll lag)
        try:
            proc.wait()
        except Exception:
            pass
        wake.set()

    threading.Thread(target=_waiter, daemon=True).start()
    timed_out = cancelled = False
    try:
        deadline = started + timeout if timeout is not None else None
        while proc.poll() is None:
            if cancel is not None and cancel.cancelled:
                cancelled = True
                break
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                break
            remaining = 0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic()))
            wake.wait(remaining)
        if timed_out or cancelled:
            log.write("[timed out: stopping the process tree]" if timed_out
                      else "[cancelled: stopping the process tree]")
            kill_tree(proc)
    except BaseException:
        # KeyboardInterrupt in the caller's thread: never leave the child behind.
        kill_tree(proc)
        raise
    finally:
        unregister()
        for t in threads:
            t.join(timeout=5)
        for pipe in (proc.stdout, proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except Exception:
                pass

    duration = time.monotonic() - started
    rc = proc.returncode
    log.write(f"[exit {rc} after {duration:.2f} s]")
    log.close()
    return RunResult(
        args,
        rc,
        "\n".join(chunks["stdout"]),
        "\n".join(chunks["stderr"]),
        duration,
        timed_out=timed_out,
        cancelled=cancelled,
        log_path=log_path,
        tail=list(tail),
    )


def which(name: str, path: str | None = None) -> str | None:
    """``shutil.which`` with this module as the single place that looks programs up."""
    import shutil

    return shutil.which(name, path=path)
