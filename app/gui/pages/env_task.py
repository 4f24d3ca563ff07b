"""A task on one environment: Check, Repair or Upgrade, with real progress and cancel.

* Check runs at once: the verify probe (the checklist fills live), then the doctor.
* Repair and Upgrade first show their plan (computed in a Task: what is installed now, what will
  be, which packages stay, where the staging env goes); "Start" runs it. The phases light up as
  the core reports them, the bar follows the installer's package count, the live log shows its
  lines, and Cancel stops it (the core then restores the env, or drops the staging env).
* After an upgrade the old environment waits: "Keep the upgrade" deletes it, "Undo" swaps it back.
"""
from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextBrowser,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import UserError
from app.core.base.events import LogEvent, PhaseEvent, ProgressEvent, StepEvent
from app.gui.build import add_all, busy_bar, button, checklist, clear_layout, set_field_texts, text_label
from app.gui.i18n import current_language, render
from app.gui.logview import LogView
from app.gui.pages import PageId
from app.gui.pages._common import CheckRows, EventBatcher, LogBatch, status_key, std_icon
from app.gui.pages.base import BasePage
from app.gui.pages.environments import EnvironmentsPage, error_text
from app.gui.state import WizardState
from app.gui.widgets import Banner, Collapsible, StatusRow, muted
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.lifecycle.check import CheckResult
    from app.core.lifecycle.repair import RepairPlan, RepairResult
    from app.core.lifecycle.upgrade import UpgradePlan, UpgradeResult
    from app.core.measure.verify import Check

IDLE, PLANNING, READY, RUNNING, CANCELLING, SUCCEEDED, FAILED, CANCELLED = (
    "idle", "planning", "ready", "running", "cancelling", "succeeded", "failed", "cancelled")
#: The rows each task shows: (key, the Phase (or step name) that drives it).
STEPS = {
    "check": ("verify", "diagnose"),
    "repair": ("plan", "snapshot", "install", "verify"),
    "upgrade": ("plan", "create-env", "install", "verify", "swap"),
}


class EnvTaskPage(BasePage):
    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.kind = "check"
        self.env: str | None = None
        self._status = IDLE
        self._plan: UpgradePlan | RepairPlan | None = None
        self._result: CheckResult | RepairResult | UpgradeResult | None = None
        self._error: UserError | None = None
        self._phase: str | None = None
        self._after: str | None = None  # after an upgrade: "confirmed" | "undone"

        self.heading = text_label(self, bold=True)
        self.plan_view = text_label(self, selectable=True)

        self.torch_edit, self.index_edit, self.links_edit = QLineEdit(), QLineEdit(), QLineEdit()
        self.extra_edit = QLineEdit()
        form_host = QWidget()
        form = QFormLayout(form_host)
        self.torch_label, self.index_label = QLabel(), QLabel()
        self.extra_label, self.links_label = QLabel(), QLabel()
        form.addRow(self.torch_label, self.torch_edit)
        form.addRow(self.index_label, self.index_edit)
        form.addRow(self.extra_label, self.extra_edit)
        form.addRow(self.links_label, self.links_edit)
        self.replan = button(self.make_plan)
        form.addRow("", self.replan)
        self.advanced = Collapsible("", form_host)

        self.rows: dict[str, StatusRow] = {}
        self._running: set[str] = set()  # the rows whose step is under way
        self.rows_box = QVBoxLayout()
        self.bar = busy_bar(self, height=10)
        self.checks = checklist(self)
        self.checks.setMinimumHeight(140)
        self.check_rows = CheckRows(self.checks)
        self.result = Banner("info")
        self.findings = QTextBrowser(self)
        self.findings.setMinimumHeight(90)
        self.log = LogView(self)

        self.start_btn, self.cancel_btn = QPushButton(), QPushButton()
        self.keep_btn, self.undo_btn = QPushButton(), QPushButton()
        self.start_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.cancel)
        self.keep_btn.clicked.connect(lambda: self.after_upgrade("confirm"))
        self.undo_btn.clicked.connect(lambda: self.after_upgrade("undo"))
        buttons = QHBoxLayout()
        for b in (self.start_btn, self.cancel_btn, self.keep_btn, self.undo_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.note = muted(QLabel(self))
        self.note.setWordWrap(True)

        add_all(self.body, self.heading, self.plan_view, self.advanced, self.rows_box, self.bar, buttons, self.note,
                self.result, (self.checks, 1), (self.findings, 1), self.log)
        self.retranslate()
        self._apply()

    # ---- wizard hooks ----
    def _envs_page(self) -> EnvironmentsPage | None:
        wiz = self.wizard()
        page = wiz.page(int(PageId.ENVS)) if wiz is not None else None
        return page if isinstance(page, EnvironmentsPage) else None

    def initializePage(self) -> None:
        envs = self._envs_page()
        kind = (envs.task_kind if envs is not None else None) or self.kind
        env = (envs.task_env if envs is not None else None) or self.env
        self.set_task(kind, env)

    def cleanupPage(self) -> None:  # Back: the list shows what changed
        envs = self._envs_page()
        if envs is not None and self._status in (SUCCEEDED, FAILED, CANCELLED):
            envs.task_kind = None
            envs.refresh()

    def isComplete(self) -> bool:
        return self._status not in (PLANNING, RUNNING, CANCELLING)

    def nextId(self) -> int:
        return -1

    def set_task(self, kind: str, env: str | None) -> None:
        """Show ``kind`` for ``env`` and start what starts by itself (a check; a plan)."""
        if self.is_busy():
            return
        self.kind, self.env = kind, env
        self._plan = self._result = self._error = None
        self._after = None
        self._reset_rows()
        self.log.clear()
        self.torch_edit.clear()
        self.retranslate()
        if env is None:
            return
        if kind == "check":
            self.start()
        else:
            self.make_plan()

    def _reset_rows(self) -> None:
        clear_layout(self.rows_box)
        self.rows = {}
        self._running.clear()
        for key in STEPS.get(self.kind, ()):
            row = StatusRow("pending")
            self.rows[key] = row
            self.rows_box.addWidget(row)
        self.check_rows.clear()
        self.findings.clear()

    def _set_row(self, key: str, status: str, detail: str | None = None) -> None:
        row = self.rows.get(key)
        if row is not None:
            row.set(status, None, detail)
        # (the row's own status says "pending" for running too: the steps under way are kept here)
        if status == "running":
            self._running.add(key)
        else:
            self._running.discard(key)

    def _end_running(self, status: str) -> None:
        """The steps under way when the task ended: failed (or skipped) there, never left "waiting"."""
        for key in list(self._running):
            self._set_row(key, status)

    # ---- planning ----
    def _wishes(self) -> tuple[str | None, list[str] | None]:
        """(torch version, or None; exact packages, or None) from the torch field."""
        torch = self.torch_edit.text().strip() or None
        packages = [p for p in torch.split() if "=" in p] if torch and "=" in torch else None
        return (None if packages else torch), packages

    def make_plan(self) -> None:
        if self.env is None or self.is_busy():
            return
        kind, env, report = self.kind, self.env, self.state.session.system
        torch, packages = self._wishes()
        index_url = self.index_edit.text().strip() or None
        extra = [u for u in self.extra_edit.text().split() if u]
        links = [u for u in self.links_edit.text().split() if u]

        def work(on_event, cancel):
            if kind == "upgrade":
                from app.core.lifecycle.upgrade import plan_upgrade

                return plan_upgrade(env, report=report, torch=torch, packages=packages, index_url=index_url,
                                    extra_index_urls=extra, find_links=links)
            from app.core.lifecycle.repair import plan_repair

            return plan_repair(env, report=report, torch=torch, packages=packages, index_url=index_url,
                               extra_index_urls=extra, find_links=links)

        self._set_row("plan", "running")
        self._task = Task(work, self, name=f"{kind}-plan")
        self._task.succeeded.connect(self._on_plan)
        self._task.failed.connect(self._on_plan_failed)
        self._set_status(PLANNING)
        self._task.start()

    def _on_plan(self, plan) -> None:
        self._plan = plan
        self._set_row("plan", "passed")
        self._set_status(READY)
        self._show_plan()

    def _on_plan_failed(self, err: UserError) -> None:
        self._error = err
        self._set_row("plan", "failed")
        self._set_status(FAILED)

    def _show_plan(self) -> None:
        from app.core.lifecycle.upgrade import UpgradePlan  # the page is built after the first paint

        p = self._plan
        if p is None:
            self.plan_view.setText("")
            return
        lang = current_language()
        now = p.current.describe() if p.current is not None else self.tr("no PyTorch")
        lines = [self.tr("Now: {build}").format(build=html.escape(now))]
        if isinstance(p, UpgradePlan):
            lines.append(self.tr("New: {packages}").format(packages=html.escape(" ".join(p.packages))))
            lines.append(self.tr("{count} other package(s) are kept at their versions.").format(count=len(p.keep)))
            lines.append(self.tr("The new stack is built and checked in {staging}; your environment changes only "
                                 "if it passes.").format(staging=html.escape(str(p.staging))))
            if p.index.torch_index:
                lines.append(self.tr("From: {index}").format(index=html.escape(p.index.torch_index)))
        else:
            lines.append(self.tr("Reinstall: {packages}").format(packages=html.escape(" ".join(p.packages))))
            lines.append(self.tr("The other packages stay. The environment is recorded first and put back if "
                                 "anything fails."))
        for n in (*p.notes, *p.companions.warnings):
            lines.append("• " + html.escape(render(n, lang)))
        self.plan_view.setText("<br>".join(lines))

    # ---- running ----
    def start(self) -> None:
        if self.env is None or self.is_busy():
            return
        kind, env, report, plan = self.kind, self.env, self.state.session.system, self._plan

        def work(on_event, cancel):
            batch = EventBatcher(on_event)
            try:
                if kind == "check":
                    from app.core.lifecycle.check import check_env

                    return check_env(env, report=report, on_event=batch, cancel=cancel)
                from app.core.lifecycle.repair import RepairPlan, repair
                from app.core.lifecycle.upgrade import upgrade

                if isinstance(plan, RepairPlan):
                    return repair(plan, on_event=batch, cancel=cancel)
                assert plan is not None  # (started only with a plan)
                return upgrade(plan, on_event=batch, cancel=cancel)
            finally:
                batch.close()

        if kind != "check" and plan is None:
            return
        self._error = None
        self._task = Task(work, self, name=kind)
        self._task.event.connect(self.on_event)
        self._task.succeeded.connect(self._on_done)
        self._task.failed.connect(self._on_failed)
        self._task.cancelled.connect(self._on_cancelled)
        if kind == "check":
            self._set_row("verify", "running")
        self._set_status(RUNNING)
        self._task.start()

    def cancel(self) -> None:
        if self._task is not None and self._task.is_running():
            self._task.cancel()
            self._set_status(CANCELLING)

    def on_event(self, ev) -> None:
        if isinstance(ev, LogBatch):
            for one in ev.events:
                self.on_event(one)
            return
        if isinstance(ev, LogEvent):
            self.log.append(ev.text)
        elif isinstance(ev, ProgressEvent) and ev.unit == "packages" and ev.total_bytes:
            self.bar.setRange(0, ev.total_bytes)
            self.bar.setValue(min(ev.done_bytes, ev.total_bytes))
        elif isinstance(ev, PhaseEvent):
            self._on_phase(ev)
        elif isinstance(ev, StepEvent):
            self._on_step(ev)

    def _on_phase(self, ev: PhaseEvent) -> None:
        key = str(ev.name)
        self._phase = key if ev.state == PhaseState.START else None
        status = {PhaseState.START: "running", PhaseState.END: "passed", PhaseState.FAILED: "failed",
                  PhaseState.SKIPPED: "skipped"}[ev.state]
        if key in self.rows:
            self._set_row(key, status)
        if ev.name in (Phase.INSTALL, Phase.CREATE_ENV) and ev.state == PhaseState.START:
            self.bar.setRange(0, 0)
        if self.kind == "check" and ev.name == Phase.VERIFY and ev.state != PhaseState.START:
            self._set_row("diagnose", "running")

    def _on_step(self, ev: StepEvent) -> None:
        if ev.name == "swap":
            self._set_row("swap", status_key(ev.status))
            return
        if self._phase != str(Phase.VERIFY) or ev.name.startswith(("check:", "prune:")):
            return
        from app.core.measure.verify import check_from_step

        self._render_check(*self.check_rows.put(check_from_step(ev)))

    def _render_check(self, item: QTreeWidgetItem, check: Check) -> None:
        lang = current_language()
        item.setText(0, render(check.title, lang) or check.name)
        item.setText(1, render(check.detail, lang))
        item.setToolTip(1, render(check.detail, lang))
        item.setIcon(0, std_icon(status_key(check.status)))

    def show_checks(self, checks) -> None:
        """The verification's final checks (the report is the truth)."""
        self.check_rows.clear()
        for c in checks:
            self._render_check(*self.check_rows.put(c))

    def _on_done(self, result) -> None:
        self._result = result
        verify = getattr(result, "verify", None)
        if verify is not None:
            self.show_checks(verify.checks)
        for key in self.rows:
            if self.rows[key].status in ("pending", "running"):
                self._set_row(key, "passed")
        if self.kind == "check" and not result.ok:
            self._set_row("verify" if verify is None or not verify.ok else "diagnose",
                          "failed" if verify is None or not verify.ok else "warning")
        self.bar.setRange(0, 1)
        self.bar.setValue(1)
        self._set_status(SUCCEEDED)

    def _on_failed(self, err: UserError) -> None:
        self._error = err
        self._end_running("failed")
        self._set_status(FAILED)

    def _on_cancelled(self) -> None:
        self._end_running("skipped")
        self._set_status(CANCELLED)

    def after_upgrade(self, what: str) -> None:
        """"confirm" (delete the old copy) or "undo" (swap it back)."""
        env = self.env
        if env is None or self.is_busy():
            return

        def work(on_event, cancel):
            from app.core.lifecycle.upgrade import confirm, undo

            return confirm(env) if what == "confirm" else undo(env)

        self._task = Task(work, self, name=f"upgrade-{what}")
        self._task.succeeded.connect(lambda _r: self._after_done("confirmed" if what == "confirm" else "undone"))
        self._task.failed.connect(self._on_failed)
        self._set_status(RUNNING)
        self._task.start()

    def _after_done(self, what: str) -> None:
        self._after = what
        self._set_status(SUCCEEDED)

    def status(self) -> str:
        return self._status

    # ---- view ----
    def _set_status(self, status: str) -> None:
        self._status = status
        self._apply()
        self.completeChanged.emit()
        self.state_changed.emit(status)

    def _apply(self) -> None:
        st = self._status
        running = st in (PLANNING, RUNNING, CANCELLING)
        self.bar.setVisible(running or st == SUCCEEDED)
        self.start_btn.setVisible(self.kind != "check" and st in (READY, FAILED) and self._plan is not None
                                  and self._result is None)
        self.start_btn.setEnabled(st == READY)
        self.cancel_btn.setVisible(st in (RUNNING, CANCELLING) and self._after is None)
        self.cancel_btn.setEnabled(st == RUNNING)
        upgraded = self.kind == "upgrade" and st == SUCCEEDED and self._result is not None and self._after is None
        self.keep_btn.setVisible(upgraded)
        self.undo_btn.setVisible(upgraded)
        self.advanced.setVisible(self.kind != "check" and st in (IDLE, READY, FAILED) and self._result is None)
        self.plan_view.setVisible(self.kind != "check" and self._plan is not None)
        self.checks.setVisible(bool(self.check_rows) or (st == RUNNING and self._phase == str(Phase.VERIFY)))
        self.findings.setVisible(self.kind == "check" and st == SUCCEEDED)
        self._show_result()

    def _show_result(self) -> None:
        st = self._status
        lang = current_language()
        self.note.setVisible(st in (RUNNING, CANCELLING))
        if st == CANCELLING:
            self.note.setText(self.tr("Cancelling… the environment is being put back as it was."))
        elif st == RUNNING:
            self.note.setText(self.tr("This can take a few minutes; Cancel stops it and leaves the environment as it "
                                      "was."))
        if st == FAILED and self._error is not None:
            self.result.set_text(self._failure_text(self._error, lang), "error")
        elif st == CANCELLED:
            self.result.set_text(self.tr("Cancelled. The environment was left as it was."), "warning")
        elif st == SUCCEEDED and self._result is not None:
            self.result.set_text(*self._success_text(lang))
        else:
            self.result.setVisible(False)
            return
        self.result.setVisible(True)

    def _failure_text(self, err: UserError, lang: str) -> str:
        """The message; what the remedy catalogue made of the installer's output (its own lines, the cause
        chain, only when nothing explains them; the log has them all); what to do, where there is
        something to do ("Your environment was not changed" is said as what it is, not as an action)."""
        msg, hint = error_text(err)
        lines = [msg, *(render(r.explanation, lang) for r in err.remedies)]
        if not err.remedies and err.lines:
            lines += err.lines[-6:]
        if getattr(err.hint, "code", "") == "envs.upgrade_unchanged":
            lines.append(hint)
        elif hint:
            lines.append(self.tr("What to do:") + " " + hint)
        if err.log_path:
            lines.append(self.tr("Full log: {path}").format(path=err.log_path))
        return "\n".join(lines)

    def _success_text(self, lang: str) -> tuple[str, str]:
        from app.core.lifecycle.check import CheckResult  # the page is built after the first paint
        from app.core.lifecycle.repair import RepairResult

        r = self._result
        if self._after == "confirmed":
            return self.tr("The upgrade is kept; the old environment was deleted."), "ok"
        if self._after == "undone":
            return self.tr("The upgrade was undone: the environment is back as it was before."), "ok"
        if isinstance(r, CheckResult):
            self._show_findings(lang)
            v = r.verify
            if v is None:
                return self.tr("The verification could not run: {why}").format(why=r.probe_error), "error"
            passed = sum(1 for c in v.checks if c.status == "passed")
            if r.ok:
                return self.tr("PyTorch {version} works here: {passed} checks passed.").format(
                    version=v.torch_version, passed=passed), "ok"
            return self.tr("Problems were found; see below."), "warning"
        if isinstance(r, RepairResult):
            return self.tr("Repaired: PyTorch {version} is installed and verified; the torch guard protects "
                           "it.").format(version=r.install.torch_version), "ok"
        assert r is not None
        return self.tr("Upgraded from torch {old} to {new}, verified before the swap. The old environment is kept "
                       "at {path} until you choose.").format(old=r.old_torch, new=r.new_torch, path=r.old_copy), "ok"

    def _show_findings(self, lang: str) -> None:
        diag = getattr(self._result, "diagnosis", None)
        if diag is None:
            return
        if not diag.findings:
            self.findings.setHtml("<p>" + html.escape(self.tr("The doctor found nothing to fix.")) + "</p>")
            return
        fix = html.escape(self.tr("Fix:"))
        parts = []
        for f in diag.findings:
            parts.append(f"<p><b>{html.escape(render(f.title, lang))}</b><br>{html.escape(render(f.explanation, lang))}"
                         f"<br><i>{fix}</i> {html.escape(render(f.fix, lang))}</p>")
        self.findings.setHtml("".join(parts))

    def retranslate_page(self) -> None:
        self.heading.setText(self.env or "")
        words = {"verify": self.tr("Run PyTorch in the environment"), "diagnose": self.tr("Look for problems"),
                 "plan": self.tr("Decide what to install"), "snapshot": self.tr("Record the installed packages"),
                 "create-env": self.tr("Create the staging environment"), "install": self.tr("Install"),
                 "swap": self.tr("Swap the new environment in")}
        if self.kind == "upgrade":
            words["verify"] = self.tr("Check the new PyTorch in the staging environment")
        for key, row in self.rows.items():
            row.set(row.status, words.get(key, key))
        set_field_texts(self.torch_label, self.tr("PyTorch version:"), self.torch_edit,
                        placeholder=self.tr("default: the newest that fits") if self.kind == "upgrade"
                        else self.tr("default: the verified one"))
        set_field_texts(self.index_label, self.tr("PyTorch index:"), self.index_edit,
                        placeholder=self.tr("default: the one the environment came from"))
        self.extra_label.setText(self.tr("Extra indexes:"))
        self.links_label.setText(self.tr("Local wheels folder:"))
        self.replan.setText(self.tr("Plan again"))
        self.advanced.set_title(self.tr("Advanced: version and package sources"))
        self.start_btn.setText(self.tr("&Start the upgrade") if self.kind == "upgrade"
                               else self.tr("&Start the repair"))
        self.cancel_btn.setText(self.tr("Cancel"))
        self.keep_btn.setText(self.tr("&Keep the upgrade (delete the old copy)"))
        self.undo_btn.setText(self.tr("&Undo the upgrade"))
        self.checks.setHeaderLabels([self.tr("Check"), self.tr("Result")])
        self.checks.setAccessibleName(self.tr("Verification checklist"))
        for item, check in self.check_rows:
            self._render_check(item, check)
        self._show_plan()
        self._apply()

    def titles(self) -> tuple[str, str]:
        """The title and subtitle of the task shown (check, repair or upgrade)."""
        titles = {"check": self.tr("Checking an environment"), "repair": self.tr("Repairing an environment"),
                  "upgrade": self.tr("Upgrading PyTorch safely")}
        subtitles = {
            "check": self.tr("PyTorch is run inside the environment, then the doctor looks for anything that "
                             "stops it from using the graphics card."),
            "repair": self.tr("The right PyTorch build for this computer is reinstalled; your other packages "
                              "stay."),
            "upgrade": self.tr("The new PyTorch is built next to the environment and checked there first; only "
                               "then is it swapped in, and you can still go back."),
        }
        return titles.get(self.kind, ""), subtitles.get(self.kind, "")
