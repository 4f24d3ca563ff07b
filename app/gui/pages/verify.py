"""Page 6, Verify: run the verification probe inside the new environment.

The session's ``verify`` (and, after a failure, its ``diagnose``) runs in a Task; the
results stay in the session, where the Done page's report reads them.

A checklist fills live from the probe's StepEvents (passed / failed / skipped, one line of
explanation each). When something failed, the doctor's diagnosis is shown with its fixes.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTextBrowser, QTreeWidgetItem

from app.core.base.errors import EXIT_CANCELLED, UserError
from app.core.base.events import LogEvent, StepEvent
from app.core.measure.verify import Check, VerifyReport, check_from_step
from app.core.pipeline.session import Stage
from app.gui.build import add_all, busy_bar, button, checklist, text_label
from app.gui.i18n import current_language, render
from app.gui.pages._common import CheckRows, ErrorPanel, status_key, std_icon
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.worker import Task

IDLE, RUNNING, PASSED, FAILED, ERROR = "idle", "running", "passed", "failed", "error"


class VerifyPage(BasePage):

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("VerifyPage", "Checking that PyTorch works"),
              QT_TRANSLATE_NOOP("VerifyPage", "PyTorch is imported inside the new environment and every part this "
                                              "computer can use is tried."))
    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent=None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._diag_task: Task | None = None
        self._status = IDLE
        self._statuses: dict[str, str] = {}

        self.summary = text_label(self, bold=True)
        self.busy = busy_bar(self, height=8)
        self.checks = checklist(self)
        self.checks.setAlternatingRowColors(True)
        self.check_rows = CheckRows(self.checks)
        self.diagnosis_title = QLabel(self)
        self.diagnosis_title.setFont(self.summary.font())
        self.diagnosis = QTextBrowser(self)
        self.diagnosis.setOpenExternalLinks(True)
        self.error_panel = ErrorPanel(self)
        self.rerun = button(self.start, self)

        row = QHBoxLayout()
        add_all(row, (self.summary, 1), self.rerun)
        add_all(self.body, row, self.busy, (self.checks, 2), self.error_panel, self.diagnosis_title,
                (self.diagnosis, 1))
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
        return self.state.session.expected_accelerator

    def python(self):
        res = self.state.session.install_result
        return res.python if res is not None else None

    # -- running --------------------------------------------------------------------------------
    def start(self) -> None:
        if self.is_busy():
            return
        python = self.python()
        self._clear_checks()
        self.diagnosis.clear()
        session = self.state.session
        session.invalidate(Stage.VERIFY)
        if python is None:
            self._on_error(UserError(self.tr("There is no installed environment to verify."),
                                     hint=self.tr("Run the installation first.")))
            return

        def work(on_event, cancel):
            # Installed for an accelerator: "no accelerator" is then a failure, not a skip (the session knows).
            return session.verify(on_event=on_event, cancel=cancel)

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
        self.check_rows.clear()
        self._statuses.clear()

    def _set_check(self, check: Check) -> None:
        key = status_key(check.status)
        item, check = self.check_rows.put(check)  # a "running" step keeps what the row said
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
        if self.python() is not None and err.exit_code != EXIT_CANCELLED:
            self._diagnose()

    def _diagnose(self) -> None:
        session = self.state.session

        def work(on_event, cancel):
            return session.diagnose(on_event=on_event, cancel=cancel)

        self.diagnosis_title.setText(self.tr("Looking for the cause…"))
        self.diagnosis_title.setVisible(True)
        self._diag_task = Task(work, self, name="doctor")
        self._diag_task.succeeded.connect(self._on_diagnosis)
        self._diag_task.failed.connect(
            lambda e: self.diagnosis.setPlainText(self.tr("The diagnosis itself failed: {msg}").format(
                msg=e.text(current_language()))))
        self._diag_task.start()

    def _on_diagnosis(self, _diag) -> None:
        self._show_diagnosis()

    def _show_diagnosis(self) -> None:
        diag = self.state.session.diagnosis
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

    def side_tasks(self) -> tuple[Task | None, ...]:
        return (self._diag_task,)

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
            report = self.state.session.verify_report
            result = self.state.session.install_result
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

    def retranslate_page(self) -> None:
        self.checks.setHeaderLabels([self.tr("Check"), self.tr("Result")])
        self.checks.setAccessibleName(self.tr("Verification checklist"))
        self.rerun.setText(self.tr("Run again"))
        self.diagnosis.setAccessibleName(self.tr("Diagnosis and fixes"))
        for item, check in self.check_rows:  # the checks' titles and details in the new language
            self._render_row(item, check)
        if self.diagnosis.isVisible() or not self.diagnosis.document().isEmpty():
            self._show_diagnosis()
        self._apply()


