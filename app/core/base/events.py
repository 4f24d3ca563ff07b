"""Typed events that long-running core calls report through a callback.

The GUI turns them into a progress bar and a live log; the CLI into a text bar.
Every event serialises with :func:`app.core.base.serial.to_jsonable`.

Phases are :class:`~app.core.base.enums.Phase` members (a plain ``"install"`` given by a caller is
turned into ``Phase.INSTALL``; an unknown name is refused, so no presenter meets a phase its
label table does not know). Sentences shown to people (a phase's detail, a warning) are
:data:`~app.core.base.text.Text`: presenters render them in their language.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.base.enums import Phase, PhaseState
from app.core.base.text import Text

__all__ = [
    "ErrorEvent",
    "Event",
    "EventCallback",
    "LogEvent",
    "PhaseEvent",
    "ProgressEvent",
    "StepEvent",
    "WarningEvent",
    "ignore",
]


@dataclass(frozen=True)
class PhaseEvent:
    """A phase started or finished (``Phase.CREATE_ENV``, ``Phase.INSTALL``, ...)."""

    name: Phase
    state: PhaseState
    detail: Text = ""
    kind: str = "phase"

    def __post_init__(self) -> None:
        # Callers may pass the plain values ("install", "end"); the event always holds members.
        object.__setattr__(self, "name", Phase(self.name))
        object.__setattr__(self, "state", PhaseState(self.state))


@dataclass(frozen=True)
class LogEvent:
    """One line of a child process's output (or of the assistant's own narration)."""

    text: str
    stream: str = "stdout"  # stdout | stderr | info (the assistant's own lines)
    kind: str = "log"


@dataclass(frozen=True)
class ProgressEvent:
    """Download / work progress. ``total`` of 0 means unknown."""

    package: str
    done_bytes: int
    total_bytes: int
    kind: str = "progress"
    #: "bytes" (a download) or "packages" (done/total packages, where the installer does not
    #: report bytes: then ``done_bytes``/``total_bytes`` count packages), "unpacked" (bytes on
    #: disk), "installed" (``package``'s downloaded wheel went into the environment while others
    #: still download; ``done_bytes``/``total_bytes`` count those wheels).
    unit: str = "bytes"

    @property
    def fraction(self) -> float | None:
        return self.done_bytes / self.total_bytes if self.total_bytes > 0 else None


@dataclass(frozen=True)
class StepEvent:
    """A probe's step (verify check, bench measurement) with a status."""

    name: str
    status: str
    detail: str = ""
    data: dict[str, Any] | None = None
    kind: str = "step"


@dataclass(frozen=True)
class WarningEvent:
    text: Text
    kind: str = "warning"


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    hint: str = ""
    log_path: str | None = None
    kind: str = "error"


Event = PhaseEvent | LogEvent | ProgressEvent | StepEvent | WarningEvent | ErrorEvent
EventCallback = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """The default callback: drop events."""
