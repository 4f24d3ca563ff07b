"""The wizard as an application: the QApplication, its style and translations, the window.

``torch-setup`` (no command) and ``torch-setup gui`` reach :func:`launch` through the thin
``app.commands.gui`` wrapper, which parses the arguments; Qt loads only here.
"""
from __future__ import annotations

import json
import os
import sys
import threading
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
    from app.core.base.errors import UserError  # start-up: only when there is no display

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


#: fontconfig's library, as Qt on Linux loads it, and the first version that is thread-safe: 2.11
#: (fontconfig's NEWS, 2.10.91 = 2.11 RC1: "Make default-FcConfig threadsafe", "Add pthread test").
FONTCONFIG = "libfontconfig.so.1"
FONTCONFIG_THREAD_SAFE = 21100


def warm_fontconfig() -> threading.Thread | None:
    """On Linux, let fontconfig load its configuration in a thread while the wizard's modules load
    and its first page is built. Returns the thread, or None where there is nothing to gain.

    The first text Qt lays out makes it list the system's fonts. On Linux most of that is
    fontconfig reading its configuration and font caches (``FcInit``: about 4 ms of the 5.5 ms
    here, more on a desktop with many fonts), and a bare window pays it on the GUI thread too.
    Called through ctypes, ``FcInit`` runs without the GIL, so with a second core it is done by
    the time the window is shown, and Qt then finds it done. It is left alone unless:

    * the process may use more than one core (with one, the thread would only take turns);
    * Qt has already loaded fontconfig (``RTLD_NOLOAD``: the same copy, never a second one);
    * that fontconfig is 2.11 or later, safe to call from two threads at once.
    """
    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2:
        return None
    import ctypes

    try:
        fontconfig = ctypes.CDLL(FONTCONFIG, mode=os.RTLD_NOLOAD)
        if fontconfig.FcGetVersion() < FONTCONFIG_THREAD_SAFE:
            return None
        init = fontconfig.FcInit
    except (OSError, AttributeError):  # not loaded (a Qt without fontconfig), or not fontconfig
        return None
    thread = threading.Thread(target=init, name="fontconfig", daemon=True)
    thread.start()
    return thread


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
    fonts = warm_fontconfig()
    try:
        return _run(app, lang=lang, screenshot_dir=screenshot_dir, quit_after_show=quit_after_show)
    finally:
        if fonts is not None:
            fonts.join()  # (long done: it takes milliseconds)


def _run(app: QApplication, *, lang: str | None, screenshot_dir: str | Path | None, quit_after_show: bool) -> int:
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
