"""The one user-facing error type.

Every failure that reaches a person is a :class:`UserError`: a plain-language message,
the few relevant lines (never the whole log), a hint saying what to do, and the path of
the full log. The CLI maps ``exit_code`` onto the process exit status.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANCELLED = 130


class UserError(Exception):
    """``message``, ``hint``, ``lines`` (the few relevant ones), ``log_path``, ``exit_code``.

    Written out by hand rather than as a dataclass (same fields, equality and repr): this
    module is imported before the wizard's first window, and the dataclass machinery would
    cost that window a few milliseconds.
    """

    __match_args__ = ("message", "hint", "lines", "log_path", "exit_code")
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    def __init__(self, message: str, hint: str = "", lines: list[str] | None = None, log_path: Path | None = None,
                 exit_code: int = EXIT_FAILED) -> None:
        self.message = message
        self.hint = hint
        self.lines: list[str] = lines if lines is not None else []
        self.log_path = log_path
        self.exit_code = exit_code
        super().__init__(self.message)

    def _fields(self) -> tuple[object, ...]:
        return (self.message, self.hint, self.lines, self.log_path, self.exit_code)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, UserError)
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(message={self.message!r}, hint={self.hint!r}, lines={self.lines!r}, "
                f"log_path={self.log_path!r}, exit_code={self.exit_code!r})")

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
