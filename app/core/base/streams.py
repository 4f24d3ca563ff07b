"""Where the app's prints, warnings and tracebacks go when there is no console.

A windowed program starts with ``sys.stdout`` and ``sys.stderr`` set to None: PyInstaller's
``console=False`` exe (``torch-setup-gui.exe``) and ``pythonw.exe`` on Windows, an app started
from a desktop launcher on some systems. Python's ``print()`` and ``warnings`` then drop their
text silently, but anything that wraps or flushes a stream (the secret masker, a library's
``sys.stderr.write``) raises ``AttributeError``, and in the windowed exe an exception that escapes
shows an "Unhandled exception" dialog.

:func:`console_streams` gives the two streams the CLI wraps in the masker: the real ones, and
for each one that is None, one :class:`LogFile` shared by both (so their order is kept). The log
file is ``<log dir>/gui-<time>-<pid>-<n>.log`` (``TORCH_SETUP_HOME/logs`` when that is set),
opened at the first write: a windowed start that prints nothing makes no file and imports
nothing more. A log that cannot be written loses its text; it never raises.
"""
from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import TextIO

__all__ = ["LOG_NAME", "LogFile", "console_streams"]

#: the log files' name (``gui-20261203-101502-1234-5678.log``): windowed means the wizard
LOG_NAME = "gui"


class LogFile(io.TextIOBase):
    """A text stream into a log file that is created at the first write, flushed at every write
    (so a process that dies leaves its last lines), and never raises."""

    def __init__(self, name: str = LOG_NAME) -> None:
        super().__init__()
        self._name = name
        self._file: TextIO | None = None
        self._failed = False
        self._lock = threading.Lock()
        #: the file's path once it was opened, else None
        self.path: Path | None = None

    def _open(self) -> TextIO | None:
        if self._file is None and not self._failed and not self.closed:
            try:
                from app.core.base.paths import new_log_path  # start-up: only when something is written
                from app.core.base.secrets import open_private

                path = new_log_path(self._name)
                self._file = open_private(path, errors="backslashreplace")  # mode 0600; written masked
                self.path = path
            except (OSError, ValueError):  # no log folder (a read-only profile): the text is lost
                self._failed = True
        return self._file

    def write(self, s: str) -> int:
        with self._lock:
            file = self._open()
            if file is not None:
                try:
                    file.write(s)
                    file.flush()
                except (OSError, ValueError):  # a full disk: drop the text, keep the app running
                    pass
        return len(s)

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                try:
                    self._file.flush()
                except (OSError, ValueError):
                    pass

    def close(self) -> None:
        with self._lock:
            file, self._file = self._file, None
            if file is not None:
                try:
                    file.close()
                except (OSError, ValueError):
                    pass
        super().close()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]  # what is written: any text
        return "utf-8"


def console_streams(stdout: TextIO | None,
                    stderr: TextIO | None) -> tuple[TextIO | LogFile, TextIO | LogFile, LogFile | None]:
    """``(out, err, log)``: the given streams, with a :class:`LogFile` (``log``, to be closed by the
    caller at the end) in place of each that is None; ``log`` is None when both are real."""
    if stdout is not None and stderr is not None:
        return stdout, stderr, None
    log = LogFile()
    return stdout if stdout is not None else log, stderr if stderr is not None else log, log
