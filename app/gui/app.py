"""The wizard as an application: the QApplication, its style and translations, the window.

``torch-setup`` (no command) and ``torch-setup gui`` reach :func:`launch` through the thin
``app.commands.gui`` wrapper, which parses the arguments; Qt loads only here.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget


def require_display() -> None:
    """On Linux without X11/Wayland (an SSH session, a container), Qt would abort the process
    with a core dump: say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    from app.core.errors import UserError  # start-up: only when there is no display

    raise UserError("No display was found, so the setup wizard cannot open here.",
                    hint="Use the command-line tools instead (torch-setup detect, recommend, install ...; see "
                         "torch-setup --help), or start the wizard in a desktop session.")


class FirstPaintReporter(QObject):
    """For benchmarks/startup.py and smoke tests: report when the window's first frame is
    painted, then close it.

    The window's own Paint event comes before its children paint; the report waits for the end
    of that paint pass (the next turn of the event loop), so that everything in the first frame
    is counted. It goes first in that turn: the wizard queues its later pages after it."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.seen = False
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._window and event.type() == QEvent.Type.Paint and not self.seen:
            self.seen = True
            QTimer.singleShot(0, self._report)
        return False

    def _report(self) -> None:
        print_startup(size=(self._window.width(), self._window.height()))
        QTimer.singleShot(0, self._window.close)  # cancels and waits for work already started


def print_startup(size: tuple[int, int] | None = None) -> None:
    """One JSON line for benchmarks/startup.py: when the first window was shown (read before
    psutil, the measuring tool, loads), RSS, CPU time and the window's size."""
    shown_at = time.time()
    rss, cpu = _usage()
    print(json.dumps({"shown_at": shown_at, "rss_mb": rss, "cpu_s": cpu, "size": size}), flush=True)


def _usage() -> tuple[float | None, float | None]:
    """(RSS in MB, CPU seconds) of this process; None where psutil is missing."""
    try:
        import psutil  # optional: only for the start-up report

        proc = psutil.Process()
        times = proc.cpu_times()
        return proc.memory_info().rss / 2**20, times.user + times.system
    except Exception:  # the numbers are optional
        return None, None


def application() -> QApplication:
    """The one QApplication, named and styled."""
    from app import __version__

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Torch Setup Assistant")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("torch-setup-assistant")
    app.setDesktopFileName("torch-setup-assistant")
    if sys.platform == "win32":  # only Windows' old native style needs a change (app.style() costs ~5 ms)
        from app.gui.style import apply_style

        apply_style(app)
    return app


def launch(*, lang: str | None = None, screenshot_dir: str | Path | None = None,
           quit_after_show: bool = False) -> int:
    """Create the QApplication, load the translations, show the wizard, run the event loop.

    ``screenshot_dir``: save a PNG of every page instead (and exit); ``quit_after_show`` (or
    TORCH_SETUP_REPORT_FIRST_PAINT=1, for measuring ``torch-setup`` with no arguments at all):
    print the first paint's time and close (start-up measurements).
    """
    require_display()
    app = application()
    if screenshot_dir:
        from app.gui import i18n
        from app.gui.screenshots import save_all

        paths = save_all(screenshot_dir, languages=[i18n.normalize(lang)] if lang else None)
        for p in paths:
            print(p)
        return 0

    from app.gui.wizard import SetupWizard

    # The application's icon is set with the window's, right after the first paint (lazy).
    wizard = SetupWizard(lang=lang, lazy=True)
    if quit_after_show or os.environ.get("TORCH_SETUP_REPORT_FIRST_PAINT") == "1":
        FirstPaintReporter(wizard)
    wizard.show()
    return int(app.exec() or 0)
