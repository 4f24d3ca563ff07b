"""``torch-setup upgrade --env ENV [--torch VER]``: a safe torch upgrade (staging, verify, swap; undo).

    upgrade --env E [--torch 2.14] [--yes]   build the new stack next to E, verify it, swap it in
    upgrade --env E --undo                   put the old environment back
    upgrade --env E --confirm                keep the upgrade: delete the old copy

Exit codes: 0 done, 1 failed (the environment was not changed), 2 refused (nothing was done),
130 cancelled (nothing was changed).
"""
from __future__ import annotations

import argparse
import json
import sys

from app.commands._render import Renderer, cancel_on_signals
from app.commands.envs import ask
from app.core.base.errors import EXIT_OK
from app.core.base.serial import dumps
from app.core.base.text import render


def register(sub) -> None:
    p = sub.add_parser("upgrade", help="upgrade PyTorch in an environment safely (staged, verified, undoable)",
                       description="Build the new PyTorch stack in a staging environment next to ENV, verify it on "
                                   "this machine, then swap it in. The old environment stays until --confirm; "
                                   "--undo puts it back. A failed verification leaves ENV unchanged.")
    p.add_argument("--env", required=True, metavar="ENV", help="the environment folder")
    p.add_argument("--torch", metavar="VERSION", help="the torch version to go to (default: the newest that fits)")
    p.add_argument("--variant", help="force a build: cpu, cu126, cu130, rocm6.4 …")
    p.add_argument("--backend", choices=("cpu", "cuda", "rocm", "mps", "xpu"))
    p.add_argument("--packages", nargs="+", metavar="REQ",
                   help="exactly these torch packages (e.g. torch==2.14.1), instead of the recommendation")
    p.add_argument("--index-url", metavar="URL", help="the index for the torch packages")
    p.add_argument("--extra-index-url", metavar="URL", action="append", default=[])
    p.add_argument("--find-links", metavar="DIR", action="append", default=[])
    p.add_argument("--default-index-url", metavar="URL", help="a mirror replacing PyPI for the other packages")
    p.add_argument("--expect", choices=("cuda", "rocm", "mps", "xpu"),
                   help="the accelerator the new build must use in the verification")
    p.add_argument("--from-report", metavar="FILE", help="a SystemReport describing the machine")
    p.add_argument("--timeout", type=float, metavar="S", help="give up on one installer step after S seconds")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--undo", action="store_true", help="put the environment from before the upgrade back")
    what.add_argument("--confirm", action="store_true", help="keep the upgrade and delete the old copy")
    p.add_argument("--yes", "-y", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.core.lifecycle import upgrade as up
    from app.core.proc.runner import CancelToken

    out = sys.stderr
    if args.undo or args.confirm:
        ask(args, "Put the old environment back?" if args.undo else "Delete the old copy of the environment?", out)
        done = up.undo(args.env) if args.undo else up.confirm(args.env)
        if args.json:
            print(json.dumps(done, indent=2))
            return EXIT_OK
        if done.get("recovered"):
            print(f"Note: an interrupted upgrade was found: {done['recovered']}.", file=out)
        if args.undo:
            print(f"Put back {done['env']} with torch {done['restored_torch']}; the upgraded copy was deleted.")
        else:
            print(f"Kept the upgrade of {done['env']}; deleted {done['deleted']}.")
        return EXIT_OK
    report = None
    if args.from_report:
        from app.core.detection.system import load_report

        report = load_report(args.from_report)
    p = up.plan_upgrade(args.env, torch=args.torch, packages=args.packages, variant=args.variant,
                        backend=args.backend, index_url=args.index_url, extra_index_urls=args.extra_index_url,
                        find_links=args.find_links, default_index_url=args.default_index_url, expect=args.expect,
                        report=report, timeout_s=args.timeout)
    if not args.json:
        print(f"Environment : {p.env} (torch {p.current.describe()}, Python {p.python_version or '?'})", file=out)
        print(f"New stack   : {' '.join(p.packages)}", file=out)
        if p.index.torch_index:
            print(f"Torch index : {p.index.torch_index}", file=out)
        print(f"Kept        : {len(p.keep)} other package(s) at their versions", file=out)
        print(f"Staging     : {p.staging}", file=out)
        for n in p.notes:
            print(f"Note        : {render(n)}", file=out)
        print("Nothing in the environment changes unless the new stack passes verification.", file=out)
    ask(args, "Upgrade?", out)
    cancel = CancelToken()
    renderer = Renderer(out, quiet=args.json)
    try:
        with cancel_on_signals(cancel, out, "stopping the upgrade (the environment stays as it was)"):
            res = up.upgrade(p, on_event=renderer, cancel=cancel)
    finally:
        renderer.close()
    if args.json:
        print(dumps(res))
    else:
        passed = sum(1 for c in res.verify.checks if c.status == "passed")
        print(f"Upgraded {res.env}: torch {res.old_torch} -> {res.new_torch} ({passed} checks passed, "
              f"{res.duration_s:.0f} s).")
        print(f"The old environment is kept at {res.old_copy}.")
        print(f"  keep the upgrade : torch-setup upgrade --env {res.env} --confirm")
        print(f"  go back          : torch-setup upgrade --env {res.env} --undo")
    return EXIT_OK
