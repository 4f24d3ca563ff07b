"""Page 4: where and how the new Python environment is made, and the pre-flight checks.

This page is where the plan is made and approved (the only place): every change of an
input withdraws the session's plan and restarts a short timer; when it fires, the session's
``check_plan(request)`` (plan and pre-flight) runs in a :class:`Task` and the checks are
shown as a checklist. When the checks for the *current* inputs all passed, the page
approves that plan in the session (``session.approve``): the Install page installs exactly
that object. Coming back to this page (after a cancelled or failed install, or with other
choices) plans anew.

The checks are the core's :class:`~app.core.install.Check` values: their messages and hints
are rendered in the wizard's language, and again when the language changes (no new run).

Sources (:mod:`app.core.sources`): what the local wheels folder (and the other sources) hold
bounds the recommendation, so the pre-flight first makes the session's recommendation fit them
(``session.fit_sources``: the newest build they offer, with the reason shown here; when no index
can be reached, the folders' wheels alone, with the same wishes, and the note says why). The
"Download PyTorch from" choice picks the mirrors: "Automatic" (the PyTorch server, with the
catalogue's mirrors as fallbacks), the PyTorch server only, or one mirror first. "Check the
mirrors" verifies every mirror of the build (the exact file, its SHA-256, a timed request) and
lists the verified ones first; it runs by itself under a Chinese locale and when the PyTorch
server cannot be reached, and is always a choice, never applied silently.
The free space under the chosen folder is read off the GUI thread (``statvfs`` can block on a
network mount), one query at a time, the latest path winning.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import shiboken6
from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from app.core.actions import Action, ActionKind
from app.core.disk import existing_ancestor, free_mb
from app.core.errors import BadInput, UserError, hint_text
from app.core.install import Check
from app.core.locations import folder_path
from app.core.recommend.types import NoCombination
from app.core.session import Planned, Stage
from app.core.sources.routing import Route
from app.core.system import ToolInfo
from app.core.text import Text, msg
from app.gui.build import (
    add_all,
    button,
    clear_layout,
    command_view,
    no_wheel_unless_focused,
    set_field_texts,
    set_texts,
)
from app.gui.i18n import current_language, render
from app.gui.pages._commands import commands_text
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, BusyLine, Collapsible, CopyButton, StatusRow, WrapLabel, heading, human_mb, muted
from app.gui.worker import Task

DEBOUNCE_MS = 350
DEFAULT_NAME = "torch-env"
CONDA_TOOLS = ("micromamba", "mamba", "conda")


def default_location() -> Path:
    """``~/torch-envs``; on Windows never inside OneDrive (app.core.install.winchecks)."""
    from app.core.install.winchecks import default_env_root

    return Path(default_env_root())


def free_name(location: Path, name: str = DEFAULT_NAME) -> str:
    """``name`` when nothing is at ``location/name`` yet, else the first free ``name-2``, ``name-3``, …
    (a second run offers a new folder instead of the first run's environment)."""
    from app.core.install.checks import free_sibling

    return free_sibling(location / name).name


def _refused(name: str, err: Exception, env: Path | None = None) -> Check:
    """A request the core refused before any check ran (a BadInput from ``plan``), as a failed check.

    No build fits the wishes with these sources (NoCombination): the ways out are buttons on the
    Recommendation page, so the hint says to go back there instead of the engine's "choose one
    of the combinations that work", which this page does not list. A new environment's folder that
    is already one (a second run's default name): a button offers the first free name beside it."""
    if isinstance(err, UserError):
        hint = hint_text(err.hint, "gui")
        if isinstance(err, NoCombination):
            hint = msg("gui.no_combination_back", "Go Back to the Recommendation page to choose a combination that "
                       "works here.")
        actions: tuple[Action, ...] = ()
        if env is not None and err.error_code == "install.already_env":
            from app.core.install.checks import free_sibling

            actions = (Action(ActionKind.CHOOSE_OTHER_LOCATION, value=str(free_sibling(env)), path=str(env)),)
        return Check(name, False, err.message, hint=hint, code=f"install.{name}_refused", actions=actions)
    return Check(name, False, str(err), code=f"install.{name}_refused")


class EnvironmentPage(BasePage):

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("EnvironmentPage", "Environment"),
              QT_TRANSLATE_NOOP("EnvironmentPage", "PyTorch goes into its own Python environment: a folder with its "
                                                   "own Python and packages, so nothing else on this computer "
                                                   "changes."))
    preflight_done = Signal(bool)

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._tasks: list[Task] = []
        self._generation = 0
        self._result_generation = -1
        self.check_results: list[Check] = []
        self._passed = False
        self._pythons_for: object = None  # the recommendation the Python list was made for
        self._planned: Planned | None = None  # the plan the shown checks are for
        self._conda_tool: ToolInfo | None = None  # conda / mamba / micromamba, when detection found one
        self.vcredist_result: object = None  # the last run of the Visual C++ runtime's installer
        self._initialized = False

        # --- kind ---
        self.kind_title = heading()
        self.kind_group = QButtonGroup(self)
        self.r_uv, self.r_pip, self.r_conda = QRadioButton(), QRadioButton(), QRadioButton()
        kinds = QVBoxLayout()
        kinds.setSpacing(2)
        for i, r in enumerate((self.r_uv, self.r_pip, self.r_conda)):
            self.kind_group.addButton(r, i)
            kinds.addWidget(r)
        self.r_uv.setChecked(True)

        # --- where ---
        self.existing = QCheckBox()
        self.name = QLineEdit(DEFAULT_NAME)
        self._name_edited = False  # the user typed a name: it is theirs, never replaced by a free one
        self.name.textEdited.connect(self._on_name_edited)
        self.location = QLineEdit(str(default_location()))
        self.browse = button(self._browse_location)
        loc_row = QHBoxLayout()
        loc_row.addWidget(self.location, 1)
        loc_row.addWidget(self.browse)
        self.python = QComboBox()
        no_wheel_unless_focused(self.python)
        self.python.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.python_note = muted(WrapLabel())  # a row of the form: as tall as its text
        self.python_note.hide()
        self._unfit_pythons: list[tuple[str, str]] = []
        self.target_label = muted(QLabel())
        self.target_label.setWordWrap(True)
        self.target_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form = QFormLayout()
        self.l_name, self.l_location, self.l_python = QLabel(), QLabel(), QLabel()
        self.l_name.setBuddy(self.name)
        self.l_location.setBuddy(self.location)
        self.l_python.setBuddy(self.python)
        self.form.addRow(self.l_location, loc_row)
        self.form.addRow(self.l_name, self.name)
        self.form.addRow(self.l_python, self.python)
        self.form.addRow("", self.python_note)
        self.form.addRow("", self.existing)

        # --- advanced ---
        adv = QWidget()
        af = QFormLayout(adv)
        af.setContentsMargins(18, 0, 0, 0)
        self.index_url = QLineEdit()
        self.extra_index = QLineEdit()
        self.l_index, self.l_extra = QLabel(), QLabel()
        for lab, w in ((self.l_index, self.index_url), (self.l_extra, self.extra_index)):
            lab.setBuddy(w)
        af.addRow(self.l_index, self.index_url)
        af.addRow(self.l_extra, self.extra_index)
        # Networks of labs and campuses: a PyPI mirror for everything else, a proxy, a CA file.
        self.mirror = QLineEdit()
        self.proxy = QLineEdit()
        self.ca_bundle = QLineEdit()
        self.browse_ca = button(self._browse_ca)
        ca_row = QHBoxLayout()
        ca_row.addWidget(self.ca_bundle, 1)
        ca_row.addWidget(self.browse_ca)
        self.l_mirror, self.l_proxy, self.l_ca = QLabel(), QLabel(), QLabel()
        for lab, w in ((self.l_mirror, self.mirror), (self.l_proxy, self.proxy), (self.l_ca, self.ca_bundle)):
            lab.setBuddy(w)
        af.addRow(self.l_mirror, self.mirror)
        af.addRow(self.l_proxy, self.proxy)
        af.addRow(self.l_ca, ca_row)
        self.advanced = Collapsible(content=adv)

        # --- sources: where PyTorch comes from (mirrors as a choice) ---
        self.sources_title = heading()
        self.sources_note = QLabel()
        self.sources_note.setWordWrap(True)
        self.sources_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sources_note.hide()
        self.offer_banner = Banner("info")
        self.offer_banner.hide()
        self.mirror_choice = QComboBox()
        no_wheel_unless_focused(self.mirror_choice)
        self.mirror_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.check_mirrors = button(self.run_mirror_check)
        self.l_mirror_choice = QLabel()
        self.l_mirror_choice.setBuddy(self.mirror_choice)
        choice_row = QHBoxLayout()
        add_all(choice_row, self.l_mirror_choice, (self.mirror_choice, 1), self.check_mirrors)
        self.mirror_results = muted(QLabel())
        self.mirror_results.setWordWrap(True)
        self.mirror_results.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.mirror_results.hide()
        self.mirror_route: Route | None = None  # the last mirror check's verdicts
        self._mirror_task: Task | None = None
        self._mirror_checked_for: str | None = None  # the torch pin the check ran for
        self._mirror_ids: list[str] = []

        # --- pre-flight ---
        self.checks_title = heading()
        self.busy = BusyLine()
        self.checks_box = QVBoxLayout()
        self.checks_box.setSpacing(2)
        self.result_banner = Banner("ok")
        self.result_banner.hide()
        self.plan_label = muted(QLabel())
        self.plan_label.setWordWrap(True)
        self.plan_label.hide()
        # the exact commands the approved plan runs (credentials masked)
        self.cmd_title = heading()
        self.command = command_view(4)
        self.copy_command = CopyButton(lambda: self.command.toPlainText())
        cmd_row = QHBoxLayout()
        cmd_row.addWidget(self.copy_command)
        cmd_row.addStretch(1)
        self.cmd_row = QWidget()
        self.cmd_row.setLayout(cmd_row)
        cmd_row.setContentsMargins(0, 0, 0, 0)
        # --- install from files: always on the page, right under the verdict (the way out when the
        # PyTorch server cannot be reached; never under the collapsed Advanced) ---
        self.files_title = heading()
        self.files_note = muted(WrapLabel())
        self.find_links = QLineEdit()
        self.browse_links = button(lambda: self._browse_dir(self.find_links))
        self.bundle = QLineEdit()
        self.browse_bundle = button(lambda: self._browse_dir(self.bundle))
        fl_row = QHBoxLayout()
        add_all(fl_row, (self.find_links, 1), self.browse_links)
        b_row = QHBoxLayout()
        add_all(b_row, (self.bundle, 1), self.browse_bundle)
        self.l_links, self.l_bundle = QLabel(), QLabel()
        self.l_links.setBuddy(self.find_links)
        self.l_bundle.setBuddy(self.bundle)
        self.files_box = QWidget()
        files_form = QFormLayout(self.files_box)
        files_form.setContentsMargins(0, 0, 0, 0)
        files_form.addRow(self.files_title)
        files_form.addRow(self.files_note)
        files_form.addRow(self.l_links, fl_row)
        files_form.addRow(self.l_bundle, b_row)
        self._way_out = ""  # the verdict "PyTorch cannot be downloaded: install from files", when it is shown
        # ... and kept in view while the page's content grows or shrinks above it, until the user scrolls
        self._follow_way_out = False
        self._landed: QWidget | None = None  # the control a remedy's button sent the user to (kept in view)
        self._open_list = False  # ... and its list opened ("Choose another Python…")
        self._way_out_timer = QTimer(self)  # (the page's child: it goes with the page, never fires after it)
        self._way_out_timer.setSingleShot(True)
        self._way_out_timer.setInterval(0)
        self._way_out_timer.timeout.connect(self._show_way_out)
        self.body_widget = self.scroll_area.widget()
        assert self.body_widget is not None  # (BasePage's scroll area holds the body)
        self.body_widget.installEventFilter(self)
        self.scroll_area.verticalScrollBar().actionTriggered.connect(self._user_scrolled)

        self.free_space_mb: int | None = None
        self._free_for: Path | None = None  # the path free_space_mb was read for
        self._free_wanted: Path | None = None
        self._free_task: Task | None = None

        add_all(self.body, self.kind_title, kinds, self.form, self.target_label, self.advanced, self.sources_title,
                self.sources_note, self.offer_banner, choice_row, self.mirror_results, self.checks_title, self.busy,
                self.checks_box, self.plan_label, self.cmd_title, self.command, self.cmd_row, self.result_banner,
                self.files_box, 1)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.run_preflight)
        for w in (self.name, self.location, self.index_url, self.extra_index, self.find_links, self.bundle,
                  self.mirror, self.proxy, self.ca_bundle):
            w.textChanged.connect(self.inputs_changed)
        self.python.currentIndexChanged.connect(self.inputs_changed)
        self.mirror_choice.currentIndexChanged.connect(self.inputs_changed)
        self.kind_group.idToggled.connect(self._kind_toggled)
        self.existing.toggled.connect(self._existing_toggled)
        self.retranslate()

    # ---- inputs ----
    def _on_name_edited(self, _text: str) -> None:
        self._name_edited = True

    def _kind_toggled(self, _id: int, on: bool) -> None:
        if on:
            self.inputs_changed()

    def initializePage(self) -> None:
        report = self.state.session.system
        tools = report.tools if report is not None else {}
        conda = next((tools[t] for t in CONDA_TOOLS if t in tools and tools[t].path), None)
        self.r_conda.setVisible(conda is not None)
        if conda is None and self.r_conda.isChecked():
            self.r_uv.setChecked(True)
        self._conda_tool = conda
        self._fill_pythons()
        self._fill_mirrors()
        if not self._initialized:
            self._initialized = True
            if self.state.bundle_dir and not self.bundle.text():
                self.bundle.setText(str(self.state.bundle_dir))
        if not self._name_edited and not self.existing.isChecked():  # a second run: a free name, not the first's env
            self.name.setText(free_name(self._location_path()))
        self.retranslate()
        self.inputs_changed()
        if current_language() == "zh_CN":  # mirrors first, as a choice: check them at once
            self.run_mirror_check()

    def _fill_pythons(self) -> None:
        """The interpreters found, each offered only if it can install the recommended build: the
        others are greyed with the engine's reason and never the default."""
        report = self.state.session.system
        rec = self.state.session.recommendation
        self._pythons_for = rec  # the list (and its "Not offered" note) speaks of this build
        lang = current_language()
        want = str(rec.env_python or "") if rec is not None else ""
        if not want and rec is not None and report is not None and report.python.version:
            want = ".".join(report.python.version.split(".")[:2])
        prev = self.python.currentData()
        self.python.blockSignals(True)
        self.python.clear()
        model = self.python.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        seen = set()
        interpreters = list(report.interpreters) if report is not None else []
        running = report.python if report is not None else None
        if running is not None and running.executable and all(i.executable != running.executable for i in interpreters):
            interpreters.insert(0, running)
        best = -1
        unfit: list[tuple[str, str]] = []  # (version, why) of the interpreters not offered
        for info in interpreters:
            if not info.executable or info.executable in seen or info.can_venv is False:
                continue
            seen.add(info.executable)
            label = f"Python {info.version or '?'}  ({info.executable})"
            why = rec.python_problem(info.version) if rec is not None and info.version else None
            fits = why is None and bool(want) and (info.version or "").startswith(want + ".")
            if fits:
                label += "  " + self.tr("(recommended)")
            self.python.addItem(label, info.executable)
            item = model.item(self.python.count() - 1)
            if why is not None:
                text = render(why, lang)
                item.setEnabled(False)
                item.setToolTip(text)
                item.setData(text, Qt.ItemDataRole.AccessibleDescriptionRole)
                unfit.append((info.version or "?", text))
            if fits and best < 0:
                best = self.python.count() - 1
        usable = [i for i in range(self.python.count()) if model.item(i).isEnabled()]
        if best < 0 and usable and not want:
            best = usable[0]
        if want and best < 0:
            # No interpreter of that version here: uv can look for (or fetch) one by version.
            label = self.tr("Python {version} (found or downloaded by uv)").format(version=want)
            self.python.insertItem(0, label, want)
            best = 0
        idx = self.python.findData(prev) if prev else -1
        if idx < 0 or not model.item(idx).isEnabled():
            idx = max(best, 0)
        self.python.setCurrentIndex(idx)
        self.python.blockSignals(False)
        self._unfit_pythons = unfit
        self._show_unfit()

    def _show_unfit(self) -> None:
        """The interpreters not offered, and why, under the selector."""
        unfit = self._unfit_pythons
        if not unfit:
            self.python_note.setText("")
        else:
            whys = sorted({why for _, why in unfit})
            versions = ", ".join(v for v, _ in unfit)
            self.python_note.setText(self.tr("Not offered: Python {versions} ({why}). To use one of them, choose its "
                                             "Python under \"Change…\" on the Recommendation page.").format(
                versions=versions, why=self.tr("; ").join(whys)))
        self.python_note.setVisible(bool(unfit))

    # ---- sources: mirrors ----
    def _variant_mirrors(self) -> list[tuple[str, str]]:
        """``(id, name)`` of the catalogue's mirrors of the recommended build's index."""
        from app.core.mirrors import default_catalogue
        from app.core.sources import variant_of_index

        rec = self.state.session.recommendation
        variant = variant_of_index(rec.index_url) if rec is not None else None
        if variant is None:
            return []
        return [(m.id, render(m.label, current_language())) for m in default_catalogue().torch_mirrors_for(variant)]

    def _fill_mirrors(self) -> None:
        """Automatic, the PyTorch server only, then each mirror; verified mirrors (fastest first)
        lead the list after a check, and under a Chinese locale the mirrors come before the rest."""
        prev = self.mirror_choice.currentData()
        mirrors = self._variant_mirrors()
        route = self.mirror_route
        if route is not None:
            speed = {v.source.id: (v.speed_bps or 0.0) for v in route.verdicts if v.ok}
            mirrors.sort(key=lambda m: (m[0] not in speed, -speed.get(m[0], 0.0)))
        self._mirror_ids = [m for m, _ in mirrors]
        plain = [(self.tr("Automatic: the PyTorch server, then verified mirrors"), "auto"),
                 (self.tr("The PyTorch server only"), "off")]
        items = [(self.tr("{mirror}, then the PyTorch server").format(mirror=name), mid) for mid, name in mirrors]
        first = current_language() == "zh_CN" or self._origin_failed()
        ordered = items + plain if first and items else plain + items
        self.mirror_choice.blockSignals(True)
        self.mirror_choice.clear()
        for label, data in ordered:
            self.mirror_choice.addItem(label, data)
        idx = self.mirror_choice.findData(prev if prev is not None else "auto")
        self.mirror_choice.setCurrentIndex(idx if idx >= 0 else self.mirror_choice.findData("auto"))
        self.mirror_choice.blockSignals(False)
        self.mirror_choice.setEnabled(bool(items))
        self.check_mirrors.setEnabled(bool(items) and self._mirror_task is None)

    def mirrors_setting(self) -> str | tuple[str, ...]:
        data = self.mirror_choice.currentData()
        if data in (None, "auto", "off"):
            return data or "auto"
        return (str(data), "origin")  # the chosen mirror first, the PyTorch server after it

    def _origin_failed(self) -> bool:
        """The pre-flight found the PyTorch server out of reach (not: missing a file)."""
        for c in self.check_results:
            if c.route is not None:
                first = c.route.verdicts[0] if c.route.verdicts else None
                return (first is not None and first.source.kind == "origin" and not first.ok
                        and first.failure is not None
                        and first.failure.kind in ("dns", "refused", "timeout", "reset", "tls", "tls_verify"))
        return False

    def run_mirror_check(self) -> None:
        """Verify every mirror of the recommended build (in a Task); the results are a choice."""
        rec = self.state.session.recommendation
        if rec is None or not rec.packages or self._mirror_task is not None or not self._variant_mirrors():
            return
        import dataclasses

        from app.core.sources.routing import verify

        request = self.build_request()
        settings = dataclasses.replace(request.sources, index_url=None, mirrors="auto")
        pins = tuple(p for p in rec.packages if p.startswith("torch=="))
        pyver = rec.env_python or (self.state.session.system.python.minor if self.state.session.system else None)

        def fn(_on_event: object, _cancel: object) -> Route:
            return verify(settings, rec.index_url, pins, pyver, prefer_mirrors=True)

        task = Task(fn, self, name="mirror-check")
        task.succeeded.connect(self._on_mirrors_checked)
        task.finished.connect(self._mirror_task_finished)
        self._mirror_task = task
        self._mirror_checked_for = pins[0] if pins else None
        self.check_mirrors.setEnabled(False)
        self._render_sources()
        task.start()

    def _on_mirrors_checked(self, route: Route) -> None:
        self.mirror_route = route
        self._fill_mirrors()
        self._render_sources()

    def _mirror_task_finished(self) -> None:
        self._mirror_task = None
        self._fill_mirrors()
        self._render_sources()
        self._render_checks()  # the verdict may now offer the verified mirrors
        self.completeChanged.emit()
        self._open_list_when_idle()

    def _render_sources(self) -> None:
        lang = current_language()
        session = self.state.session
        rec = session.recommendation
        why = render(rec.availability, lang) if rec is not None else ""
        lines = [self.tr("Why this version: {why}").format(why=why)] if why else []
        if session.bound_folders is not None and rec is not None:  # the folders' wheels decided: what it cost
            lines += [render(c, lang) for c in rec.costs]
        self.sources_note.setText("\n".join(lines))
        self.sources_note.setVisible(bool(lines))
        route = self.mirror_route
        lines = []
        if self._mirror_task is not None:
            lines.append(self.tr("Checking the mirrors…"))
        elif route is not None:
            for v in sorted(route.verdicts, key=lambda v: (not v.ok, -(v.speed_bps or 0.0))):
                name = render(v.source.name, lang)
                if v.ok:
                    lines.append("✓ " + self.tr("{source}: has the exact file, {speed:.1f} MB/s").format(
                        source=name, speed=(v.speed_bps or 0.0) / 1e6))
                else:
                    lines.append("✗ " + self.tr("{source}: {reason}").format(source=name,
                                                                               reason=render(v.reason, lang)))
        self.mirror_results.setText("\n".join(lines))
        self.mirror_results.setVisible(bool(lines))
        verified = [v for v in route.verdicts if v.ok and v.source.kind == "mirror"] if route is not None else []
        offer = bool(verified) and (self._origin_failed() or lang == "zh_CN")
        if offer:
            self.offer_banner.set_text(self.tr(
                "Verified mirrors are listed first under \"Download PyTorch from\": each has the exact file with "
                "the PyTorch server's SHA-256. Choose one to use it; nothing changes until you do."), "info")
        self.offer_banner.setVisible(offer)

    def _existing_toggled(self, on: bool) -> None:
        # Adding to an environment keeps its own name and Python.
        for w in (self.name, self.l_name, self.python, self.l_python):
            w.setEnabled(not on)
        self.retranslate()
        self.inputs_changed()

    def _browse_location(self) -> None:
        title = self.tr("Choose the existing environment") if self.existing.isChecked() else \
            self.tr("Choose where to create the environment")
        start = str(existing_ancestor(Path(self.location.text() or Path.home())))
        path = QFileDialog.getExistingDirectory(self, title, start)
        if path:
            self.location.setText(path)

    def _browse_dir(self, edit: QLineEdit) -> None:
        start = str(existing_ancestor(Path(edit.text() or Path.home())))
        path = QFileDialog.getExistingDirectory(self, self.tr("Choose a folder"), start)
        if path:
            edit.setText(path)

    def _browse_ca(self) -> None:
        start = str(existing_ancestor(Path(self.ca_bundle.text() or Path.home())))
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose the CA certificates file"), start,
                                              self.tr("Certificates (*.pem *.crt *.cer);;All files (*)"))
        if path:
            self.ca_bundle.setText(path)

    def apply_action(self, action) -> None:
        """A remedy's button (app.gui.pages._common.ErrorPanel) sent the user here: apply what it
        can (a Python version, the installer, the system certificates) and put the cursor on the
        control to change; the checks then run again."""
        from app.core.remedies import ActionKind

        k = action.kind
        focus: QWidget = self.location
        if k is ActionKind.CHOOSE_PYTHON:
            focus = self.python
            idx = next((i for i in range(self.python.count())
                        if action.value and action.value in self.python.itemText(i)), -1)
            if idx >= 0:
                self.python.setCurrentIndex(idx)
            else:  # "Choose another Python…": the list itself, open, in front of the user
                self._open_list = True
        elif k is ActionKind.USE_INSTALLER:
            (self.r_pip if action.value == "pip" else self.r_uv).setChecked(True)
            focus = self.r_pip if action.value == "pip" else self.r_uv
        elif k in (ActionKind.SET_PROXY, ActionKind.SET_CA_BUNDLE, ActionKind.SWITCH_SOURCE):
            self.advanced.set_expanded(True)
            focus = {ActionKind.SET_PROXY: self.proxy, ActionKind.SET_CA_BUNDLE: self.ca_bundle}.get(k, self.index_url)
            if k is ActionKind.SET_CA_BUNDLE and action.value:
                self.ca_bundle.setText(action.value)
            if k is ActionKind.SWITCH_SOURCE and action.value:
                self.index_url.setText(action.value)
        focus.setFocus()
        if isinstance(focus, QLineEdit):
            focus.selectAll()
        # the control to change stays in view: the verdict's way out (further down) is not scrolled to
        # until the user scrolls (the Python list was out of view when the new checks' verdict came)
        self._landed = focus
        self._follow_way_out = False
        self._way_out_timer.start()
        self.inputs_changed()

    def env_path(self) -> Path:
        """The folder the fields name, normalised (``a/../b`` is ``b``: the target line shows where it
        really goes)."""
        loc = self._location_path()
        if self.existing.isChecked():
            return loc
        return Path(os.path.normpath(loc / self.name.text().strip()))  # (an empty name: name_problem says so)

    def _location_path(self) -> Path:
        return Path(os.path.normpath(Path(self.location.text().strip() or str(default_location())).expanduser()))

    def name_problem(self) -> str | None:
        """Why the Name field cannot name a new folder inside Location (``a/b``, ``../x``), or None."""
        if self.existing.isChecked():
            return None
        name = self.name.text().strip()
        if not name:
            return self.tr("Give the environment a name: the name of the new folder inside {location}, such as "
                           "{example}.").format(location=self.location.text().strip(),
                                                example=free_name(self._location_path()))
        if any(sep in name for sep in ("/", "\\")) or name in (".", "..") or "\0" in name:
            return self.tr("The name “{name}” is not one folder name: it would put the environment "
                           "outside {location}. Use a plain name such as torch-env; to put it somewhere else, "
                           "change Location.").format(name=name, location=self.location.text().strip())
        return None

    def kind_installer(self) -> tuple[str, str]:
        if self.r_conda.isChecked() and self._conda_tool is not None:
            return "conda", "pip"
        if self.r_pip.isChecked():
            return "venv", "pip"
        return "venv", "uv"

    def build_request(self):
        from app.core.install import InstallRequest

        kind, installer = self.kind_installer()
        problem = self.name_problem()
        if problem is not None:
            raise BadInput(problem)
        # Folders may hold spaces ("C:\\Users\\Jane Doe\\wheels"): several are separated by ";" only.
        find_links = tuple(p.strip() for p in self.find_links.text().split(";") if p.strip())
        extra = tuple(p for p in re.split(r"[\s,;]+", self.extra_index.text().strip()) if p)
        bundle = self.bundle.text().strip() or None
        return InstallRequest(env_path=self.env_path(), kind=kind, installer=installer,
                              python=self.python.currentData() or None,
                              recommendation=self.state.session.recommendation,
                              index_url=self.index_url.text().strip() or None,
                              extra_index_urls=extra, find_links=find_links,
                              bundle=folder_path(bundle) if bundle else None,
                              existing=self.existing.isChecked(),
                              default_index_url=self.mirror.text().strip() or None,
                              proxy=self.proxy.text().strip() or None,
                              ca_bundle=self.ca_bundle.text().strip() or None,
                              mirrors=self.mirrors_setting())

    def inputs_changed(self, *_) -> None:
        self._generation += 1
        self._passed = False
        self.state.session.invalidate(Stage.PLAN)  # the approved plan was for the old inputs
        self._update_target()
        self._render_checks()
        self.completeChanged.emit()
        self._debounce.start()

    def _update_target(self) -> None:
        path = self.env_path()
        if self.existing.isChecked():
            text = self.tr("PyTorch will be added to the environment in {path}.").format(path=path)
        else:
            text = self.tr("The new environment will be created in {path}.").format(path=path)
        if self._free_for == path and self.free_space_mb is not None:
            text += " " + self.tr("{free} free there.").format(free=human_mb(self.free_space_mb))
        elif self._free_for != path:
            self._ask_free_space(path)
        self.target_label.setText(text)

    # ---- free space, off the GUI thread ----
    def _ask_free_space(self, path: Path) -> None:
        self._free_wanted = path
        if self._free_task is not None:
            return  # the one running reads an older path; its end asks again for this one
        def read(_on_event: object, _cancel: object) -> tuple[Path, int | None]:
            return path, free_mb(path)

        task = Task(read, self, name="free-space")
        task.succeeded.connect(self._on_free_space)
        task.finished.connect(self._free_task_finished)
        self._free_task = task
        task.start()

    def _on_free_space(self, result: tuple[Path, int | None]) -> None:
        path, free = result
        self._free_for, self.free_space_mb = path, free
        if path == self.env_path():
            self._update_target()

    def _free_task_finished(self) -> None:
        self._free_task = None
        if self._free_wanted is not None and self._free_wanted != self._free_for:
            self._ask_free_space(self._free_wanted)

    # ---- pre-flight ----
    def run_preflight(self) -> None:
        self._debounce.stop()
        gen = self._generation
        try:
            request = self.build_request()
        except Exception as exc:  # a bad path or value in a field: show it as a failed check
            self._on_checked(gen, (None, [_refused("input", exc)]))
            return
        session = self.state.session

        def fn(on_event, cancel) -> tuple[Planned | None, list[Check]]:
            nonlocal request
            try:
                # what the sources hold bounds the recommendation: the newest build they offer
                rec = session.fit_sources(request)
                if rec is not request.recommendation:
                    request = dataclasses.replace(request, recommendation=rec)
                planned = session.check_plan(request)  # records nothing: this page approves it below
            except Exception as exc:  # BadInput: a check that failed, with its message
                return None, [_refused("plan", exc, request.env_path)]
            return planned, list(planned.checks)

        task = Task(fn, self, name="preflight")
        task.succeeded.connect(lambda result, g=gen: self._on_checked(g, result))
        task.failed.connect(lambda err, g=gen: self._on_checked(g, (None, [_refused("preflight", err)])))
        task.finished.connect(lambda t=task: self._task_finished(t))
        self._tasks.append(task)
        task.start()
        self._render_checks()

    def _task_finished(self, task: Task) -> None:
        if task in self._tasks:
            self._tasks.remove(task)
        self._render_checks()
        self.completeChanged.emit()
        self._open_list_when_idle()

    def _open_list_when_idle(self) -> None:
        """"Choose another Python…": the list opens once it is filled for the new checks and the page's work
        has ended (the wizard redraws its buttons at each end of work, which closes an open list)."""
        if self._open_list and not self.is_busy() and self.isVisible():
            self._open_list = False
            self.python.setFocus()
            self.python.showPopup()

    def _on_checked(self, gen: int, result: tuple[Planned | None, list[Check]]) -> None:
        if gen != self._generation:
            return  # the inputs changed meanwhile; a newer run is coming
        planned, checks = result
        self._planned = planned
        self._result_generation = gen
        self.check_results = list(checks)
        self._passed = planned is not None and bool(checks) and planned.approvable
        if planned is not None and self._passed:
            try:
                self.state.session.approve(planned)  # the approval point: this plan is the one installed
            except UserError as err:  # made for an earlier recommendation: not this page's plan any more
                self._passed = False
                self.check_results.append(_refused("plan", err))
        self._render_checks()
        if self.state.session.recommendation is not self._pythons_for:
            self._fill_pythons()  # the sources changed the build (a wheel folder): its Pythons, its note
        self._fill_mirrors()
        self._render_sources()
        if self._origin_failed() and self.mirror_route is None:  # offer the mirrors, as a choice
            self.run_mirror_check()
        self.completeChanged.emit()
        self.preflight_done.emit(self._passed)

    def is_busy(self) -> bool:
        # a task leaves the list when its "finished" reaches the GUI thread
        return bool(self._tasks) or self._mirror_task is not None

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        if timeout_ms is not None:
            timeout = timeout_ms / 1000
        self._debounce.stop()
        done = True
        for t in list(self._tasks):
            t.cancel()
            done = t.wait(timeout) and done
        self._tasks.clear()
        if self._free_task is not None:
            self._free_wanted = None
            done = self._free_task.wait(timeout) and done
        if self._mirror_task is not None:
            self._mirror_task.cancel()
            done = self._mirror_task.wait(timeout) and done
        return done

    @property
    def checks(self) -> list[tuple[str, str, str, str]]:
        """``(name, status ok|warning|error, message, hint)`` of each check, in the wizard's language
        (the hints as the wizard tells them: its own fields, not command-line options)."""
        lang = current_language()
        return [(c.name, c.status, render(c.message, lang), self._gui_hint(c) or render(c.hint, lang))
                for c in self.check_results]

    def _gui_hint(self, check: Check) -> str:
        """The wizard's words for the hints that name command-line options in the core ("" : the core's)."""
        if not check.blocking:
            return ""
        if check.name == "reach:torch index" and check.code == "preflight.reach_failed":
            return self.tr("Check the network, or the proxy under \"Advanced\"; choose a verified mirror under "
                           "\"Download PyTorch from\" (\"Check the mirrors\"); or install from files: the wheel "
                           "folder or offline bundle fields below.")
        if check.name in ("reach:package index", "reach:extra index") and check.code == "preflight.reach_failed":
            return self.tr("Check the network, or the proxy and package mirror under \"Advanced\"; or install from "
                           "files: an offline bundle (fields below) needs no network at all.")
        if check.name == "closure":
            return self.tr("Put those wheel files into the folder, or choose an offline bundle below (made by this "
                           "assistant on a computer with internet).")
        return ""

    def _download_blocked(self) -> bool:
        """A server the plan downloads from cannot be reached (or has no file for this computer)."""
        return any(c.blocking and c.name in ("reach:torch index", "reach:package index", "reach:extra index")
                   for c in self.check_results)

    def isComplete(self) -> bool:
        # (not while the pre-flight's task has not finished: until then the page still shows "Checking…")
        return (self._passed and self._result_generation == self._generation and not self._debounce.isActive()
                and not self._tasks and self.state.session.approved_plan is not None)

    def validatePage(self) -> bool:
        return self.isComplete()

    # ---- rendering ----
    def _render_checks(self) -> None:
        clear_layout(self.checks_box)
        # the verdict waits for the pre-flight only: the mirror check has its own line ("Checking the mirrors…")
        pending = self._debounce.isActive() or bool(self._tasks) or self._result_generation != self._generation
        self.busy.setVisible(pending)
        self._render_command(None if pending else self._planned)
        if pending:
            self.result_banner.hide()
            self.plan_label.hide()
            return
        for check, (name, status, message, hint) in zip(self.check_results, self.checks, strict=True):
            self.checks_box.addWidget(StatusRow(status, message or name, hint if status != "ok" else ""))
            if status != "ok" and check.actions:
                self.checks_box.addWidget(self._action_buttons(check))
        way_out = (not self._passed and self._download_blocked() and not self.find_links.text().strip()
                   and not self.bundle.text().strip())
        if self._passed:
            self.result_banner.set_text(self.tr("Everything is ready. Press Install to create the environment "
                                                "and install PyTorch."), "ok")
        elif way_out:
            text = self.tr("PyTorch cannot be downloaded from this computer now (the checks above say why). Install "
                           "it from files instead: choose a folder with the PyTorch wheel files, or an offline "
                           "bundle, in \"Install from files on this computer\" just below.")
            if self._mirror_task is not None:
                text += " " + self.tr("The mirrors are being checked meanwhile.")
            elif self.offer_banner.isVisible():
                text += " " + self.tr("Or choose a verified mirror under \"Download PyTorch from\".")
            self.result_banner.set_text(text, "error")
        else:
            self.result_banner.set_text(self.tr("Fix the problems above (or change the choices) to go on."), "error")
        self.result_banner.setVisible(bool(self.check_results))
        verdict = self.result_banner.text() if way_out else ""
        if verdict and verdict != self._way_out and self._landed is None:  # the way out comes into view (anew)
            self._follow_way_out = True
            self._way_out_timer.start()
        self._way_out = verdict
        plan = self._planned.plan if self._planned is not None else None
        estimate_mb = plan.estimate_mb if plan is not None else 0
        notes: list[Text] = [*plan.notes, *plan.python_notes] if plan is not None else []
        # "Why torch X" is said once, under "Where PyTorch comes from" (it was there and here, twice)
        notes = [n for n in notes if getattr(n, "code", "") != "install.note_why_version"]
        lines = []
        if estimate_mb:
            lines.append(self.tr("About {size} will be installed.").format(size=human_mb(estimate_mb)))
        lines += [render(n, current_language()) for n in notes]
        self.plan_label.setText("\n".join(lines))
        self.plan_label.setVisible(bool(lines) and self._passed)

    def _action_buttons(self, check: Check) -> QWidget:
        """The buttons of a failed check's actions (a shorter folder, the VC++ runtime's installer)."""
        from PySide6.QtWidgets import QPushButton

        box = QWidget()
        box.setObjectName(f"actions:{check.name}")
        row = QHBoxLayout(box)
        row.setContentsMargins(26, 0, 0, 4)  # under the row's text, past its icon
        lang = current_language()
        for action in check.actions:
            b = QPushButton(render(action.label(), lang))
            b.setToolTip(render(action.tooltip(), lang))
            b.setAccessibleName(render(action.label(), lang))
            b.clicked.connect(lambda _=False, a=action: self.apply_check_action(a))
            row.addWidget(b)
        row.addStretch(1)
        return box

    def apply_check_action(self, action) -> None:
        """A pre-flight check's button: use the folder offered, open the official page, or run the
        Visual C++ runtime's installer the user picks (after asking)."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from app.core.remedies import ActionKind

        if action.kind is ActionKind.CHOOSE_OTHER_LOCATION and action.value and not self.existing.isChecked():
            offered = Path(action.value)
            self.location.setText(str(offered.parent))
            self.name.setText(offered.name)
        elif action.kind is ActionKind.RUN_VCREDIST:
            self.run_vcredist(action.value or None)
        elif action.step == "outside" and action.url:
            QDesktopServices.openUrl(QUrl(action.url))
        else:
            self.apply_action(action)

    def run_vcredist(self, path: str | None = None) -> None:
        """Ask for Microsoft's vc_redist.x64.exe (unless given), confirm the exact command, run it
        in a Task, then check again."""
        from PySide6.QtWidgets import QMessageBox

        from app.core.install.winchecks import VCREDIST_ARGS, VCREDIST_URL, run_vcredist
        from app.core.shells import CMD, join

        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, self.tr("Choose vc_redist.x64.exe (from {url})").format(url=VCREDIST_URL),
                str(Path.home() / "Downloads"), self.tr("Visual C++ runtime installer (vc_redist*.exe);;Programs "
                                                         "(*.exe)"))
        if not path:
            return
        answer = QMessageBox.question(
            self, self.tr("Install the Visual C++ runtime"),
            self.tr("The assistant will run:\n\n{command}\n\nWindows asks for an administrator's permission. "
                    "Go on?").format(command=join([path, *VCREDIST_ARGS], CMD)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return

        def fn(_on_event: object, cancel) -> object:
            return run_vcredist(path, cancel=cancel)

        task = Task(fn, self, name="vcredist")
        task.succeeded.connect(self._vcredist_done)
        task.finished.connect(lambda t=task: self._task_finished(t))
        self._tasks.append(task)
        task.start()
        self._render_checks()

    def _vcredist_done(self, result) -> None:
        self.vcredist_result = result
        self.result_banner.set_text(render(result.message, current_language()), "ok" if result.ok else "error")
        self.inputs_changed()  # check again: the runtime's check reads the machine anew

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.body_widget and self._way_out \
                and self._follow_way_out and shiboken6.isValid(self._way_out_timer):  # (not while the page goes)
            self._way_out_timer.start()  # rows came or went above the verdict
        return super().eventFilter(watched, event)

    def _user_scrolled(self, _action: int) -> None:
        self._follow_way_out = False
        self._landed = None

    def _show_way_out(self) -> None:
        self.body.activate()  # the banner and the fields have their places before they are scrolled to
        landed = self._landed
        if landed is not None and shiboken6.isValid(landed):  # a remedy sent the user to this control: it stays
            self.scroll_area.ensureWidgetVisible(self.python_note if landed is self.python else landed, 0, 0)
            self.scroll_area.ensureWidgetVisible(landed, 0, 40)
            return
        self.scroll_area.ensureWidgetVisible(self.files_box, 0, 0)
        self.scroll_area.ensureWidgetVisible(self.result_banner, 0, 0)

    def _render_command(self, planned: Planned | None) -> None:
        """The full commands the plan runs, exactly as the Install page will run them."""
        lines: list[tuple[str, ...]] = []
        if planned is not None:
            try:
                lines = planned.plan.shown_commands()
            except UserError:  # no interpreter yet: the checks say why
                lines = []
        self.command.setPlainText(commands_text(lines))
        for w in (self.cmd_title, self.command, self.cmd_row):
            w.setVisible(bool(lines))

    def retranslate_page(self) -> None:
        self.kind_title.setText(self.tr("How to make it"))
        self.r_uv.setText(self.tr("&uv virtual environment (fastest; recommended)"))
        self.r_pip.setText(self.tr("&Python venv with pip (the standard tools)"))
        tool = self._conda_tool.name if self._conda_tool is not None else "conda"
        self.r_conda.setText(self.tr("&conda environment (with {tool})").format(tool=tool))
        set_texts(self.existing, self.tr("&Add to an existing environment instead of creating a new one"),
                  name=self.tr("Add to an existing environment"))
        set_field_texts(self.l_location, self.tr("Environment &folder:") if self.existing.isChecked()
                        else self.tr("&Location:"), self.location, name=self.tr("Location"))
        set_field_texts(self.l_name, self.tr("Na&me:"), self.name, name=self.tr("Environment name"))
        set_field_texts(self.l_python, self.tr("P&ython:"), self.python,
                        name=self.tr("Python version for the environment"))
        for b in (self.browse, self.browse_links, self.browse_bundle):
            b.setText(self.tr("Browse…"))
        self.browse.setAccessibleName(self.tr("Choose the location"))
        self.browse_links.setAccessibleName(self.tr("Choose the local wheels folder"))
        self.browse_bundle.setAccessibleName(self.tr("Choose the offline bundle folder"))
        self.advanced.set_title(self.tr("Advanced: package index, mirror and proxy"))
        set_field_texts(self.l_index, self.tr("Inde&x URL:"), self.index_url, name=self.tr("Index URL"),
                        placeholder=self.tr("default: the PyTorch index for the chosen build"))
        set_field_texts(self.l_extra, self.tr("Ex&tra index URLs:"), self.extra_index, name=self.tr("Extra index URLs"),
                        placeholder=self.tr("separated by spaces"))
        self.files_title.setText(self.tr("Install from files on this computer"))
        self.files_note.setText(self.tr("No internet here? A folder with the PyTorch wheel files (.whl) and the "
                                        "packages they need, or an offline bundle made by this assistant on a "
                                        "computer with internet, installs without it."))
        set_field_texts(self.l_links, self.tr("Local &wheels folder:"), self.find_links,
                        name=self.tr("Local wheels folder"),
                        placeholder=self.tr("a folder with .whl files; several: separate them with ;"))
        set_field_texts(self.l_bundle, self.tr("Offline bundl&e folder:"), self.bundle,
                        name=self.tr("Offline bundle folder"),
                        placeholder=self.tr("install without the internet from a bundle"))
        set_field_texts(self.l_mirror, self.tr("Package mi&rror:"), self.mirror, name=self.tr("Package mirror"),
                        placeholder=self.tr("replaces PyPI for the other packages, e.g. a university mirror"))
        set_field_texts(self.l_proxy, self.tr("Pr&oxy:"), self.proxy, name=self.tr("Proxy"),
                        placeholder=self.tr("http://proxy.example.org:3128 (default: HTTPS_PROXY)"))
        set_field_texts(self.l_ca, self.tr("CA certificate&s:"), self.ca_bundle, name=self.tr("CA certificates file"),
                        placeholder=self.tr("a .pem file, or \"system\" for this computer's certificates"))
        set_texts(self.browse_ca, self.tr("Browse…"), name=self.tr("Choose the CA certificates file"))
        self.sources_title.setText(self.tr("Where PyTorch comes from"))
        set_field_texts(self.l_mirror_choice, self.tr("&Download PyTorch from:"), self.mirror_choice,
                        name=self.tr("Download PyTorch from"))
        set_texts(self.check_mirrors, self.tr("Chec&k the mirrors"),
                  tip=self.tr("Ask every mirror of this build whether it has the exact file, with the same SHA-256, "
                              "and how fast it answers"))
        if self._initialized:
            self._fill_mirrors()  # the items in the new language; the selection stays
        self._render_sources()
        if self._initialized:
            self._fill_pythons()  # "(recommended)" and the reasons in the new language; the selection stays
        self.checks_title.setText(self.tr("Checks before installing"))
        self.cmd_title.setText(self.tr("The command that will run"))
        self.command.setAccessibleName(self.tr("The commands the installation runs"))
        set_texts(self.copy_command, self.tr("Copy command"), tip=self.tr("Copy the command to the clipboard"))
        self.setButtonText(QWizard.WizardButton.NextButton, self.tr("&Install"))
        self.busy.set_text(self.tr("Checking…"))
        self._update_target()
        self._render_checks()  # the checks' messages and hints, now in the new language

