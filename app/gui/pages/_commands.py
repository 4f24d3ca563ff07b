"""Commands as the user reads and pastes them: one argument list per line, quoted for this OS's
shell (:mod:`app.core.base.shells`: PowerShell on Windows, whose terminal opens it by default; POSIX
elsewhere)."""
from __future__ import annotations

from collections.abc import Sequence

from app.core.base import shells


def command_text(argv, shell: str | None = None) -> str:
    """The argument list as one line the user can paste into ``shell`` (this OS's by default)."""
    if not argv:
        return ""
    if isinstance(argv, str):
        return argv
    return shells.join([str(a) for a in argv], shell)


def commands_text(argvs: Sequence[Sequence[str]], shell: str | None = None) -> str:
    """Several commands, one per line, in the order they run."""
    return "\n".join(command_text(list(a), shell) for a in argvs if a)
