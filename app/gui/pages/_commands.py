"""Commands as the user reads and pastes them: one argument list per line, quoted for this OS's shell."""
from __future__ import annotations

import os
import shlex
from collections.abc import Sequence


def command_text(argv) -> str:
    """The argument list as one line the user can paste into their shell."""
    if not argv:
        return ""
    if isinstance(argv, str):
        return argv
    if os.name == "nt":
        return " ".join(f'"{a}"' if (" " in a or not a) else a for a in map(str, argv))
    return shlex.join(str(a) for a in argv)


def commands_text(argvs: Sequence[Sequence[str]]) -> str:
    """Several commands, one per line, in the order they run."""
    return "\n".join(command_text(list(a)) for a in argvs if a)
