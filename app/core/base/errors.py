"""The one user-facing error type.

Every failure that reaches a person is a :class:`UserError`: a plain-language ``message``, the
few relevant ``lines`` (never the whole log), a ``hint`` saying what to do, the path of the full
log, a stable ``code``, and the ``remedies`` the catalogue found (:mod:`app.core.remedies`: an
explanation and typed actions each). The CLI maps ``exit_code`` onto the process exit status.

``message`` and ``hint`` are texts (:data:`~app.core.base.text.Text`): the presenter renders them in
its language (``render(err.message, lang)``, :meth:`UserError.render`). A hint that depends on
the face (the wizard speaks of its controls, the command line of its options) is a
:class:`ForFace`. :meth:`UserError.to_dict` stays English, with the codes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from app.core.base.text import Joined, Msg, Text, msg, render

if TYPE_CHECKING:  # start-up: the actions load with the remedies that carry them
    from app.core.base.actions import Action, Remedy

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_CANCELLED", "EXIT_FAILED", "EXIT_OK", "BadInput", "Cancelled", "Face", "ForFace",
    "Hint", "UserError", "hint_text", "render_hint",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANCELLED = 130

Face = Literal["gui", "cli"]


@dataclass(frozen=True)
class ForFace:
    """A hint told differently by each face: ``gui`` names the wizard's controls ("choose another
    torch version with Change…"), ``cli`` the command-line options (``--torch``)."""

    gui: Text
    cli: Text

    @property
    def code(self) -> str:
        return self.cli.code if isinstance(self.cli, (Msg, Joined)) else "text.plain"

    def __str__(self) -> str:
        return render(self.cli)


Hint = Text | ForFace


def render_hint(hint: Hint, lang: str = "en", face: Face = "cli") -> str:
    """``hint`` in ``lang`` as ``face`` tells it."""
    if isinstance(hint, ForFace):
        return render(hint.gui if face == "gui" else hint.cli, lang)
    return render(hint, lang)


def hint_text(hint: Hint, face: Face = "gui") -> Text:
    """The text of ``hint`` as ``face`` tells it (unrendered)."""
    if isinstance(hint, ForFace):
        return hint.gui if face == "gui" else hint.cli
    return hint


def _code(text: Hint) -> str | None:
    if isinstance(text, ForFace):
        return text.code
    return text.code if isinstance(text, (Msg, Joined)) else None


@dataclass
class UserError(Exception):
    message: Text
    hint: Hint = ""
    lines: list[str] = field(default_factory=list)
    log_path: Path | None = None
    exit_code: int = EXIT_FAILED
    code: str | None = None  # what went wrong, stable across languages (default: the message's code)
    remedies: tuple[Remedy, ...] = ()

    def __post_init__(self) -> None:
        super().__init__(render(self.message))

    def __str__(self) -> str:
        return self.render()

    @property
    def error_code(self) -> str:
        """The stable code: the one given, else the first remedy's, else the message's."""
        if self.code:
            return self.code
        if self.remedies:
            return self.remedies[0].code
        return _code(self.message) or "error"

    @property
    def actions(self) -> tuple[Action, ...]:
        """The remedies' actions, in order, each once."""
        out: list[Action] = []
        for r in self.remedies:
            out.extend(a for a in r.actions if a not in out)
        return tuple(out)

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``."""
        return render(self.message, lang)

    def render(self, lang: str = "en", face: Face = "cli") -> str:
        """Message, lines, the remedies' explanations, the hint and the log, in ``lang``."""
        out = [render(self.message, lang)]
        if self.lines:
            out.append("")
            out.extend("    " + ln for ln in self.lines)
        for r in self.remedies:
            out.append("")
            out.append(render(r.explanation, lang))
            out.extend("  - " + render(d, lang) for d in r.details)
        if self.hint:
            out.append("")
            out.append(render(msg("errors.what_to_do", "What to do: {hint}", hint=render_hint(self.hint, lang, face)),
                              lang))
        if self.log_path:
            out.append(render(msg("errors.full_log", "Full log: {path}", path=str(self.log_path)), lang))
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """English texts (the JSON contract) with the codes, and the remedies as values."""
        return {
            "error": type(self).__name__,
            "code": self.error_code,
            "message": render(self.message),
            "message_code": _code(self.message),
            "hint": render_hint(self.hint) if self.hint else "",
            "hint_code": _code(self.hint) if self.hint else None,
            "lines": list(self.lines),
            "log_path": str(self.log_path) if self.log_path else None,
            "exit_code": self.exit_code,
            "remedies": [r.to_dict() for r in self.remedies],
            "actions": [a.to_dict() for a in self.actions],
        }


class BadInput(UserError):
    """The request itself is wrong (bad path, bad option, malformed file): nothing was done."""

    def __init__(self, message: Text, hint: Hint = "", **kw: Any) -> None:
        kw.setdefault("exit_code", EXIT_BAD_INPUT)
        super().__init__(message, hint, **kw)


class Cancelled(UserError):
    """The user cancelled; whatever was half-made has been rolled back."""

    def __init__(self, message: Text | None = None, hint: Hint = "", **kw: Any) -> None:
        kw.setdefault("exit_code", EXIT_CANCELLED)
        super().__init__(message if message is not None else msg("errors.cancelled", "Cancelled."), hint, **kw)
