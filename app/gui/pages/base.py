"""What every page of the wizard shares: the state, live retranslation, a scrollable body."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget, QWizardPage

from app.gui.state import WizardState

if TYPE_CHECKING:
    from app.gui.worker import Task


class BasePage(QWizardPage):
    """A page with ``self.state`` and a ``retranslate()`` called on every language change.

    Subclasses build their widgets in ``__init__``, put them in ``self.body`` (a vertical
    layout inside a scroll area, so long content never pushes the buttons off screen), say
    what the page is called in ``titles()`` and set every other user-visible text in
    ``retranslate_page()``; ``retranslate()`` applies both (at the end of ``__init__`` and
    on every language change).
    """

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state if state is not None else WizardState()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroll_area = QScrollArea()  # (not ``scroll``: QWidget.scroll is a method)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self.body = QVBoxLayout(inner)
        self.body.setContentsMargins(2, 2, 12, 2)
        self.body.setSpacing(10)
        self.scroll_area.setWidget(inner)
        outer.addWidget(self.scroll_area)

    def keep_focus_on_controls(self) -> None:
        """The scroll area never takes the focus itself: the wizard gives a new page's first focusable child
        the focus, which was this unnamed area on every page (a screen reader said nothing); now it is the
        page's first control. The area still scrolls to the control that has the focus, and with the wheel.
        (Called once the window is painted: the Qt namespace is not loaded before the first paint.)"""
        from PySide6.QtCore import Qt

        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    #: the page's title and subtitle, marked for translation in the page's class (``QT_TR_NOOP``)
    TITLES: tuple[object, object] = ("", "")  # QT_TRANSLATE_NOOP gives back its text (typed object)

    def titles(self) -> tuple[str, str]:
        """The page's title and subtitle in the current language (a page whose titles depend on
        its state overrides this)."""
        title, subtitle = (str(t) for t in self.TITLES)
        return (self.tr(title) if title else "", self.tr(subtitle) if subtitle else "")

    def retranslate_page(self) -> None:  # pragma: no cover - every page overrides it
        """The page's own texts in the current language."""

    def retranslate(self) -> None:
        """Every text of the page in the current language: the title and subtitle, then the rest."""
        title, subtitle = self.titles()
        self.setTitle(title)
        self.setSubTitle(subtitle)
        self.scroll_area.setAccessibleName(title)
        self.retranslate_page()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # A page that runs one core call at a time keeps its Task in ``_task``; a page may also
    # set ``_pending`` from starting the task until its "finished" reaches the GUI thread
    # (so nothing reads a half-delivered result). Tasks a page runs beside it (the Verify
    # page's diagnosis, an Environments action, the Jupyter kernel) come from ``side_tasks``;
    # the Environment page, with its own bookkeeping, overrides both methods.
    _task: Task | None = None
    _pending = False

    def side_tasks(self) -> tuple[Task | None, ...]:
        """The tasks the page runs besides ``_task`` (None where there is none yet)."""
        return ()

    def start_task(self, task: Task, *, failed: Callable[[Any], None], finished: Callable[[], None],
                   redraw: Callable[[], None], succeeded: Callable[[Any], None] | None = None) -> None:
        """Run ``task`` as the page's core call: its signals go to the given slots, ``_pending``
        holds until its "finished" arrives, and the page redraws and tells the wizard at once."""
        self._task = task
        if succeeded is not None:
            task.succeeded.connect(succeeded)
        task.failed.connect(failed)
        task.finished.connect(finished)
        self._pending = True
        task.start()
        redraw()
        self.completeChanged.emit()

    def is_busy(self) -> bool:
        """True while the page runs core work (the wizard asks before closing)."""
        return self._pending or any(t is not None and t.is_running() for t in (self._task, *self.side_tasks()))

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        """Stop the page's work and wait until the core has cleaned up (the wizard calls this
        when the window closes; seconds, ``timeout_ms`` also accepted). True when nothing
        runs any more."""
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        done = True
        for task in (self._task, *self.side_tasks()):
            if task is not None and task.is_running():
                task.cancel()
                done = task.wait(timeout) and done
        self._pending = False
        return done
