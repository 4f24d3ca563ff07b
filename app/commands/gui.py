"""``torch-setup gui [--lang zh_CN] [--screenshot-dir DIR]``: the setup wizard.

``torch-setup`` with no command calls :func:`launch` with no arguments. This module only
parses the arguments: the application itself (and Qt) is :mod:`app.gui.app`, loaded when
the wizard opens, so the rest of the CLI stays free of Qt.
"""
from __future__ import annotations

import argparse
from typing import Any


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", metavar="LANG", default=None,
                   help="language of the window: en or zh_CN (default: the system's)")
    p.add_argument("--screenshot-dir", metavar="DIR", default=None,
                   help="save a PNG of every page (English and Chinese) into DIR and exit")
    p.add_argument("--quit-after-show", action="store_true", help=argparse.SUPPRESS)


def register(sub: Any) -> None:
    p = sub.add_parser("gui", help="open the setup wizard (the default with no command)",
                       description="Open the setup wizard.")
    _add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    argv: list[str] = []
    if args.lang:
        argv += ["--lang", args.lang]
    if args.screenshot_dir:
        argv += ["--screenshot-dir", args.screenshot_dir]
    if getattr(args, "quit_after_show", False):
        argv.append("--quit-after-show")
    return launch(argv)


def launch(argv: list[str] | None = None) -> int:
    """Parse the wizard's arguments and open it (returns the application's exit status)."""
    if not argv:  # ``torch-setup`` alone: nothing to parse (start-up time)
        from app.gui.app import launch as open_wizard

        return open_wizard()
    parser = argparse.ArgumentParser(prog="torch-setup gui")
    _add_arguments(parser)
    args = parser.parse_args(list(argv or []))
    from app.gui.app import launch as open_wizard  # Qt loads only when the wizard opens

    return open_wizard(lang=args.lang, screenshot_dir=args.screenshot_dir, quit_after_show=args.quit_after_show)
