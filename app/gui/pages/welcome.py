"""Page 1: welcome, language, what to do, what will happen, and whether an offline bundle was found.

Two paths start here: "Set up a new environment" (System -> ... -> Done) and "Check, repair or
upgrade an existing one" (the Environments page, then a task page).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import QButtonGroup, QComboBox, QGridLayout, QHBoxLayout, QLabel, QRadioButton, QWidget

from app.gui import i18n
from app.gui.build import add_all
from app.gui.pages import PageId
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, heading, muted

if TYPE_CHECKING:
    from app.gui.worker import Task


def _find_bundle(on_event, cancel):
    try:
        from app.core.install.bundle import find_bundle
    except ImportError:  # the bundle module is optional in a trimmed build
        return None
    return find_bundle()


class WelcomePage(BasePage):
    """Shown before anything else is built: it imports and touches as little as it can
    (no worker, no ``Qt`` namespace) so that the window appears at once."""

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("WelcomePage", "Welcome to Torch Setup Assistant"),
              QT_TRANSLATE_NOOP("WelcomePage", "This assistant installs PyTorch so that it uses your graphics card "
                                               "(or your processor), checks that it works, and measures its speed."))

    language_changed = Signal(str)
    bundle_checked = Signal(object)  # Path | None

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._bundle_task: Task | None = None  # (the worker module is imported when needed: start-up stays lean)
        self.defer_work = False  # the wizard starts the bundle look-up after its first paint
        self._bundle_checked = False
        self._starting: QLabel | None = None  # "Getting the next steps ready…" (made when needed)

        self.intro = QLabel()
        self.intro.setWordWrap(True)

        self.language_label = QLabel()
        self.language = QComboBox()  # (no wheel guard: the page does not scroll, and it paints before Qt loads)
        # Sized without measuring every item: "简体中文" would load a CJK font (~35 ms, 3 MB)
        # before the first window could appear; it loads when the list opens.
        self.language.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.language.setMinimumContentsLength(12)
        for code, name in i18n.LANGUAGES:
            self.language.addItem(name, code)
        self.language_label.setBuddy(self.language)
        form = QHBoxLayout()  # one row: a QFormLayout's Python type alone costs ~0.5 ms before the first window
        form.addWidget(self.language_label)
        form.addWidget(self.language, 1)

        self.choice_title = heading()
        self.new_env = QRadioButton()
        self.existing_env = QRadioButton()
        self.new_env.setChecked(True)
        self.choice = QButtonGroup(self)
        self.choice.addButton(self.new_env)
        self.choice.addButton(self.existing_env)
        self.existing_note = muted(QLabel())
        self.existing_note.setWordWrap(True)
        self.existing_env.toggled.connect(self._on_choice)

        self.steps_title = heading()
        self.steps = QGridLayout()
        self.steps.setHorizontalSpacing(14)
        self.steps.setVerticalSpacing(8)
        self.step_labels: list[tuple[QLabel, QLabel, QLabel]] = []
        for i in range(5):
            num = QLabel(f"{i + 1}.")
            text = QLabel()
            text.setWordWrap(True)
            when = muted(QLabel())
            self.steps.addWidget(num, i, 0)
            self.steps.addWidget(text, i, 1)
            self.steps.addWidget(when, i, 2)
            self.step_labels.append((num, text, when))
        self.steps.setColumnStretch(1, 1)
        self.total = QLabel()
        self.total.setWordWrap(True)
        self.bundle_banner = Banner("info")
        self.safety = muted(QLabel())
        self.safety.setWordWrap(True)

        add_all(self.body, self.intro, form)
        self.body.addSpacing(6)
        add_all(self.body, self.choice_title, self.new_env, self.existing_env, self.existing_note)
        self.body.addSpacing(6)
        add_all(self.body, self.steps_title, self.steps, self.total, self.bundle_banner, self.safety, 1)

        self._on_choice(False)
        self.select_language(self.state.language or "en", apply=False)
        self.language.currentIndexChanged.connect(self._on_language_index)
        self.retranslate()

    # ---- language ----
    def select_language(self, code: str, apply: bool = True) -> None:
        code = i18n.normalize(code)
        idx = self.language.findData(code)
        if idx < 0:
            idx = 0
        if apply:
            self.language.setCurrentIndex(idx)  # emits -> _on_language_index
        else:
            self.language.blockSignals(True)
            self.language.setCurrentIndex(idx)
            self.language.blockSignals(False)

    def _on_language_index(self, idx: int) -> None:
        code = self.language.itemData(idx) or "en"
        self.state.language = i18n.set_language(code)
        self.language_changed.emit(self.state.language)

    # ---- bundle ----
    def initializePage(self) -> None:
        if not self.defer_work:
            self.check_bundle()

    def show_starting(self, text: str) -> None:
        """A line under the page while the wizard makes its other pages ("" hides it)."""
        if self._starting is None:
            if not text:
                return
            self._starting = muted(QLabel())
            self.body.addWidget(self._starting)
        self._starting.setText(text)
        self._starting.setVisible(bool(text))
        if text:
            self._starting.repaint()

    def nextId(self) -> int:  # the wizard may add the later pages after the first paint
        return int(PageId.ENVS if self.existing_env.isChecked() else PageId.SYSTEM)

    def choose_existing(self, on: bool = True) -> None:
        """Pick the "existing environment" path (or the new-setup one)."""
        (self.existing_env if on else self.new_env).setChecked(True)

    def _on_choice(self, _on: bool) -> None:
        existing = self.existing_env.isChecked()
        for w in (self.steps_title, self.total, self.safety):
            w.setVisible(not existing)
        for num, text, when in self.step_labels:
            for w in (num, text, when):
                w.setVisible(not existing)
        self.existing_note.setVisible(existing)

    def check_bundle(self) -> None:
        from app.gui.worker import Task  # imported at first use: start-up stays lean

        if self._bundle_task is not None and self._bundle_task.is_running():
            return
        if self.state.bundle_dir is not None:
            self._bundle_checked = True
            self.retranslate()
            return
        # No Qt parent: the Task lives as long as its thread needs it, even if the page goes first.
        self._bundle_task = Task(_find_bundle, None, name="find-bundle")
        self._bundle_task.succeeded.connect(self._on_bundle)
        self._bundle_task.failed.connect(self._on_bundle_failed)
        self._bundle_task.start()

    def _on_bundle_failed(self, err) -> None:
        self._on_bundle(None)

    def _on_bundle(self, path) -> None:
        self._bundle_checked = True
        if path is not None:
            self.state.bundle_dir = Path(path)
        self.retranslate()
        self.bundle_checked.emit(self.state.bundle_dir)

    def is_busy(self) -> bool:
        return bool(self._bundle_task and self._bundle_task.is_running())

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        if self._bundle_task is not None:
            self._bundle_task.cancel()
            return self._bundle_task.wait(timeout)
        return True

    # ---- texts ----
    def retranslate_page(self) -> None:
        self.intro.setText(self.tr("You do not need to know what CUDA, ROCm or a driver is: the assistant "
                                   "looks at your computer, explains its choice in plain words, and lets "
                                   "you change it if you want to."))
        self.language_label.setText(self.tr("&Language:"))
        self.language.setAccessibleName(self.tr("Language"))
        self.choice_title.setText(self.tr("What would you like to do?"))
        self.new_env.setText(self.tr("&Set up a new environment with PyTorch"))
        self.existing_env.setText(self.tr("&Check, repair or upgrade an existing environment"))
        self.existing_note.setText(self.tr("The next page lists the PyTorch environments this assistant made and "
                                           "the ones it finds on this computer, with what each holds and whether "
                                           "it still works."))
        self.steps_title.setText(self.tr("What will happen"))
        steps = [
            (self.tr("Look at your computer: system, processor, memory, graphics card and driver."),
             self.tr("a few seconds")),
            (self.tr("Recommend the right PyTorch build and explain why. You can change it."),
             self.tr("you decide")),
            (self.tr("Create a separate Python environment, so nothing else on your computer changes."),
             self.tr("under a minute")),
            (self.tr("Download and install PyTorch: about 200 MB for the processor, 2 to 3 GB for an "
                     "NVIDIA or AMD graphics card."),
             self.tr("1 to 15 minutes")),
            (self.tr("Check that PyTorch really works, then measure its speed."),
             self.tr("about a minute")),
        ]
        for (_num, text, when), (t, w) in zip(self.step_labels, steps, strict=False):
            text.setText(t)
            when.setText(w)
        self.total.setText(self.tr("It usually takes 5 to 15 minutes in all; most of it is the download. "
                                   "You can cancel at any time, and a half-finished installation is "
                                   "removed."))
        if self.state.bundle_dir is not None:
            self.bundle_banner.set_text(
                self.tr("An offline bundle was found in {path}. PyTorch will be installed from it, "
                        "without the internet.").format(path=self.state.bundle_dir), "ok")
        elif self._bundle_checked:
            self.bundle_banner.set_text(
                self.tr("No offline bundle was found, so PyTorch will be downloaded: keep this computer "
                        "connected to the internet."), "info")
        else:
            self.bundle_banner.set_text(self.tr("Looking for an offline bundle…"), "info")
        self.safety.setText(self.tr("Nothing is installed until you confirm it on the Install page."))

