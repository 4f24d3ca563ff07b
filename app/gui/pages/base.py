"""What every page of the wizard shares: the state, live retranslation, a scrollable body."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget, QWizardPage

from app.gui.state import WizardState

if TYPE_CHECKING:
    from app.gui.worker import Task


class BasePage(QWizardPage):
    """A page with ``self.state`` and a ``retranslate()`` called on every language change.

    Subclasses build their widgets in ``__init__``, put them in ``self.body`` (a vertical
    layout inside a scroll area, so long content never pushes the buttons off screen), and
    set every user-visible text in ``retranslate()``.
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

    def retranslate(self) -> None:  # pragma: no cover - every page overrides it
        pass

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # A page that runs one core call at a time keeps its Task in ``_task``; a page may also
    # set ``_pending`` from starting the task until its "finished" reaches the GUI thread
    # (so nothing reads a half-delivered result). Pages with more work (the Environment
    # page's several tasks, the Verify page's diagnosis) extend or override both methods.
    _task: Task | None = None
    _pending = False

    def is_busy(self) -> bool:
        """True while the page runs core work (the wizard asks before closing)."""
        return self._pending or (self._task is not None and self._task.is_running())

    def cancel_and_wait(self, timeout: float = 30.0, *, timeout_ms: int | None = None) -> bool:
        """Stop the page's work and wait until the core has cleaned up (the wizard calls this
        when the window closes; seconds, ``timeout_ms`` also accepted). True when nothing
        runs any more."""
        if timeout_ms is not None:
            timeout = timeout_ms / 1000.0
        task = self._task
        done = True
        if task is not None and task.is_running():
            task.cancel()
            done = task.wait(timeout)
        self._pending = False
        return done
