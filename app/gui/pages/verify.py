"""Page 6, Verify: run the verification probe inside the new environment.

A checklist fills live from the probe's StepEvents (passed / failed / skipped, one line of
explanation each). When something failed, the doctor's diagnosis is shown with its fixes.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
)

from app.core.errors import UserError
from app.core.events import LogEvent, StepEvent
from app.core.text import render
from app.core.verify import Check, VerifyReport, check_from_step
from app.gui.i18n import current_language
from app.gui.pages._common import ErrorPanel, status_key, std_icon
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.worker import Task

IDLE, RUNNING, PASSED, FAILED, ERROR = "idle", "running", "passed", "failed", "error"


class VerifyPage(BasePage):
    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent=None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._diag_task: Task | None = None
        self._status = IDLE
        self._items: dict[str, QTreeWidgetItem] = {}
        self._shown: dict[str, Check] = {}  # what each row shows, re-rendered on a language switch
        self._statuses: dict[str, str] = {}

        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        f = self.summary.font()
        f.setBold(True)
        self.summary.setFont(f)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(8)
        self.checks = QTreeWidget(self)
        self.checks.setColumnCount(2)
        self.checks.setRootIsDecorated(False)
        self.checks.setUniformRowHeights(True)
        self.checks.setAlternatingRowColors(True)
        self.checks.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.checks.header().setStretchLastSection(True)
        self.diagnosis_title = QLabel(self)
        self.diagnosis_title.setFont(f)
        self.diagnosis = QTextBrowser(self)
        self.diagnosis.setOpenExternalLinks(True)
        self.error_panel = ErrorPanel(self)
        self.rerun = QPushButton(self)
        self.rerun.clicked.connect(self.start)

        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        row.addWidget(self.rerun, 0)
        lay = self.body
        lay.addLayout(row)
        lay.addWidget(self.busy)
        lay.addWidget(self.checks, 2)
        lay.addWidget(self.error_panel)
        lay.addWidget(self.diagnosis_title)
        lay.addWidget(self.diagnosis, 1)
        self.retranslate()
        self._apply()

    # -- wizard hooks -------------------------------------------------------------------------
    def initializePage(self) -> None:
        if self._status == IDLE:
            self.start()

    def isComplete(self) -> bool:
        # A failed verification still lets the user go on: the Done page saves the report
        # (with the diagnosis) they need to get help.
        return self._status in (PASSED, FAILED, ERROR)

    def status(self) -> str:
        return self._status

    def expected_accelerator(self) -> str | None:
        """The backend the install was for (cuda, rocm, mps, xpu), or None for a CPU build."""
        rec = self.state.recommendation
        backend = str(rec.backend).lower() if rec is not None else ""
        return backend if backend in ("cuda", "rocm", "mps", "xpu") else None

    def python(self):
        res = self.state.install_result
        return res.python if res is not None else None

    # -- running --------------------------------------------------------------------------------
    def start(self) -> None:
        if self.is_busy():
            return
        python = self.python()
        self._clear_checks()
        self.diagnosis.clear()
        self.state.verify_report = None
        self.state.diagnosis = None
        if python is None:
            self._on_error(UserError(self.tr("There is no installed environment to verify."),
                                     hint=self.tr("Run the installation first.")))
            return

        expect = self.expected_accelerator()
        env_path = self.state.install_result.env_path if self.state.install_result is not None else None

        def work(on_event, cancel):
            from app.core.verify import run_verify

            # Installed for an accelerator: "no accelerator" is then a failure, not a skip.
            report = run_verify(python, on_event=on_event, cancel=cancel, expect=expect)
            if env_path is not None:
                from app.core.registry import record_verify  # recorded; a passed verification is guarded

                record_verify(env_path, report)
            return report

        self._task = Task(work, self, name="verify")
        self._task.event.connect(self.on_event)
        self._task.succeeded.connect(self._on_report)
        self._task.failed.connect(self._on_error)
        self._task.cancelled.connect(lambda: self._on_error(UserError(self.tr("Verification was cancelled."))))
        self._set_status(RUNNING)
        self._task.start()

    def on_event(self, ev) -> None:
        if isinstance(ev, StepEvent):
            self._set_check(check_from_step(ev))
        elif isinstance(ev, LogEvent) and ev.stream == "stderr":
            pass  # the probe's stderr goes to its log; the checklist is the view

    def _clear_checks(self) -> None:
        self.checks.clear()
        self._items.clear()
        self._shown.clear()
        self._statuses.clear()

    def _set_check(self, check: Check) -> None:
        key = status_key(check.status)
        old = self._shown.get(check.name)
        if old is not None and not render(check.detail):  # a "running" step keeps what the row said
            check = Check(check.name, check.status, check.title, old.detail, old.code, old.params, old.data)
        self._shown[check.name] = check
        item = self._items.get(check.name)
        if item is None:
            item = QTreeWidgetItem(["", ""])
            self._items[check.name] = item
            self.checks.addTopLevelItem(item)
        self._render_row(item, check)
        item.setIcon(0, std_icon(key))
        item.setData(0, Qt.ItemDataRole.UserRole, key)
        self._statuses[check.name] = key
        self.checks.scrollToItem(item)

    def _render_row(self, item: QTreeWidgetItem, check: Check) -> None:
        """The check's title and detail in the wizard's language."""
        lang = current_language()
        title, detail = render(check.title, lang) or check.name, render(check.detail, lang)
        item.setText(0, title)
        item.setText(1, detail)
        item.setToolTip(1, detail)
        key = item.data(0, Qt.ItemDataRole.UserRole) or status_key(check.status)
        item.setData(0, Qt.ItemDataRole.AccessibleTextRole, f"{title}: {self._word(key)}")

    def _on_report(self, report: VerifyReport) -> None:
        self.state.verify_report = report
        if report.checks:  # the report is the truth: live rows that are not checks (facts) go
            self._clear_checks()
        for c in report.checks:
            self._set_check(c)
        ok = report.ok
        log = report.log_path
        if log:
            from pathlib import Path

            if Path(log) not in self.state.log_paths:
                self.state.log_paths.append(Path(log))
        self._set_status(PASSED if ok else FAILED)
        if not ok:
            self._diagnose()

    def _on_error(self, err) -> None:
        self.error_panel.show_error(err)
        self._set_status(ERROR)
        if self.python() is not None and getattr(err, "exit_code", 1) != 130:
            self._diagnose()

    def _diagnose(self) -> None:
        python = self.python()
        report, verify = self.state.report, self.state.verify_report

        def work(on_event, cancel):
            from app.core.doctor import diagnose

            return diagnose(python, report=report, verify=verify, on_event=on_event, cancel=cancel)

        self.diagnosis_title.setText(self.tr("Looking for the cause…"))
        self.diagnosis_title.setVisible(True)
        self._diag_task = Task(work, self, name="doctor")
        self._diag_task.succeeded.connect(self._on_diagnosis)
        self._diag_task.failed.connect(
            lambda e: self.diagnosis.setPlainText(self.tr("The diagnosis itself failed: {msg}").format(msg=e.message)))
        self._diag_task.start()

    def _on_diagnosis(self, diag) -> None:
        self.state.diagnosis = diag
        self._show_diagnosis()

    def _show_diagnosis(self) -> None:
        diag = self.state.diagnosis
        if diag is None:
            return
        findings = list(diag.findings)
        lang = current_language()
        self.diagnosis_title.setText(self.tr("What went wrong and how to fix it"))
        if not findings:
            self.diagnosis.setHtml("<p>" + html.escape(self.tr(
                "The doctor found no known cause. Save the report on the last page and share it "
                "when asking for help.")) + "</p>")
        else:
            parts = []
            fix_label = html.escape(self.tr("Fix:"))  # outside the f-string: lupdate cannot see into one
            for fnd in findings:
                title = html.escape(render(fnd.title, lang) or fnd.code)
                expl = html.escape(render(fnd.explanation, lang))
                fix = html.escape(render(fnd.fix, lang))
                parts.append(f"<p><b>{title}</b><br>{expl}"
                             + (f"<br><i>{fix_label}</i> {fix}" if fix else "") + "</p>")
            self.diagnosis.setHtml("".join(parts))
        self.diagnosis.setVisible(True)

    def is_busy(self) -> bool:
        return super().is_busy() or (self._diag_task is not None and self._diag_task.is_running())

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        ok = super().cancel_and_wait(timeout)
        if self._diag_task is not None and self._diag_task.is_running():
            self._diag_task.cancel()
            ok = self._diag_task.wait(timeout) and ok
        return ok

    # -- view -------------------------------------------------------------------------------------
    def _set_status(self, status: str) -> None:
        self._status = status
        self._apply()
        self.completeChanged.emit()
        self.state_changed.emit(status)

    def _counts(self) -> dict[str, int]:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for s in self._statuses.values():
            if s in counts:
                counts[s] += 1
        return counts

    def _apply(self) -> None:
        st = self._status
        self.busy.setVisible(st == RUNNING)
        self.rerun.setVisible(st in (PASSED, FAILED, ERROR))
        self.error_panel.setVisible(st == ERROR)
        show_diag = st in (FAILED, ERROR) and bool(self.diagnosis_title.text())
        self.diagnosis_title.setVisible(show_diag)
        self.diagnosis.setVisible(show_diag and not self.diagnosis.document().isEmpty())
        c = self._counts()
        if st == RUNNING:
            text = self.tr("Checking PyTorch inside the new environment…")
        elif st == PASSED:
            report = self.state.verify_report
            result = self.state.install_result
            version = ((report.torch_version if report is not None else None)
                       or (result.torch_version if result is not None else None) or "")
            text = self.tr("PyTorch {version} works: {passed} checks passed, {skipped} skipped.").format(
                version=version, passed=c["passed"], skipped=c["skipped"])
        elif st == FAILED:
            text = self.tr("{failed} of {total} checks failed.").format(
                failed=c["failed"], total=sum(c.values()))
        elif st == ERROR:
            text = self.tr("The verification could not run.")
        else:
            text = ""
        self.summary.setText(text)

    def _word(self, key: str) -> str:
        return {"passed": self.tr("passed"), "failed": self.tr("failed"), "skipped": self.tr("skipped"),
                "warning": self.tr("warning"), "running": self.tr("running")}.get(key, key)

    def retranslate(self) -> None:
        self.setTitle(self.tr("Checking that PyTorch works"))
        self.setSubTitle(self.tr("PyTorch is imported inside the new environment and every part "
                                 "this computer can use is tried."))
        self.checks.setHeaderLabels([self.tr("Check"), self.tr("Result")])
        self.checks.setAccessibleName(self.tr("Verification checklist"))
        self.rerun.setText(self.tr("Run again"))
        self.diagnosis.setAccessibleName(self.tr("Diagnosis and fixes"))
        for name, item in self._items.items():  # the checks' titles and details in the new language
            self._render_row(item, self._shown[name])
        if self.diagnosis.isVisible() or not self.diagnosis.document().isEmpty():
            self._show_diagnosis()
        self._apply()

