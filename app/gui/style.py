"""The look: the platform's native style, except where it cannot draw dark mode.

Qt 6's native styles (windows11, macOS, and on Linux Fusion/the desktop's theme) follow the
system colour scheme. The old ``windowsvista`` style (Windows 10, where Qt does not pick
windows11) draws light controls on a dark palette, which is unreadable; there, and only
there, Fusion with the dark palette is used instead.
"""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication


def is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None:
        from PySide6.QtCore import Qt

        return scheme() == Qt.ColorScheme.Dark
    pal = QGuiApplication.palette()
    return pal.window().color().lightness() < pal.windowText().color().lightness()


def apply_style(app: QApplication) -> str:
    """Keep the native style unless it cannot show dark mode; returns the style's name."""
    name = app.style().name().lower()
    if name == "windowsvista" and is_dark():  # is_dark() only where it matters: it costs start-up time
        app.setStyle("Fusion")
        name = "fusion"
    return name
