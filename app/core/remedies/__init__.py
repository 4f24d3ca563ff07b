"""Failures turned into fixes: the catalogue that reads what uv, pip, conda, the OS, the network
and torch printed, and says what happened and what can be done, as typed actions.

* :func:`diagnose` (output lines, :class:`Context`) -> :class:`Remedy` s, each with a plain
  explanation, the tool's own reasoning in words, and :class:`Action` s;
* :func:`failure_lines` the output lines to show: the error lines and the tool's reasoning
  (uv's "Because …" lines, pip's conflict list), which a plain error filter would drop;
* :func:`os_error_text` an OSError in words (translated);
* :mod:`app.core.remedies.commands`: an action as the command line that applies it.

The wizard renders actions as buttons, the CLI as commands, answer-file runs write them into
the report (see :meth:`app.core.base.errors.UserError.to_dict`).
"""
from __future__ import annotations

from collections.abc import Sequence

from app.core.base.oserrors import errno_text, os_error_text
from app.core.base.text import Msg, msg
from app.core.remedies.catalogue import CATALOGUE, Entry, diagnose
from app.core.remedies.reasons import explain_reasoning, reasoning_lines, suggested_torch
from app.core.remedies.types import Action, ActionKind, Context, Remedy, Step

__all__ = [
    "CATALOGUE", "Action", "ActionKind", "Context", "Entry", "Remedy", "Step", "diagnose", "errno_text",
    "explain_reasoning", "failure_lines", "os_error_text", "reasoning_lines", "run_outcome", "suggested_torch",
]

_ERROR_WORDS = ("error", "failed", "exception", "traceback", "denied", "no space", "not found",
                "could not", "cannot", "unable", "refused", "timed out", "no matching", "killed",
                "hint:", "help:", "forbidden", "too long", "too old", "read-only", "mismatch", "no solution")


def failure_lines(lines: Sequence[str], limit: int = 16) -> list[str]:
    """The lines a person needs: those that look like errors plus the tool's reasoning, in their
    order (the last ``limit``); the last lines when none does."""
    reasoning = set(reasoning_lines(lines))
    picked = [ln for ln in lines if ln in reasoning or any(w in ln.lower() for w in _ERROR_WORDS)]
    if not picked:
        picked = list(lines)
    return [ln[:300] for ln in picked[-limit:]]


def run_outcome(returncode: int | None, *, timed_out: bool = False, duration_s: float = 0.0,
                start_error: str | None = None) -> Msg:
    """How a command ended, in words: "exit code 1", "timed out after 30.0 s", …"""
    if start_error:
        return msg("remedy.outcome_not_started", "it could not be started: {reason}", reason=start_error)
    if timed_out:
        return msg("remedy.outcome_timed_out", "timed out after {seconds:.1f} s", seconds=duration_s)
    if returncode is not None and returncode < 0:
        return msg("remedy.outcome_killed", "killed by signal {signal}", signal=-returncode)
    return msg("remedy.outcome_exit", "exit code {code}", code=returncode)
