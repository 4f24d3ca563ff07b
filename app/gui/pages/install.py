"""Page 5, Install (the commit page): create the environment and install torch into it.

The page installs the session's approved plan, the very object the Environment page's
pre-flight passed (``state.session.approved_plan``); it never plans anything itself. The
install runs in a :class:`~app.gui.worker.Task` (the session's ``install(plan, on_event,
cancel)``, which measures the target and the free space again and may refuse); its events
drive a progress bar from real bytes, the current package, the phase, elapsed and
estimated time left, and the collapsible live log. Cancel really stops
the installer and the core removes the half-made environment; the page says so, and only
then (or after a failure) may the user go back to the Environment page.

The arithmetic behind the bar and the time left is the core's
:class:`~app.core.base.progress_model.InstallProgress`; this page only draws it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget, QWizard, QWizardPage

from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import UserError
from app.core.base.events import ErrorEvent, Event, LogEvent, PhaseEvent, ProgressEvent, StepEvent, WarningEvent
from app.core.base.progress_model import InstallProgress
from app.gui.build import add_all, button, set_texts, text_label
from app.gui.i18n import current_language, render
from app.gui.logview import LogView
from app.gui.pages._common import ErrorPanel, EventBatcher, LogBatch, fmt_bytes, fmt_duration, put_icon
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.install import InstallResult
    from app.core.proc.runner import CancelToken

# Page states.
IDLE, RUNNING, CANCELLING, CANCELLED, FAILED, SUCCEEDED = (
    "idle", "running", "cancelling", "cancelled", "failed", "succeeded")
_PROGRESS_STEPS = 1000


class BackButtonGuard(QObject):
    """Keeps the wizard's Back button off while ``allowed()`` says no: QWizard re-enables Back
    whenever it updates its buttons, so a filter on the button turns it off again while
    ``page`` is the current page."""

    def __init__(self, page: QWizardPage, allowed: Callable[[], bool]) -> None:
        super().__init__(page)
        self._page = page
        self._allowed = allowed
        self._button: QWidget | None = None

    def attach(self) -> None:
        """Watch the Back button of the page's wizard (once it has one)."""
        wiz = self._page.wizard()
        back = wiz.button(QWizard.WizardButton.BackButton) if wiz is not None else None
        if back is not None and back is not self._button:
            back.installEventFilter(self)
            self._button = back

    def sync(self) -> None:
        """Turn Back off now if going back is not allowed (after a status change)."""
        wiz = self._page.wizard()
        if wiz is None or wiz.currentPage() is not self._page:
            return
        back = wiz.button(QWizard.WizardButton.BackButton)
        if back is not None and not self._allowed():
            back.setEnabled(False)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._button and isinstance(obj, QWidget) and event.type() == QEvent.Type.EnabledChange:
            wiz = self._page.wizard()
            if obj.isEnabled() and wiz is not None and wiz.currentPage() is self._page and not self._allowed():
                obj.setEnabled(False)
        return super().eventFilter(obj, event)


class InstallPage(BasePage):
    """Creates the environment and installs torch; complete only on success."""

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("InstallPage", "Installing PyTorch"),
              QT_TRANSLATE_NOOP("InstallPage", "The environment is created and PyTorch is downloaded and installed "
                                               "into it. This usually takes from under a minute to a few minutes."))

    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.setCommitPage(True)
        self._status = IDLE
        self._task: Task | None = None
        self._started_at: float | None = None
        self._ended_at: float | None = None
        self.model = InstallProgress()  # the bar, the package line and the time left
        self._phase_key: Phase | None = None
        self._error: UserError | None = None
        self._result: InstallResult | None = None
        self._env_path: Path | None = None
        self._left_behind: Path | None = None
        self._existing = False
        self._back_guard = BackButtonGuard(self, self.can_go_back)
        self._warnings: list[str] = []
        self._build_widgets()
        self._build_layout()
        self._clock = QTimer(self)
        self._clock.setInterval(500)
        self._clock.timeout.connect(self._update_times)
        self.retranslate()
        self._apply_status()

    def _build_widgets(self) -> None:
        self.phase_label = text_label(self, bold=True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, _PROGRESS_STEPS)
        self.progress.setValue(0)
        self.package_label = text_label(self)
        self.time_label = QLabel(self)
        self.status_icon = QLabel(self)
        self.status_label = text_label(self, selectable=True)
        self.warning_label = text_label(self)
        self.warning_label.setVisible(False)
        self.cancel_button = button(self.cancel, self)
        self.retry_button = button(self.start, self)
        self.error_panel = ErrorPanel(self)
        self.error_panel.setVisible(False)
        self.log = LogView(self)

    def _build_layout(self) -> None:
        status_row = QHBoxLayout()
        add_all(status_row, self.status_icon, (self.status_label, 1))
        buttons = QHBoxLayout()
        add_all(buttons, (self.time_label, 1), self.retry_button, self.cancel_button)
        add_all(self.body, self.phase_label, self.progress, self.package_label, buttons, status_row,
                self.warning_label, self.error_panel, (self.log, 1))

    # -- the wizard's hooks ------------------------------------------------------------------
    def initializePage(self) -> None:
        self._back_guard.attach()
        if self._status in (IDLE, CANCELLED, FAILED):
            self.start()
        QTimer.singleShot(0, self._back_guard.sync)

    def isComplete(self) -> bool:
        return self._status == SUCCEEDED

    # -- public API (the wizard's closeEvent uses is_busy / cancel_and_wait) -----------------
    def status(self) -> str:
        return self._status

    def can_go_back(self) -> bool:
        return self._status in (IDLE, CANCELLED, FAILED)

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        """Cancel a running install and wait (blocking) until the core has rolled back.
        For the window's close only (seconds, like BasePage; ``timeout_ms`` also accepted).
        Returns True when nothing is running any more."""
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        task = self._task
        if task is None or not task.is_running():
            return True
        self.cancel()
        return task.wait(timeout)

    def start(self) -> None:
        if self.is_busy():
            return
        session = self.state.session
        plan = session.approved_plan
        self._reset()
        if plan is None:
            self._fail(UserError(self.tr("No environment was chosen."),
                                 hint=self.tr("Go back to the Environment page and choose where to install.")))
            return
        self._env_path = plan.env_path
        self._existing = not plan.new_env

        def work(on_event: Callable[[Event], None], cancel: CancelToken) -> InstallResult:
            batcher = EventBatcher(on_event)  # thousands of log lines: a few signals
            try:
                return session.install(plan, on_event=batcher, cancel=cancel)  # exactly the approved plan
            finally:
                batcher.close()

        task = Task(work, self, name="install")
        task.event.connect(self.on_event)
        task.succeeded.connect(self._on_succeeded)
        task.failed.connect(self._fail)
        task.cancelled.connect(self._on_cancelled)
        self._task = task
        self._started_at = time.monotonic()
        self._set_status(RUNNING)
        self._clock.start()
        task.start()

    def cancel(self) -> None:
        if self._status != RUNNING or self._task is None:
            return
        self._set_status(CANCELLING)
        self._task.cancel()

    # -- events from the core (on the GUI thread) ---------------------------------------------
    def on_event(self, ev: Event | LogBatch) -> None:
        if isinstance(ev, LogBatch):
            for e in ev.events:
                self.on_event(e)
        elif isinstance(ev, LogEvent):
            self.log.append(ev.text)
        elif isinstance(ev, ProgressEvent):
            self.model.feed(ev)
            self._draw_progress()
        elif isinstance(ev, PhaseEvent):
            if ev.state == PhaseState.START:
                self._phase_key = ev.name
                self._update_phase_label()
            self.log.append(f"[{ev.name}] {ev.state}" + (f": {ev.detail}" if ev.detail else ""))
        elif isinstance(ev, WarningEvent):
            self._warnings.append(render(ev.text, current_language()))
            self.warning_label.setText("\n".join("⚠ " + w for w in self._warnings[-3:]))
            self.warning_label.setVisible(True)
            self.log.append("warning: " + self._warnings[-1])
        elif isinstance(ev, ErrorEvent):
            self.log.append("error: " + ev.message)
        elif isinstance(ev, StepEvent):  # pre-flight checks
            self.log.append(f"{ev.name}: {ev.status}" + (f": {ev.detail}" if ev.detail else ""))

    def _draw_progress(self) -> None:
        """The bar as the model says: a busy bar, or the fraction of what it measures now."""
        if self.model.mode == "busy":
            self.progress.setRange(0, 0)
        else:
            if self.progress.maximum() == 0:
                self.progress.setRange(0, _PROGRESS_STEPS)
            self.progress.setValue(int(self.model.fraction * _PROGRESS_STEPS))
        self._draw_package_line()

    def _draw_package_line(self) -> None:
        """The current-package line (redrawn on a language switch)."""
        line = self.model.line
        if line is None or self._status not in (RUNNING, CANCELLING):
            self.package_label.setVisible(False)
            return
        self.package_label.setVisible(True)
        if line.unit == "unpacking" and line.total > 0:  # measured on disk
            self.package_label.setText(self.tr("Unpacking and installing the packages: {done} of about {total}").format(
                done=fmt_bytes(line.done), total=fmt_bytes(line.total)))
        elif line.unit == "unpacking":
            self.package_label.setText(self.tr("Unpacking and installing the packages…"))
        elif line.unit == "packages":
            self.package_label.setText(self.tr("{package} (package {done} of {total})").format(
                package=line.package, done=line.done, total=line.total))
        elif line.total > 0:
            self.package_label.setText(self.tr("{package}: {done} of {total}").format(
                package=line.package, done=fmt_bytes(line.done), total=fmt_bytes(line.total)))
        else:
            self.package_label.setText(self.tr("{package}: {done}").format(
                package=line.package, done=fmt_bytes(line.done)))

    def fraction(self) -> float:
        """What the progress bar shows (0..1)."""
        return self.model.fraction

    # -- outcomes ----------------------------------------------------------------------------------
    def _on_succeeded(self, result: InstallResult) -> None:
        self._result = result  # the session holds it too
        log_path = result.log_path
        if log_path and Path(log_path) not in self.state.log_paths:
            self.state.log_paths.append(Path(log_path))
        self.progress.setRange(0, _PROGRESS_STEPS)
        self.progress.setValue(_PROGRESS_STEPS)
        self._set_status(SUCCEEDED)

    def _fail(self, err: UserError) -> None:
        log_path: Path | None = err.log_path
        if not log_path:
            log_path = self._save_own_log()
        elif Path(log_path) not in self.state.log_paths:
            self.state.log_paths.append(Path(log_path))
        self._error = err
        self.error_panel.show_error(err, log_path)
        self._set_status(FAILED)

    def _on_cancelled(self) -> None:
        env = self._env_path
        self._left_behind = env if (env is not None and not self._existing and env.exists()) else None
        self._set_status(CANCELLED)

    def _save_own_log(self) -> Path | None:
        """The core failed before it had a log file: keep what the page saw."""
        try:
            from app.core.base.paths import new_log_path
            from app.core.base.secrets import write_private

            path = new_log_path("install-gui")
            write_private(path, self.log.plain_text() + "\n")  # masked, mode 0600
            self.state.log_paths.append(path)
            return path
        except OSError:
            return None

    # -- view state --------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._task = None
        self._started_at = self._ended_at = None
        self.model.reset()
        self._phase_key = None
        self._error = None
        self._result = None
        self._left_behind = None
        self._warnings.clear()
        self.warning_label.setVisible(False)
        self.error_panel.setVisible(False)
        self.package_label.clear()
        self.log.clear()
        self.progress.setRange(0, 0)  # busy until the first real bytes arrive

    def _set_status(self, status: str) -> None:
        self._status = status
        if status in (CANCELLED, FAILED, SUCCEEDED):
            self._ended_at = time.monotonic()
            self._clock.stop()
            self.log.flush_all()
            self.package_label.clear()  # the last package's progress is no news at the end (it stood at 100 %)
            self.package_label.setVisible(False)
            if status != SUCCEEDED:
                self.progress.setRange(0, _PROGRESS_STEPS)
                self.progress.setValue(0)
        self._apply_status()
        self.completeChanged.emit()
        self._back_guard.sync()
        self.state_changed.emit(status)

    def _apply_status(self) -> None:
        st = self._status
        self.cancel_button.setVisible(st in (RUNNING, CANCELLING))
        self.cancel_button.setEnabled(st == RUNNING)
        self.retry_button.setVisible(st in (CANCELLED, FAILED))
        self.error_panel.setVisible(st == FAILED)
        icon = {SUCCEEDED: "passed", FAILED: "failed", CANCELLED: "info", CANCELLING: "running",
                RUNNING: "running"}.get(st)
        put_icon(self.status_icon, icon, 20)
        self.status_icon.setVisible(icon is not None and st != RUNNING)
        self.status_label.setText(self._status_text())
        self.status_label.setVisible(bool(self.status_label.text()))
        self._update_phase_label()
        self._update_times()

    def _status_text(self) -> str:
        st = self._status
        if st == CANCELLING:
            return self.tr("Cancelling… removing the half-made environment")
        if st == CANCELLED:
            if self._left_behind is not None:
                return self.tr("Cancelled, but this folder could not be removed: {path}. "
                               "You may delete it yourself.").format(path=self._left_behind)
            if self._existing:
                return self.tr("Cancelled: the environment was restored to its earlier state. You can "
                               "go back and change the environment, try again, or close the assistant.")
            return self.tr("Cancelled: nothing was left behind. You can go back and change the "
                           "environment, try again, or close the assistant.")
        if st == SUCCEEDED:
            r = self._result
            ver = (r.torch_version if r else None) or ""
            where = r.env_path if r else ""
            took = fmt_duration(r.duration_s if r else None)
            return self.tr("Installed PyTorch {version} into {path} in {took}.").format(
                version=ver, path=where, took=took)
        if st == FAILED:
            return self.tr("The installation failed. Nothing half-made was kept; the details are below.")
        return ""

    def _phase_text(self, phase: Phase) -> str:
        """What the page calls each phase (one entry per Phase; lupdate reads the literals)."""
        table = {
            Phase.PLAN: self.tr("Planning the installation"),
            Phase.PREFLIGHT: self.tr("Checking space, permissions and the network"),
            Phase.SNAPSHOT: self.tr("Recording what the environment holds now"),
            Phase.CREATE_ENV: self.tr("Creating the environment"),
            Phase.INSTALL: self.tr("Downloading and installing packages"),
            Phase.DOWNLOAD: self.tr("Downloading packages"),
            Phase.HASH: self.tr("Checking the installed packages"),
            Phase.VERIFY: self.tr("Checking the installed packages"),
            Phase.BENCH: self.tr("Checking the installed packages"),
            Phase.ROLLBACK: self.tr("Removing the half-made environment"),
            Phase.RESTORE: self.tr("Cleaning up"),
        }
        return table[phase]

    def _update_phase_label(self) -> None:
        st = self._status
        if st == IDLE:
            text = self.tr("Ready to install.")
        elif st == SUCCEEDED:
            text = self.tr("Done")
        elif st == FAILED:
            text = self.tr("Failed")
        elif st in (CANCELLING, CANCELLED):
            text = self.tr("Cancelled") if st == CANCELLED else self.tr("Cancelling…")
        elif self._phase_key is not None:
            text = self._phase_text(self._phase_key)
        else:
            text = self.tr("Starting…")
        self.phase_label.setText(text)

    def _update_times(self) -> None:
        if self._started_at is None:
            self.time_label.setText("")
            return
        end = self._ended_at or time.monotonic()
        elapsed = end - self._started_at
        text = self.tr("Elapsed: {elapsed}").format(elapsed=fmt_duration(elapsed))
        if self._status == RUNNING:
            rate = self.model.rate()
            if rate is not None and self.model.mode in ("download", "unpack"):
                text += "  ·  " + self.tr("{rate}/s").format(rate=fmt_bytes(rate))
            elif rate is not None and self.model.mode == "packages":
                text += "  ·  " + self.tr("{rate:.1f} packages/s").format(rate=rate)
            left = self.model.eta()
            if left is not None:
                text += "  ·  " + self.tr("About {left} left").format(left=fmt_duration(left))
            elif self.model.mode != "busy":
                text += "  ·  " + self.tr("Estimating time left…")
        self.time_label.setText(text)

    # -- translation --------------------------------------------------------------------------------
    def retranslate_page(self) -> None:
        set_texts(self.cancel_button, self.tr("Cancel installation"),
                  name=self.tr("Cancel the installation and remove what was made"))
        self.retry_button.setText(self.tr("Try again"))
        self.progress.setAccessibleName(self.tr("Installation progress"))
        self._draw_package_line()
        self._apply_status()


