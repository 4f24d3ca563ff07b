"""argparse value types shared by the commands: a wrong value is bad input (exit 2) naming the
flag ("argument --timeout: must be a number greater than 0, not '0'"), before anything runs.

Kept free of heavy imports: the parser is built on every start.
"""
from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["add_command", "add_env", "add_from_report", "add_json", "add_packages", "positive_float",
           "positive_int", "python_spec", "python_version", "requirement"]

_VERSION_LIKE = re.compile(r"^\d+(\.\d+)*$")
_PYTHON3 = re.compile(r"^3\.\d{1,2}$")


def positive_float(text: str) -> float:
    """A finite number greater than 0 (seconds, budgets)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (repeats, counts)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def python_spec(text: str) -> str:
    """A Python 3 version such as ``3.12``, or the path of an interpreter."""
    value = text.strip()
    if not value:
        raise argparse.ArgumentTypeError("needs a Python version such as 3.12, or the path of an interpreter")
    if _VERSION_LIKE.match(value) and not _PYTHON3.match(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a Python 3 version such as 3.12 (give X.Y, or the path "
                                         "of an interpreter)")
    if not _VERSION_LIKE.match(value):  # a path: usable as one (length, NUL) or refused naming the flag
        from app.core.base.schema import path_problem  # start-up: only when a path is given

        problem = path_problem(value)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
    return value


def python_version(text: str) -> str:
    """A Python 3 version ``X.Y`` (a bundle's target)."""
    value = text.strip()
    if not _PYTHON3.match(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a Python 3 version such as 3.12")
    return value


def requirement(text: str) -> str:
    """One package requirement (``torch``, ``torch==2.13.0``, a wheel path); never an option or empty."""
    from app.core.base.errors import BadInput, render_hint
    from app.core.base.requirements import requirement_name
    from app.core.base.text import render

    try:
        requirement_name(text, field="package")
    except BadInput as err:
        text = render(err.message).removeprefix("package: ")
        hint = f" ({render_hint(err.hint, 'en', 'cli')})" if err.hint else ""
        raise argparse.ArgumentTypeError(text + hint) from None
    return text.strip()


# ------------------------------------------------------------------ options several commands share


def add_command(sub: Any, name: str, summary: str, description: str,
                run: Callable[[argparse.Namespace], int], *, env: str | None = None,
                json_help: str | None = None) -> argparse.ArgumentParser:
    """The parser of command ``name`` (``summary`` in the list of commands, ``description`` atop its
    --help) that runs ``run``; with ``env``, its required ``--env PATH`` (that help text); with
    ``json_help``, its ``--json``."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=summary, description=description)
    p.set_defaults(func=run)
    if env is not None:
        add_env(p, env)
    if json_help is not None:
        add_json(p, json_help)
    return p


def add_env(p: argparse.ArgumentParser, help: str) -> None:
    """The required ``--env PATH``: the environment the command looks into."""
    p.add_argument("--env", required=True, metavar="PATH", help=help)


def add_from_report(p: argparse.ArgumentParser, help: str) -> None:
    """``--from-report FILE``: a saved SystemReport instead of detecting this machine."""
    p.add_argument("--from-report", metavar="FILE", help=help)


def add_json(p: argparse.ArgumentParser, help: str) -> None:
    """``--json``: print the command's result as JSON."""
    p.add_argument("--json", action="store_true", help=help)


def add_packages(p: argparse.ArgumentParser, metavar: str, help: str) -> None:
    """``--packages P ...``: requirements, each checked as one (never an option or empty)."""
    p.add_argument("--packages", nargs="+", metavar=metavar, type=requirement, help=help)


def add_build_overrides(p: argparse.ArgumentParser) -> None:
    """``--backend``, ``--variant`` and ``--torch``: the build wanted instead of the recommended one."""
    p.add_argument("--backend", choices=("cuda", "rocm", "xpu", "mps", "cpu"),
                   help="force a backend instead of the recommended one")
    p.add_argument("--variant", metavar="V", help="force a build: cu126, cu130, rocm6.4, xpu, cpu, mps, ...")
    p.add_argument("--torch", metavar="VERSION", help="pin a torch release, e.g. 2.14 or 2.14.1 (refused with "
                                                       "the reason when it cannot work here)")

