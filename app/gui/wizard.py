"""The setup wizard: eight pages over the core, in the order of DESIGN.md.

``SetupWizard()`` builds with no arguments (tests do). Detection starts in a worker Task
right after the window is first shown, so the window appears at once and the System page
is usually ready by the time the user gets there.

After the Install page (a commit page) the user cannot go back into a half-done state.
Closing the window while core work runs asks first (during an install) and then cancels
the work and waits for the core to roll back before the window goes.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox, QWidget, QWizard

from app.core.paths import resources_dir
from app.gui import i18n
from app.gui.pages import PageId
from app.gui.pages.done import DonePage
from app.gui.pages.environment import EnvironmentPage
from app.gui.pages.install import InstallPage
from app.gui.pages.recommendation import RecommendationPage
from app.gui.pages.speedtest import SpeedTestPage
from app.gui.pages.system import SystemPage
from app.gui.pages.verify import VerifyPage
from app.gui.pages.welcome import WelcomePage
from app.gui.state import WizardState

PAGE_CLASSES = {
    PageId.WELCOME: WelcomePage,
    PageId.SYSTEM: SystemPage,
    PageId.RECOMMENDATION: RecommendationPage,
    PageId.ENVIRONMENT: EnvironmentPage,
    PageId.INSTALL: InstallPage,
    PageId.VERIFY: VerifyPage,
    PageId.SPEEDTEST: SpeedTestPage,
    PageId.DONE: DonePage,
}
MIN_SIZE = QSize(900, 640)


def app_icon() -> QIcon:
    path = resources_dir() / "icons" / "app.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()


class SetupWizard(QWizard):
    def __init__(self, state: WizardState | None = None, lang: str | None = None,
                 parent: QWidget | None = None, *, auto_detect: bool = True) -> None:
        super().__init__(parent)
        self.state = state if state is not None else WizardState()
        if lang is not None or state is None:
            self.state.language = i18n.set_language(lang or i18n.system_language())
        self.auto_detect = auto_detect
        self._shown_once = False
        self._closing = False
        self.setObjectName("SetupWizard")
        self.setWindowIcon(app_icon())
        self.setMinimumSize(MIN_SIZE)
        self.resize(MIN_SIZE)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setOption(QWizard.WizardOption.NoCancelButtonOnLastPage, True)
        self.setOption(QWizard.WizardOption.HaveHelpButton, False)
        logo = app_icon().pixmap(QSize(48, 48), self.devicePixelRatioF())
        self.setPixmap(QWizard.WizardPixmap.LogoPixmap, logo)
        for pid, cls in PAGE_CLASSES.items():
            page = cls(self.state, self)
            self.setPage(int(pid), page)
        self.setStartId(int(PageId.WELCOME))
        self.page(int(PageId.INSTALL)).setCommitPage(True)
        self.welcome.language_changed.connect(self._language_changed)
        self.retranslate()

    # ---- pages by name ----
    @property
    def welcome(self) -> WelcomePage:
        return self.page(int(PageId.WELCOME))

    @property
    def system_page(self) -> SystemPage:
        return self.page(int(PageId.SYSTEM))

    def page_for(self, pid: PageId):
        return self.page(int(pid))

    # ---- start-up: the window first, then detection ----
    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if self.auto_detect:
                QTimer.singleShot(0, self.start_detection)

    def start_detection(self) -> None:
        if self.state.report is None and not self.system_page.is_busy():
            self.system_page.start_scan()

    # ---- closing ----
    def busy_pages(self) -> list:
        return [self.page(pid) for pid in self.pageIds()
                if hasattr(self.page(pid), "is_busy") and self.page(pid).is_busy()]

    def confirm_cancel_install(self) -> bool:
        """Ask before stopping an install (tests replace this method)."""
        answer = QMessageBox.question(
            self, self.tr("Stop the installation?"),
            self.tr("PyTorch is being installed. If you close the window now, the installation is "
                    "cancelled and the half-made environment is removed.\n\nStop and close?"),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def reject(self) -> None:
        """Cancel button, Esc and the window's close button (QDialog.closeEvent) all come here;
        returning without hiding keeps the window open."""
        if self._closing:
            return
        busy = self.busy_pages()
        install = self.page(int(PageId.INSTALL))
        if install in busy and not self.confirm_cancel_install():
            return
        self._closing = True
        try:
            for page in busy:
                page.cancel_and_wait(60.0)
        finally:
            self._closing = False
        super().reject()

    # ---- language ----
    def _language_changed(self, lang: str) -> None:
        self.state.language = lang

    def changeEvent(self, event) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Torch Setup Assistant"))
        self.setButtonText(QWizard.WizardButton.BackButton, self.tr("< &Back"))
        self.setButtonText(QWizard.WizardButton.NextButton, self.tr("&Next >"))
        self.setButtonText(QWizard.WizardButton.CommitButton, self.tr("&Next >"))
        self.setButtonText(QWizard.WizardButton.FinishButton, self.tr("&Finish"))
        self.setButtonText(QWizard.WizardButton.CancelButton, self.tr("Cancel"))
        self.setAccessibleName(self.tr("Torch Setup Assistant"))
