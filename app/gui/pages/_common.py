"""Small helpers the late pages share (status icons, the error panel, time formatting)."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.core.base.errors import UserError
from app.core.measure.verify import Check
from app.core.remedies import Action, ActionKind
from app.gui.build import retire
from app.gui.i18n import current_language, render, render_hint
from app.gui.logview import monospace_font
from app.gui.pages import PageId
from app.gui.widgets import PathNote

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
    """Bytes in binary units, named as such (KiB, MiB, GiB), as the report names them."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} GiB"


def early_label() -> QLabel:
    """The line under a page that says how far the early downloads got (hidden when there are none)."""
    from app.gui.widgets import muted

    label = muted(QLabel())
    label.setWordWrap(True)
    label.setObjectName("earlyDownloads")
    label.hide()
    return label


def show_early(label: QLabel, state: Any) -> None:
    """Draw the early downloads' state (:mod:`app.gui.early`) into ``label``."""
    from app.gui.early import early_downloads

    st, done, total, why = early_downloads(state).status()
    if st in ("waiting", "checking", "resolving"):
        text = QCoreApplication.translate("EarlyDownloads", "Getting the build ready to download while you read…")
    elif st == "downloading":
        text = QCoreApplication.translate(
            "EarlyDownloads", "Downloading the build while you read: {done} of {total}.").format(
            done=fmt_bytes(done), total=fmt_bytes(total) if total else "?")
    elif st == "done":
        text = QCoreApplication.translate(
            "EarlyDownloads", "The build is downloaded ({total}): the install will not wait for it.").format(
            total=fmt_bytes(total))
    elif st in ("skipped", "failed") and why:
        text = QCoreApplication.translate("EarlyDownloads", "Not downloaded early: {why}").format(why=why)
    else:
        text = ""
    label.setText(text)
    label.setVisible(bool(text))


@runtime_checkable
class AcceptsAction(Protocol):
    """A page that applies a remedy's action to its own controls (the Recommendation page pins a
    torch version, the Environment page selects another Python, folder, proxy, …)."""

    def apply_action(self, action: Action) -> None: ...


@runtime_checkable
class Restartable(Protocol):
    """A page whose step can run again (Install, Verify, Speed test)."""

    def start(self) -> None: ...


# The wizard page where each kind of action is applied.
STEP_PAGE = {"recommendation": PageId.RECOMMENDATION, "environment": PageId.ENVIRONMENT}


class ErrorPanel(QWidget):
    """A failure, shown the way the issue asks: the message; what the remedy catalogue made of
    it (the explanation and the tool's own reasoning, in the wizard's language); one button per
    action, which applies the change and goes back to the page where it belongs; the hint; the
    few relevant lines of the tool's output (folded away when there is an explanation); and the
    full log's path with "Open log" and "Copy path"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log_path: Path | None = None
        self.error: UserError | None = None
        self.action_buttons: list[QPushButton] = []
        self.applied: list[Action] = []  # what the buttons did (tests and the log read it)
        self.icon = QLabel(self)
        put_icon(self.icon, "failed", 32)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.message.font()
        f.setBold(True)
        self.message.setFont(f)
        self.explanation = QLabel(self)
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.actions_row = QHBoxLayout()
        self.show_output = QToolButton(self)
        self.show_output.setCheckable(True)
        self.show_output.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.show_output.toggled.connect(self._output_toggled)
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
        self.path_note = PathNote(self)  # "Open log" where nothing opens it: its path, to copy
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.explanation)
        lay.addWidget(self.details)
        lay.addLayout(self.actions_row)
        lay.addWidget(self.hint)
        lay.addWidget(self.show_output, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.lines)
        lay.addWidget(self.path_label)
        lay.addLayout(btns)
        lay.addWidget(self.path_note)
        self.retranslate()

    # -- showing -----------------------------------------------------------------------------
    def show_error(self, err: UserError, log_path: Path | None = None) -> None:
        self.error = err
        path = err.log_path or log_path
        self.log_path = Path(path) if path else None
        self.lines.setPlainText("\n".join(err.lines))
        # The tool's raw output is folded away when the catalogue explained it (it is in the tool's
        # language); with no explanation it is the only account, so it shows.
        self.show_output.setChecked(not err.remedies)
        self._render()
        self.setVisible(True)

    def _render(self) -> None:
        """Every text of the error in the wizard's language (again on a language switch)."""
        err = self.error
        if err is None:
            return
        lang = current_language()
        self.message.setText(render(err.message, lang))
        explanation = [render(r.explanation, lang) for r in err.remedies]
        self.explanation.setText("\n".join(explanation))
        self.explanation.setVisible(bool(explanation))
        details = [render(d, lang) for r in err.remedies for d in r.details]
        self.details.setText("\n".join("• " + d for d in details))
        self.details.setVisible(bool(details))
        hint = render_hint(err.hint, lang, "gui") if err.hint else ""
        self.hint.setText(self.tr("What to do: {hint}").format(hint=hint) if hint else "")
        self.hint.setVisible(bool(hint))
        self._make_buttons(err.actions, lang)
        has_lines = bool(err.lines)
        self._retitle_output()
        self.show_output.setVisible(has_lines)
        self.lines.setVisible(has_lines and self.show_output.isChecked())
        self._show_path()

    def _make_buttons(self, actions: tuple[Action, ...], lang: str) -> None:
        for b in self.action_buttons:
            self.actions_row.removeWidget(b)
            retire(b)  # (not setParent(None): Python would delete it at once, maybe inside its own click)
        self.action_buttons = []
        while self.actions_row.count():
            self.actions_row.takeAt(0)
        for action in actions:
            if action.kind is ActionKind.OPEN_LOG:
                continue  # "Open log" is always there
            b = QPushButton(render(action.label(), lang), self)
            b.setToolTip(render(action.tooltip(), lang))
            b.setAccessibleName(render(action.label(), lang))
            b.clicked.connect(lambda _=False, a=action: self.apply(a))
            self.actions_row.addWidget(b)
            self.action_buttons.append(b)
        self.actions_row.addStretch(1)

    def _output_toggled(self, on: bool) -> None:
        self.lines.setVisible(on and bool(self.error is not None and self.error.lines))
        self._retitle_output()

    def _retitle_output(self) -> None:
        n = len(self.error.lines) if self.error is not None else 0
        self.show_output.setText(self.tr("Hide the tool's output") if self.show_output.isChecked()
                                 else self.tr("Show the tool's output ({count} lines)").format(count=n))
        self.show_output.setArrowType(Qt.ArrowType.DownArrow if self.show_output.isChecked()
                                      else Qt.ArrowType.RightArrow)

    def _show_path(self) -> None:
        has = self.log_path is not None
        self.path_label.setText(self.tr("Full log: {path}").format(path=self.log_path) if has else "")
        for w in (self.path_label, self.open_log, self.copy_path):
            w.setVisible(has)

    # -- the actions -------------------------------------------------------------------------
    def apply(self, action: Action) -> None:
        """Do what ``action`` says: open the official page, clear the variable and run the step
        again, or go back to the page where the choice is made, with the choice applied there."""
        self.applied.append(action)
        if action.kind is ActionKind.OPEN_LOG:
            self._open_log()
        elif action.step == "outside":
            QDesktopServices.openUrl(QUrl(action.url))
        elif action.kind is ActionKind.UNSET_ENV:
            os.environ.pop(action.value, None)  # the assistant and every program it starts from now on
            self._retry()
        elif action.kind is ActionKind.RETRY:
            self._retry()
        else:
            self._go_back(STEP_PAGE[action.step], action)

    def _page(self) -> QWizardPage | None:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QWizardPage):
            w = w.parentWidget()
        return w

    def _retry(self) -> None:
        page = self._page()
        if isinstance(page, Restartable):
            page.start()

    def _go_back(self, pid: PageId, action: Action) -> None:
        page = self._page()
        wizard = page.wizard() if page is not None else None
        if wizard is None:
            return
        target = int(pid)
        # Back through the pages seen (past the commit page too: the failed step left nothing behind).
        while wizard.currentId() != target and target in wizard.visitedIds()[:-1]:
            before = wizard.currentId()
            wizard.back()
            if wizard.currentId() == before:
                break
        dest = wizard.page(target)
        if isinstance(dest, AcceptsAction):
            dest.apply_action(action)

    # -- log buttons, language ----------------------------------------------------------------
    def _open_log(self) -> None:
        if self.log_path:
            self.path_note.open(self.log_path)

    def _copy_path(self) -> None:
        if self.log_path:
            QGuiApplication.clipboard().setText(str(self.log_path))

    def retranslate(self) -> None:
        self.open_log.setText(self.tr("Open log"))
        self.copy_path.setText(self.tr("Copy path"))
        self.open_log.setAccessibleName(self.tr("Open the full log in the default viewer"))
        self.copy_path.setAccessibleName(self.tr("Copy the log file's path"))
        self.lines.setAccessibleName(self.tr("The lines of the log that matter"))
        self._retitle_output()
        self._render()
        if self.log_path is not None:
            self._show_path()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class CheckRows:
    """The rows of a verification checklist (a ``checklist()`` tree): one row a check, by name,
    and the Check each row shows (drawn again in the new language on a switch)."""

    def __init__(self, tree: QTreeWidget) -> None:
        self.tree = tree
        self.items: dict[str, QTreeWidgetItem] = {}
        self.shown: dict[str, Check] = {}

    def clear(self) -> None:
        self.tree.clear()
        self.items.clear()
        self.shown.clear()

    def put(self, check: Check) -> tuple[QTreeWidgetItem, Check]:
        """The row for ``check`` (added at the end the first time) and the check it now shows: a live
        step that says nothing yet keeps what its row said."""
        old = self.shown.get(check.name)
        if old is not None and not render(check.detail):
            check = replace(check, detail=old.detail, code=old.code, params=old.params, data=old.data)
        self.shown[check.name] = check
        item = self.items.get(check.name)
        if item is None:
            item = QTreeWidgetItem(["", ""])
            self.items[check.name] = item
            self.tree.addTopLevelItem(item)
        return item, check

    def __iter__(self) -> Iterator[tuple[QTreeWidgetItem, Check]]:
        """Every row with the check it shows, in order."""
        return ((item, self.shown[name]) for name, item in self.items.items())

    def __len__(self) -> int:
        return len(self.items)


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
        self._progress: dict[tuple[str, str], Any] = {}
        self._timer: threading.Timer | None = None

    def __call__(self, ev: Any) -> None:
        from app.core.base.events import LogEvent, ProgressEvent

        with self._lock:
            if isinstance(ev, LogEvent):
                self._buf.append(ev)
            elif isinstance(ev, ProgressEvent):
                self._progress[(ev.package, ev.unit)] = ev  # only the newest per package and measure matters
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

