"""What every page of the wizard shares: the state, live retranslation, a scrollable body."""
from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget, QWizardPage

from app.gui.state import WizardState


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
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self.body = QVBoxLayout(inner)
        self.body.setContentsMargins(2, 2, 12, 2)
        self.body.setSpacing(10)
        self.scroll.setWidget(inner)
        outer.addWidget(self.scroll)

    def retranslate(self) -> None:  # pragma: no cover - every page overrides it
        pass

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # Pages that run one core call at a time keep it in ``_task`` and set ``_pending`` while
    # it runs; pages with other work (several tasks, a debounce timer) override both methods.
    _task = None
    _pending = False

    def is_busy(self) -> bool:
        """True while the page runs core work (the wizard asks before closing)."""
        return self._pending

    def cancel_and_wait(self, timeout: float = 30.0) -> None:
        """Stop the page's work (the wizard calls this when the window closes)."""
        if self._task is not None:
            self._task.cancel()
            self._task.wait(timeout)
        self._pending = False
