"""Small shared widgets: status rows, banners, copy buttons, a busy line, a collapsible box.

Icons are SVGs in ``resources/icons`` (crisp at any device pixel ratio), with QStyle's
standard icons as the fallback. Colours come from the palette (readable in dark mode); the
only fixed colours are the status icons themselves and a light tint mixed into the palette's
window colour for banners.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, QSize, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette, QPixmap
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

if TYPE_CHECKING:  # start-up: PySide6 builds a class's type on first use (QIcon ~2 ms); these load when used
    from PySide6.QtGui import QIcon

from app.core.base.paths import resources_dir

STATUSES = ("ok", "warning", "error", "info", "pending", "skipped", "running")
# QStyle standard icons when an icon file is missing (QStyle is looked up only then: its
# Python type costs ~5 ms to create, and the first window must not pay for it).
_FALLBACK = {"ok": "SP_DialogApplyButton", "warning": "SP_MessageBoxWarning", "error": "SP_MessageBoxCritical",
             "info": "SP_MessageBoxInformation", "pending": "SP_BrowserReload", "running": "SP_BrowserReload",
             "skipped": "SP_DialogNoButton", "os": "SP_ComputerIcon", "disk": "SP_DriveHDIcon",
             "folder": "SP_DirOpenIcon"}
# Status words from the core (verify checks: passed|failed|skipped) onto icon names.
_ALIASES = {"passed": "ok", "pass": "ok", "failed": "error", "fail": "error", "warn": "warning",
            "running": "pending", True: "ok", False: "error", None: "pending"}
# Tints for banners, mixed into the palette's window colour.
_TINTS = {"info": QColor("#2f73c9"), "warning": QColor("#e0a100"), "error": QColor("#d13b3b"),
          "ok": QColor("#2e9d4f")}


def _qt():
    """PySide6's ``Qt`` namespace, imported on first use: building it costs ~14 ms, which the
    Welcome page (shown before anything else) does without, to keep start-up lean."""
    from PySide6.QtCore import Qt

    return Qt


def status_word(status: str) -> str:
    """A status (ok, warning, error, info, pending, skipped) as a person reads it, in the wizard's language."""
    from PySide6.QtCore import QCoreApplication

    words = {"ok": QT_TRANSLATE_NOOP("StatusRow", "OK"), "warning": QT_TRANSLATE_NOOP("StatusRow", "Warning"),
             "error": QT_TRANSLATE_NOOP("StatusRow", "Problem"), "info": QT_TRANSLATE_NOOP("StatusRow", "Note"),
             "pending": QT_TRANSLATE_NOOP("StatusRow", "Waiting"), "skipped": QT_TRANSLATE_NOOP("StatusRow", "Skipped")}
    en = words.get(status)
    return QCoreApplication.translate("StatusRow", str(en)) if en is not None else status


def status_name(status) -> str:
    name = _ALIASES.get(status, status)
    return name if name in STATUSES else "info"


@cache
def icon(name: str) -> QIcon:
    """An icon by name, crisp at any device pixel ratio.

    resources/icons/png/<name>-<size>.png (rendered from the SVGs by scripts/render_icons.py,
    read without loading Qt's SVG plugin), else resources/icons/<name>.svg, else a QStyle
    standard icon.
    """
    from PySide6.QtGui import QIcon

    name = _icon_key(name)
    folder = resources_dir() / "icons"
    sizes = _png_sizes().get(name)
    if sizes:
        ic = QIcon()
        for n in sizes:  # the size is in the file name: nothing is read before it is drawn
            ic.addFile(str(folder / "png" / f"{name}-{n}.png"), QSize(n, n))
        return ic
    path = folder / f"{name}.svg"
    if path.is_file():
        return QIcon(str(path))
    from PySide6.QtWidgets import QStyle

    sp = getattr(QStyle.StandardPixmap, _FALLBACK.get(name, "SP_FileIcon"))
    return QApplication.style().standardIcon(sp)


@lru_cache(maxsize=1)
def _png_sizes() -> dict[str, list[int]]:
    """{"ok": [16, 20, ...], ...} from the names in resources/icons/png (one directory read)."""
    out: dict[str, list[int]] = {}
    try:
        names = os.listdir(resources_dir() / "icons" / "png")
    except OSError:
        return out
    for fn in names:
        stem, _, ext = fn.rpartition(".")
        name, _, size = stem.rpartition("-")
        if ext == "png" and size.isdigit():
            out.setdefault(name, []).append(int(size))
    return {k: sorted(v) for k, v in out.items()}


def set_icon(label: QLabel, name: str, size: int = 20) -> None:
    """Put a crisp icon on a label (rendered at the label's device pixel ratio): the PNG drawn at
    exactly that many pixels when there is one (no QIcon needed: the first window shows at once),
    else the icon scaled."""
    dpr = label.devicePixelRatioF()
    pix = _exact_png(_icon_key(name), round(size * dpr), dpr)
    label.setPixmap(pix if pix is not None else icon(name).pixmap(QSize(size, size), dpr))
    label.setFixedSize(size, size)


def _icon_key(name: str) -> str:
    """The icon file's name for ``name`` (a status alias such as "passed" -> "ok")."""
    return status_name(name) if name in _ALIASES else name


@cache
def _exact_png(key: str, px: int, dpr: float) -> QPixmap | None:
    """The PNG of ``key`` that is exactly ``px`` pixels, read once; None when there is none."""
    if px not in _png_sizes().get(key, ()):
        return None
    pix = QPixmap(str(resources_dir() / "icons" / "png" / f"{key}-{px}.png"))
    if pix.isNull():
        return None
    pix.setDevicePixelRatio(dpr)
    return pix


def monospace_font() -> QFont:
    from PySide6.QtGui import QFontDatabase

    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def muted(label: QLabel) -> QLabel:
    """Secondary text: the palette's placeholder colour (a grey that follows dark mode)."""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def heading(text: str = "", scale: float = 1.15) -> QLabel:
    label = QLabel(text)
    f = label.font()
    f.setBold(True)
    f.setPointSizeF(f.pointSizeF() * scale if f.pointSizeF() > 0 else 11)
    label.setFont(f)
    label.setWordWrap(True)
    return label


class WrapLabel(QLabel):
    """A word-wrapped label as tall as its text at its real width. In a QFormLayout row a plain
    wrapped QLabel gets the height of Qt's guess at a narrow width (three times too tall for a
    long sentence: blank bands above and below the text); this one asks again once it knows its
    width."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if self.wordWrap() and self.width() > 0:
            return QSize(hint.width(), self.heightForWidth(self.width()))
        return hint

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        short = self.wordWrap() and self.height() < self.heightForWidth(self.width())
        if event.oldSize().width() != event.size().width() or short:
            self.updateGeometry()  # the height follows the new width (or a text that grew meanwhile)


class StatusRow(QWidget):
    """An icon, a title and an optional one-line explanation under it."""

    def __init__(self, status: str = "pending", title: str = "", detail: str = "", icon_name: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        Qt = _qt()  # noqa: N806
        self._status = "pending"
        self._icon_name = icon_name
        self.icon_label = QLabel()
        self.title_label = QLabel()
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_label = muted(QLabel())
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text_col = QVBoxLayout()
        text_col.setSpacing(1)
        text_col.setContentsMargins(0, 0, 0, 0)
        text_col.addWidget(self.title_label)
        text_col.addWidget(self.detail_label)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 2, 0, 2)
        row.setSpacing(10)
        row.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(text_col, 1)
        self.set(status, title, detail)

    @property
    def status(self) -> str:
        return self._status

    def set(self, status, title: str | None = None, detail: str | None = None) -> None:
        self._status = status_name(status)
        set_icon(self.icon_label, self._icon_name or self._status)
        word = status_word(self._status)
        self.icon_label.setToolTip(word)
        if title is not None:
            self.title_label.setText(title)
        if detail is not None:
            self.detail_label.setText(detail)
            self.detail_label.setVisible(bool(detail))
        self.setAccessibleName(f"{self.title_label.text()} ({word})")
        self.setAccessibleDescription(self.detail_label.text())

    def text(self) -> str:
        return self.title_label.text()


class Banner(QFrame):
    """A tinted box with an icon and wrapped text: info, warning, error or ok.

    The tint is a style sheet on the frame, not a paintEvent: any QPainter pen or brush call
    makes PySide6 build its whole ``Qt`` namespace (~15 ms), and the Welcome page's banner is
    painted in the first frame. The colours are mixed from the window colour around the banner
    (its parent's palette, else the application's), so dark mode keeps the text readable."""

    def __init__(self, kind: str = "info", text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._kind = kind if kind in _TINTS else "info"
        self._sheet = ""
        self._tint()  # before the children are made: a new sheet re-polishes every child
        self.icon_label = QLabel()
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self._selectable = False
        icon_col = QVBoxLayout()  # the icon at the top, without Qt.AlignmentFlag (see _qt)
        icon_col.setContentsMargins(0, 0, 0, 0)
        icon_col.addWidget(self.icon_label)
        icon_col.addStretch(1)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 8)
        row.setSpacing(10)
        row.addLayout(icon_col)
        row.addWidget(self.text_label, 1)
        self.set_text(text)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.set_kind(kind)
        if parent is not None:  # (no ParentChange event for the parent given here)
            parent.installEventFilter(self)

    @property
    def kind(self) -> str:
        return self._kind

    def set_kind(self, kind: str) -> None:
        self._kind = kind if kind in _TINTS else "info"
        set_icon(self.icon_label, self._kind, 20)
        self._tint()

    def tint_colors(self) -> tuple[QColor, QColor, QColor]:
        """(fill, border, text): the kind's tint mixed into the window colour around the banner,
        and the text colour around it."""
        around = self.parentWidget()
        pal = around.palette() if around is not None else QGuiApplication.palette()
        base, tint = pal.color(QPalette.ColorRole.Window), _TINTS[self._kind]
        return _mix(base, tint, 0.16), _mix(base, tint, 0.55), pal.color(QPalette.ColorRole.WindowText)

    def _tint(self) -> None:
        fill, border, text = self.tint_colors()
        # The labels' colour too: under a style sheet they take the application's palette, and
        # would lose a text colour set on a parent (dark text on a dark tint)
        sheet = (f"Banner {{ background-color: {fill.name()}; border: 1px solid {border.name()}; "
                 f"border-radius: 6px; }} Banner QLabel {{ color: {text.name()}; }}")
        if sheet != self._sheet:  # the sheet changes the banner's own palette: no loop
            self._sheet = sheet
            self.setStyleSheet(sheet)

    def event(self, event) -> bool:
        # Follow the palette of the window colour around it. The parent is looked up, never
        # kept: a reference from the banner would make a cycle that outlives the C++ widgets.
        kind = event.type()
        around = self.parentWidget()
        if kind == QEvent.Type.ParentAboutToChange and around is not None:
            around.removeEventFilter(self)
        elif kind == QEvent.Type.ParentChange:
            if around is not None:
                around.installEventFilter(self)
            self._tint()
        elif kind == QEvent.Type.ApplicationPaletteChange:
            self._tint()
        return super().event(event)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.PaletteChange and obj is self.parentWidget():
            self._tint()  # the banner's own palette is the sheet's, so it is not told itself
        return False

    def set_text(self, text: str, kind: str | None = None) -> None:
        if kind:
            self.set_kind(kind)
        if not self._selectable and (self._kind in ("error", "warning") or "<" in text):
            # Messages worth copying (and anything that could look like markup) as plain,
            # selectable text.
            Qt = _qt()  # noqa: N806
            self.text_label.setTextFormat(Qt.TextFormat.PlainText)
            self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self._selectable = True
        self.text_label.setText(text)
        self.setAccessibleName(text)

    def text(self) -> str:
        return self.text_label.text()


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(round(a.red() * (1 - t) + b.red() * t), round(a.green() * (1 - t) + b.green() * t),
                  round(a.blue() * (1 - t) + b.blue() * t))


class CopyButton(QPushButton):
    """Copies ``source()`` to the clipboard and says "Copied" for a moment."""

    copied = Signal(str)

    def __init__(self, source: Callable[[], str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._label: str | None = None
        self._name: str | None = None  # what a screen reader says: which text it copies (set_name)
        self._flash = QTimer(self)
        self._flash.setSingleShot(True)
        self._flash.setInterval(1500)
        self._flash.timeout.connect(self.retranslate)
        self.clicked.connect(self.copy)
        self.retranslate()

    def set_source(self, source: Callable[[], str]) -> None:
        self._source = source

    def copy(self) -> str:
        text = self._source() if self._source else ""
        QGuiApplication.clipboard().setText(text)
        self.setText(self.tr("Copied"))
        self._flash.start()
        self.copied.emit(text)
        return text

    def set_label(self, text: str) -> None:
        """The button's text when it is not saying "Copied" (default "Copy")."""
        self._label = text
        self.retranslate()

    def set_name(self, text: str) -> None:
        """What a screen reader says: which text it copies ("Copy the log file's path"), so that two Copy
        buttons of one page are told apart (default "Copy to the clipboard")."""
        self._name = text
        self.retranslate()

    def retranslate(self) -> None:
        if not self._flash.isActive():
            self.setText(self._label or self.tr("Copy"))
        self.setAccessibleName(self._name or self.tr("Copy to the clipboard"))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class PathNote(QWidget):
    """Opens a folder or file with the desktop's program; when this computer has none (the desktop says
    no: a minimal Linux, a remote session), it shows the path, selectable, with a Copy button, as "Open a
    terminal here" shows its command instead of doing nothing ("Open folder", "Open report", "Open log")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        Qt = _qt()  # noqa: N806 (pages built after the first paint have one; the Welcome page has none)
        self.path = ""
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy = CopyButton(lambda: self.path, self)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.copy, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def open(self, path: str | os.PathLike[str]) -> bool:
        """Open ``path`` (True), or show where it is (False)."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        if QDesktopServices.openUrl(QUrl.fromLocalFile(os.fspath(path))):
            self.hide()
            return True
        self.path = os.fspath(path)
        self.retranslate()
        self.show()
        return False

    def retranslate(self) -> None:
        if not self.path:
            return
        if os.path.isdir(self.path):
            text = self.tr("No program on this computer opens folders from here. The folder is:\n{path}")
        else:
            text = self.tr("No program on this computer opens this file from here. The file is:\n{path}")
        self.label.setText(text.format(path=self.path))
        self.setAccessibleName(self.label.text())
        self.copy.set_label(self.tr("Copy path"))
        self.copy.set_name(self.tr("Copy the path of {name}").format(name=os.path.basename(self.path) or self.path))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class BusyLine(QWidget):
    """An indeterminate progress bar with a message (shown while a Task runs)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from PySide6.QtWidgets import QProgressBar

        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(220)
        self.label = QLabel(text)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar)
        row.addWidget(self.label, 1)

    def set_text(self, text: str) -> None:
        self.label.setText(text)
        self.bar.setAccessibleName(text)


class Collapsible(QWidget):
    """A header button with an arrow that shows or hides its content (keyboard: Space)."""

    toggled = Signal(bool)

    def __init__(self, title: str = "", content: QWidget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        Qt = _qt()  # noqa: N806
        from PySide6.QtWidgets import QToolButton

        self.button = QToolButton()
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setCheckable(True)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setAutoRaise(True)
        self.button.setText(title)
        self.button.toggled.connect(self.set_expanded)
        self.content = content or QWidget()
        self.content.setVisible(False)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(4)
        col.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        col.addWidget(self.content)

    def set_title(self, title: str) -> None:
        self.button.setText(title)
        self.button.setAccessibleName(title)

    def is_expanded(self) -> bool:
        return self.button.isChecked()

    def set_expanded(self, on: bool) -> None:
        if self.button.isChecked() != on:
            self.button.setChecked(on)
            return
        arrow = _qt().ArrowType
        self.button.setArrowType(arrow.DownArrow if on else arrow.RightArrow)
        self.content.setVisible(on)
        self.toggled.emit(on)


def hline() -> QFrame:
    line = QFrame()
    line.setFrameShape(QFrame.Shape.HLine)
    line.setFrameShadow(QFrame.Shadow.Sunken)
    return line


def human_mb(mb: float | int | None) -> str:
    """1536 -> "1.5 GiB"; sizes in MiB as the SystemReport has them, in binary units named as such (the
    report says GiB: the wizard said GB for the same number)."""
    if mb is None:
        return "?"
    gb = float(mb) / 1024
    if gb >= 100:
        return f"{gb:.0f} GiB"
    if gb >= 1:
        return f"{gb:.1f} GiB"
    return f"{float(mb):.0f} MiB"
