"""Page 5, Install (the commit page): create the environment and install torch into it.

The install runs in a :class:`~app.gui.worker.Task` (the core's ``install(plan, on_event,
cancel)``); its events drive a progress bar from real bytes, the current package, the
phase, elapsed and estimated time left, and the collapsible live log. Cancel really stops
the installer and the core removes the half-made environment; the page says so, and only
then (or after a failure) may the user go back to the Environment page.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QProgressBar, QPushButton, QWizard)

from app.core.enums import Phase, PhaseState
from app.core.errors import UserError
from app.core.events import ErrorEvent, LogEvent, PhaseEvent, ProgressEvent, StepEvent, WarningEvent
from app.core.text import render
from app.gui.i18n import current_language
from app.gui.logview import LogView
from app.gui.pages.base import BasePage
from app.gui.pages._common import ErrorPanel, EventBatcher, LogBatch, fmt_bytes, fmt_duration, put_icon
from app.gui.state import WizardState
from app.gui.worker import Task

# Page states.
IDLE, RUNNING, CANCELLING, CANCELLED, FAILED, SUCCEEDED = (
    "idle", "running", "cancelling", "cancelled", "failed", "succeeded")
_PROGRESS_STEPS = 1000


class InstallPage(BasePage):
    """Creates the environment and installs torch; complete only on success."""

    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent=None) -> None:
        super().__init__(state, parent)
        self.setCommitPage(True)
        self._status = IDLE
        self._task: Task | None = None
        self._started_at: float | None = None
        self._ended_at: float | None = None
        self._first_bytes_at: float | None = None
        self._bytes: dict[str, tuple[int, int]] = {}
        self._shown_fraction = 0.0
        self._mode = "busy"  # what the bar measures: download | packages | busy
        self._pkg_progress: tuple[int, int] | None = None
        self._first_pkg_at: float | None = None
        self._phase_key: Phase | None = None
        self._package = ""
        self._error: UserError | None = None
        self._result = None
        self._env_path: Path | None = None
        self._left_behind: Path | None = None
        self._existing = False
        self._guarded = None  # the wizard's Back button, once filtered
        self._warnings: list[str] = []

        self.phase_label = QLabel(self)
        f = self.phase_label.font()
        f.setBold(True)
        self.phase_label.setFont(f)
        self.phase_label.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, _PROGRESS_STEPS)
        self.progress.setValue(0)
        self.package_label = QLabel(self)
        self.package_label.setWordWrap(True)
        self.time_label = QLabel(self)
        self.status_icon = QLabel(self)
        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warning_label = QLabel(self)
        self.warning_label.setWordWrap(True)
        self.warning_label.setVisible(False)
        self.cancel_button = QPushButton(self)
        self.cancel_button.clicked.connect(self.cancel)
        self.retry_button = QPushButton(self)
        self.retry_button.clicked.connect(self.start)
        self.error_panel = ErrorPanel(self)
        self.error_panel.setVisible(False)
        self.log = LogView(self)

        status_row = QHBoxLayout()
        status_row.addWidget(self.status_icon, 0)
        status_row.addWidget(self.status_label, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.time_label, 1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.cancel_button)
        lay = self.body
        lay.addWidget(self.phase_label)
        lay.addWidget(self.progress)
        lay.addWidget(self.package_label)
        lay.addLayout(buttons)
        lay.addLayout(status_row)
        lay.addWidget(self.warning_label)
        lay.addWidget(self.error_panel)
        lay.addWidget(self.log, 1)

        self._clock = QTimer(self)
        self._clock.setInterval(500)
        self._clock.timeout.connect(self._update_times)

        self.retranslate()
        self._apply_status()

    # -- the wizard's hooks ------------------------------------------------------------------
    def initializePage(self) -> None:  # noqa: N802
        self._guard_back_button()
        if self._status in (IDLE, CANCELLED, FAILED):
            self.start()
        QTimer.singleShot(0, self._sync_wizard_buttons)

    def _guard_back_button(self) -> None:
        """QWizard re-enables Back whenever it updates its buttons; a filter on the button
        turns it off again while this page is shown and going back is not allowed."""
        wiz = self.wizard()
        back = wiz.button(QWizard.WizardButton.BackButton) if wiz is not None else None
        if back is not None and back is not self._guarded:
            back.installEventFilter(self)
            self._guarded = back

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self._guarded and event.type() == QEvent.Type.EnabledChange:
            wiz = self.wizard()
            if obj.isEnabled() and wiz is not None and wiz.currentPage() is self and not self.can_go_back():
                obj.setEnabled(False)
        return super().eventFilter(obj, event)

    def isComplete(self) -> bool:  # noqa: N802
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
        request = self._effective_request()
        self._reset()
        if request is None:
            self._fail(UserError(self.tr("No environment was chosen."),
                                 hint=self.tr("Go back to the Environment page and choose where to install.")))
            return
        self.state.install_request = request
        self.state.install_result = None
        self._env_path = Path(request.env_path) if getattr(request, "env_path", None) else None
        report = self.state.report

        def work(on_event, cancel):
            from app.core.install import install, plan  # imported here: keeps start-up fast

            batcher = EventBatcher(on_event)  # thousands of log lines: a few signals
            try:
                the_plan = plan(request, report=report) if report is not None else plan(request)
                return install(the_plan, on_event=batcher, cancel=cancel)
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
    def on_event(self, ev) -> None:
        if isinstance(ev, LogBatch):
            for e in ev.events:
                self.on_event(e)
        elif isinstance(ev, LogEvent):
            self.log.append(ev.text)
        elif isinstance(ev, ProgressEvent):
            self._on_progress(ev)
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

    def _on_progress(self, ev: ProgressEvent) -> None:
        now = time.monotonic()
        if getattr(ev, "unit", "bytes") == "packages":
            # The installer counts packages, not bytes (done/total packages).
            self._pkg_progress = (ev.done_bytes, ev.total_bytes)
            if self._first_pkg_at is None and ev.done_bytes > 0:
                self._first_pkg_at = now
            if ev.package and ev.total_bytes > 0 and ev.done_bytes > 0:
                self._package = ev.package
                self._package_line = ("packages", ev.package, ev.done_bytes, ev.total_bytes)
                self._draw_package_line()
        else:
            if self._first_bytes_at is None and ev.done_bytes > 0:
                self._first_bytes_at = now
            self._bytes[ev.package] = (ev.done_bytes, ev.total_bytes)
            self._package = ev.package
            self._package_line = ("bytes", ev.package, ev.done_bytes, ev.total_bytes)
            self._draw_package_line()
        self._refresh_bar()

    def _draw_package_line(self) -> None:
        """The current-package line, from the last progress event (redrawn on a language switch)."""
        line = getattr(self, "_package_line", None)
        if line is None:
            return
        unit, package, done, total = line
        if unit == "unpacking":
            self.package_label.setText(self.tr("Unpacking and installing the packages…"))
        elif unit == "packages":
            self.package_label.setText(self.tr("{package} (package {done} of {total})").format(
                package=package, done=done, total=total))
        elif total > 0:
            self.package_label.setText(self.tr("{package}: {done} of {total}").format(
                package=package, done=fmt_bytes(done), total=fmt_bytes(total)))
        else:
            self.package_label.setText(self.tr("{package}: {done}").format(
                package=package, done=fmt_bytes(done)))

    def _downloading(self) -> bool:
        return any(t > 0 and d < t for d, t in self._bytes.values())

    def _refresh_bar(self) -> None:
        """Bytes while a download is in flight; packages done when the installer counts them;
        otherwise (unpacking and linking, where no installer reports progress) a busy bar,
        never a full bar that still waits."""
        pk = self._pkg_progress
        if self._downloading():
            done, total = self._byte_totals()
            self._set_mode("download")
            self._show_fraction(done / total)
        elif pk is not None and pk[0] > 0 and pk[1] > 0:
            self._set_mode("packages")
            self._show_fraction(pk[0] / pk[1])
        else:
            self._set_mode("busy")
            self.progress.setRange(0, 0)
            if self._bytes:
                self._package_line = ("unpacking", "", 0, 0)
                self._draw_package_line()

    def _set_mode(self, mode: str) -> None:
        if mode != self._mode:
            self._mode = mode
            self._shown_fraction = 0.0  # each measure runs forwards on its own

    def _show_fraction(self, frac: float) -> None:
        frac = max(self._shown_fraction, min(1.0, frac))  # never runs backwards
        self._shown_fraction = frac
        if self.progress.maximum() == 0:
            self.progress.setRange(0, _PROGRESS_STEPS)
        self.progress.setValue(int(frac * _PROGRESS_STEPS))

    def fraction(self) -> float:
        """What the progress bar shows (0..1)."""
        return self._shown_fraction

    def _byte_totals(self) -> tuple[int, int]:
        known = [(d, t) for d, t in self._bytes.values() if t > 0]
        return sum(min(d, t) for d, t in known), sum(t for _, t in known)

    # -- outcomes ----------------------------------------------------------------------------------
    def _on_succeeded(self, result) -> None:
        self._result = result
        self.state.install_result = result
        log_path = getattr(result, "log_path", None)
        if log_path and Path(log_path) not in self.state.log_paths:
            self.state.log_paths.append(Path(log_path))
        self.progress.setRange(0, _PROGRESS_STEPS)
        self.progress.setValue(_PROGRESS_STEPS)
        self._set_status(SUCCEEDED)

    def _fail(self, err) -> None:
        if not isinstance(err, UserError):
            err = UserError(str(err))
        log_path = getattr(err, "log_path", None)
        if not log_path:
            log_path = self._save_own_log()
        elif Path(log_path) not in self.state.log_paths:
            self.state.log_paths.append(Path(log_path))
        self._error = err
        self.error_panel.show_error(err, log_path)
        self._set_status(FAILED)

    def _on_cancelled(self) -> None:
        env = self._env_path
        existing = bool(getattr(self.state.install_request, "existing", False))
        self._existing = existing
        self._left_behind = env if (env is not None and not existing and env.exists()) else None
        self._set_status(CANCELLED)

    def _save_own_log(self) -> Path | None:
        """The core failed before it had a log file: keep what the page saw."""
        try:
            from app.core.paths import new_log_path

            path = new_log_path("install-gui")
            path.write_text(self.log.plain_text() + "\n", encoding="utf-8")
            self.state.log_paths.append(path)
            return path
        except OSError:
            return None

    # -- view state --------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._task = None
        self._started_at = self._ended_at = self._first_bytes_at = None
        self._bytes.clear()
        self._shown_fraction = 0.0
        self._mode = "busy"
        self._pkg_progress = None
        self._first_pkg_at = None
        self._phase_key = None
        self._package = ""
        self._error = None
        self._result = None
        self._left_behind = None
        self._warnings.clear()
        self.warning_label.setVisible(False)
        self.error_panel.setVisible(False)
        self._package_line = None
        self.package_label.clear()
        self.log.clear()
        self.progress.setRange(0, 0)  # busy until the first real bytes arrive

    def _set_status(self, status: str) -> None:
        self._status = status
        if status in (CANCELLED, FAILED, SUCCEEDED):
            self._ended_at = time.monotonic()
            self._clock.stop()
            self.log.flush_all()
            if status != SUCCEEDED:
                self.progress.setRange(0, _PROGRESS_STEPS)
                self.progress.setValue(0)
        self._apply_status()
        self.completeChanged.emit()
        self._sync_wizard_buttons()
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
            ver = getattr(r, "torch_version", "") or ""
            where = getattr(r, "env_path", "") or ""
            took = fmt_duration(getattr(r, "duration_s", None))
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
            left = self._eta()
            if left is not None:
                text += "  ·  " + self.tr("About {left} left").format(left=fmt_duration(left))
            elif self._mode != "busy":
                text += "  ·  " + self.tr("Estimating time left…")
        self.time_label.setText(text)

    def _eta(self) -> float | None:
        """Seconds left while downloading, from the byte rate so far (or the package rate
        when the installer counts packages); None when there is nothing to go on."""
        if self._mode == "download":
            (done, total), start = self._byte_totals(), self._first_bytes_at
        elif self._mode == "packages" and self._pkg_progress is not None:
            (done, total), start = self._pkg_progress, self._first_pkg_at
        else:
            return None
        if start is None or total <= 0 or done <= 0:
            return None
        spent = time.monotonic() - start
        if spent < 1.0:
            return None
        rate = done / spent
        return max(0.0, (total - done) / rate) if rate > 0 else None

    def _sync_wizard_buttons(self) -> None:
        """QWizard re-enables Back on its own; during and after a run it must stay off."""
        wiz = self.wizard()
        if wiz is None or wiz.currentPage() is not self:
            return
        back = wiz.button(QWizard.WizardButton.BackButton)
        if back is not None and not self.can_go_back():
            back.setEnabled(False)

    def _effective_request(self):
        """The Environment page's request, with the wizard-wide package source applied where
        the request itself has none."""
        req = self.state.install_request
        if req is None or not dataclasses.is_dataclass(req):
            return req
        changes = {}
        names = {f.name for f in dataclasses.fields(req)}
        if "find_links" in names and not req.find_links and self.state.find_links:
            changes["find_links"] = tuple(self.state.find_links)
        if "index_url" in names and not req.index_url and self.state.index_url:
            changes["index_url"] = self.state.index_url
        if "extra_index_urls" in names and not req.extra_index_urls and self.state.extra_index_urls:
            changes["extra_index_urls"] = tuple(self.state.extra_index_urls)
        if "recommendation" in names and req.recommendation is None and self.state.recommendation is not None:
            changes["recommendation"] = self.state.recommendation
        return dataclasses.replace(req, **changes) if changes else req

    # -- translation --------------------------------------------------------------------------------
    def retranslate(self) -> None:
        self.setTitle(self.tr("Installing PyTorch"))
        self.setSubTitle(self.tr("The environment is created and PyTorch is downloaded and installed "
                                 "into it. This usually takes from under a minute to a few minutes."))
        self.cancel_button.setText(self.tr("Cancel installation"))
        self.cancel_button.setAccessibleName(self.tr("Cancel the installation and remove what was made"))
        self.retry_button.setText(self.tr("Try again"))
        self.progress.setAccessibleName(self.tr("Installation progress"))
        self._draw_package_line()
        self._apply_status()

