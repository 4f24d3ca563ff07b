"""The one user-facing error type.

Every failure that reaches a person is a :class:`UserError`: a plain-language message,
the few relevant lines (never the whole log), a hint saying what to do, and the path of
the full log. The CLI maps ``exit_code`` onto the process exit status.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANCELLED = 130


@dataclass
class UserError(Exception):
    message: str
    hint: str = ""
    lines: list[str] = field(default_factory=list)
    log_path: Path | None = None
    exit_code: int = EXIT_FAILED

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        out = [self.message]
        if self.lines:
            out.append("")
            out.extend("    " + ln for ln in self.lines)
        if self.hint:
            out.append("")
            out.append("What to do: " + self.hint)
        if self.log_path:
            out.append(f"Full log: {self.log_path}")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "lines": list(self.lines),
            "log_path": str(self.log_path) if self.log_path else None,
            "exit_code": self.exit_code,
        }


class BadInput(UserError):
    """The request itself is wrong (bad path, bad option, malformed file): nothing was done."""

    def __init__(self, message: str, hint: str = "", **kw: Any) -> None:
        kw.setdefault("exit_code", EXIT_BAD_INPUT)
        super().__init__(message, hint, **kw)


class Cancelled(UserError):
    """The user cancelled; whatever was half-made has been rolled back."""

    def __init__(self, message: str = "Cancelled.", hint: str = "", **kw: Any) -> None:
        kw.setdefault("exit_code", EXIT_CANCELLED)
        super().__init__(message, hint, **kw)
