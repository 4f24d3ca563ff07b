"""A collapsible live log that stays responsive under thousands of lines.

Lines are queued by :meth:`LogView.append` (cheap: a list append) and written to the
QPlainTextEdit in one batch by a QTimer, so an installer printing a line per file never
makes the GUI thread redraw per line. The text widget keeps at most ``max_lines`` lines
(``setMaximumBlockCount``); the full output is in the log file the core writes.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QToolButton, QVBoxLayout, QWidget

FLUSH_INTERVAL_MS = 50
MAX_LINES = 5000
# The most lines written in one flush (measured offscreen: 500 lines ~6-12 ms, 1000 ~23 ms
# with the repaint); the rest waits for the next tick, so a burst costs short ticks instead
# of one long block. Queued lines the view could never show (more than it keeps) are dropped
# before they are drawn: the full output is in the log file.
MAX_LINES_PER_FLUSH = 500


class LogView(QWidget):
    """A "Show details" toggle over a read-only, bounded, batch-appended text view."""

    toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None, *, max_lines: int = MAX_LINES,
                 expanded: bool = False) -> None:
        super().__init__(parent)
        self._pending: list[str] = []
        self._total = 0
        self._max_lines = max_lines

        self.toggle = QToolButton(self)
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.toggle.toggled.connect(self.set_expanded)

        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(max_lines)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setUndoRedoEnabled(False)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.text.setMinimumHeight(120)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.text, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self.flush)

        self.retranslate()
        self.set_expanded(expanded)

    # -- public API ------------------------------------------------------------------------
    def append(self, line: str) -> None:
        """Queue one line; it appears within ``FLUSH_INTERVAL_MS``."""
        self._pending.append(line.rstrip("\r\n"))
        self._total += 1
        if not self._timer.isActive():
            self._timer.start()

    def extend(self, lines) -> None:
        for line in lines:
            self.append(line)

    def flush(self) -> None:
        """Write the queued lines in one edit (called by the timer; tests may call it)."""
        if not self._pending:
            self._timer.stop()
            return
        if len(self._pending) > self._max_lines:
            dropped = len(self._pending) - self._max_lines + 1
            note = self.tr("… {n} lines not shown here (the full log has them)").format(n=dropped)
            self._pending = [note, *self._pending[-(self._max_lines - 1):]]
        batch = self._pending[:MAX_LINES_PER_FLUSH]
        del self._pending[:MAX_LINES_PER_FLUSH]
        bar = self.text.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        prefix = "\n" if not self.text.document().isEmpty() else ""
        cursor.insertText(prefix + "\n".join(batch))
        cursor.endEditBlock()
        if at_bottom:
            bar.setValue(bar.maximum())
        if not self._pending:
            self._timer.stop()

    def clear(self) -> None:
        self._pending.clear()
        self._total = 0
        self.text.clear()

    def plain_text(self) -> str:
        """Everything shown plus what is still queued."""
        self.flush_all()
        return self.text.toPlainText()

    def flush_all(self) -> None:
        while self._pending:
            self.flush()

    def line_count(self) -> int:
        """Lines received since the last clear (the widget itself keeps at most max_lines)."""
        return self._total

    def pending(self) -> int:
        return len(self._pending)

    def is_expanded(self) -> bool:
        return self.text.isVisible() if self.isVisible() else not self.text.isHidden()

    def set_expanded(self, expanded: bool) -> None:
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)  # re-enters through toggled
            return
        self.text.setVisible(expanded)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.retranslate()
        self.toggled.emit(expanded)

    # -- translation -------------------------------------------------------------------------
    def retranslate(self) -> None:
        self.toggle.setText(self.tr("Hide details") if self.toggle.isChecked() else self.tr("Show details"))
        self.toggle.setAccessibleName(self.tr("Show or hide the installer's output"))
        self.text.setAccessibleName(self.tr("Installer output"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


def monospace_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
