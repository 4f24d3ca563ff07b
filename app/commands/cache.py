"""``torch-setup cache [--json] [prune [--yes]]``: the uv and pip download caches, and pruning them.

Exit codes: 0 done, 1 a prune failed, 2 refused (no confirmation, or a cache folder that is not the
tool's: a variable naming a folder of the user's files; it is left untouched).
"""
from __future__ import annotations

import argparse
import json
import sys

from app.commands.envs import ask
from app.core.base.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from app.core.base.text import render


def register(sub) -> None:
    p = sub.add_parser("cache", help="how big the uv and pip caches are; `cache prune` shrinks them",
                       description="Report the uv and pip cache folders and sizes; `prune` runs `uv cache prune` and "
                                   "`pip cache purge`.")
    p.add_argument("action", nargs="?", choices=("prune",), help="prune the caches")
    p.add_argument("--yes", "-y", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.core.lifecycle.cache import caches, prune
    from app.core.lifecycle.sizes import human_bytes

    found = caches()
    if args.action != "prune":
        if args.json:
            print(json.dumps({"caches": [c.to_dict() for c in found]}, indent=2))
            return EXIT_OK
        for c in found:
            size = "-" if c.size is None else ("≥" if not c.size.complete else "") + human_bytes(c.size.bytes)
            note = f"  ({render(c.note)})" if c.note else ""
            print(f"{c.tool:4} {size:>10}  {c.path or '?'}{note}")
        print("`torch-setup cache prune` removes what no environment needs any more.")
        return EXIT_OK
    # what will go, before it goes (on stderr: --json's output stays one document)
    print("Pruning:", file=sys.stderr)
    for c in found:
        if c.path is None or c.size is None:
            continue
        size = ("≥" if not c.size.complete else "") + human_bytes(c.size.bytes)
        if c.foreign:
            print(f"  {c.tool}: NOT pruned: {render(c.refusal())}", file=sys.stderr)
        elif c.tool == "uv":
            print(f"  uv:  {c.path} ({size}): `uv cache prune` removes the entries no environment uses",
                  file=sys.stderr)
        else:
            print(f"  pip: {c.path} ({size}): `pip cache purge` deletes every wheel and download kept there",
                  file=sys.stderr)
    if not any(c.prunable for c in found):
        print("  nothing to prune", file=sys.stderr)
    else:
        ask(args, "Prune the caches above?", sys.stderr)
    results = prune(found=found)
    if args.json:
        print(json.dumps({"pruned": [r.to_dict() for r in results]}, indent=2))
    else:
        for r in results:
            state = "ok" if r.ok else "FAILED"
            if r.refused:
                print(f"{r.tool:4} left alone: {r.detail}")
                continue
            print(f"{r.tool:4} {state}: {human_bytes(r.before)} -> {human_bytes(r.after)} "
                  f"(freed {human_bytes(r.freed)})" + (f"  {r.detail}" if not r.ok and r.detail else ""))
    if any(not r.ok and not r.refused for r in results):
        return EXIT_FAILED
    return EXIT_BAD_INPUT if any(r.refused for r in results) else EXIT_OK
