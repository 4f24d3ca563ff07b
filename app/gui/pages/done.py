"""Page 8, Done: what was installed where, how well it works, and how to use it.

Shows a summary (install, verification, speed), how to activate the environment in the
shells of this OS, how to use it from VS Code, PyCharm and Jupyter, opens the folder, and
saves the session report as HTML, Markdown and JSON (a copy is always kept next to the logs).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.base.errors import UserError
from app.core.base.shells import posix_quote
from app.core.install.request import masked
from app.core.lifecycle.kernelspec import KernelResult, kernel_commands, register_kernel
from app.core.lifecycle.terminal import PS_NOTE, windows_activation
from app.core.sources.settings import SourceSettings
from app.gui.build import add_all, button, retire_row, set_texts, text_label
from app.gui.i18n import current_language, render
from app.gui.logview import monospace_font
from app.gui.pages._commands import command_text
from app.gui.pages._common import ErrorPanel, put_icon, std_icon
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import PathNote, StatusRow, WrapLabel, heading, muted
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.pipeline.report import SessionReport


def activation_commands(env_path: Path, kind: str = "venv", platform: str | None = None) -> list[tuple[str, str]]:
    """(shell, command) pairs that activate the environment, for the shells of ``platform``
    (sys.platform by default), quoted by :mod:`app.core.base.shells`."""
    platform = platform or sys.platform
    env = str(env_path)
    if platform.startswith("win"):
        labels = {"powershell": "PowerShell", "cmd": "cmd", "conda": "conda"}
        return [(labels[a.shell], a.command) for a in windows_activation(env, kind)]
    if kind == "conda":
        return [("conda", f"conda activate {posix_quote(env)}")]
    return [
        ("bash / zsh", f"source {posix_quote(str(Path(env) / 'bin' / 'activate'))}"),
        ("fish", f"source {posix_quote(str(Path(env) / 'bin' / 'activate.fish'))}"),
    ]


def kernel_name(env_path: Path) -> str:
    """The kernelspec name the Done page registers (the core's: ``torch-<env name>-<hash>``)."""
    from app.core.lifecycle.kernelspec import kernel_name as core_name

    return core_name(Path(env_path))


class _CommandRow(QWidget):
    """A read-only, selectable command with a Copy button."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(text, self)
        self.edit.setReadOnly(True)
        self.edit.setFont(monospace_font())
        self.edit.setCursorPosition(0)
        self.copy = QToolButton(self)
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.edit.text()))
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.copy)
        self.retranslate()

    def set_text(self, text: str) -> None:
        self.edit.setText(text)
        self.edit.setCursorPosition(0)

    def retranslate(self) -> None:
        """The Copy button says which line it copies: the line's own name (every Copy of the page was
        "Copy the command" to a screen reader)."""
        what = self.edit.accessibleName()
        set_texts(self.copy, self.tr("Copy"),
                  name=self.tr("Copy: {what}").format(what=what) if what else self.tr("Copy the command"))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class DonePage(BasePage):

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("DonePage", "Done"),
              QT_TRANSLATE_NOOP("DonePage", "PyTorch is installed. Here is how to use it."))
    reports_saved = Signal(list)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._auto_saved: list[Path] = []
        self._kernel_error: UserError | None = None
        self.setFinalPage(True)

        self.headline_icon = QLabel(self)
        self.headline = heading(scale=1.15)
        self.summary = text_label(self, selectable=True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)

        # Activation, one row per shell of this OS (rebuilt in initializePage).
        self.shell_box = QGroupBox(self)
        self.shell_form = QFormLayout(self.shell_box)
        self.shell_rows: list[tuple[QLabel, _CommandRow]] = []
        self.shell_notes: list[QLabel] = []  # the sentence under the PowerShell line

        # Editors and notebooks.
        self.ide_box = QGroupBox(self)
        ide = QVBoxLayout(self.ide_box)
        self.vscode_label = text_label(self.ide_box)
        self.vscode_cmd = _CommandRow("", self.ide_box)
        self.pycharm_label = text_label(self.ide_box)
        self.python_row = _CommandRow("", self.ide_box)
        self.jupyter_label = text_label(self.ide_box)
        self.jupyter_install = _CommandRow("", self.ide_box)
        self.jupyter_kernel = _CommandRow("", self.ide_box)
        # One click: ipykernel from the same sources as the install, then the kernel (the commands above).
        self.kernel_button = button(self.register_kernel, self.ide_box)
        self.kernel_status = StatusRow("pending", "", "", parent=self.ide_box)
        self.kernel_status.hide()
        self._kernel_task: Task | None = None
        self.kernel_result: KernelResult | None = None
        kernel_row = QHBoxLayout()
        kernel_row.addWidget(self.kernel_button)
        kernel_row.addStretch(1)
        for w in (self.vscode_label, self.vscode_cmd, self.pycharm_label, self.python_row,
                  self.jupyter_label, self.jupyter_install, self.jupyter_kernel):
            ide.addWidget(w)
        ide.addLayout(kernel_row)
        ide.addWidget(self.kernel_status)

        # Folder and report.
        self.open_folder = QPushButton(self)
        self.open_folder.setIcon(std_icon("folder"))
        self.open_folder.clicked.connect(self.open_env_folder)
        self.save_button = button(self._save_as, self)
        self.open_report = button(self._open_report, self)
        self.saved_label = text_label(self, selectable=True)
        self.path_note = PathNote(self)  # where the folder or report is, when nothing here opens it
        self.error_panel = ErrorPanel(self)
        self.error_panel.setVisible(False)
        buttons = QHBoxLayout()
        add_all(buttons, self.open_folder, self.save_button, self.open_report, 1)

        top = QHBoxLayout()
        add_all(top, self.headline_icon, (self.headline, 1))
        add_all(self.body, top, self.summary, self.shell_box, self.ide_box, buttons, self.path_note,
                self.saved_label, self.error_panel, 1)
        self.retranslate()

    # -- wizard hooks -----------------------------------------------------------------------------
    def initializePage(self) -> None:
        self._fill()
        if not self._auto_saved:
            try:
                from app.core.base.paths import log_dir

                self._auto_saved = self.save_report(log_dir().parent / "reports")
            except (UserError, OSError) as err:
                self.error_panel.show_error(err if isinstance(err, UserError) else UserError(str(err)))
        self._show_saved()

    # -- facts --------------------------------------------------------------------------------------
    def env_path(self) -> Path | None:
        res = self.state.session.install_result
        return Path(res.env_path) if res is not None else None

    def python(self) -> Path | None:
        res = self.state.session.install_result
        return Path(res.python) if res is not None else None

    def env_kind(self) -> str:
        res = self.state.session.install_result
        return res.kind if res is not None and res.kind else "venv"

    def installer(self) -> str:
        res = self.state.session.install_result
        return res.installer if res is not None and res.installer else "pip"

    def session_report(self) -> SessionReport:
        """The session's report, written in the wizard's language."""
        import dataclasses

        return dataclasses.replace(self.state.session.report(), language=current_language())

    def save_report(self, folder: str | Path, formats: Iterable[str] = ("html", "md", "json")) -> list[Path]:
        """Write the session report into ``folder``; returns the files (also kept in state)."""
        report = self.session_report()
        stem = f"torch-setup-{report.default_stem()}-{time.strftime('%Y%m%d-%H%M%S')}"
        paths = report.save(Path(folder), formats=formats, stem=stem)
        for p in paths:
            if p not in self.state.saved_reports:
                self.state.saved_reports.append(p)
        self._show_saved()
        self.reports_saved.emit(paths)
        return paths

    # -- actions ------------------------------------------------------------------------------------
    def open_env_folder(self) -> bool:
        """The environment's folder in the file manager, or its path with a Copy button where there is none."""
        env = self.env_path()
        return env is not None and self.path_note.open(env)

    def _save_as(self) -> None:
        """"Save report as…": a file, named by the user, in the format its filter (or ending) says."""
        filters = {self.tr("Web page (*.html)"): ".html", self.tr("Markdown (*.md)"): ".md",
                   self.tr("JSON (*.json)"): ".json"}
        stem = f"torch-setup-{self.session_report().default_stem()}"
        path, chosen = QFileDialog.getSaveFileName(self, self.tr("Save the report as"), str(Path.home() / stem),
                                                   ";;".join(filters))
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in (".html", ".md", ".json"):
            target = target.with_name(target.name + filters.get(chosen, ".html"))
        try:
            self.write_report(target)
            self.error_panel.setVisible(False)
        except UserError as err:
            self.error_panel.show_error(err)

    def write_report(self, target: Path) -> Path:
        """The report as ``target`` (its format from its ending), masked and private like every copy."""
        from app.core.base.oserrors import os_error_text
        from app.core.base.secrets import write_private
        from app.core.base.text import msg

        report = self.session_report()
        fmt = target.suffix.lower().lstrip(".")
        render_as = {"html": report.to_html, "md": report.to_markdown, "json": report.to_json}[fmt]
        try:
            write_private(target, render_as())
        except OSError as exc:
            raise UserError(msg("report.write_failed", "the report {path} cannot be written: {reason}",
                                path=str(target), reason=os_error_text(exc))) from None
        if target not in self.state.saved_reports:
            self.state.saved_reports.append(target)
        self._show_saved()
        self.reports_saved.emit([target])
        return target

    def _open_report(self) -> None:
        html_files = [p for p in self.state.saved_reports if p.suffix == ".html"]
        if html_files:
            self.path_note.open(html_files[-1])

    # -- view ----------------------------------------------------------------------------------------
    def _show_saved(self) -> None:
        saved = self.state.saved_reports
        self.open_report.setEnabled(any(p.suffix == ".html" for p in saved))
        if saved:
            folders = sorted({str(p.parent) for p in saved})
            self.saved_label.setText(self.tr("Report saved in: {folders}").format(folders="; ".join(folders)))
        else:
            self.saved_label.setText("")

    def _summary_lines(self) -> tuple[str, str, list[str]]:
        st = self.state.session
        res, ver, bench, rec = st.install_result, st.verify_report, st.bench_report, st.recommendation_followed
        lines = []
        torch_v = (res.torch_version if res else None) or (ver.torch_version if ver else None) or "?"
        build = f" ({rec.variant or rec.backend})" if rec is not None and (rec.variant or rec.backend) else ""
        if build and torch_v.endswith(f"+{rec.variant if rec is not None else ''}"):
            build = ""  # "2.13.0+cpu" says it already ("2.13.0+cpu (cpu)")
        env = self.env_path()
        if env:
            lines.append(self.tr("Installed: PyTorch {version}{build} in {path}").format(
                version=torch_v, build=build, path=env))
        if rec is not None and rec.availability:  # why this version: what the sources held
            lines.append(render(rec.availability, current_language()))
        served = res.downloads if res is not None else ()
        if served:
            sources = sorted({render(s.source, current_language()) for s in served})
            lines.append(self.tr("Downloaded from: {sources}").format(sources=", ".join(sources)))
        py = self.python()
        if py:
            lines.append(self.tr("Python: {python}").format(python=py))
        if res is not None:
            lines.append(self.tr("Installation took {s:.0f} s.").format(s=res.duration_s))
        status = "ok"
        if ver is not None:
            counts = {"passed": 0, "failed": 0, "skipped": 0}
            for c in ver.checks:
                if c.status in counts:
                    counts[c.status] += 1
            if not ver.ok:
                status = "warning"
            lines.append(self.tr("Verification: {passed} passed, {failed} failed, {skipped} skipped.").format(**counts))
        else:
            lines.append(self.tr("Verification: not run."))
        if bench is not None:
            from app.core.measure.bench import headline_text  # the Speed test page's headline: one number, one rule

            head_msg = headline_text(bench)
            if head_msg is not None and bench.cancelled:
                lines.append(self.tr("Speed (partial, the test was stopped): {headline}").format(
                    headline=render(head_msg, current_language())))
            elif head_msg is not None:
                lines.append(self.tr("Speed: {headline}").format(headline=render(head_msg, current_language())))
        else:
            lines.append(self.tr("Speed test: skipped."))
        if env is None:
            status = "error"
            head = self.tr("PyTorch was not installed.")
        elif status == "ok":
            head = self.tr("PyTorch {version} is ready.").format(version=torch_v)
        else:
            head = self.tr("PyTorch {version} is installed, but some checks failed. The report "
                           "holds the diagnosis.").format(version=torch_v)
        return status, head, lines

    def _fill(self) -> None:
        status, head, lines = self._summary_lines()
        self.headline.setText(head)
        put_icon(self.headline_icon, {"ok": "passed", "warning": "warning"}.get(status, "failed"), 28)
        self.summary.setText("\n".join(lines))
        env, py = self.env_path(), self.python()
        # Shell activation rows (the old ones retired: deleted later by Qt, never at once from here).
        while self.shell_notes:
            retire_row(self.shell_form, self.shell_notes.pop())
        while self.shell_rows:
            retire_row(self.shell_form, self.shell_rows.pop()[1])
        for shell, cmd in (activation_commands(env, self.env_kind()) if env else []):
            label = QLabel(shell, self.shell_box)
            row = _CommandRow(cmd, self.shell_box)
            label.setBuddy(row.edit)
            self.shell_form.addRow(label, row)
            self.shell_rows.append((label, row))
            if shell == "PowerShell":  # why the line lifts the execution policy (for this window only)
                note = muted(WrapLabel(render(PS_NOTE, current_language()), self.shell_box))
                self.shell_form.addRow("", note)
                self.shell_notes.append(note)
        self.shell_box.setVisible(env is not None)
        self.ide_box.setVisible(py is not None)
        self.open_folder.setEnabled(env is not None)
        if py is not None:
            pys = str(py)
            self.vscode_cmd.set_text(f'"python.defaultInterpreterPath": "{pys.replace(chr(92), chr(92) * 2)}"')
            self.python_row.set_text(pys)
            self._fill_kernel()
        self.retranslate_texts()
        self._tab_order()

    def _tab_order(self) -> None:
        """Tab goes down the page as it reads: the activation lines (made anew for each environment, so
        Qt put them last, after the buttons at the bottom), the editors' lines, then the buttons."""
        rows = [row for _label, row in self.shell_rows]
        rows += [self.vscode_cmd, self.python_row, self.jupyter_install, self.jupyter_kernel]
        chain: list[QWidget] = [w for row in rows for w in (row.edit, row.copy)]
        chain += [self.kernel_button, self.open_folder, self.save_button, self.open_report, self.path_note.copy]
        for a, b in pairwise(chain):
            QWidget.setTabOrder(a, b)

    # -- Jupyter ------------------------------------------------------------------------------------
    def kernel_index(self) -> SourceSettings:
        """The sources the install used (the approved plan's), for ipykernel."""
        plan = self.state.session.approved_plan
        return plan.index if plan is not None else SourceSettings()

    def kernel_commands(self) -> list[tuple[str, list[str]]]:
        env = self.env_path()
        if env is None:
            return []
        return kernel_commands(env, installer=self.installer(), index=self.kernel_index())

    def _fill_kernel(self) -> None:
        steps = dict(self.kernel_commands())
        install, register = steps.get("ipykernel"), steps.get("register")
        self.jupyter_install.set_text(command_text(list(masked(install))) if install else "")
        self.jupyter_install.setVisible(install is not None)
        self.jupyter_kernel.set_text(command_text(register) if register else "")
        busy = self._kernel_task is not None and self._kernel_task.is_running()
        self.kernel_button.setEnabled(register is not None and not busy)

    def register_kernel(self) -> None:
        """Install ipykernel (same sources) and register the kernel, off the GUI thread."""
        env = self.env_path()
        if env is None or (self._kernel_task is not None and self._kernel_task.is_running()):
            return
        installer, index = self.installer(), self.kernel_index()
        task = Task(lambda on_event, cancel: register_kernel(env, installer=installer, index=index,
                                                             on_event=on_event, cancel=cancel), self, name="kernel")
        task.succeeded.connect(self._kernel_done)
        task.failed.connect(self._kernel_failed)
        task.finished.connect(self._fill_kernel)
        self._kernel_task = task
        self.kernel_status.set("running", self.tr("Registering the Jupyter kernel…"), "")
        self.kernel_status.show()
        self.kernel_button.setEnabled(False)
        task.start()

    def _kernel_done(self, result: KernelResult) -> None:
        self.kernel_result = result
        self._kernel_words()

    def _kernel_failed(self, err: UserError) -> None:
        self.kernel_result = None
        self._kernel_error = err
        self._kernel_words()
        self.error_panel.show_error(err)

    def _kernel_words(self) -> None:
        r = self.kernel_result
        if r is not None:
            self.kernel_status.set("ok", self.tr("Registered: “{name}” appears in Jupyter's kernel list.").format(
                name=r.display_name), r.path)
        elif self._kernel_error is not None:
            err = self._kernel_error
            text = render(err.message, current_language())
            self.kernel_status.set("error", self.tr("The kernel was not registered: {why}").format(why=text), "")

    def side_tasks(self) -> tuple[Task | None, ...]:
        return (self._kernel_task,)

    def retranslate_texts(self) -> None:
        for label, row in self.shell_rows:
            row.edit.setAccessibleName(self.tr("Command that activates the environment in {shell}").format(
                shell=label.text()))
        self.vscode_cmd.edit.setAccessibleName(self.tr("VS Code setting for this interpreter"))
        self.python_row.edit.setAccessibleName(self.tr("Path of the environment's Python interpreter"))
        self.jupyter_install.edit.setAccessibleName(self.tr("Command that installs ipykernel"))
        self.jupyter_kernel.edit.setAccessibleName(self.tr("Command that registers the Jupyter kernel"))
        for row in (*(r for _l, r in self.shell_rows), self.vscode_cmd, self.python_row, self.jupyter_install,
                    self.jupyter_kernel):
            row.retranslate()  # its Copy button names the line it copies
        set_texts(self.kernel_button, self.tr("Register as a Jupyter kernel"),
                  name=self.tr("Register the environment as a Jupyter kernel"),
                  tip=self.tr("Installs ipykernel from the same sources as PyTorch, then registers the kernel for "
                              "your user (the commands above)."))
        self.vscode_label.setText(self.tr(
            "VS Code: open the Command Palette, run “Python: Select Interpreter” and choose the "
            "interpreter below (or “Enter interpreter path…”). To make it the default, add this "
            "line to settings.json:"))
        self.pycharm_label.setText(self.tr(
            "PyCharm: Settings → Project → Python Interpreter → Add Interpreter → Add Local "
            "Interpreter → select existing, and pick this interpreter:"))
        self.jupyter_label.setText(self.tr(
            "Jupyter: the environment becomes a notebook kernel once it has the ipykernel package. The button "
            "runs these commands: it installs ipykernel from the same sources as PyTorch, then registers the "
            "kernel."))
        self._kernel_words()

    def retranslate_page(self) -> None:
        self.shell_box.setTitle(self.tr("Use it from a terminal (activate the environment)"))
        self.ide_box.setTitle(self.tr("Use it from an editor or a notebook"))
        set_texts(self.open_folder, self.tr("Open folder"), name=self.tr("Open the environment's folder"))
        set_texts(self.save_button, self.tr("Save report as…"),
                  name=self.tr("Save the report as HTML, Markdown and JSON"))
        self.open_report.setText(self.tr("Open report"))
        self.retranslate_texts()
        if self.state.session.install_result is not None:
            _status, head, lines = self._summary_lines()
            self.headline.setText(head)
            self.summary.setText("\n".join(lines))
        self._show_saved()

