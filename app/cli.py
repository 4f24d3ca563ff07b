"""``torch-setup``: the headless front end over the same core the wizard uses.

Each sub-command lives in ``app/commands/<name>.py`` and defines ``register(sub)``;
importing this module stays cheap (no Qt, no torch, no psutil) so that e.g.
``recommend --from-report`` answers fast.

Exit codes: 0 success, 1 failed (anything half-made was rolled back), 2 bad input
(nothing was done), 130 cancelled (rolled back).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys

from app import __version__
from app.core.errors import EXIT_BAD_INPUT, EXIT_CANCELLED, UserError

COMMANDS = ("detect", "recommend", "install", "bundle", "verify", "bench", "doctor", "envs", "upgrade", "cache", "gui")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # bad usage is "bad input": exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``only`` (a command name) just that sub-command is registered, so a
    command such as ``recommend --from-report`` does not pay for importing the others."""
    parser = _Parser(
        prog="torch-setup",
        description="Install PyTorch for this machine's accelerator, verify it and measure it. "
                    "With no command, the setup wizard opens.",
    )
    parser.add_argument("--version", action="version", version=f"torch-setup {__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="detect, build the wizard offscreen, show each page, and exit 0 or "
                             "print what failed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(f"app.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"app.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    # No words at all opens the wizard: only the gui command's parser is needed (start-up time).
    only = (words[0] if words[0] in COMMANDS else None) if words else "gui"
    parser = build_parser(only)
    args = parser.parse_args(argv)
    try:
        if args.self_test:
            from app.selftest import main as self_test

            return self_test()
        if not args.command:
            from app.commands.gui import launch

            return launch([])
        return int(args.func(args) or 0)
    except UserError as err:
        if getattr(args, "json", False):
            print(json.dumps(err.to_dict(), indent=2, ensure_ascii=False))
        else:
            print(f"torch-setup: {err.render()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("torch-setup: cancelled.", file=sys.stderr)
        return EXIT_CANCELLED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
