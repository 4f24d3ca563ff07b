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
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, QTimer, Signal
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

from app.core.base.actions import Action, ActionKind
from app.core.base.disk import existing_ancestor, free_mb
from app.core.base.errors import BadInput, UserError, hint_text
from app.core.base.text import msg
from app.core.detection.system import ToolInfo
from app.core.install import Check
from app.core.pipeline.session import Planned, Stage
from app.core.recommend.types import NoCombination
from app.gui.build import (
    add_all,
    button,
    no_wheel_unless_focused,
    set_field_texts,
    set_texts,
)
from app.gui.early import ahead_of, early_downloads
from app.gui.i18n import current_language
from app.gui.pages._common import early_label, show_early
from app.gui.pages.base import BasePage
from app.gui.pages.environment_parts import MirrorChoice, NetworkFields, PreflightView, PythonChoice
from app.gui.state import WizardState
from app.gui.widgets import WrapLabel, heading, human_mb, muted
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


class EnvironmentPage(NetworkFields, MirrorChoice, PreflightView, PythonChoice, BasePage):

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
        self._released_python: str | None = None  # a Python chosen under Change…, set aside after it failed
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

        advanced = self._build_network()
        self.early_note = early_label()  # what the early downloads are doing (a line under the checks)
        early_downloads(self.state).changed.connect(lambda: show_early(self.early_note, self.state))
        sources = self._build_sources()  # where PyTorch comes from (mirrors as a choice)
        checks = self._build_checks()  # the pre-flight's checklist and the plan's commands
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
        self.body_widget = self.scroll_area.widget()
        assert self.body_widget is not None  # (BasePage's scroll area holds the body)
        self.body_widget.installEventFilter(self)
        self.scroll_area.verticalScrollBar().actionTriggered.connect(self._user_scrolled)

        self.free_space_mb: int | None = None
        self._free_for: Path | None = None  # the path free_space_mb was read for
        self._free_wanted: Path | None = None
        self._free_task: Task | None = None

        add_all(self.body, self.kind_title, kinds, self.form, self.target_label, advanced, *sources, *checks,
                self.early_note, self.files_box, 1)

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
                self._release_python_choice()
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

    def _release_python_choice(self) -> None:
        """A Python chosen under Change… bound the build to that one Python, so the list greyed every
        other. The install with it failed and the user asks for another: the choice is set aside (the
        other wishes stay) and the build is recommended again in the pre-flight's worker, so the list
        offers every Python the build supports; the note under the list says so."""
        from app.core.recommend import Choices

        session = self.state.session
        ch = session.choices
        if ch is None or not ch.python:
            return
        rest = dataclasses.replace(ch, python=None)
        early_downloads(self.state).want(None)  # the build being fetched early may not be the one planned now
        session.choose(None if rest == Choices() else rest)
        self._released_python = ch.python
        self._fill_pythons()
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
        return InstallRequest(env_path=self.env_path(), kind=kind, installer=installer,
                              python=self.python.currentData() or None,
                              recommendation=self.state.session.recommendation, sources=self.sources(),
                              existing=self.existing.isChecked())

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
                if session.recommendation is None and session.system is not None:
                    session.recommend()  # the choices changed here ("Choose another Python…")
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

    def _early_toggled(self, on: bool) -> None:
        """The early-downloads setting: kept in settings.toml; on, the approved plan's wheels start."""
        early = early_downloads(self.state)
        early.set_enabled(on)
        if on:
            early.want(ahead_of(self.state.session, self.state.session.approved_plan))

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
                plan = self.state.session.approve(planned)  # the approval point: this plan is the one installed
                early_downloads(self.state).want(ahead_of(self.state.session, plan))  # its wheels, while read
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

    def isComplete(self) -> bool:
        # (not while the pre-flight's task has not finished: until then the page still shows "Checking…")
        return (self._passed and self._result_generation == self._generation and not self._debounce.isActive()
                and not self._tasks and self.state.session.approved_plan is not None)

    def validatePage(self) -> bool:
        return self.isComplete()

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
        self._retranslate_network()
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
        self._retranslate_sources()
        if self._initialized:
            self._fill_mirrors()  # the items in the new language; the selection stays
        self._render_sources()
        if self._initialized:
            self._fill_pythons()  # "(recommended)" and the reasons in the new language; the selection stays
        self._retranslate_checks()
        self.setButtonText(QWizard.WizardButton.NextButton, self.tr("&Install"))
        self._update_target()
        self._render_checks()  # the checks' messages and hints, now in the new language

