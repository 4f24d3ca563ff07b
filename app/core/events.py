"""Typed events that long-running core calls report through a callback.

The GUI turns them into a progress bar and a live log; the CLI into a text bar.
Every event serialises with :func:`app.core.serial.to_jsonable`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Union


@dataclass(frozen=True)
class PhaseEvent:
    """A named phase started or finished ("create-env", "install", "verify", ...)."""

    name: str
    state: Literal["start", "end", "failed", "skipped"]
    detail: str = ""
    kind: str = "phase"


@dataclass(frozen=True)
class LogEvent:
    """One line of a child process's output (or of the assistant's own narration)."""

    text: str
    stream: Literal["stdout", "stderr", "info"] = "stdout"
    kind: str = "log"


@dataclass(frozen=True)
class ProgressEvent:
    """Download / work progress. ``total`` of 0 means unknown."""

    package: str
    done_bytes: int
    total_bytes: int
    kind: str = "progress"
    #: "bytes" (a download) or "packages" (done/total packages, where the installer does not
    #: report bytes: then ``done_bytes``/``total_bytes`` count packages).
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
    data: dict | None = None
    kind: str = "step"


@dataclass(frozen=True)
class WarningEvent:
    text: str
    kind: str = "warning"


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    hint: str = ""
    log_path: str | None = None
    kind: str = "error"


Event = Union[PhaseEvent, LogEvent, ProgressEvent, StepEvent, WarningEvent, ErrorEvent]
EventCallback = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """The default callback: drop events."""
