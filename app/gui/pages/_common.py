"""Small helpers the late pages share (status icons, the error panel, time formatting)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QIcon
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.core.errors import UserError
from app.gui.logview import monospace_font

_ICON_NAMES = {"passed": "ok", "ok": "ok", "failed": "error", "error": "error", "skipped": "skipped",
               "running": "pending", "warning": "warning", "info": "info", "folder": "folder"}


def std_icon(name: str) -> QIcon:
    """The wizard's status icons (SVG in resources/icons, crisp at any DPI; QStyle's standard
    icons where there is none): passed, failed, skipped, running, warning, info, folder."""
    from app.gui.widgets import icon

    return icon(_ICON_NAMES.get(name, name))


def put_icon(label: QLabel, name: str | None, size: int = 20) -> None:
    """Show a status icon on a label at the screen's pixel ratio (or nothing for None)."""
    if name is None:
        label.clear()
        return
    from PySide6.QtCore import QSize

    label.setPixmap(std_icon(name).pixmap(QSize(size, size), label.devicePixelRatioF()))
    label.setFixedSize(size, size)


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "–"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} GB"


class ErrorPanel(QWidget):
    """A failure, shown the way the issue asks: the message, the few relevant lines, the
    hint, and the full log's path with "Open log" and "Copy path"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log_path: Path | None = None
        self.icon = QLabel(self)
        put_icon(self.icon, "failed", 32)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.message.font()
        f.setBold(True)
        self.message.setFont(f)
        self.lines = QPlainTextEdit(self)
        self.lines.setReadOnly(True)
        self.lines.setFont(monospace_font())
        self.lines.setMaximumHeight(140)
        self.hint = QLabel(self)
        self.hint.setWordWrap(True)
        self.path_label = QLabel(self)
        self.path_label.setWordWrap(True)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_log = QPushButton(self)
        self.copy_path = QPushButton(self)
        self.open_log.clicked.connect(self._open_log)
        self.copy_path.clicked.connect(self._copy_path)

        top = QHBoxLayout()
        top.addWidget(self.icon, 0)
        top.addWidget(self.message, 1)
        btns = QHBoxLayout()
        btns.addWidget(self.open_log)
        btns.addWidget(self.copy_path)
        btns.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.lines)
        lay.addWidget(self.hint)
        lay.addWidget(self.path_label)
        lay.addLayout(btns)
        self.retranslate()

    def show_error(self, err: UserError, log_path: Path | None = None) -> None:
        self.message.setText(err.message)
        lines = list(err.lines)
        self.lines.setPlainText("\n".join(lines))
        self.lines.setVisible(bool(lines))
        hint = err.hint
        self.hint.setText(self.tr("What to do: {hint}").format(hint=hint) if hint else "")
        self.hint.setVisible(bool(hint))
        path = err.log_path or log_path
        self.log_path = Path(path) if path else None
        self._show_path()
        self.setVisible(True)

    def _show_path(self) -> None:
        has = self.log_path is not None
        self.path_label.setText(self.tr("Full log: {path}").format(path=self.log_path) if has else "")
        for w in (self.path_label, self.open_log, self.copy_path):
            w.setVisible(has)

    def _open_log(self) -> None:
        if self.log_path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_path)))

    def _copy_path(self) -> None:
        if self.log_path:
            QGuiApplication.clipboard().setText(str(self.log_path))

    def retranslate(self) -> None:
        self.open_log.setText(self.tr("Open log"))
        self.copy_path.setText(self.tr("Copy path"))
        self.open_log.setAccessibleName(self.tr("Open the full log in the default viewer"))
        self.copy_path.setAccessibleName(self.tr("Copy the log file's path"))
        self.lines.setAccessibleName(self.tr("The lines of the log that matter"))
        if self.log_path is not None:
            self._show_path()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


def status_key(status) -> str:
    """A probe's status word onto passed / failed / skipped / running."""
    s = str(status or "").lower()
    if s in ("passed", "pass", "ok", "success", "true"):
        return "passed"
    if s in ("failed", "fail", "error", "false"):
        return "failed"
    if s in ("skipped", "skip", "n/a"):
        return "skipped"
    if s in ("warning", "warn"):
        return "warning"
    return "running"


class LogBatch:
    """Several LogEvents (and the newest progress per package) delivered as one event."""

    __slots__ = ("events",)
    kind = "batch"

    def __init__(self, events) -> None:
        self.events = tuple(events)


class EventBatcher:
    """Wraps a Task's ``on_event`` on the worker side: log lines and progress updates are
    gathered for ``interval_s`` and sent as one :class:`LogBatch`, so an installer printing
    thousands of lines costs the GUI thread a few signals, not thousands. Any other event
    (a phase, a step, a warning) first sends what is gathered, so the order is kept.
    Thread-safe: the runner reports stdout and stderr from two reader threads."""

    def __init__(self, emit: Callable[[Any], None], interval_s: float = 0.05, max_events: int = 2000) -> None:
        import threading

        self._emit = emit
        self._interval = interval_s
        self._max = max_events
        self._lock = threading.RLock()
        self._buf: list[Any] = []
        self._progress: dict[str, Any] = {}
        self._timer: threading.Timer | None = None

    def __call__(self, ev: Any) -> None:
        from app.core.events import LogEvent, ProgressEvent

        with self._lock:
            if isinstance(ev, LogEvent):
                self._buf.append(ev)
            elif isinstance(ev, ProgressEvent):
                self._progress[ev.package] = ev  # only the newest per package matters
            else:
                self._flush_locked()
                self._emit(ev)
                return
            if len(self._buf) >= self._max:
                self._flush_locked()
            elif self._timer is None:
                import threading

                self._timer = threading.Timer(self._interval, self.flush)
                self._timer.daemon = True
                self._timer.start()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buf and not self._progress:
            return
        events = self._buf + list(self._progress.values())
        self._buf = []
        self._progress = {}
        self._emit(LogBatch(events))

    def close(self) -> None:
        self.flush()

