"""The setup wizard: eight pages over the core, in the order of DESIGN.md.

``SetupWizard()`` builds with no arguments (tests do). Detection starts in a worker Task
right after the window is first shown, so the window appears at once and the System page
is usually ready by the time the user gets there.

After the Install page (a commit page) the user cannot go back into a half-done state.
Closing the window while core work runs asks first (during an install) and then cancels
the work and waits for the core to roll back before the window goes.
"""
from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import QWidget, QWizard

from app.core.base.paths import resources_dir
from app.gui import i18n
from app.gui.pages import PageId
from app.gui.pages.base import BasePage
from app.gui.pages.welcome import WelcomePage
from app.gui.state import WizardState

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon  # start-up: its type loads with the window's icon, after the first paint

# Pages after the first are imported and built right after the window is first painted
# (see ``lazy``), so that the window shows at once; (module, class) per page id.
PAGE_CLASSES = {
    PageId.WELCOME: ("app.gui.pages.welcome", "WelcomePage"),
    PageId.SYSTEM: ("app.gui.pages.system", "SystemPage"),
    PageId.RECOMMENDATION: ("app.gui.pages.recommendation", "RecommendationPage"),
    PageId.ENVIRONMENT: ("app.gui.pages.environment", "EnvironmentPage"),
    PageId.INSTALL: ("app.gui.pages.install", "InstallPage"),
    PageId.VERIFY: ("app.gui.pages.verify", "VerifyPage"),
    PageId.SPEEDTEST: ("app.gui.pages.speedtest", "SpeedTestPage"),
    PageId.DONE: ("app.gui.pages.done", "DonePage"),
    PageId.ENVS: ("app.gui.pages.environments", "EnvironmentsPage"),
    PageId.ENV_TASK: ("app.gui.pages.env_task", "EnvTaskPage"),
}
#: The last page of each path (Welcome -> ... -> Done, Welcome -> Environments -> a task).
LAST_PAGES = (PageId.DONE, PageId.ENV_TASK)


def page_class(pid: PageId):
    module, name = PAGE_CLASSES[pid]
    return getattr(importlib.import_module(module), name)


MIN_SIZE = QSize(900, 640)
#: what is left free around the window on a small screen: its frame and title bar, and a task bar
#: the screen's available geometry does not know of
SCREEN_MARGIN = QSize(40, 60)


def app_icon() -> QIcon:
    from app.gui.widgets import icon

    return icon("app")


def logo_pixmap(dpr: float = 1.0) -> QPixmap:
    """The 48 px logo of the page header, read straight from its PNG (at the screen's pixel
    ratio): the first window needs no QIcon, whose type alone costs a few ms to create."""
    size = 96 if dpr > 1.0 else 48
    pix = QPixmap(str(resources_dir() / "icons" / "png" / f"app-{size}.png"))
    if pix.isNull():  # a trimmed build without the PNGs: the icon machinery finds another
        return app_icon().pixmap(QSize(48, 48), dpr)
    pix.setDevicePixelRatio(size / 48)
    return pix


class SetupWizard(QWizard):
    """The wizard. ``lazy=True`` (what ``torch-setup gui`` uses) builds only the Welcome page
    before the window shows and the seven others right after its first paint; if the user
    presses Next before that, they are built on the spot. Tests build everything at once."""

    def __init__(self, state: WizardState | None = None, lang: str | None = None,
                 parent: QWidget | None = None, *, auto_detect: bool = True, lazy: bool = False) -> None:
        super().__init__(parent)
        self.state = state if state is not None else WizardState()
        if lang is not None or state is None:
            self.state.language = i18n.set_language(lang or i18n.system_language())
        self.auto_detect = auto_detect
        self.lazy = lazy
        self._painted = False
        self._closing = False
        self._screen_watched = False
        self._focus_kept = False
        self._focus_timer = QTimer(self)
        self._focus_timer.setSingleShot(True)
        self._focus_timer.setInterval(0)
        self._focus_timer.timeout.connect(self._settle_focus)
        self._started = False  # the pages are made and detection started (after the first paint)
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_step)
        self.setObjectName("SetupWizard")
        if not lazy:  # lazy: set after the first paint (the window manager shows it a moment later)
            self.setWindowIcon(app_icon())
        self._fit_screen()
        if sys.platform == "win32":
            # Qt's Windows default, AeroStyle, moves Back to an arrow in a title band that it draws
            # itself (empty where desktop composition is off: remote desktops, VMs). The classic
            # style keeps Back beside Next, where a beginner looks for it, as on Linux
            self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        opt = QWizard.WizardOption
        # NoDefaultButton: Return in a text field never presses Next, Install or Finish (it started the
        # install from the Environment page's fields, and closed the assistant from the Repair page);
        # a focused button still takes Return and Space, and each button its Alt shortcut
        self.setOptions((self.options() | opt.NoBackButtonOnStartPage | opt.NoCancelButtonOnLastPage
                         | opt.NoDefaultButton) & ~opt.HaveHelpButton)  # one call: each setOption() re-lays it out
        self.setPixmap(QWizard.WizardPixmap.LogoPixmap, logo_pixmap(self.devicePixelRatioF()))
        welcome = WelcomePage(self.state, self)
        welcome.defer_work = lazy
        self.setPage(int(PageId.WELCOME), welcome)
        self.setStartId(int(PageId.WELCOME))
        welcome.language_changed.connect(self._language_changed)
        self.currentIdChanged.connect(self._settle_focus_soon)
        if not lazy:
            self.build_pages()
        self.retranslate()

    def _available(self) -> QSize:
        """The room the window may take on its screen, in the screen's logical pixels (a 1366x768
        screen at 200 % gives 683x384): never more than the screen has, at any scale."""
        screen = self.screen()
        if screen is None:
            return MIN_SIZE
        geo = screen.availableGeometry()
        return QSize(max(geo.width() - SCREEN_MARGIN.width(), geo.width() // 2),
                     max(geo.height() - SCREEN_MARGIN.height(), geo.height() // 2))

    def _fit_screen(self) -> None:
        """The window's minimum and size within its screen: 900x640 where there is room, else what
        the screen offers (the pages scroll inside; the buttons stay on screen)."""
        room = self._available()
        self.setMinimumSize(MIN_SIZE.boundedTo(room))
        self.resize(self.size().expandedTo(self.minimumSize()).boundedTo(room) if self._painted
                    else self.minimumSize())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        handle = self.windowHandle()
        if handle is not None and not self._screen_watched:  # moved to another screen, or its scale changed
            self._screen_watched = True
            handle.screenChanged.connect(lambda _s: self._fit_screen())

    def pages_built(self) -> bool:
        return all(self.page(int(pid)) is not None for pid in PageId)

    def build_pages(self) -> None:
        """Create the pages after Welcome (idempotent)."""
        for pid in PageId:
            if self.page(int(pid)) is None:
                self._make_page(pid)
        if not self._focus_kept:  # (the Welcome page, built before the first paint)
            self._focus_kept = True
            self.welcome.keep_focus_on_controls()
        self.page(int(PageId.INSTALL)).setCommitPage(True)

    def _make_page(self, pid: PageId) -> None:
        page = page_class(pid)(self.state, self)
        self.setPage(int(pid), page)
        page.keep_focus_on_controls()
        page.completeChanged.connect(self._settle_focus_soon)
        if pid == PageId.INSTALL:
            page.setCommitPage(True)

    def _settle_focus_soon(self, *_args) -> None:
        self._focus_timer.start()  # (the wizard's child: it never fires once the window is gone)

    def _settle_focus(self) -> None:
        """Never a window without the keyboard's focus: when a page shows (or its work ends) and nothing of the
        window has the focus (the Next just pressed went grey while the page works), the button that goes on
        takes it as soon as it can be pressed."""
        from PySide6.QtWidgets import QApplication

        if not self.isVisible() or QApplication.activePopupWidget() is not None:  # (a list open: it has the keys)
            return
        focused = QApplication.focusWidget()
        if focused is not None and focused.isVisible() and focused.isEnabled() and self.isAncestorOf(focused):
            return
        for which in (QWizard.WizardButton.CommitButton, QWizard.WizardButton.NextButton,
                      QWizard.WizardButton.FinishButton):
            b = self.button(which)
            if b is not None and b.isVisible() and b.isEnabled():
                b.setFocus()
                return

    def nextId(self) -> int:
        """The two paths end at their own last page (the default would run on into the next id)."""
        if self.currentId() in LAST_PAGES:
            return -1
        return super().nextId()

    def validateCurrentPage(self) -> bool:
        if not self.pages_built():  # Next pressed before the other pages were made: say so, make them now
            self._get_ready()
        return super().validateCurrentPage()

    def _get_ready(self) -> None:
        """The pages not made yet, made at once, with a word and a busy cursor first (a Next pressed while the
        window was starting was answered seconds later, with nothing to show it had been pressed)."""
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QApplication

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        self.welcome.show_starting(self.tr("Getting the next steps ready…"))
        try:
            self.repaint()  # drawn now, before the pages are made
            self.build_pages()
        finally:
            QApplication.restoreOverrideCursor()
            self.welcome.show_starting("")

    # ---- pages by name ----
    @property
    def welcome(self) -> WelcomePage:
        page = self.page(int(PageId.WELCOME))
        assert isinstance(page, WelcomePage)
        return page

    @property
    def system_page(self):
        return self.page(int(PageId.SYSTEM))

    def _base_page(self, pid: int) -> BasePage | None:
        page = self.page(pid)
        return page if isinstance(page, BasePage) else None

    def page_for(self, pid: PageId):
        return self.page(int(pid))

    # ---- start-up: the window first, then the other pages, then detection ----
    def event(self, event) -> bool:
        if event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            QTimer.singleShot(0, self._after_first_paint)
        return super().event(event)

    def _after_first_paint(self) -> None:
        if not self.isVisible():  # closed before this turn of the event loop: start nothing
            return
        if self.lazy:
            ic = app_icon()
            self.setWindowIcon(ic)
            QGuiApplication.setWindowIcon(ic)  # dialogs and the task bar
        self._build_step()

    def _build_step(self) -> None:
        """One page made per turn of the event loop, then the bundle look-up and detection: a Next pressed
        meanwhile is answered at once (the pages were made in one go, seconds on a slow machine, while a
        click waited unseen)."""
        if not self.isVisible():
            return
        missing = next((pid for pid in PageId if self.page(int(pid)) is None), None)
        if missing is not None:
            self._make_page(missing)
            self._build_timer.start()  # (the wizard's child: it never fires once the window is gone)
            return
        if self._started:
            return
        self._started = True
        self.build_pages()  # (what is left to set once every page is there)
        self.welcome.check_bundle()
        if self.auto_detect:
            self.start_detection()

    def start_detection(self) -> None:
        if not self.pages_built():
            self.build_pages()
        if self.state.session.system is None and not self.system_page.is_busy():
            self.system_page.start_scan()

    # ---- closing ----
    def busy_pages(self) -> list[BasePage]:
        pages = (self._base_page(pid) for pid in self.pageIds())
        return [p for p in pages if p is not None and p.is_busy()]

    def install_busy(self) -> bool:
        page = self._base_page(int(PageId.INSTALL))
        return page is not None and page.is_busy()

    def confirm_cancel_install(self) -> bool:
        """Ask before stopping an install (tests replace this method)."""
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self, self.tr("Stop the installation?"),
            self.tr("PyTorch is being installed. If you close the window now, the installation is "
                    "cancelled and the half-made environment is removed.\n\nStop and close?"),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def reject(self) -> None:
        """Cancel button, Esc and the window's close button (QDialog.closeEvent) all come here;
        returning without hiding keeps the window open.

        During an install: ask; on "Yes" the install is cancelled and the window closes once
        the core has rolled back (the window stays responsive meanwhile, showing the install
        page's "Cancelling…"). Other work (detection, pre-flight) is short: it is cancelled
        and waited for.
        """
        if self._closing:
            return
        install = self.page(int(PageId.INSTALL))
        if self.install_busy():
            if not self.confirm_cancel_install():
                return
            from app.gui.pages.install import InstallPage  # built after the first paint: imported late

            if isinstance(install, InstallPage):
                self._closing = True
                self.setEnabled(False)  # no second click while the rollback runs

                def on_state(status: str) -> None:
                    if not install.is_busy():
                        install.state_changed.disconnect(on_state)
                        self._finish_reject()

                install.state_changed.connect(on_state)
                install.cancel()
                if not install.is_busy():  # it stopped at once
                    install.state_changed.disconnect(on_state)
                    self._finish_reject()
                return
        self._closing = True
        self._finish_reject()

    def done(self, result: int) -> None:
        """Finish or close: the early downloads stop (what they completed stays in the download folder)."""
        early = self.state.early
        if early is not None:
            early.stop(wait_s=2.0)  # type: ignore[attr-defined]
        super().done(result)

    def _finish_reject(self) -> None:
        try:
            for page in self.busy_pages():
                page.cancel_and_wait(60.0)
        finally:
            self._closing = False
            self.setEnabled(True)
        super().reject()

    # ---- language ----
    def _language_changed(self, lang: str) -> None:
        self.state.language = lang

    def changeEvent(self, event) -> None:
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
