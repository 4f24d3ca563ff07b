"""Page 3: the recommended PyTorch build, why, warnings, the exact command, and "Change…".

The recommendation comes from ``app.core.recommend.recommend(report, choices=...)`` run in a
:class:`Task`. "Change…" offers only the choices the engine says are valid for this machine;
the others are greyed with the engine's reason as tooltip and as a visible line.

The engine's sentences are texts (``app.core.text``): the page renders them in the wizard's
current language each time it draws, so a language switch simply draws again.
"""
from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QPalette, QStandardItemModel
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

from app.core.errors import BadInput, render_hint
from app.core.freshness import wizard_notes
from app.core.text import Text, render
from app.gui.i18n import current_language
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, BusyLine, CopyButton, StatusRow, heading, monospace_font, muted
from app.gui.worker import Task

if TYPE_CHECKING:  # the engine is imported when the page first asks it
    from app.core.recommend import Recommendation
    from app.core.system import SystemReport

EXTRA_PACKAGES = ("torchvision", "torchaudio")


def command_text(argv) -> str:
    """The argument list as one line the user can paste into their shell."""
    if not argv:
        return ""
    if isinstance(argv, str):
        return argv
    if os.name == "nt":
        return " ".join(f'"{a}"' if (" " in a or not a) else a for a in map(str, argv))
    return shlex.join(str(a) for a in argv)


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


class ChangeDialog(QDialog):
    """Backend, variant, torch version and extra packages; only valid choices can be picked."""

    def __init__(self, options: list[dict], current: dict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.options = options
        self.backend = QComboBox()
        self.variant = QComboBox()
        self.torch = QComboBox()
        # Read-only text that scrolls: some machines have many greyed choices, each with a reason.
        self.why_not = QPlainTextEdit()
        self.why_not.setReadOnly(True)
        self.why_not.setFrameShape(QFrame.Shape.NoFrame)
        pal = self.why_not.palette()  # the dialog's own colours (built fresh each time: follows dark mode)
        pal.setColor(QPalette.ColorRole.Base, pal.color(QPalette.ColorRole.Window))
        pal.setColor(QPalette.ColorRole.Text, pal.color(QPalette.ColorRole.PlaceholderText))
        self.why_not.setPalette(pal)
        self.why_not.setMaximumHeight(200)
        self.why_not.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.why_not.setTabChangesFocus(True)
        self.pkg_boxes = {name: QCheckBox(name) for name in EXTRA_PACKAGES}
        self.other = QLineEdit()
        self.other.setPlaceholderText("numpy pandas")
        form = QFormLayout()
        self.l_backend, self.l_variant, self.l_torch, self.l_pkgs, self.l_other = (QLabel() for _ in range(5))
        form.addRow(self.l_backend, self.backend)
        form.addRow(self.l_variant, self.variant)
        form.addRow(self.l_torch, self.torch)
        pk = QHBoxLayout()
        for box in self.pkg_boxes.values():
            pk.addWidget(box)
        pk.addStretch(1)
        form.addRow(self.l_pkgs, pk)
        form.addRow(self.l_other, self.other)
        self.l_backend.setBuddy(self.backend)
        self.l_variant.setBuddy(self.variant)
        self.l_torch.setBuddy(self.torch)
        self.l_other.setBuddy(self.other)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                        | QDialogButtonBox.StandardButton.RestoreDefaults)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._restore)
        self.restored = False
        col = QVBoxLayout(self)
        col.addLayout(form)
        col.addWidget(self.why_not)
        col.addWidget(self.buttons)
        self.setMinimumWidth(560)

        self._fill(self.backend, [(o["backend"], o) for o in options])
        self.backend.currentIndexChanged.connect(self._backend_changed)
        self.variant.currentIndexChanged.connect(self._variant_changed)
        self.torch.currentIndexChanged.connect(self._update_why)
        self.select(current.get("backend"), current.get("variant"), current.get("torch_version"))
        pkgs = list(current.get("packages") or [])
        for name, box in self.pkg_boxes.items():
            box.setChecked(any(p.split("=")[0].split("<")[0].split(">")[0].strip() == name for p in pkgs))
        others = [p for p in pkgs if p.split("=")[0].split("<")[0].split(">")[0].strip() not in EXTRA_PACKAGES
                  and not p.startswith("torch=") and p.split("=")[0] != "torch"]
        self.other.setText(" ".join(others))
        self.retranslate()

    # An item is valid when any option under it is valid; its tooltip is the first reason.
    def _fill(self, combo: QComboBox, pairs) -> None:
        combo.blockSignals(True)
        combo.clear()
        groups: dict[str, list[dict]] = {}
        for key, opt in pairs:
            groups.setdefault(key, []).append(opt)
        model = combo.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        for key, opts in groups.items():
            label = key or self.tr("(default)")
            if combo is self.backend:
                label = {"cpu": self.tr("Processor (CPU)"), "cuda": self.tr("NVIDIA (CUDA)"),
                         "rocm": self.tr("AMD (ROCm)"), "mps": self.tr("Apple (Metal)"),
                         "xpu": self.tr("Intel (XPU)")}.get(key, key)
            combo.addItem(label, key)
            item = model.item(combo.count() - 1)
            valid = any(o["valid"] for o in opts)
            if not valid:
                why = next((o["why"] for o in opts if o["why"]), "")
                item.setEnabled(False)
                item.setToolTip(why)
                item.setData(why, Qt.ItemDataRole.AccessibleDescriptionRole)
        combo.blockSignals(False)

    @staticmethod
    def _enabled(combo: QComboBox, i: int) -> bool:
        model = combo.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        return model.item(i).isEnabled()

    def _first_valid(self, combo: QComboBox) -> None:
        for i in range(combo.count()):
            if self._enabled(combo, i):
                combo.setCurrentIndex(i)
                return

    def select(self, backend, variant, torch_version) -> None:
        i = self.backend.findData(backend)
        if i >= 0 and self._enabled(self.backend, i):
            self.backend.setCurrentIndex(i)
        else:
            self._first_valid(self.backend)
        self._backend_changed(variant=variant, torch_version=torch_version)

    def _backend_changed(self, *_, variant=None, torch_version=None) -> None:
        b = self.backend.currentData()
        self._fill(self.variant, [(o["variant"] or "", o) for o in self.options if o["backend"] == b])
        i = self.variant.findData(variant or "")
        if i >= 0 and self._enabled(self.variant, i):
            self.variant.setCurrentIndex(i)
        else:
            self._first_valid(self.variant)
        self._variant_changed(torch_version=torch_version)

    def _variant_changed(self, *_, torch_version=None) -> None:
        b, v = self.backend.currentData(), self.variant.currentData()
        opts = [o for o in self.options if o["backend"] == b and (o["variant"] or "") == v]
        self._fill(self.torch, [(o["torch_version"] or "", o) for o in opts])
        i = self.torch.findData(torch_version or "")
        if i >= 0 and self._enabled(self.torch, i):
            self.torch.setCurrentIndex(i)
        else:
            self._first_valid(self.torch)
        self._update_why()

    def _update_why(self, *_) -> None:
        lines = []
        for combo in (self.backend, self.variant, self.torch):
            model = combo.model()
            assert isinstance(model, QStandardItemModel)
            for i in range(combo.count()):
                item = model.item(i)
                if not item.isEnabled() and item.toolTip():
                    lines.append(f"{item.text()}: {item.toolTip()}")
        if lines:
            bullets = "\n".join(f"• {line}" for line in lines)
            self.why_not.setPlainText(self.tr("Not available on this computer:") + "\n" + bullets)
        else:
            self.why_not.setPlainText("")
        self.why_not.setVisible(bool(lines))

    def _restore(self) -> None:
        self.restored = True
        self.accept()

    def selection(self) -> dict:
        pkgs = [name for name, box in self.pkg_boxes.items() if box.isChecked()]
        pkgs += self.other.text().split()
        return {"backend": self.backend.currentData(), "variant": self.variant.currentData() or None,
                "torch_version": self.torch.currentData() or None, "packages": pkgs}

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Change the PyTorch build"))
        self.l_backend.setText(self.tr("&Runs on:"))
        self.l_variant.setText(self.tr("&Build (wheel index):"))
        self.l_torch.setText(self.tr("&PyTorch version:"))
        self.l_pkgs.setText(self.tr("Also install:"))
        self.l_other.setText(self.tr("&Other packages:"))
        self.backend.setAccessibleName(self.tr("Runs on"))
        self.variant.setAccessibleName(self.tr("Build"))
        self.torch.setAccessibleName(self.tr("PyTorch version"))
        self.other.setAccessibleName(self.tr("Other packages, separated by spaces"))
        self.why_not.setAccessibleName(self.tr("Choices not available on this computer, and why"))
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).setText(self.tr("Use the recommendation"))
        self._update_why()


class RecommendationPage(BasePage):
    recommended = Signal(object)

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._pending = False  # from start() until the result is on the GUI thread (no race with the worker)
        self._error = None

        self.busy = BusyLine()
        self.error_banner = Banner("error")
        self.headline = heading(scale=1.3)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.why_title = heading()
        self.reasons_box = QVBoxLayout()
        self.reasons_box.setSpacing(2)
        self.warnings_box = QVBoxLayout()
        self.cmd_title = heading()
        self.command = QPlainTextEdit()
        self.command.setReadOnly(True)
        self.command.setFont(monospace_font())
        self.command.setFixedHeight(self.command.fontMetrics().lineSpacing() * 3 + 14)
        self.command.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.command.setTabChangesFocus(True)
        self.installer = QComboBox()
        self.installer.addItem("uv", "uv")
        self.installer.addItem("pip", "pip")
        self.installer.currentIndexChanged.connect(lambda _i: self._render())
        self.copy = CopyButton(lambda: self.command.toPlainText())
        self.change = QPushButton()
        self.change.clicked.connect(self.open_change_dialog)
        self.data_version = muted(QLabel())
        cmd_row = QHBoxLayout()
        cmd_row.addWidget(self.installer)
        cmd_row.addWidget(self.copy)
        cmd_row.addWidget(self.change)
        cmd_row.addStretch(1)
        cmd_row.addWidget(self.data_version)

        self.body.addWidget(self.busy)
        self.body.addWidget(self.error_banner)
        self.body.addWidget(self.headline)
        self.body.addWidget(self.summary)
        self.body.addLayout(self.warnings_box)
        self.body.addWidget(self.why_title)
        self.body.addLayout(self.reasons_box)
        self.body.addWidget(self.cmd_title)
        self.body.addWidget(self.command)
        self.body.addLayout(cmd_row)
        self.body.addStretch(1)
        self.retranslate()

    # ---- work ----
    def initializePage(self) -> None:
        # The System page's scan already asked the session's engine (with the same choices): reuse that.
        if self.state.session.recommendation is None:
            self.refresh()
        else:
            self._render()

    def showEvent(self, event) -> None:
        # Back from the Environment page: its sources may have made the recommendation anew
        # (the newest build the local wheels folder holds); draw the one the session has now.
        super().showEvent(event)
        self._render()

    def refresh(self) -> None:
        session = self.state.session
        if session.system is None or self.is_busy():
            return
        self._error = None
        self._task = Task(lambda _e, _c: session.recommend(), self, name="recommend")
        self._task.succeeded.connect(self._on_done)
        self._task.failed.connect(self._on_failed)
        self._task.finished.connect(self._on_finished)
        self._pending = True
        self._task.start()
        self._render()
        self.completeChanged.emit()

    def _on_done(self, rec) -> None:
        self._pending = False
        self._render()
        self.completeChanged.emit()
        self.recommended.emit(rec)

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

    def isComplete(self) -> bool:
        return self.state.session.recommendation is not None and not self.is_busy() and self._error is None

    # ---- change ----
    def change_dialog(self) -> ChangeDialog:
        rec: Recommendation | None = self.state.session.recommendation
        ch = self.state.session.choices
        current = {"backend": str(rec.backend) if rec else None, "variant": rec.variant if rec else None,
                   "torch_version": rec.torch_version if rec else None,
                   "packages": list(ch.packages or []) if ch is not None else []}
        assert self.state.session.system is not None  # the button is enabled once there is a recommendation
        return ChangeDialog(options_for(self.state.session.system, rec, current_language()), current, self)

    def open_change_dialog(self) -> None:
        dlg = self.change_dialog()
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.apply_change(None if dlg.restored else dlg.selection())

    def apply_change(self, sel: dict | None) -> None:
        """Re-recommend with the user's choices (``None``: back to the plain recommendation)."""
        from app.core.recommend import Choices

        if sel is None:
            self.state.session.choose(None)
        else:
            self.state.session.choose(Choices(backend=sel.get("backend"), variant=sel.get("variant"),
                                              torch=sel.get("torch_version"),
                                              packages=tuple(sel.get("packages") or ()) or None))
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
        self.state.session.choose(ch)
        self.refresh()

    # ---- rendering ----
    def _clear(self, layout) -> None:
        while layout.count():
            w = layout.takeAt(0).widget()
            if w is not None:
                w.hide()
                w.setParent(None)  # out of the page at once (findChildren, screen readers)
                w.deleteLater()

    def _render(self) -> None:
        busy = self.is_busy()
        rec: Recommendation | None = self.state.session.recommendation if not busy else None
        self.busy.setVisible(busy)
        self.error_banner.setVisible(self._error is not None and not busy)
        if self._error is not None:
            lang = current_language()  # the core's sentences in the wizard's language, hints as the wizard tells them
            text = self.tr("No PyTorch build could be recommended: {message}").format(
                message=render(self._error.message, lang))
            if self._error.hint:
                text += "\n" + render_hint(self._error.hint, lang, "gui")
            self.error_banner.set_text(text, "error")
        self._clear(self.reasons_box)
        self._clear(self.warnings_box)
        for w in (self.headline, self.summary, self.why_title, self.cmd_title, self.command, self.copy,
                  self.data_version, self.installer):
            w.setVisible(rec is not None)
        self.change.setEnabled(not busy and self.state.session.system is not None)
        if rec is None:
            return
        self.headline.setText(self.tr("PyTorch {version} for {target}").format(
            version=rec.torch_version, target=backend_words(rec.backend, rec.variant)))
        words = rec.texts(current_language())  # the engine's sentences, in the wizard's language
        extra = [p for p in rec.packages if not p.startswith("torch") or p.startswith(("torchvision", "torchaudio"))]
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
        if rec.python_ok is False:
            self.warnings_box.addWidget(Banner("warning", self.tr(
                "This PyTorch version does not support the Python you are running; the new environment will "
                "use Python {version}.").format(version=rec.env_python or "?")))
        for warning in words.warnings:
            self.warnings_box.addWidget(Banner("warning", warning))
        for reason in words.reasons:
            self.reasons_box.addWidget(StatusRow("info", reason))
        self.command.setPlainText(command_text(self.current_command()))
        upgrade = rec.driver_upgrade
        if upgrade is not None:
            self.warnings_box.addWidget(Banner("info", self.tr(
                "Updating the NVIDIA driver to {driver} or newer would unlock {unlocks}.").format(
                driver=upgrade.driver, unlocks=upgrade.unlocks)))
        self.data_version.setText("\n".join([self.tr("Compatibility data of {date}").format(  # + newer releases seen
            date=rec.compat_data_date or rec.compat_data_version),
            *(render(t, current_language()) for t in wizard_notes())]) if rec.compat_data_version else "")

    def current_command(self):
        """The install command for the installer picked next to it (pip or uv)."""
        rec: Recommendation | None = self.state.session.recommendation
        if rec is None:
            return []
        return rec.commands.get(self.installer.currentData()) or rec.command

    def retranslate(self) -> None:  # a language switch: the texts, the engine's too, drawn again below
        self.setTitle(self.tr("Recommendation"))
        self.setSubTitle(self.tr("The PyTorch build for this computer, why it was chosen, and the exact "
                                 "command that will install it."))
        self.busy.set_text(self.tr("Choosing the right build…"))
        self.why_title.setText(self.tr("Why"))
        self.cmd_title.setText(self.tr("The command"))
        self.command.setAccessibleName(self.tr("The install command"))
        self.installer.setAccessibleName(self.tr("Show the command for this installer"))
        self.installer.setToolTip(self.tr("The same install, with uv or with pip"))
        self.copy.set_label(self.tr("C&opy command"))
        self.copy.setToolTip(self.tr("Copy the command to the clipboard"))
        self.change.setText(self.tr("C&hange…"))
        self.change.setAccessibleName(self.tr("Change the backend, build, PyTorch version or packages"))
        self._render()
