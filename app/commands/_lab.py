"""What the lab commands (``export``, ``fleet``, ``envs module``, ``install --lock``) share: their
sentences in the language ``TORCH_SETUP_LANG`` names (English by default; the core's texts carry
both), and the machine a command speaks about (a saved report, or this one detected)."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from app.core.base.text import Text, normalise_lang, render

if TYPE_CHECKING:  # start-up: detection loads only when a command needs the machine
    from app.core.detection.system import SystemReport

__all__ = ["lang", "machine", "refuse_beside_lock", "say"]


def lang() -> str:
    return normalise_lang(os.environ.get("TORCH_SETUP_LANG"))


def say(text: Text, stream: TextIO | None = None) -> None:
    """One sentence for the user, in their language."""
    print(render(text, lang()), file=stream if stream is not None else sys.stdout)


def machine(from_report: str | None) -> SystemReport:
    """The machine a command is about: the report given, else this one (detected now)."""
    if from_report:
        from app.core.detection.system import load_report

        return load_report(from_report)
    from app.core.detection.detect import detect

    return detect()


def refuse_beside_lock(args: object, options: tuple[str, ...]) -> None:
    """``--lock`` decides the packages and the build: the first of ``options`` given beside it is refused (exit 2)."""
    from app.core.base.errors import BadInput
    from app.core.base.text import msg

    given = [o for o in options if getattr(args, o, None)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise BadInput(msg("lab.lock_conflict", "--lock: {flag} cannot be combined with it: the lock decides the "
                           "packages and the build.", flag=flag),
                       hint=msg("lab.lock_conflict_hint", "Drop {flag}, or install without --lock.", flag=flag))
