"""The environments page: the user's PyTorch environments, and what can be done with each.

The list is :func:`app.core.lifecycle.discover.discover` (run in a Task): the environments this
assistant made and the PyTorch environments found on this computer, each with its torch build,
what it runs on, its Python, size, last check and status. Check, Repair and Upgrade open the task
page; the Jupyter kernel, "Open a terminal here" and Remove are done here.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app.core.base.errors import UserError
from app.gui.build import add_all, set_texts
from app.gui.i18n import current_language, render, render_hint
from app.gui.pages import PageId
from app.gui.pages._common import std_icon
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, BusyLine, muted
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.lifecycle.discover import FoundEnv

#: status -> icon
_STATUS_ICON = {"ok": "passed", "changed": "warning", "failed": "failed", "unchecked": "info", "broken": "failed",
                "no-torch": "warning", "missing": "skipped", "pending": "warning"}
COLUMNS = 7


def error_text(err: UserError) -> tuple[str, str]:
    """A core error's message and hint in the wizard's language (coded texts when the core gave them)."""
    lang = current_language()
    return render(err.message, lang), render_hint(err.hint, lang, "gui") if err.hint else ""


def _size(e: FoundEnv) -> str:
    from app.core.lifecycle.sizes import human_bytes

    if e.size is None:
        return "–"
    return ("≥ " if not e.size.complete else "") + human_bytes(e.size.bytes)


class EnvironmentsPage(BasePage):
    """The list, the selected env's details, and the actions."""

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("EnvironmentsPage", "Your PyTorch environments"),
              QT_TRANSLATE_NOOP("EnvironmentsPage", "The environments this assistant made (★) and the PyTorch "
                                                    "environments found on this computer. Choose one to check, repair"
                                                    " or upgrade it."))

    task_chosen = Signal(str, str)  # kind (check | repair | upgrade), env path

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._envs: list[FoundEnv] = []
        self._task: Task | None = None
        self._action: Task | None = None
        self._loaded = False
        self._problem = None
        self.task_kind: str | None = None
        self.task_env: str | None = None
        self._force_for: str | None = None  # the environment the "remove anyway" box was shown for

        self.busy = BusyLine()
        self.problem = Banner("warning")
        self.message = Banner("info")
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.SingleSelection)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.tree.setMinimumHeight(170)
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.tree.itemDoubleClicked.connect(lambda *_: self.choose("check"))
        self.details = muted(QLabel(self))
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.empty = QLabel(self)
        self.empty.setWordWrap(True)

        self.check_btn, self.repair_btn, self.upgrade_btn = QPushButton(), QPushButton(), QPushButton()
        self.kernel_btn, self.terminal_btn, self.remove_btn = QPushButton(), QPushButton(), QPushButton()
        self.refresh_btn = QPushButton()
        # the command line's --force: an environment this assistant did not make is removed only on purpose
        self.force_remove = QCheckBox()
        self.check_btn.clicked.connect(lambda: self.choose("check"))
        self.repair_btn.clicked.connect(lambda: self.choose("repair"))
        self.upgrade_btn.clicked.connect(lambda: self.choose("upgrade"))
        self.kernel_btn.clicked.connect(self.toggle_kernel)
        self.terminal_btn.clicked.connect(self.open_terminal)
        self.remove_btn.clicked.connect(self.remove_selected)
        self.refresh_btn.clicked.connect(self.refresh)
        grid = QGridLayout()
        for i, b in enumerate((self.check_btn, self.repair_btn, self.upgrade_btn, self.refresh_btn)):
            grid.addWidget(b, 0, i)
        for i, b in enumerate((self.kernel_btn, self.terminal_btn, self.remove_btn)):
            grid.addWidget(b, 1, i)
        grid.addWidget(self.force_remove, 2, 0, 1, 4)

        add_all(self.body, self.problem, self.busy, (self.tree, 1), self.empty, self.details, grid, self.message)
        self.problem.setVisible(False)
        self.message.setVisible(False)
        self.empty.setVisible(False)
        self.retranslate()
        self._update_buttons()

    # ---- wizard hooks ----
    def initializePage(self) -> None:
        if not self._loaded and not self.is_busy():
            self.refresh()

    def nextId(self) -> int:
        return int(PageId.ENV_TASK)

    def isComplete(self) -> bool:
        return self.task_kind is not None and self.task_env is not None

    # ---- the list ----
    def refresh(self) -> None:
        if self._task is not None and self._task.is_running():
            return
        report = self.state.session.system

        def work(on_event, cancel):
            from app.core.env import registry
            from app.core.lifecycle.discover import discover

            return registry.load().problem, discover(report, cancel=cancel)

        self._task = Task(work, self, name="discover")
        self._task.succeeded.connect(self._on_list)
        self._task.failed.connect(self._on_error)
        self.busy.setVisible(True)
        self._update_buttons()
        self._task.start()

    def set_environments(self, envs: list[FoundEnv], problem=None) -> None:
        """Show ``envs`` (what the discovery Task delivers; tests call it with real FoundEnv)."""
        self._envs = list(envs)
        self._problem = problem
        self._loaded = True
        self.busy.setVisible(False)
        selected = self.selected_path()
        self.tree.clear()
        for e in self._envs:
            item = QTreeWidgetItem([""] * COLUMNS)  # texts in _render_rows (they follow the language)
            item.setData(0, Qt.ItemDataRole.UserRole, e.path)
            self.tree.addTopLevelItem(item)
            if e.path == selected:
                item.setSelected(True)
        self._render_rows()
        if self.tree.topLevelItemCount() and not self.tree.selectedItems():
            self._item(0).setSelected(True)
        self._on_selection()

    def _on_list(self, result) -> None:
        problem, envs = result
        self.set_environments(envs, problem)

    def _on_error(self, err: UserError) -> None:
        self.busy.setVisible(False)
        msg, hint = error_text(err)
        self.message.set_text(msg + (f"\n{hint}" if hint else ""), "error")
        self.message.setVisible(True)
        self._update_buttons()

    def _render_rows(self) -> None:
        lang = current_language()
        for i, e in enumerate(self._envs):
            item = self._item(i)
            torch = e.torch.version if e.torch is not None else "–"
            runs = self._backend_word(e)
            when = (e.last_check or "")[:16].replace("T", " ") or self.tr("never")
            name = e.path + ("  ★" if e.made_by_app else "")
            for col, text in enumerate((name, torch, runs, e.python or "?", _size(e), when,
                                        render(e.status_text, lang))):
                item.setText(col, text)
            item.setToolTip(0, e.path)
            item.setToolTip(6, render(e.status_text, lang))
            item.setIcon(0, std_icon(_STATUS_ICON.get(e.status, "info")))
        self.problem.setVisible(self._problem is not None)
        if self._problem is not None:
            self.problem.set_text(render(self._problem, lang), "warning")
        self.empty.setVisible(self._loaded and not self._envs)

    def _backend_word(self, e: FoundEnv) -> str:
        t = e.torch
        if t is None:
            return "–"
        if t.cuda:
            return f"CUDA {t.cuda}"
        if t.hip:
            return f"ROCm {t.hip}"
        b = str(t.backend)
        return {"cpu": self.tr("CPU only"), "mps": "Apple MPS", "xpu": "Intel XPU"}.get(b, b)

    # ---- selection ----
    def selected(self) -> FoundEnv | None:
        path = self.selected_path()
        return next((e for e in self._envs if e.path == path), None)

    def selected_path(self) -> str | None:
        items = self.tree.selectedItems()
        return items[0].data(0, Qt.ItemDataRole.UserRole) if items else None

    def _item(self, i: int) -> QTreeWidgetItem:
        item = self.tree.topLevelItem(i)
        assert item is not None
        return item

    def select(self, path: str | Path) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self._item(i)
            item.setSelected(item.data(0, Qt.ItemDataRole.UserRole) == str(path))

    def _on_selection(self) -> None:
        e = self.selected()
        if e is None or e.path != self._force_for:
            self.force_remove.setChecked(False)  # given for one environment, never carried to the next
        self._force_for = e.path if e is not None else None
        self.force_remove.setVisible(e is not None and not e.made_by_app and e.status != "missing")
        if e is None:
            self.details.setText("")
        else:
            lines = [html.escape(e.path)]
            lines.append(self.tr("Found by: {how}").format(how=", ".join(self._how(h) for h in e.found_by) or "–"))
            lines.append(self._origin_words(e))
            lines.append(self.tr("Torch guard: on") if e.guarded else self.tr("Torch guard: off"))
            rec = e.record
            if rec is not None and rec.kernel is not None:
                lines.append(self.tr("Jupyter kernel: {name}").format(name=html.escape(rec.kernel.display_name)))
            self.details.setText("<br>".join(lines))
        self._update_buttons()

    def _origin_words(self, e) -> str:
        """What this assistant knows of where the environment came from, and no more: an env missing
        from its list may still be one it made (a list that was lost or set aside)."""
        origin = e.record.origin if e.record is not None else None
        if origin == "created":
            return self.tr("Made by this assistant")
        if origin == "installed":
            return self.tr("This assistant installed into it (it did not make it)")
        if origin == "checked":
            return self.tr("Checked by this assistant (it did not make it)")
        return self.tr("Not in this assistant's list of the environments it made")

    def _how(self, how: str) -> str:
        """Where an env was found, in words (folder names such as ~/.venvs stay as they are)."""
        return {"registry": self.tr("this assistant's list"), "current folder": self.tr("the current folder"),
                "interpreter": self.tr("a Python interpreter on this computer")}.get(how, how)

    def _update_buttons(self) -> None:
        e = self.selected()
        running = (self._task is not None and self._task.is_running()) or (
            self._action is not None and self._action.is_running())
        exists = e is not None and e.status != "missing"
        has_torch = e is not None and e.torch is not None
        pending = e is not None and e.status == "pending"
        self.check_btn.setEnabled(exists and not running)
        self.repair_btn.setEnabled(exists and not running and not pending)
        self.upgrade_btn.setEnabled(e is not None and exists and has_torch and not running and not pending
                                    and e.kind == "venv")
        self.kernel_btn.setEnabled(exists and not running)
        self.terminal_btn.setEnabled(exists)
        self.remove_btn.setEnabled(exists and not running and not pending)
        self.refresh_btn.setEnabled(not running)
        has_kernel = e is not None and e.record is not None and e.record.kernel is not None
        self.kernel_btn.setText(self.tr("Remove the Jupyter kernel") if has_kernel else self.tr("Add a Jupyter kernel"))

    # ---- actions ----
    def choose(self, kind: str) -> None:
        """Open the task page for ``kind`` on the selected env."""
        e = self.selected()
        if e is None:
            return
        self.task_kind, self.task_env = kind, e.path
        self.completeChanged.emit()
        self.task_chosen.emit(kind, e.path)
        wiz = self.wizard()
        if wiz is not None and wiz.currentPage() is self:
            wiz.next()

    def _run_action(self, work, done, name: str) -> None:
        self._action = Task(work, self, name=name)
        self._action.succeeded.connect(done)
        self._action.failed.connect(self._on_action_failed)
        self._action.finished.connect(self._update_buttons)
        self.message.setVisible(False)
        self._action.start()
        self._update_buttons()

    def _on_action_failed(self, err: UserError) -> None:
        if err.error_code == "envs.remove_not_ours":  # (the core's words name the command line's --force)
            self.message.set_text(self.tr("{path} is not in this assistant's list of the environments it made, so "
                                          "it is not removed. If it is the environment you mean, tick “{option}” and "
                                          "press Remove again.").format(
                path=self.selected_path() or "", option=self.force_remove.text().replace("&", "")), "error")
            self.message.setVisible(True)
            self.force_remove.setFocus()
            return
        msg, hint = error_text(err)
        what = self.tr("What to do:")  # outside the f-string: lupdate cannot see into one
        self.message.set_text(msg + (f"\n{what} {hint}" if hint else ""), "error")
        self.message.setVisible(True)

    def _say(self, text: str, kind: str = "ok") -> None:
        self.message.set_text(text, kind)
        self.message.setVisible(True)

    def toggle_kernel(self) -> None:
        e = self.selected()
        if e is None:
            return
        path = e.path
        if e.record is not None and e.record.kernel is not None:
            def remove(on_event, cancel):
                from app.core.lifecycle.kernel import remove_kernel

                return remove_kernel(path)

            self._run_action(remove, self._kernel_removed, "kernel-remove")
            return

        def add(on_event, cancel):
            from app.core.lifecycle.kernel import install_kernel

            return install_kernel(path, on_event=on_event, cancel=cancel)

        self._say(self.tr("Adding a Jupyter kernel for {path}…").format(path=path), "info")
        self._run_action(add, self._kernel_added, "kernel")

    def _kernel_added(self, kr) -> None:
        self._say(self.tr('Jupyter now offers the kernel "{name}".').format(name=kr.display_name))
        self.refresh()

    def _kernel_removed(self, folder: str) -> None:
        self._say(self.tr("The Jupyter kernel was removed ({folder}).").format(folder=folder))
        self.refresh()

    def _removed(self, res) -> None:
        self._say(self.tr("{path} was removed.").format(path=res.path))
        self.refresh()

    def open_terminal(self) -> None:
        e = self.selected()
        if e is None:
            return
        path = e.path

        def work(on_event, cancel):
            from app.core.lifecycle.terminal import open_terminal

            return open_terminal(Path(path))

        self._run_action(work, lambda opened: self._terminal_opened(path, opened), "terminal")

    def _terminal_opened(self, path: str, opened: bool) -> None:
        from app.core.lifecycle.terminal import activation

        if opened:
            self._say(self.tr("A terminal opened with {path} active.").format(path=path))
            return
        command = activation(Path(path))[0].command
        self._say(self.tr("No terminal program was found. In a terminal, run:\n{command}").format(command=command),
                  "info")

    def confirm_remove(self, summary: str, ours: bool) -> bool:
        """Ask before deleting (tests replace this method)."""
        text = self.tr("This deletes:\n{summary}").format(summary=summary)
        if not ours:
            text += "\n\n" + self.tr("This environment is not in this assistant's list of the environments it made.")
        answer = QMessageBox.question(self, self.tr("Delete the environment?"), text,
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def remove_selected(self) -> None:
        e = self.selected()
        if e is None:
            return
        # the rule of `envs remove`: not made by this assistant, removed only with the box ticked (its --force)
        path, force = e.path, not e.made_by_app and self.force_remove.isChecked()

        def plan(on_event, cancel):
            from app.core.lifecycle.remove import plan_remove

            return plan_remove(path, force=force)

        def planned(p) -> None:
            if not self.confirm_remove(render(p.summary, current_language()), e.made_by_app):
                return

            def go(on_event, cancel):
                from app.core.lifecycle.remove import remove

                return remove(p, on_event=on_event, cancel=cancel)

            self._run_action(go, self._removed, "remove")

        self._run_action(plan, planned, "remove-plan")

    # ---- busy ----
    def is_busy(self) -> bool:
        return super().is_busy() or (self._action is not None and self._action.is_running())

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        ok = super().cancel_and_wait(timeout)
        if self._action is not None and self._action.is_running():
            self._action.cancel()
            ok = self._action.wait(timeout) and ok
        return ok

    # ---- texts ----
    def retranslate_page(self) -> None:
        self.busy.set_text(self.tr("Looking for environments…"))
        self.tree.setHeaderLabels([self.tr("Environment"), self.tr("PyTorch"), self.tr("Runs on"), self.tr("Python"),
                                   self.tr("Size"), self.tr("Last check"), self.tr("Status")])
        self.tree.setAccessibleName(self.tr("Environments"))
        self.empty.setText(self.tr("No PyTorch environment was found. Go back and choose \"Set up a new "
                                   "environment\" to make one."))
        set_texts(self.check_btn, self.tr("&Check"),
                  tip=self.tr("Run the verification and the doctor in this environment"))
        set_texts(self.repair_btn, self.tr("&Repair"),
                  tip=self.tr("Reinstall the right PyTorch build for this computer, keeping the other packages"))
        set_texts(self.upgrade_btn, self.tr("&Upgrade"),
                  tip=self.tr("Build a newer PyTorch next to it, check it, then swap it in (undoable)"))
        self.terminal_btn.setText(self.tr("Open a &terminal here"))
        self.remove_btn.setText(self.tr("Re&move"))
        set_texts(self.force_remove, self.tr("Remove it even though it is not in this assistant's list"),
                  tip=self.tr("Only for an environment you are sure of: everything in its folder is deleted"))
        self.refresh_btn.setText(self.tr("Re&fresh"))
        self._render_rows()
        self._on_selection()

