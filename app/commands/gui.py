"""``torch-setup gui [--lang zh_CN] [--screenshot-dir DIR]``: the setup wizard.

``torch-setup`` with no command calls :func:`launch` with no arguments. Qt is imported only
here, inside :func:`launch`, so the rest of the CLI stays free of it.
"""
from __future__ import annotations

import argparse
import os
import sys


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", metavar="LANG", default=None,
                   help="language of the window: en or zh_CN (default: the system's)")
    p.add_argument("--screenshot-dir", metavar="DIR", default=None,
                   help="save a PNG of every page (English and Chinese) into DIR and exit")
    p.add_argument("--quit-after-show", action="store_true", help=argparse.SUPPRESS)


def register(sub) -> None:
    p = sub.add_parser("gui", help="open the setup wizard (the default with no command)",
                       description="Open the setup wizard.")
    _add_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    argv: list[str] = []
    if args.lang:
        argv += ["--lang", args.lang]
    if args.screenshot_dir:
        argv += ["--screenshot-dir", args.screenshot_dir]
    if getattr(args, "quit_after_show", False):
        argv.append("--quit-after-show")
    return launch(argv)


def _require_display() -> None:
    """On Linux without X11/Wayland (an SSH session, a container), Qt would abort the process
    with a core dump: say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    from app.core.errors import UserError

    raise UserError("No display was found, so the setup wizard cannot open here.",
                    hint="Use the command-line tools instead (torch-setup detect, recommend, install ...; see "
                         "torch-setup --help), or start the wizard in a desktop session.")


def _quit_after_first_paint(window, app) -> None:
    """For benchmarks/startup.py and smoke tests: report the first paint, then quit."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if obj is window and event.type() == QEvent.Type.Paint and not getattr(self, "seen", False):
                self.seen = True
                _print_startup()
                QTimer.singleShot(0, window.close)  # cancels and waits for work already started
            return False

    window._first_paint_filter = FirstPaint(window)
    window.installEventFilter(window._first_paint_filter)


def _print_startup() -> None:
    """One JSON line for benchmarks/startup.py: when the first window was shown, and RSS."""
    import json
    import time

    rss, cpu = _usage()
    print(json.dumps({"shown_at": time.time(), "rss_mb": rss, "cpu_s": cpu}), flush=True)


def _usage() -> tuple[float | None, float | None]:
    """(RSS in MB, CPU seconds) of this process; None where psutil is missing."""
    try:
        import psutil

        proc = psutil.Process()
        times = proc.cpu_times()
        return proc.memory_info().rss / 2**20, times.user + times.system
    except Exception:  # the numbers are optional
        return None, None


def launch(argv: list[str] | None = None) -> int:
    """Create the QApplication, load the translations, show the wizard, run the event loop."""
    parser = argparse.ArgumentParser(prog="torch-setup gui")
    _add_arguments(parser)
    args = parser.parse_args(list(argv or []))

    _require_display()
    from PySide6.QtWidgets import QApplication

    from app import __version__
    from app.gui import i18n
    from app.gui.style import apply_style

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Torch Setup Assistant")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("torch-setup-assistant")
    app.setDesktopFileName("torch-setup-assistant")
    apply_style(app)

    if args.screenshot_dir:
        from app.gui.screenshots import save_all

        paths = save_all(args.screenshot_dir, languages=[i18n.normalize(args.lang)] if args.lang else None)
        for p in paths:
            print(p)
        return 0

    from app.gui.wizard import SetupWizard, app_icon

    app.setWindowIcon(app_icon())
    wizard = SetupWizard(lang=args.lang, lazy=True)
    if args.quit_after_show:
        _quit_after_first_paint(wizard, app)
    wizard.show()
    return int(app.exec() or 0)
