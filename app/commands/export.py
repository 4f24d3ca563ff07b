"""``torch-setup export``: hand on a verified environment.

    torch-setup export --env ENV [--out pylock.toml]                 a PEP 751 lock of exactly what ENV holds
    torch-setup export --env ENV --format apptainer|dockerfile [--out FILE] [--lock pylock.toml]
                                                                      a container recipe that installs that lock

The lock pins every package with its file (index URL or local path) and sha256, names the torch
build and the index it came from, the Python, and the machine the environment was verified on
(:mod:`app.core.lab.export`). Install it elsewhere with ``torch-setup install --env PATH --lock
pylock.toml`` (or ``uv pip install -r pylock.toml``), or build an offline bundle of it with
``torch-setup bundle --lock pylock.toml --out DIR``.

Exit codes: 0 written, every package locked; 1 written, but some packages could not be locked
(each is named, with the reason); 2 bad input or refused (an environment without a passed
verification, an output file that exists without --force): nothing was written.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.commands._args import add_command, add_env, add_from_report
from app.commands._lab import machine, say
from app.core.base.errors import EXIT_FAILED, EXIT_OK, BadInput
from app.core.base.text import msg

DEFAULT_OUT = {"pylock": "pylock.toml", "apptainer": "torch-env.def", "dockerfile": "Dockerfile"}


def register(sub) -> None:
    p = add_command(sub, "export", "hand on a verified environment: a pylock.toml (PEP 751) or a container recipe",
                    "Write a PEP 751 pylock.toml of exactly what an environment holds (every file with its sha256, "
                    "the torch build and its index, the Python, the machine it was verified on), or an Apptainer / "
                    "Docker recipe that installs it. Exit codes: 0 written, 1 written but some packages could not "
                    "be locked (named), 2 bad input or refused (nothing written).", run,
                    json_help="print what was written as JSON")
    add_env(p, "the environment to export (one torch-setup made or checked)")
    p.add_argument("--out", metavar="FILE", help="where to write (default: pylock.toml, torch-env.def or Dockerfile "
                                                 "in this folder); a recipe's lock is written beside it")
    p.add_argument("--format", choices=("pylock", "apptainer", "dockerfile"), default="pylock",
                   help="pylock (default), or a container recipe that installs the lock")
    p.add_argument("--lock", metavar="FILE", help="with --format apptainer|dockerfile: use this lock instead of "
                                                  "exporting one")
    add_from_report(p, "the machine the environment was verified on, as a saved detect report (default: detect "
                       "this machine)")
    p.add_argument("--find-links", metavar="DIR", action="append", default=[],
                   help="a wheel folder the packages may have come from, besides those recorded (repeatable)")
    p.add_argument("--index-url", metavar="URL", action="append", default=[],
                   help="an index to read the packages' pages from, with its credentials if it needs them (they "
                        "are used, never written: the lock keeps the URL without them); repeatable")
    p.add_argument("--unverified", action="store_true",
                   help="export even when the environment has not passed a verification (the lock says so)")
    p.add_argument("--force", action="store_true", help="replace output files that exist")
    p.add_argument("--proxy", metavar="URL", help="an HTTP(S) proxy for reading the index pages")
    p.add_argument("--ca-bundle", metavar="FILE", help='a CA certificate file (or "system")')


def _refuse_existing(paths: list[Path], force: bool) -> None:
    there = [p for p in paths if p.exists()]
    if there and not force:
        raise BadInput(msg("lab.out_exists", "--out: {path} exists; it is not replaced.", path=str(there[0])),
                       hint=msg("lab.out_exists_hint", "Choose another file, or pass --force to replace it."))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _export(args: argparse.Namespace):
    from app.core.install.config import default_index_for
    from app.core.lab.export import env_path_of, export_env

    env = env_path_of(args.env)
    return export_env(env, machine(args.from_report), default_index=default_index_for("uv"),
                      find_links=args.find_links, indexes=args.index_url, allow_unverified=args.unverified,
                      proxy=args.proxy,
                      ca_bundle=args.ca_bundle)


def run(args: argparse.Namespace) -> int:
    from app.core.pylock.lockfile import lock_name_problem, lock_text, read_lock

    fmt = args.format
    out = Path(args.out or DEFAULT_OUT[fmt]).absolute()
    if args.lock and fmt == "pylock":
        raise BadInput(msg("lab.lock_with_pylock", "--lock is for the container recipes: with --format pylock the "
                           "lock is what is written."), hint=msg("lab.lock_with_pylock_hint",
                                                                 "Pass --format apptainer or --format dockerfile."))
    lock_path = out if fmt == "pylock" else (Path(args.lock).absolute() if args.lock else out.parent / "pylock.toml")
    problem = lock_name_problem(lock_path) if fmt == "pylock" or not args.lock else None
    if problem is not None:
        raise BadInput(msg("lab.bad_lock_name", "--out: {problem}.", problem=problem),
                       hint=msg("lab.bad_lock_name_hint", "Name it pylock.toml, or pylock.NAME.toml (uv and pip look "
                                "for these names)."))
    _refuse_existing([out] if fmt == "pylock" or args.lock else [out, lock_path], args.force)
    if args.lock:
        lock, notes = read_lock(lock_path), ()
    else:
        exported = _export(args)
        lock, notes = exported.lock, exported.notes
        _write(lock_path, lock_text(lock))
    recipe = None
    if fmt != "pylock":
        from app.core.lab.recipes import write_recipe

        if lock_path.parent != out.parent:
            raise BadInput(msg("lab.recipe_lock_elsewhere", "--lock: {lock} must be in the recipe's folder {folder} "
                               "(the container build copies it from there).", lock=str(lock_path),
                               folder=str(out.parent)))
        recipe = write_recipe(fmt, lock, lock_path, out, lock.env_vars)
    _show(args, lock, lock_path, notes, recipe)
    return EXIT_FAILED if lock.not_locked else EXIT_OK


def _show(args: argparse.Namespace, lock, lock_path: Path, notes, recipe) -> None:
    from app.core.base.serial import dumps
    from app.core.base.text import render

    if args.json:
        doc = {"lock": str(lock_path), "packages": len(lock.packages), "torch": lock.torch, "variant": lock.variant,
               "torch_index": lock.sources.torch_index, "python": lock.python,
               "machine": lock.machine.describe() if lock.machine else None,
               "verified": lock.verified.ok if lock.verified else None,
               "not_locked": [{"name": n.name, "version": n.version, "why": n.why} for n in lock.not_locked],
               "notes": [render(n) for n in notes], "recipe": recipe.to_dict() if recipe else None}
        print(dumps(doc))
        return
    say(msg("lab.exported", "{path}: {count} packages pinned by sha256; torch {torch} from {index}; Python {python}; "
            "verified on {machine}.", path=str(lock_path), count=len(lock.hashed), torch=lock.torch or "?",
            index=lock.sources.torch_index or "?", python=lock.python,
            machine=lock.machine.describe() if lock.machine else "?"))
    for n in notes:
        say(n, sys.stderr)
    if recipe is not None:
        say(msg("lab.recipe_written", "{recipe}: a recipe that installs the lock ({count} local file(s) copied to "
                "{folder}).", recipe=str(recipe.path), count=len(recipe.wheels),
                folder=str(recipe.path.parent / "wheels")))
    else:
        say(msg("lab.export_next", "Reproduce it: torch-setup install --env PATH --lock {path}", path=str(lock_path)))
