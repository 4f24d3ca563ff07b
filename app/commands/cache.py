"""``torch-setup cache [--json] [prune [--yes]]``: the uv and pip download caches, and pruning them.

Exit codes: 0 done, 1 a prune failed, 2 refused (no confirmation).
"""
from __future__ import annotations

import argparse
import json
import sys

from app.commands.envs import ask
from app.core.errors import EXIT_FAILED, EXIT_OK
from app.core.text import render


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
    ask(args, "Prune the uv and pip caches?", sys.stderr)
    results = prune()
    if args.json:
        print(json.dumps({"pruned": [r.to_dict() for r in results]}, indent=2))
    else:
        for r in results:
            state = "ok" if r.ok else "FAILED"
            print(f"{r.tool:4} {state}: {human_bytes(r.before)} -> {human_bytes(r.after)} "
                  f"(freed {human_bytes(r.freed)})" + (f"  {r.detail}" if not r.ok and r.detail else ""))
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED
