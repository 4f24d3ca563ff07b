"""Page 3: the recommended PyTorch build, why, what the user's choices cost, the exact command,
and "Change…".

The recommendation comes from the session (``session.recommend()``: the engine with the
user's wishes and what the sources hold) run in a :class:`Task`. Every wish is a constraint of
the engine, never a patch on its answer: the page shows the newest combination that satisfies
them all and what each one cost; when none does, it says which wish to drop, as buttons that
apply that choice (never an error page). "Change…" offers only entries that keep a working
combination (:func:`app.core.recommend.options` over the current wishes): the others are
greyed with the engine's reason, and a one-click "nearest working choice" restores one.

The command shown is the full one that will run (environment, installer, packages, index,
wheel folders, options; credentials masked): the approved plan's once there is one, else the
plan the defaults would make from this recommendation.

The engine's sentences are texts (``app.core.base.text``): the page renders them in the wizard's
current language each time it draws, so a language switch simply draws again.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.base.errors import BadInput, UserError
from app.core.base.text import Text
from app.core.compat.freshness import wizard_notes
from app.gui.build import add_all, button, clear_layout, command_view, no_wheel_unless_focused, set_texts
from app.gui.early import ahead_of, early_downloads
from app.gui.i18n import current_language, render, render_hint
from app.gui.pages._commands import command_text, commands_text
from app.gui.pages._common import early_label, show_early
from app.gui.pages.base import BasePage
from app.gui.pages.environment import DEFAULT_NAME, default_location
from app.gui.state import WizardState
from app.gui.widgets import Banner, BusyLine, CopyButton, StatusRow, heading, muted
from app.gui.worker import Task

if TYPE_CHECKING:  # the engine is imported when the page first asks it
    from app.core.detection.system import SystemReport
    from app.core.install import InstallPlan
    from app.core.recommend import Choices, Entry, NoCombination, Options, Recommendation

__all__ = ["ChangeDialog", "RecommendationPage", "backend_words", "command_text", "commands_text", "options_for",
           "preview_plans"]

EXTRA_PACKAGES = ("torchvision", "torchaudio")
INSTALLERS = ("uv", "pip")


def _name(req: str) -> str:
    from app.core.base.requirements import requirement_name

    try:
        return requirement_name(req) or req
    except BadInput:
        return req


def options_for(report: SystemReport, rec: Recommendation | None, lang: str = "en") -> list[dict]:
    """Every (backend, variant, torch) the engine knows for this machine, valid or not, with why.

    From ``valid_choices(report)`` plus the recommendation's own ``alternatives``; the current
    choice is always included and valid. The reasons are rendered in ``lang``.
    """
    from app.core.recommend import valid_choices

    seen: dict[tuple[str, str | None, str | None], dict] = {}

    def add(backend: str, variant: str | None, torch_version: str | None, valid: bool, why: Text) -> None:
        key = (str(backend), variant, torch_version)
        if key in seen and seen[key]["valid"]:
            return
        seen[key] = {"backend": str(backend), "variant": variant, "torch_version": torch_version,
                     "valid": valid, "why": render(why, lang)}

    if rec is not None:
        add(rec.backend, rec.variant, rec.torch_version, True, "")
    try:
        choices = valid_choices(report)
    except BadInput:  # a report the engine cannot read: only the recommendation's own alternatives
        choices = None
    for o in choices.options if choices else ():
        add(o.backend, o.variant, o.torch_version, o.valid, o.why)
    for alt in rec.alternatives if rec is not None else ():
        add(alt.backend, alt.variant, alt.torch_version, alt.valid, alt.why)
    known = {o["backend"] for o in seen.values()}
    for b in choices.backends if choices else ():  # backends with no build at all here: greyed
        if not b.valid and b.name not in known:
            add(b.name, None, None, False, b.why)
    return list(seen.values())


def backend_words(backend: str | None, variant: str | None) -> str:
    """Plain words for a backend/variant: "CUDA 12.6 (NVIDIA graphics card)"."""
    v = variant or ""
    if backend == "cuda":
        ver = v[2:] if v.startswith("cu") else v
        if ver.isdigit() and len(ver) >= 3:
            ver = f"{ver[:-1]}.{ver[-1]}"
        return QCoreApplication.translate("RecommendationPage", "CUDA {version} (NVIDIA graphics card)").format(
            version=ver)
    if backend == "rocm":
        return QCoreApplication.translate("RecommendationPage", "ROCm {version} (AMD graphics card)").format(
            version=v.replace("rocm", ""))
    if backend == "mps":
        return QCoreApplication.translate("RecommendationPage", "Metal (Apple graphics)")
    if backend == "xpu":
        return QCoreApplication.translate("RecommendationPage", "XPU (Intel graphics card)")
    if backend == "cpu":
        return QCoreApplication.translate("RecommendationPage", "the processor only (CPU)")
    return backend or "?"


def default_env_path() -> Path:
    """Where the Environment page creates the environment unless the user says otherwise."""
    return default_location() / DEFAULT_NAME


def preview_plans(rec: Recommendation, report: SystemReport | None, env_path: Path | None = None
                  ) -> dict[str, InstallPlan]:
    """The plan the defaults would make from ``rec`` for each installer (nothing is checked or written);
    an installer whose plan is refused (the default folder already is an env …) is left out."""
    from app.core.install import InstallRequest, plan

    out: dict[str, InstallPlan] = {}
    for installer in INSTALLERS:
        try:
            out[installer] = plan(InstallRequest(env_path=env_path or default_env_path(), installer=installer,
                                                 recommendation=rec), report)
        except UserError:
            continue
    return out


def _older(have: str | None, than: str) -> bool:
    """``have`` is an older torch than ``than`` ("2.13.0+cpu" < "2.15.0")."""
    from app.core.compat.data import version_tuple

    return bool(have) and version_tuple(str(have).split("+")[0]) < version_tuple(than.split("+")[0])


class ChangeDialog(QDialog):
    """Backend, build, torch version, Python and companions as wishes for the engine.

    ``ask(choices)`` returns :class:`~app.core.recommend.Options`: every selector's entries
    under the current wishes. Only entries that keep a working combination can be picked; the
    others are greyed with the reason (tooltip and a visible list). OK is enabled only while
    the whole selection gives a build; "nearest working choice" restores one when it does not.
    """

    def __init__(self, ask: Callable[[Choices], Options], current: Choices | None = None,
                 parent: QWidget | None = None) -> None:
        from app.core.recommend import Choices

        super().__init__(parent)
        self._ask = ask
        self.choices: Choices = current or Choices()
        self.opts: Options | None = None
        self.backend, self.variant, self.torch, self.python = QComboBox(), QComboBox(), QComboBox(), QComboBox()
        no_wheel_unless_focused(self.backend, self.variant, self.torch, self.python)
        # Read-only text that scrolls: some machines have many greyed choices, each with a reason.
        self.why_not = QPlainTextEdit()
        self.why_not.setReadOnly(True)
        self.why_not.setFrameShape(QFrame.Shape.NoFrame)
        pal = self.why_not.palette()  # the dialog's own colours (built fresh each time: follows dark mode)
        pal.setColor(QPalette.ColorRole.Base, pal.color(QPalette.ColorRole.Window))
        pal.setColor(QPalette.ColorRole.Text, pal.color(QPalette.ColorRole.PlaceholderText))
        self.why_not.setPalette(pal)
        self.why_not.setMinimumHeight(110)
        self.why_not.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.why_not.setTabChangesFocus(True)
        self.gives = muted(QLabel())
        self.gives.setWordWrap(True)
        self.conflict = Banner("warning")
        self.nearest = button(self.use_nearest)
        self.pkg_boxes = {name: QCheckBox(name) for name in EXTRA_PACKAGES}
        self.pkg_notes = {name: muted(QLabel()) for name in EXTRA_PACKAGES}
        for note in self.pkg_notes.values():
            note.setWordWrap(True)
        self.other = QLineEdit()
        self.other.setPlaceholderText("numpy pandas")
        self._other_timer = QTimer(self)
        self._other_timer.setSingleShot(True)
        self._other_timer.setInterval(400)
        self._other_timer.timeout.connect(self._other_changed)
        form = QFormLayout()
        self.l_backend, self.l_variant, self.l_torch, self.l_python, self.l_pkgs, self.l_other = (
            QLabel() for _ in range(6))
        for label, combo in ((self.l_backend, self.backend), (self.l_variant, self.variant),
                             (self.l_torch, self.torch), (self.l_python, self.python)):
            form.addRow(label, combo)
            label.setBuddy(combo)
        pk = QVBoxLayout()
        for name, box in self.pkg_boxes.items():
            line = QHBoxLayout()
            line.addWidget(box)
            line.addWidget(self.pkg_notes[name], 1)
            pk.addLayout(line)
        form.addRow(self.l_pkgs, pk)
        form.addRow(self.l_other, self.other)
        self.l_other.setBuddy(self.other)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        # our own words (a standard "Restore Defaults" button is renamed by Qt on every language change)
        self.restore_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.ResetRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.restore_button.clicked.connect(self._restore)
        self.restored = False
        col = QVBoxLayout(self)
        add_all(col, form, self.gives, self.conflict, self.nearest, (self.why_not, 1), self.buttons)
        # 600 px where the screen has them; a 1024x768 screen at 200 % has 512 (the dialog was wider than it)
        screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
        room = screen.availableGeometry().width() - 40 if screen is not None else 600
        self.setMinimumWidth(max(320, min(600, room)))

        self.backend.currentIndexChanged.connect(lambda _i: self._picked("backend", self.backend))
        self.variant.currentIndexChanged.connect(lambda _i: self._picked("variant", self.variant))
        self.torch.currentIndexChanged.connect(lambda _i: self._picked("torch", self.torch))
        self.python.currentIndexChanged.connect(lambda _i: self._picked("python", self.python))
        for name, box in self.pkg_boxes.items():
            box.toggled.connect(lambda on, name=name: self._ticked(name, on))
        self.other.textEdited.connect(lambda _t: self._other_timer.start())
        self.other.editingFinished.connect(self._other_changed)
        self.other.setText(" ".join(p for p in self.choices.packages or () if _name(p) not in EXTRA_PACKAGES
                                    and _name(p) != "torch"))
        self.retranslate()

    # ---- the wishes ----
    def _set(self, choices: Choices) -> None:
        """Take ``choices`` and draw every selector for them."""
        self.choices = choices
        self.opts = self._ask(choices)
        self._draw()

    def _picked(self, field: str, combo: QComboBox) -> None:
        value = combo.currentData() or None
        ch = self.choices
        if field == "backend":
            new = replace(ch, backend=value, variant=None)
            new = new if self._ask(new).recommendation is not None else replace(new, torch=None)
        elif field == "variant":
            new = replace(ch, variant=value)
            new = new if self._ask(new).recommendation is not None else replace(new, torch=None)
        elif field == "torch":
            new = replace(ch, torch=value)
        else:
            new = replace(ch, python=value)
        self._set(new)

    def _ticked(self, name: str, on: bool) -> None:
        rest = [p for p in self.choices.packages or () if _name(p) != name]
        self._set(replace(self.choices, packages=tuple([*rest, name] if on else rest) or None))

    def _other_changed(self) -> None:
        self._other_timer.stop()
        kept = [p for p in self.choices.packages or () if _name(p) in EXTRA_PACKAGES]
        typed = self.other.text().split()
        if sorted(typed) == sorted(p for p in self.choices.packages or () if _name(p) not in EXTRA_PACKAGES):
            return
        self._set(replace(self.choices, packages=tuple(kept + typed) or None))

    def use_nearest(self) -> None:
        """The nearest working combination (the engine's first way out)."""
        if self.opts is not None and self.opts.nearest is not None:
            self._set(self.opts.nearest)
            self.other.setText(" ".join(p for p in self.choices.packages or () if _name(p) not in EXTRA_PACKAGES))

    def select(self, backend, variant, torch_version) -> None:
        """Pick these entries where they may be picked; the others fall back to the engine's choice."""
        self._set(replace(self.choices, backend=None, variant=None, torch=None))
        for field, value in (("backend", backend), ("variant", variant), ("torch", torch_version)):
            combo = {"backend": self.backend, "variant": self.variant, "torch": self.torch}[field]
            i = combo.findData(str(value) if value else "")
            if i >= 0 and self._enabled(combo, i) and i != combo.currentIndex():
                combo.setCurrentIndex(i)

    def works(self) -> bool:
        return self.opts is not None and self.opts.recommendation is not None

    # ---- drawing ----
    @staticmethod
    def _enabled(combo: QComboBox, i: int) -> bool:
        model = combo.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        return model.item(i).isEnabled()

    def _fill(self, combo: QComboBox, entries: Sequence[Entry], label: Callable[[Entry], str],
              current: str | None) -> None:
        lang = current_language()
        combo.blockSignals(True)
        combo.clear()
        model = combo.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        for e in entries:
            text = label(e)
            if e.value is None and e.valid:
                text += f"  ({render(e.why, lang)})"
            combo.addItem(text, e.value or "")
            item = model.item(combo.count() - 1)
            why = render(e.why, lang)
            item.setToolTip(why)
            item.setData(why, Qt.ItemDataRole.AccessibleDescriptionRole)
            if not e.valid:
                item.setEnabled(False)
        i = combo.findData(current or "")
        combo.setCurrentIndex(i if i >= 0 else 0)
        combo.blockSignals(False)

    def _draw(self) -> None:
        opts, ch, lang = self.opts, self.choices, current_language()
        if opts is None:
            return
        auto = self.tr("Automatic")
        names = {"cpu": self.tr("Processor (CPU)"), "cuda": self.tr("NVIDIA (CUDA)"), "rocm": self.tr("AMD (ROCm)"),
                 "mps": self.tr("Apple (Metal)"), "xpu": self.tr("Intel (XPU)")}
        self._fill(self.backend, opts.backends, lambda e: names.get(e.value or "", e.value or "") if e.value
                   else auto, ch.backend)
        self._fill(self.variant, opts.variants, lambda e: (self.tr("{build} (standard build, on the processor)").format(
            build=e.value) if e.standard else (e.value or "")) if e.value else auto, ch.variant)
        self.variant.setEnabled(bool(ch.backend))
        self._fill(self.torch, opts.torches, lambda e: e.value or self.tr("Newest that fits"), ch.torch)
        self._fill(self.python, opts.pythons, lambda e: f"Python {e.value}" if e.value else auto, ch.python)
        have = {_name(p) for p in ch.packages or ()}
        rec = opts.recommendation
        for e in opts.companions:
            box = self.pkg_boxes.get(str(e.value))
            if box is None:
                continue
            ticked = e.value in have
            box.blockSignals(True)
            box.setChecked(ticked)
            # a ticked box can always be unticked (fewer wishes): its entry judges the OTHER wishes left (the
            # other companion's reason); greyed, both were locked, each with the other's reason
            box.setEnabled(e.valid or ticked)
            box.blockSignals(False)
            note = ""
            if not ticked:
                note = "" if e.valid else render(e.why, lang)
            elif rec is not None and e.valid and e.torch and _older(rec.torch_version, e.torch):
                note = self.tr("With it: torch {torch}; without it: torch {newer}.").format(
                    torch=rec.torch_version, newer=e.torch)  # it holds torch back: said, never silent
            box.setToolTip(note or (render(e.why, lang) if not ticked else ""))
            self.pkg_notes[str(e.value)].setText(note)
        if rec is not None:
            self.gives.setText(self.tr("These choices give: {summary}").format(summary=render(rec.summary, lang)))
        self.gives.setVisible(rec is not None)
        conflict = opts.conflict
        self.conflict.setVisible(conflict is not None)
        if conflict is not None:
            self.conflict.set_text(render(conflict.why, lang), "warning")
        near = conflict.drops[0] if conflict is not None and conflict.drops else None
        self.nearest.setVisible(near is not None)
        if near is not None:
            self.nearest.setText(self.tr("Use the nearest working choice: {choice}").format(
                choice=render(near.label, lang)))
            self.nearest.setToolTip(render(near.gives, lang))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(rec is not None)
        self._update_why()

    def _update_why(self, *_) -> None:
        lines = []
        for combo in (self.backend, self.variant, self.torch, self.python):
            model = combo.model()
            assert isinstance(model, QStandardItemModel)
            for i in range(combo.count()):
                item = model.item(i)
                if not item.isEnabled() and item.toolTip():
                    lines.append(f"{item.text()}: {item.toolTip()}")
        for name, box in self.pkg_boxes.items():
            if not box.isEnabled() and box.toolTip():
                lines.append(f"{name}: {box.toolTip()}")
        if lines:
            bullets = "\n".join(f"• {line}" for line in lines)
            self.why_not.setPlainText(self.tr("Not available on this computer:") + "\n" + bullets)
        else:
            self.why_not.setPlainText("")
        self.why_not.setVisible(bool(lines))

    def _restore(self) -> None:
        self.restored = True
        self.accept()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def selection(self) -> Choices:
        """The wishes chosen in the dialog (no packages: None, as the engine takes it)."""
        return replace(self.choices, packages=self.choices.packages or None)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Change the PyTorch build"))
        self.l_backend.setText(self.tr("&Runs on:"))
        self.l_variant.setText(self.tr("&Build (wheel index):"))
        self.l_torch.setText(self.tr("&PyTorch version:"))
        self.l_python.setText(self.tr("P&ython:"))
        self.l_pkgs.setText(self.tr("Also install:"))
        self.l_other.setText(self.tr("&Other packages:"))
        self.backend.setAccessibleName(self.tr("Runs on"))
        self.variant.setAccessibleName(self.tr("Build"))
        self.torch.setAccessibleName(self.tr("PyTorch version"))
        self.python.setAccessibleName(self.tr("Python version of the new environment"))
        self.other.setAccessibleName(self.tr("Other packages, separated by spaces"))
        self.why_not.setAccessibleName(self.tr("Choices not available on this computer, and why"))
        self.nearest.setAccessibleName(self.tr("Use the nearest working choice"))
        self.restore_button.setText(self.tr("Use the recommendation"))
        self._set(self.choices)


class RecommendationPage(BasePage):

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("RecommendationPage", "Recommendation"),
              QT_TRANSLATE_NOOP("RecommendationPage", "The PyTorch build for this computer, why it was chosen, and "
                                                      "the exact command that will install it."))
    recommended = Signal(object)

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._pending = False  # from start() until the result is on the GUI thread (no race with the worker)
        self._error: UserError | None = None
        self._previews: dict[str, InstallPlan] = {}  # installer -> the plan the defaults make
        self._preview_for: Recommendation | None = None
        self._preview_task: Task | None = None

        self.busy = BusyLine()
        self.error_banner = Banner("error")
        self.drops_row = QHBoxLayout()
        self.drop_buttons: list[QPushButton] = []
        self.headline = heading(scale=1.3)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.costs_title = heading()
        self.costs_box = QVBoxLayout()
        self.costs_box.setSpacing(2)
        self.why_title = heading()
        self.reasons_box = QVBoxLayout()
        self.reasons_box.setSpacing(2)
        self.warnings_box = QVBoxLayout()
        self.cmd_title = heading()
        self.command = command_view(7)
        self.cmd_note = muted(QLabel())
        self.cmd_note.setWordWrap(True)
        self.installer = QComboBox()
        no_wheel_unless_focused(self.installer)
        self.installer.addItem("uv", "uv")
        self.installer.addItem("pip", "pip")
        self.installer.currentIndexChanged.connect(lambda _i: self._render())
        self.copy = CopyButton(lambda: self.command.toPlainText())
        self.change = button(self.open_change_dialog)
        self.data_version = muted(QLabel())
        cmd_row = QHBoxLayout()
        add_all(cmd_row, self.installer, self.copy, self.change, 1, self.data_version)
        self.early_note = early_label()  # the early downloads of this build, while the page is read

        add_all(self.body, self.busy, self.error_banner, self.drops_row, self.headline, self.summary, self.warnings_box,
                self.costs_title, self.costs_box, self.why_title, self.reasons_box, self.cmd_title, self.command,
                self.cmd_note, cmd_row, self.early_note, 1)
        early_downloads(self.state).changed.connect(lambda: show_early(self.early_note, self.state))
        self.retranslate()

    # ---- work ----
    def initializePage(self) -> None:
        # The System page's scan already asked the session's engine (with the same choices): reuse that.
        if self.state.session.recommendation is None:
            self.refresh()
        else:
            self._render()
            self._ask_preview()
            self._fetch_early()

    def _fetch_early(self) -> None:
        """The build shown starts to download while the user reads (the wizard's early downloads)."""
        early_downloads(self.state).want(ahead_of(self.state.session))

    def showEvent(self, event) -> None:
        # Back from the Environment page: its sources may have made the recommendation anew
        # (the newest build the local wheels folder holds); draw the one the session has now.
        super().showEvent(event)
        session = self.state.session
        if session.recommendation is None and session.system is not None and not self.is_busy() \
                and self._error is None:
            self.refresh()  # the sources left no build for these wishes: ask again, to show the ways out
            return
        self._render()
        self._ask_preview()  # its full command, for that recommendation

    def refresh(self) -> None:
        session = self.state.session
        if session.system is None or self.is_busy():
            return
        self._error = None
        self.start_task(Task(lambda _e, _c: session.recommend(), self, name="recommend"), succeeded=self._on_done,
                        failed=self._on_failed, finished=self._on_finished, redraw=self._render)

    def _on_done(self, rec) -> None:
        self._pending = False
        self._render()
        self.completeChanged.emit()
        self.recommended.emit(rec)
        self._ask_preview()
        self._fetch_early()

    def _on_failed(self, err) -> None:
        self._pending = False
        self._error = err  # the session has forgotten the old recommendation

    def _on_finished(self) -> None:
        self._pending = False
        stopped = self._task is not None and self._task.token.cancelled
        if self.state.session.recommendation is None and self._error is None and not stopped:
            self.refresh()  # the choices changed while the engine ran (its answer was dropped): ask again
        self._render()
        self.completeChanged.emit()

    def _ask_preview(self) -> None:
        """Plan the defaults for the current recommendation off the GUI thread (the full command)."""
        session = self.state.session
        rec = session.recommendation
        if rec is None or rec is self._preview_for or (self._preview_task is not None
                                                       and self._preview_task.is_running()):
            return
        system = session.system
        task = Task(lambda _e, _c: (rec, preview_plans(rec, system)), self, name="preview")
        task.succeeded.connect(self._on_preview)
        task.finished.connect(self._ask_preview)  # a newer recommendation meanwhile: plan for it too
        self._preview_task = task
        task.start()

    def _on_preview(self, result) -> None:
        rec, plans = result
        self._preview_for, self._previews = rec, plans
        if rec is self.state.session.recommendation:
            self._render()

    def isComplete(self) -> bool:
        return self.state.session.recommendation is not None and not self.is_busy() and self._error is None

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        done = super().cancel_and_wait(timeout, timeout_ms=timeout_ms)
        if self._preview_task is not None:
            done = self._preview_task.wait(timeout_ms / 1000 if timeout_ms is not None else timeout) and done
        return done

    # ---- change ----
    def ask_options(self, choices: Choices) -> Options:
        """Each selector's entries under ``choices`` (the engine, with this machine and its sources)."""
        from app.core.recommend import options

        session = self.state.session
        assert session.system is not None  # the button is enabled once the system is known
        return options(session.system, None, choices, session.available)

    def change_dialog(self) -> ChangeDialog:
        return ChangeDialog(self.ask_options, self.state.session.choices, self)

    def open_change_dialog(self) -> None:
        dlg = self.change_dialog()
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.apply_change(None if dlg.restored else dlg.selection())

    def apply_change(self, choices: Choices | None) -> None:
        """Re-recommend with the dialog's choices (``None``: back to the plain recommendation)."""
        self.apply_choices(choices)

    def apply_choices(self, choices: Choices | None) -> None:
        """Ask the engine again with these wishes (None: none)."""
        from app.core.recommend import Choices

        early_downloads(self.state).want(None)  # the build being fetched early is not the one chosen now
        self.state.session.choose(None if choices == Choices() else choices)
        self.refresh()

    def apply_action(self, action) -> None:
        """A remedy's button (app.gui.pages._common.ErrorPanel) chose another torch version or build:
        ask the engine again with that wish added to the user's others."""
        import dataclasses

        from app.core.recommend import Choices
        from app.core.remedies import ActionKind

        ch = self.state.session.choices or Choices()
        if action.kind is ActionKind.SET_TORCH_VERSION:
            ch = dataclasses.replace(ch, torch=action.value or None,
                                     **({"variant": action.variant, "backend": None} if action.variant else {}))
        elif action.kind is ActionKind.SET_VARIANT:
            ch = dataclasses.replace(ch, variant=action.variant or None, backend=None)
        early_downloads(self.state).want(None)
        self.state.session.choose(ch)
        self.refresh()

    # ---- rendering ----
    def _conflict(self) -> NoCombination | None:
        from app.core.recommend import NoCombination

        return self._error if isinstance(self._error, NoCombination) else None

    def _render_error(self, busy: bool) -> None:
        lang = current_language()
        clear_layout(self.drops_row)
        self.drop_buttons = []
        err = self._error
        self.error_banner.setVisible(err is not None and not busy)
        if err is None or busy:
            return
        conflict = self._conflict()
        if conflict is not None:
            text = render(conflict.why, lang) + "\n" + self.tr("Choose which wish to give up:")
            self.error_banner.set_text(text, "warning")
            ways = [(render(d.label, lang), render(d.gives, lang), d.choices) for d in conflict.drops]
        else:
            text = self.tr("No PyTorch build could be recommended: {message}").format(
                message=render(err.message, lang))
            if err.hint:  # the core's hint as the wizard tells it (its controls, not command-line options)
                text += "\n" + render_hint(err.hint, lang, "gui")
            self.error_banner.set_text(text, "error")
            ways = [(self.tr("Use the recommendation"), "", None)]
        for label, gives, choices in ways:
            button = QPushButton(label)
            button.setToolTip(gives)
            button.setAccessibleName(label)
            button.setAccessibleDescription(gives)
            button.clicked.connect(lambda _c=False, ch=choices: self.apply_choices(ch))
            self.drops_row.addWidget(button)
            self.drop_buttons.append(button)
        self.drops_row.addStretch(1)

    def _render(self) -> None:
        busy = self.is_busy()
        rec: Recommendation | None = self.state.session.recommendation if not busy else None
        self.busy.setVisible(busy)
        self._render_error(busy)
        clear_layout(self.reasons_box)
        clear_layout(self.warnings_box)
        clear_layout(self.costs_box)
        for w in (self.headline, self.summary, self.why_title, self.cmd_title, self.command, self.copy,
                  self.data_version, self.installer, self.cmd_note):
            w.setVisible(rec is not None)
        self.costs_title.setVisible(rec is not None and bool(rec.costs))
        self.change.setEnabled(not busy and self.state.session.system is not None)
        if rec is None:
            return
        lang = current_language()
        self.headline.setText(self.tr("PyTorch {version} for {target}").format(
            version=rec.torch_version, target=backend_words(rec.backend, rec.variant)))
        words = rec.texts(lang)  # the engine's sentences, in the wizard's language
        extra = [p for p in rec.packages if _name(p) != "torch"]
        if self.state.session.choices is not None:
            self.summary.setText(self.tr("This is your own choice. \"Change…\" → \"Use the recommendation\" goes "
                                         "back to the assistant's."))
        elif rec.availability:  # the sources decided the version (the reason is the first "why" after the GPU's)
            self.summary.setText(self.tr("This is the newest build your sources hold, not the newest release; "
                                         "the reason is below."))
        else:
            self.summary.setText(self.tr("This is the build that fits this computer best."))
        if extra:
            self.summary.setText(self.summary.text() + " " + self.tr("Also installed: {packages}.").format(
                packages=", ".join(map(str, extra))))
        if rec.python_ok is False and rec.choices.python:  # the user's own wish, not a limit of PyTorch's
            self.warnings_box.addWidget(Banner("info", self.tr(
                "You chose Python {version} under \"Change…\": the new environment will use it (this assistant "
                "itself runs on Python {running}).").format(version=rec.choices.python, running=self._running())))
        elif rec.python_ok is False:
            self.warnings_box.addWidget(Banner("warning", self.tr(
                "This PyTorch version does not support the Python you are running; the new environment will "
                "use Python {version}.").format(version=rec.env_python or "?")))
        for warning in words.warnings:
            self.warnings_box.addWidget(Banner("warning", warning))
        for cost in words.costs:
            self.costs_box.addWidget(StatusRow("info", cost))
        for reason in words.reasons:
            self.reasons_box.addWidget(StatusRow("info", reason))
        self.command.setPlainText(commands_text(self.current_commands()))
        upgrade = rec.driver_upgrade
        if upgrade is not None:
            self.warnings_box.addWidget(Banner("info", self.tr(
                "Updating the NVIDIA driver to {driver} or newer would unlock {unlocks}.").format(
                driver=upgrade.driver, unlocks=upgrade.unlocks)))
        self.data_version.setText("\n".join([self.tr("Compatibility data of {date}").format(  # + newer releases seen
            date=rec.compat_data_date or rec.compat_data_version),
            *(render(t, current_language()) for t in wizard_notes())]) if rec.compat_data_version else "")

    def _running(self) -> str:
        """The Python this assistant runs on (detection's report), "3.11"."""
        report = self.state.session.system
        return report.python.minor if report is not None and report.python.minor else "?"

    def current_plan(self) -> InstallPlan | None:
        """The plan whose commands are shown: the approved one (for this recommendation), else the
        defaults' plan for the installer picked next to the command."""
        session = self.state.session
        rec = session.recommendation
        approved = session.approved_plan
        if approved is not None and approved.recommendation is rec:
            return approved
        if rec is not None and self._preview_for is rec:
            return self._previews.get(self.installer.currentData())
        return None

    def current_commands(self) -> list[tuple[str, ...]]:
        """The full commands that will run (credentials masked), in order; before any plan, the
        recommendation's own command for the installer picked next to it."""
        from app.core.install.request import masked

        plan = self.current_plan()
        if plan is not None:
            try:
                return plan.shown_commands()
            except UserError:  # no interpreter to show yet: the recommendation's command below
                pass
        rec: Recommendation | None = self.state.session.recommendation
        if rec is None:
            return []
        installer = self.installer.currentData()
        cmds = [masked(rec.commands.get(installer) or rec.command)]
        extra = rec.commands.get(f"{installer}_extra")
        return cmds + ([masked(extra)] if extra else [])

    def retranslate_page(self) -> None:  # a language switch: the texts, the engine's too, drawn again below
        self.busy.set_text(self.tr("Choosing the right build…"))
        self.costs_title.setText(self.tr("What your choices cost"))
        self.why_title.setText(self.tr("Why"))
        self.cmd_title.setText(self.tr("The command"))
        self.cmd_note.setText(self.tr("These commands create the environment and install into it. The folder and "
                                      "the installer are set on the next page, which shows the final command."))
        self.command.setAccessibleName(self.tr("The install command"))
        set_texts(self.installer, name=self.tr("Show the command for this installer"),
                  tip=self.tr("The same install, with uv or with pip"))
        set_texts(self.copy, self.tr("C&opy command"), tip=self.tr("Copy the command to the clipboard"))
        set_texts(self.change, self.tr("C&hange…"),
                  name=self.tr("Change the backend, build, PyTorch version, Python or packages"))
        self._render()

