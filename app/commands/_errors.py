"""How the command line shows a failure (``torch-setup`` and answer-file runs alike)."""
from __future__ import annotations

import os
from collections.abc import Sequence

from app.core.base.errors import UserError, render_hint
from app.core.base.text import msg, render

__all__ = ["format_error"]


def format_error(err: UserError, argv: Sequence[str], lang: str = "en") -> str:
    """The error as the command line shows it: the message, the lines that matter, what the remedy
    catalogue made of it, and for each action the exact command that applies it (for a run from
    an answer file, the key to set there), then the hint and the log."""
    os_family = "windows" if os.name == "nt" else "linux"
    answers = "--config" in argv or any(a.startswith("--config=") for a in argv)
    out = [render(err.message, lang)]
    if err.lines:
        out += ["", *("    " + ln for ln in err.lines)]
    for r in err.remedies:
        out += ["", render(r.explanation, lang), *("  - " + render(d, lang) for d in r.details)]
    actions = err.actions
    if actions:
        from app.core.base.shells import current_shell
        from app.core.remedies.commands import cli_text  # start-up: only a failed run needs it

        shell = current_shell()  # the commands as the user's shell reads them (cmd, PowerShell, POSIX)
        out += ["", render(msg("cli.what_to_do", "What to do:"), lang)]
        out += [f"  {i}. " + render(cli_text(a, argv, os_family=os_family, answers=answers, shell=shell), lang)
                for i, a in enumerate(actions, 1)]
    if err.hint and actions:  # the actions above are "What to do"; the hint is another way, said once
        out += ["", render(msg("errors.or_else", "Otherwise: {hint}", hint=render_hint(err.hint, lang, "cli")), lang)]
    elif err.hint:
        out += ["", render(msg("errors.what_to_do", "What to do: {hint}", hint=render_hint(err.hint, lang, "cli")),
                           lang)]
    if err.log_path:
        out.append(render(msg("errors.full_log", "Full log: {path}", path=str(err.log_path)), lang))
    return "\n".join(out)
