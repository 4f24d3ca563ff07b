"""The one place that starts subprocesses.

* Commands are argument lists, never shell strings.
* The child's environment is cleaned (:func:`clean_env`): no PYTHONPATH / PYTHONHOME /
  PIP_TARGET / PIP_USER leaks, UTF-8 I/O, and when the assistant runs frozen by
  PyInstaller, the library search path the user had before the bundle changed it and no
  bundle folder on PATH; on Windows the child is also created without the bootloader's DLL
  directory (:func:`app.core.proc.winjob.plain_dll_search`), so it never loads the app's own DLLs.
* On Windows no child gets a console window (``CREATE_NO_WINDOW``: started from the windowed
  app, a console program would otherwise open one, and closing it would kill the program).
* Output is decoded incrementally as UTF-8 (a multi-byte character split across reads
  stays whole), split into lines on ``\\n`` and ``\\r`` (progress bars redraw with
  ``\\r``), and streamed to a callback as it arrives.
* A :class:`CancelToken` or a timeout terminates the child's whole process tree (its process
  group, on Windows its Job Object, and every descendant psutil finds, looked for again while
  they die), then kills what is left after a grace period: a child that ignores SIGTERM is
  SIGKILLed with its tree. Children still running when the interpreter exits (a detection
  thread that was given up on) are killed too, so nothing outlives the assistant.
* A process the child leaves behind cannot hang a run by holding its output open: once the
  child has ended, the readers get :data:`READER_GRACE_S`; then the group (the job) is ended,
  and a pipe still held after that is no longer read. On Windows the job also ends, when the
  run does, whatever the command left running (``leave_running=True`` keeps it).
* Memory is bounded whatever the child prints: a "line" is cut at :data:`MAX_LINE_CHARS`,
  ``stdout`` / ``stderr`` keep their last :data:`CAPTURE_LIMIT_CHARS` characters (the result
  says ``truncated``), the tail keeps its last lines, each shortened for display.
* Everything the child printed can be appended to a log file whose path travels with
  every error (:meth:`RunResult.raise_for_status`); a log file stops growing at
  :data:`LOG_LIMIT_BYTES` and says where it was cut.
"""
from __future__ import annotations

import atexit
import codecs
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from app.core.base.cancel import CancelToken as CancelToken  # re-exported: runner.CancelToken
from app.core.base.errors import Cancelled, Hint, UserError
from app.core.base.secrets import mask, open_private
from app.core.base.text import Text, msg
from app.core.proc import winjob

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
#: How long the readers may take to reach the end of the output once the child has ended.
READER_GRACE_S = 2.0
#: Characters of each stream kept in memory (the last ones); the log file has the rest.
CAPTURE_LIMIT_CHARS = 8 * 1024 * 1024
#: A longer run of output without a line end is cut into pieces of this size.
MAX_LINE_CHARS = 1024 * 1024
#: Each line of :attr:`RunResult.tail` is shortened to this (it is for people to read).
TAIL_LINE_CHARS = 2000
#: A log file stops growing here (one install's log is shared by all its commands).
LOG_LIMIT_BYTES = 50 * 1024 * 1024


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
        _drop_bundle_dirs(env)
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


def _drop_bundle_dirs(env: dict[str, str]) -> None:
    """PATH without the frozen bundle's folders (``sys._MEIPASS`` and below, where a PyInstaller
    run-time hook may have put them): a child must not find the app's own DLLs and programs."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return
    root = os.path.normcase(os.path.normpath(bundle))

    def inside(entry: str) -> bool:
        norm = os.path.normcase(os.path.normpath(entry)) if entry else ""
        return bool(norm) and (norm == root or norm.startswith(root.rstrip(os.sep) + os.sep))

    for key in [k for k in env if (k.upper() if os.name == "nt" else k) == "PATH"]:
        env[key] = os.pathsep.join(e for e in env[key].split(os.pathsep) if not inside(e))


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
    truncated: bool = False  # stdout/stderr lost their oldest lines to the memory limit

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
            from app.core import remedies  # start-up: the catalogue loads only when a run failed

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


_EOL = re.compile(r"\r\n|\r|\n")


class _LineSplitter:
    """Incremental UTF-8 decoding and line splitting on \\n, \\r\\n and \\r; a run of more than
    ``max_line`` characters without a line end comes out in pieces (memory stays bounded)."""

    def __init__(self, max_line: int = MAX_LINE_CHARS) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._max = max_line

    def feed(self, data: bytes) -> list[str]:
        self._buf += self._decoder.decode(data)
        return self._drain(final=False)

    def close(self) -> list[str]:
        self._buf += self._decoder.decode(b"", final=True)
        return self._drain(final=True)

    def _drain(self, final: bool) -> list[str]:
        buf = self._buf
        out: list[str] = []
        start = 0
        for m in _EOL.finditer(buf):
            if m.group() == "\r" and m.end() == len(buf) and not final:
                break  # wait: the next byte may be \n
            out.append(buf[start:m.start()])
            start = m.end()
        rest = buf[start:]
        while len(rest) > self._max:
            out.append(rest[:self._max])
            rest = rest[self._max:]
        if final and rest:
            out.append(rest)
            rest = ""
        self._buf = rest
        return out


def _popen_kwargs(suspended: bool = False) -> dict[str, Any]:
    if os.name == "nt":
        # a process group of its own (Ctrl+C in our console is ours to pass on) and a console
        # without a window, which the console programs it starts share; suspended until it is
        # in its job
        flags = winjob.CREATE_NEW_PROCESS_GROUP | winjob.CREATE_NO_WINDOW
        return {"creationflags": flags | (winjob.CREATE_SUSPENDED if suspended else 0)}
    return {"start_new_session": True}


# --------------------------------------------------------------------------- ending process trees

def _descendants(roots: Iterable[psutil.Process]) -> list[psutil.Process]:
    import psutil  # a dependency; imported here to keep it off the start-up path

    found: list[psutil.Process] = []
    for root in roots:
        try:
            found += root.children(recursive=True)
        except psutil.Error:
            pass
    return found


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    if os.name == "nt":  # pragma: no cover - Windows
        with _LIVE_LOCK:
            job = _JOBS.get(proc.pid)
        if job is not None:  # the whole tree at once, grandchildren whose parent has gone included
            job.terminate()
        try:
            proc.kill() if sig == getattr(signal, "SIGKILL", None) else proc.terminate()
        except OSError:
            pass
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


class _Tree:
    """The child and every descendant seen so far (looked for again while they die: a child
    that ignores SIGTERM may still start new processes)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        import psutil

        self.proc = proc
        self.known: dict[int, psutil.Process] = {}
        try:
            self.root: psutil.Process | None = psutil.Process(proc.pid)
        except psutil.Error:
            self.root = None
        self.scan()

    def scan(self) -> None:
        roots = [p for p in (self.root, *self.known.values()) if p is not None and _alive(p)]
        for d in _descendants(roots):
            self.known.setdefault(d.pid, d)

    def signal(self, terminate: bool) -> None:
        _signal_group(self.proc, signal.SIGTERM if terminate else getattr(signal, "SIGKILL", signal.SIGTERM))
        for d in list(self.known.values()):
            try:
                d.terminate() if terminate else d.kill()
            except Exception:
                pass

    def alive(self) -> bool:
        return self.proc.poll() is None or any(_alive(d) for d in self.known.values())


def kill_tree(proc: subprocess.Popen[bytes], grace_s: float = TERMINATE_GRACE_S) -> None:
    """Terminate ``proc`` and every descendant, then kill what survives ``grace_s``."""
    import psutil

    tree = _Tree(proc)
    tree.signal(terminate=True)
    deadline = time.monotonic() + grace_s
    next_scan = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() >= next_scan:
            tree.scan()
            next_scan = time.monotonic() + 0.25
        if not tree.alive():
            break
        time.sleep(0.05)
    tree.scan()
    tree.signal(terminate=False)
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass
    try:
        psutil.wait_procs(list(tree.known.values()), timeout=2)
    except psutil.Error:  # pragma: no cover
        pass


def _alive(p: psutil.Process) -> bool:
    try:
        return bool(p.is_running() and p.status() != "zombie")
    except Exception:
        return False


_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_JOBS: dict[int, winjob.Job] = {}  # Windows: the Job Object of each live child
_LIVE_LOCK = threading.Lock()


def _kill_live_children() -> None:
    """At interpreter exit: end every child still running (a thread that ran it was given up
    on, e.g. a detection job past its deadline), with its tree."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for proc in procs:
        if proc.poll() is None:
            try:
                kill_tree(proc, grace_s=0.5)
            except Exception:  # pragma: no cover - best effort at exit
                pass


atexit.register(_kill_live_children)


# --------------------------------------------------------------------------- what is kept

class _Log:
    """The log file, appended to; it stops growing at ``limit`` bytes and says so once. A log that
    cannot be written (a full disk, a folder gone) never stops the run, nor loses its result: it
    is only the log that is missing then."""

    def __init__(self, path: Path | None, limit: int | None = None) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        self._lock = threading.Lock()
        self._limit = LOG_LIMIT_BYTES if limit is None else limit
        self._size = 0
        self._full = False
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                # kept open for the whole run, closed by close(): a context manager cannot span it
                self._fh = open_private(path)  # mode 0600: a log can hold what the user typed
                self._size = self._fh.tell()
            except OSError:
                self._fh = None

    def write(self, text: str, *, always: bool = False) -> None:
        """One line; past the limit only ``always`` lines (the command, its exit) are written."""
        if self._fh is None:
            return
        with self._lock:
            if not always and self._size + len(text) + 1 > self._limit:
                if self._full:
                    return
                self._full = True
                text = (f"[log truncated: it reached {self._limit / (1024 * 1024):g} MB; later output "
                        "is not written here]")
            text = mask(text)  # no secret reaches a log file
            try:
                self._fh.write(text + "\n")
                self._fh.flush()
            except (OSError, ValueError):  # a full disk must not stop the run
                return
            self._size += len(text.encode("utf-8", "replace")) + 1

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()  # the last buffered bytes are written here: a full disk refuses them
            except OSError:
                pass


class _Output:
    """What a run keeps in memory: each stream's last ``limit`` characters, and the tail."""

    def __init__(self, keep: bool, limit: int, tail_lines: int) -> None:
        self.keep = keep
        self.limit = limit
        self.lock = threading.Lock()
        self.lines: dict[str, deque[str]] = {"stdout": deque(), "stderr": deque()}
        self.size = {"stdout": 0, "stderr": 0}
        self.truncated = False
        self.tail: deque[str] = deque(maxlen=tail_lines)

    def add(self, stream: str, line: str) -> None:
        with self.lock:
            self.tail.append(line if len(line) <= TAIL_LINE_CHARS else line[:TAIL_LINE_CHARS] + "…")
            if not self.keep:
                return
            q = self.lines[stream]
            q.append(line)
            self.size[stream] += len(line) + 1
            while self.size[stream] > self.limit and q:
                self.size[stream] -= len(q.popleft()) + 1
                self.truncated = True

    def text(self, stream: str) -> str:
        with self.lock:
            return "\n".join(self.lines[stream])


# --------------------------------------------------------------------------- one child's life

@dataclass
class _Child:
    """A started child with its reader threads."""

    proc: subprocess.Popen[bytes]
    out: _Output
    log: _Log
    readers: list[threading.Thread]
    stop: threading.Event  # set when the output is no longer read: later lines are dropped


def _new_job() -> winjob.Job | None:
    """Windows: a Job Object for the next child (None where none can be made)."""
    if os.name != "nt":
        return None
    try:
        return winjob.Job.create()
    except (OSError, AttributeError):  # pragma: no cover - a Windows without the API
        return None


def _creating_child() -> AbstractContextManager[None]:
    """Around the creation of a child: in a frozen Windows app, no inherited DLL directory."""
    if os.name == "nt" and getattr(sys, "frozen", False):
        return winjob.plain_dll_search()
    return nullcontext()


def _start_error(args: list[str], exc: OSError | ValueError) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"{args[0]} was not found"
    if isinstance(exc, PermissionError):
        return f"{args[0]} could not be started: permission denied"
    return f"{args[0]} could not be started: {exc}"


def _into_job(proc: subprocess.Popen[bytes], job: winjob.Job) -> tuple[winjob.Job | None, str]:
    """The suspended child put in ``job`` and resumed: (its job, or None when it could not join
    one; why it could not be resumed, "" when it runs)."""
    adopted, not_resumed = job.adopt_and_resume(proc.pid)
    if not_resumed:
        job.close(kill=True)
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):  # pragma: no cover
            pass
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        return None, not_resumed
    if not adopted:  # ended by hand then: the child, and the descendants psutil finds
        job.close(kill=False)
        return None, ""
    return job, ""


def _start(args: list[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None,
           with_input: bool) -> subprocess.Popen[bytes] | str:
    """The started child, or why it could not start."""
    job = _new_job()
    try:
        with _creating_child():
            proc = subprocess.Popen(
                args,
                stdin=subprocess.PIPE if with_input else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else clean_env(),
                cwd=os.fspath(cwd) if cwd is not None else None,
                **_popen_kwargs(suspended=job is not None),
            )
    except (OSError, ValueError) as exc:
        if job is not None:
            job.close(kill=True)
        return _start_error(args, exc)
    if job is not None:
        job, not_resumed = _into_job(proc, job)
        if not_resumed:
            return f"{args[0]} could not be started: {not_resumed}"
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
        if job is not None:
            _JOBS[proc.pid] = job
    return proc


def _read(stream_name: str, pipe: IO[bytes], emit: Callable[[str, str], None]) -> None:
    """Read ``pipe`` to its end, then close it (the reader owns it: a pipe that a surviving
    process holds open is closed here once that process lets go, never under a blocked read)."""
    splitter = _LineSplitter()
    read = getattr(pipe, "read1", pipe.read)
    try:
        while True:
            data = read(65536)
            if not data:
                break
            for line in splitter.feed(data):
                emit(stream_name, line)
    except (OSError, ValueError):  # also a read cancelled on Windows (winjob.unblock_reads)
        pass
    for line in splitter.close():
        emit(stream_name, line)
    try:
        pipe.close()
    except (OSError, ValueError):  # pragma: no cover
        pass


def _start_readers(proc: subprocess.Popen[bytes], out: _Output, log: _Log,
                   on_line: LineCallback | None, stop: threading.Event) -> list[threading.Thread]:
    def emit(stream_name: str, line: str) -> None:
        if stop.is_set():  # the run has ended without this stream's end: nobody is listening
            return
        out.add(stream_name, line)
        log.write(line if stream_name == "stdout" else f"[stderr] {line}")
        if on_line is not None:
            try:
                on_line(stream_name, line)
            except Exception:  # a broken consumer must not kill the reader
                pass

    threads = [threading.Thread(target=_read, args=(name, pipe, emit), daemon=True)
               for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)) if pipe is not None]
    for t in threads:
        t.start()
    return threads


def _send_input(proc: subprocess.Popen[bytes], data: bytes | None) -> None:
    if data is not None and proc.stdin is not None:
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except OSError:
            pass


def _wait(proc: subprocess.Popen[bytes], cancel: CancelToken | None, deadline: float | None) -> str:
    """Wait for the child: "" when it ended, "cancelled" or "timed out" when it must be stopped."""
    wake = threading.Event()
    unregister = cancel.on_cancel(wake.set) if cancel is not None else (lambda: None)

    def waiter() -> None:  # wakes the loop below the moment the child exits (no poll lag)
        try:
            proc.wait()
        except Exception:
            pass
        wake.set()

    threading.Thread(target=waiter, daemon=True).start()
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.cancelled:
                return "cancelled"
            if deadline is not None and time.monotonic() >= deadline:
                return "timed out"
            remaining = 0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic()))
            wake.wait(remaining)
        return ""
    finally:
        unregister()


def _joined(threads: Sequence[threading.Thread], timeout: float) -> bool:
    """Wait up to ``timeout`` for all ``threads``; True when they have all ended."""
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in threads)


def _let_go_of_output(child: _Child) -> None:
    """The output is held open by a process that outlives the command: stop listening, so the
    run ends (a reader closes its pipe once the holder lets go). On Windows a blocked read can
    be cancelled, so the reader ends now."""
    child.log.write("[a process the command left running holds its output open: no longer read]", always=True)
    child.stop.set()
    if os.name == "nt":
        for _ in range(10):  # a read that had not started yet when cancelled is cancelled again
            winjob.unblock_reads(child.readers)
            if _joined(child.readers, 0.1):
                break


def _finish(child: _Child, leave_running: bool) -> None:
    """Collect the readers and let go of the child. Output pipes still open
    :data:`READER_GRACE_S` after it ended are held by processes it left behind: those in its
    process group (on Windows its job) are ended, unless ``leave_running``; pipes held even after
    that (a process that left the group) are no longer read. On Windows closing the job ends
    what the command left running, unless ``leave_running``."""
    proc = child.proc
    if not _joined(child.readers, READER_GRACE_S):
        if not leave_running:
            child.log.write("[processes the command left behind kept its output open: stopping them]", always=True)
            _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
            _joined(child.readers, TERMINATE_GRACE_S)
        if any(t.is_alive() for t in child.readers):
            _let_go_of_output(child)
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except (OSError, ValueError):
            pass
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)
        job = _JOBS.pop(proc.pid, None)
    if job is not None:
        job.close(kill=not leave_running)


def _started(args: list[str], cwd: str | os.PathLike[str] | None, log: _Log) -> None:
    log.write(f"$ {subprocess.list2cmdline(args)}", always=True)
    if cwd is not None:
        log.write(f"  (in {os.fspath(cwd)})", always=True)


def _supervise(child: _Child, cancel: CancelToken | None, deadline: float | None, leave_running: bool) -> str:
    """Wait for the child, stopping its tree on cancel / timeout / an exception in our thread."""
    try:
        stop = _wait(child.proc, cancel, deadline)
        if stop:
            child.log.write(f"[{stop}: stopping the process tree]", always=True)
            kill_tree(child.proc)
        return stop
    except BaseException:
        # KeyboardInterrupt (or SystemExit) in the caller's thread: never leave the child behind.
        kill_tree(child.proc)
        raise
    finally:
        _finish(child, leave_running)


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
    capture_limit: int = CAPTURE_LIMIT_CHARS,
    leave_running: bool = False,
) -> RunResult:
    """Run ``argv`` and wait for it; never raises for the child's failure.

    ``env`` defaults to :func:`clean_env` (). ``on_line(stream, line)`` is called from
    reader threads as lines arrive. The result's ``tail`` keeps the last ``tail_lines``
    lines of both streams, interleaved in arrival order; ``stdout`` / ``stderr`` keep the last
    ``capture_limit`` characters of each (``truncated`` says when older lines were dropped).

    The run ends when the child has: what it leaves behind holding the output open is ended
    (its process group; on Windows its job, which also ends, with the run, anything else the
    command left running). ``leave_running=True`` is for a command that starts a program meant
    to stay (a terminal window): that program is left alone and its output no longer read.
    Cancel and timeout end the whole tree either way.
    """
    args = [os.fspath(a) for a in argv]
    if not args:
        raise ValueError("empty command")
    log = _Log(log_path)
    _started(args, cwd, log)
    started = time.monotonic()
    if cancel is not None and cancel.cancelled:
        log.write("[cancelled before start]", always=True)
        log.close()
        return RunResult(args, None, "", "", 0.0, cancelled=True, log_path=log_path)
    proc = _start(args, env, cwd, input is not None)
    if isinstance(proc, str):
        log.write(f"[{proc}]", always=True)
        log.close()
        return RunResult(args, None, "", "", time.monotonic() - started, start_error=proc,
                         log_path=log_path, tail=[proc])
    out = _Output(capture, capture_limit, tail_lines)
    stop_reading = threading.Event()
    child = _Child(proc, out, log, _start_readers(proc, out, log, on_line, stop_reading), stop_reading)
    _send_input(proc, input)
    stop = _supervise(child, cancel, started + timeout if timeout is not None else None, leave_running)
    duration = time.monotonic() - started
    if out.truncated:
        log.write(f"[only the last {capture_limit // (1024 * 1024) or 1} MB of each stream were kept in memory]",
                  always=True)
    log.write(f"[exit {proc.returncode} after {duration:.2f} s]", always=True)
    log.close()
    return RunResult(args, proc.returncode, out.text("stdout"), out.text("stderr"), duration,
                     timed_out=stop == "timed out", cancelled=stop == "cancelled", log_path=log_path,
                     tail=list(out.tail), truncated=out.truncated)


def which(name: str, path: str | None = None) -> str | None:
    """``shutil.which`` with this module as the single place that looks programs up."""
    import shutil

    return shutil.which(name, path=path)
