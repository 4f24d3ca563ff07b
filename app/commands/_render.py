"""What the install commands show on a terminal: events, the plan and its checks, the prompt,
and what a signal does.

Shared by ``install``, ``install --config`` (:mod:`app.commands.unattended`) and ``bundle``.
The CLI speaks English: core texts are rendered with :func:`app.core.base.text.render` (English).

A console that went away (``install … 2>&1 | head -2``, a dropped SSH session) never stops a
run or its rollback: every write goes through :class:`Console`, which drops what cannot be
written and points the dead file descriptor at the null device (so the interpreter's last flush
cannot fail either). :func:`cancel_on_signals` turns SIGINT, SIGTERM and SIGHUP into a cancel
(the core stops the installer's whole process tree and rolls back) and the exit status into
128 + the signal's number: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import IO, TYPE_CHECKING, TextIO

from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import BadInput, Cancelled
from app.core.base.events import Event, LogEvent, PhaseEvent, ProgressEvent, StepEvent, WarningEvent
from app.core.base.printable import CLEAR_LINE, Own
from app.core.base.text import render
from app.core.proc.runner import CancelToken

if TYPE_CHECKING:  # start-up: the install core is imported when a command runs, not when it registers
    from app.core.install import Check, InstallPlan

#: What each phase is called on the terminal (one entry per Phase).
PHASE_LABELS: dict[Phase, str] = {
    Phase.PLAN: "Planning",
    Phase.PREFLIGHT: "Checking",
    Phase.SNAPSHOT: "Recording the environment's packages",
    Phase.CREATE_ENV: "Creating the environment",
    Phase.INSTALL: "Installing",
    Phase.DOWNLOAD: "Downloading",
    Phase.HASH: "Checking the downloaded files",
    Phase.VERIFY: "Verifying",
    Phase.BENCH: "Measuring the speed",
    Phase.ROLLBACK: "Cleaning up",
    Phase.RESTORE: "Restoring the environment",
}
_PLAIN_KEEP = ("Resolved", "Prepared", "Installed", "Downloading", " Downloaded", " + ", " - ",
               "Collecting", "Successfully installed", "Installing collected", "Processing",
               "Using CPython", "Creating virtual environment", "ERROR", "error:", "warning:")
_PLAIN_KEEP_STRIPPED = tuple(k.strip() for k in _PLAIN_KEEP)


class Console:
    """A text stream whose failures are dropped: a closed pipe or a hung-up terminal loses the
    text, never the run. After the first failure the file descriptor is pointed at the null
    device, so later writes by anyone (and the interpreter's flush at exit) succeed too."""

    def __init__(self, stream: TextIO | IO[str] | None) -> None:
        self.stream = stream
        self.broken = stream is None

    def write(self, text: str) -> int:
        if not self.broken and self.stream is not None:
            try:
                return self.stream.write(text)
            except (OSError, ValueError):
                self._give_up()
        return len(text)

    def flush(self) -> None:
        if not self.broken and self.stream is not None:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self._give_up()

    def isatty(self) -> bool:
        try:
            return bool(not self.broken and self.stream is not None and self.stream.isatty())
        except (OSError, ValueError):
            return False

    def _give_up(self) -> None:
        self.broken = True
        try:
            fd = self.stream.fileno() if self.stream is not None else -1
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, fd)
            finally:
                os.close(null)
        except (OSError, ValueError, AttributeError):
            pass


def console(stream: TextIO | IO[str] | Console | None) -> Console:
    """``stream`` as a :class:`Console` (itself when it is one)."""
    return stream if isinstance(stream, Console) else Console(stream)


class Renderer:
    """Events -> terminal: a redrawn bar on a TTY, plain lines otherwise. Thread-safe; a console
    that went away is ignored (:class:`Console`)."""

    def __init__(self, stream: TextIO | Console | None = None, quiet: bool = False, verbose: bool = False) -> None:
        self.stream = console(stream or sys.stderr)
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.quiet = quiet
        self.verbose = verbose
        self.lock = threading.Lock()
        self._bar_shown = False
        self._downloads: dict[str, tuple[int, int]] = {}
        self._packages = (0, 0)

    def _write(self, text: str) -> None:
        if self._bar_shown:
            self.stream.write(Own(CLEAR_LINE))
            self._bar_shown = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: Event) -> None:
        if self.quiet:
            return
        with self.lock:
            if isinstance(event, PhaseEvent):
                self._phase(event)
            elif isinstance(event, LogEvent):
                self._log(event.text)
            elif isinstance(event, WarningEvent):
                self._write(f"Warning: {render(event.text)}")
            elif isinstance(event, ProgressEvent):
                self._progress(event)
            elif isinstance(event, StepEvent) and event.status in ("failed", "warning"):
                self._write(f"    {event.status}: {event.detail}")

    def _phase(self, e: PhaseEvent) -> None:
        label = PHASE_LABELS[e.name]
        detail = render(e.detail)
        if e.state == PhaseState.START:
            self._write(f"==> {label}…" + (f" {detail}" if detail and e.name != Phase.PREFLIGHT else ""))
        elif e.state == PhaseState.FAILED:
            self._write(f"==> {label}: failed" + (f" ({detail})" if detail else ""))

    def _log(self, line: str) -> None:
        # a TTY shows the bar and the installed packages; a log file the lines that tell the story
        shown = line.startswith(" + ") if self.tty else line.lstrip().startswith(_PLAIN_KEEP_STRIPPED)
        if self.verbose or shown:
            self._write("    " + line)

    def _progress(self, e: ProgressEvent) -> None:
        if e.unit == "installed":
            return  # a wheel went in while others download: the bar stays on the bytes
        if e.unit == "packages":
            self._packages = (e.done_bytes, e.total_bytes)
        elif e.package:
            self._downloads[e.package] = (e.done_bytes, e.total_bytes)
        if not self.tty:
            return
        done = sum(d for d, _ in self._downloads.values())
        total = sum(t for _, t in self._downloads.values())
        width = 30
        if total:
            frac = min(1.0, done / total)
            what = f"{done / 1e6:7.1f}/{total / 1e6:.1f} MB"
        elif self._packages[1]:
            frac = self._packages[0] / self._packages[1]
            what = f"{self._packages[0]}/{self._packages[1]} packages"
        else:
            return
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        self.stream.write(Own(CLEAR_LINE))  # the one escape that is ours; the rest is filtered as any text
        self.stream.write(f"[{bar}] {frac * 100:3.0f}% {what} {e.package or ''}"[:114])
        self.stream.flush()
        self._bar_shown = True

    def close(self) -> None:
        with self.lock:
            if self._bar_shown:
                self.stream.write("\n")
                self.stream.flush()
                self._bar_shown = False


def print_plan(plan: InstallPlan, checks: Sequence[Check], out: TextIO | Console) -> None:
    """The plan in a few lines, then one line per pre-flight check."""
    out = console(out)
    where = "new" if plan.new_env else "existing"
    print(f"Environment : {plan.env_path} ({where} {plan.kind}, {plan.installer})", file=out)
    py = plan.python
    print("Python      : " + (f"{py.version} ({py.executable})" if py else
                              f"{plan.uv_python or plan.python_request or 'default'} (uv will look for it)"), file=out)
    whence = f"from the lock {plan.request.lock}" if plan.request.lock else f"from bundle {plan.request.sources.bundle}"
    print("Packages    : " + (" ".join(plan.packages) or whence), file=out)
    if plan.index.torch_index:
        print(f"Torch index : {plan.index.torch_index}", file=out)
    if plan.index.find_links:
        print(f"Find links  : {', '.join(plan.index.find_links)}", file=out)
    for note in plan.notes:
        print(f"Note        : {render(note)}", file=out)
    for c in checks:
        mark = "ok " if c.ok and c.severity == "error" else ("!! " if c.blocking else "?  ")
        print(f"  {mark}{render(c.message)}", file=out)


def confirm(args: argparse.Namespace, out: TextIO | Console) -> None:
    """Ask before changing anything, unless ``--yes``; no terminal to ask on is a refusal."""
    if args.yes:
        return
    from app.core.base.consoles import stdin_is_terminal

    if not stdin_is_terminal():
        raise BadInput("Refusing to install without confirmation: standard input is not a "
                       "terminal.", hint="Pass --yes to install unattended.")
    out.flush()
    try:
        answer = input("Proceed? [y/N] ").strip().lower()
    except EOFError:  # end of input typed at the prompt (Ctrl-D, Ctrl-Z): no
        answer = ""
    if answer not in ("y", "yes"):
        raise BadInput("Not confirmed; nothing was done.")


#: The signals that cancel an install (and roll it back) instead of killing the assistant.
CANCEL_SIGNALS = tuple(sig for sig in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
                       if sig is not None)


class SignalCancel:
    """What :func:`cancel_on_signals` knows: the signal that came (if any) and what it stops."""

    def __init__(self, cancel: CancelToken, out: TextIO | Console, what: str) -> None:
        self.cancel = cancel
        self.out = console(out)
        self.what = what  # said when a signal comes; the caller changes it as the run moves on
        self.signum: int | None = None

    @property
    def exit_code(self) -> int:
        """128 + the signal's number (130 for SIGINT), or 130 when no signal came."""
        return 128 + self.signum if self.signum is not None else 130

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if not self.cancel.cancelled:
            self.signum = signum
            self.out.write(f"\nCancelling ({signal.Signals(signum).name}): {self.what}…\n")
            self.out.flush()
        self.cancel.cancel()  # a second signal changes nothing: the rollback runs to its end


@contextmanager
def cancel_on_signals(cancel: CancelToken, out: TextIO | Console, what: str) -> Iterator[SignalCancel]:
    """SIGINT / SIGTERM / SIGHUP set ``cancel`` (the core then stops the child process tree and
    rolls back) instead of killing us; a :class:`Cancelled` leaving the block gets the exit
    status of the signal (130, 143, 129)."""
    handler = SignalCancel(cancel, out, what)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in CANCEL_SIGNALS:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield handler
    except Cancelled as err:
        if handler.signum is not None:
            err.exit_code = handler.exit_code
        raise
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# A status or severity as one mark: symbols where the console can write them, ASCII where it
# cannot (a cp1252 Windows console raises on "✗").
_MARKS = {"passed": ("✓", "OK"), "failed": ("✗", "XX"), "skipped": ("–", "--"),
          "error": ("✗", "XX"), "warning": ("!", "!"), "info": ("i", "i")}


def mark(status: str, stream: TextIO | None = None) -> str:
    """The mark of a check's status (passed / failed / skipped) or a finding's severity."""
    symbol, ascii_mark = _MARKS.get(status, ("?", "?"))
    enc = (getattr(stream or sys.stdout, "encoding", None) or "").lower()
    return symbol if "utf" in enc else ascii_mark

