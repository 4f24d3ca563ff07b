"""``torch-setup envs``: the PyTorch environments on this machine, and caring for them.

    envs list [--json] [--no-size] [--all]    the registry's envs and the PyTorch envs found
    envs check ENV [--json]                   verify + doctor, recorded
    envs repair ENV [--torch VER] [--yes]     reinstall the right build (snapshot, restore on failure)
    envs guard ENV / envs unguard ENV         pin / unpin the verified torch build for later installs
    envs kernel ENV [--remove]                a Jupyter kernel for the env (--system: for every user)
    envs module ENV --out DIR                 Lmod / Environment Modules modulefiles that load it
    envs terminal ENV                         how to activate it (paste into a terminal)
    envs remove ENV [--force] [--yes]         delete it (only an env; only one this app made)
    envs forget ENV                           drop it from the list (nothing deleted)

Exit codes: 0 done, 1 failed (what was changed was put back), 2 refused or bad input (nothing
was done), 130 cancelled.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO

from app.commands._render import Renderer, cancel_on_signals
from app.core.base.errors import EXIT_FAILED, EXIT_OK, BadInput
from app.core.base.serial import dumps
from app.core.base.text import render

if TYPE_CHECKING:  # start-up: the core is imported when a command runs
    from app.core.lifecycle.discover import FoundEnv


def register(sub) -> None:
    p = sub.add_parser("envs", help="list, check, repair, guard, remove the PyTorch environments on this machine",
                       description="The environments this assistant made (and the PyTorch environments it finds), "
                                   "and what can be done with them. Exit codes: 0 done, 1 failed (changes were put "
                                   "back), 2 refused (nothing was done), 130 cancelled.")
    s = p.add_subparsers(dest="envs_command", metavar="ACTION", required=True)

    a = s.add_parser("list", help="the environments, with their torch build, Python, size and status")
    a.add_argument("--json", action="store_true")
    a.add_argument("--no-size", action="store_true", help="do not measure sizes (faster)")
    a.add_argument("--all", action="store_true", help="also environments without PyTorch")
    a.set_defaults(func=run_list)

    a = s.add_parser("check", help="verify PyTorch in an environment and diagnose it; the result is recorded")
    a.add_argument("env", metavar="ENV")
    a.add_argument("--expect", choices=("cuda", "rocm", "mps", "xpu", "cpu"))
    a.add_argument("--no-dist", action="store_true", help="skip the two-process all_reduce check")
    a.add_argument("--from-report", metavar="FILE", help="a SystemReport describing the machine")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_check)

    a = s.add_parser("repair", help="reinstall the right PyTorch build for this machine, keeping other packages")
    a.add_argument("env", metavar="ENV")
    _source_args(a)
    a.add_argument("--installer", choices=("uv", "pip"))
    a.add_argument("--from-report", metavar="FILE")
    a.add_argument("--yes", "-y", action="store_true")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_repair)

    for name, fn, text in (("guard", run_guard, "pin the verified torch build for later pip / uv installs"),
                           ("unguard", run_unguard, "lift the torch guard")):
        a = s.add_parser(name, help=text)
        a.add_argument("env", metavar="ENV")
        a.add_argument("--json", action="store_true")
        a.set_defaults(func=fn)

    a = s.add_parser("kernel", help="register (or --remove) a Jupyter kernel for the environment")
    a.add_argument("env", metavar="ENV")
    a.add_argument("--remove", action="store_true")
    a.add_argument("--system", action="store_true",
                   help="for every user of this machine (a JupyterHub server): Jupyter's system folder, the name "
                        "says the GPU the environment was verified on")
    a.add_argument("--prefix", metavar="DIR",
                   help="with --system: install under DIR/share/jupyter/kernels (a JupyterHub's own prefix)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_kernel)

    a = s.add_parser("module", help="write Lmod and Environment Modules modulefiles that load the environment")
    a.add_argument("env", metavar="ENV")
    a.add_argument("--out", metavar="DIR", required=True, help="the modulefiles folder (module use DIR)")
    a.add_argument("--name", metavar="NAME", help="the module's name (default: the environment folder's name)")
    a.add_argument("--from-report", metavar="FILE", help="the machine, as a saved detect report (default: this one)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_module)

    a = s.add_parser("terminal", help="print the command that activates the environment in a terminal")
    a.add_argument("env", metavar="ENV")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_terminal)

    a = s.add_parser("remove", help="delete an environment (only a Python environment; only one this app made "
                                    "unless --force)")
    a.add_argument("env", metavar="ENV")
    a.add_argument("--force", action="store_true", help="also an environment this app did not make")
    a.add_argument("--yes", "-y", action="store_true", help="do not ask")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run_remove)

    a = s.add_parser("forget", help="drop an environment from the list (nothing is deleted)")
    a.add_argument("env", metavar="ENV")
    a.set_defaults(func=run_forget)


def _source_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--torch", metavar="VERSION", help="the torch version (default: the one installed)")
    a.add_argument("--variant", help="force a build: cpu, cu126, cu130, rocm6.4 …")
    a.add_argument("--backend", choices=("cpu", "cuda", "rocm", "mps", "xpu"))
    a.add_argument("--packages", nargs="+", metavar="REQ", help="exactly these torch packages (pinned)")
    a.add_argument("--index-url", metavar="URL", help="the index for the torch packages")
    a.add_argument("--extra-index-url", metavar="URL", action="append", default=[])
    a.add_argument("--find-links", metavar="DIR", action="append", default=[])
    a.add_argument("--default-index-url", metavar="URL", help="a mirror replacing PyPI for the other packages")


def ask(args: argparse.Namespace, question: str, out: TextIO) -> None:
    """Ask before changing anything, unless ``--yes``; no terminal to ask on is a refusal (exit 2)."""
    if getattr(args, "yes", False):
        return
    from app.core.base.consoles import stdin_is_terminal

    if not stdin_is_terminal():
        raise BadInput("Refusing without confirmation: standard input is not a terminal; nothing was done.",
                       hint="Pass --yes to go ahead.")
    out.flush()
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:  # end of input typed at the prompt (Ctrl-D, Ctrl-Z): no
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise BadInput("Not confirmed; nothing was done.")


def _report(args: argparse.Namespace):
    if getattr(args, "from_report", None):
        from app.core.detection.system import load_report

        return load_report(args.from_report)
    return None


# --------------------------------------------------------------------------- list

def _row(e: FoundEnv) -> list[str]:
    from app.core.lifecycle.sizes import human_bytes

    torch = e.torch.describe() if e.torch is not None else "-"
    size = "-" if e.size is None else (("≥" if not e.size.complete else "") + human_bytes(e.size.bytes))
    check = (e.last_check or "never")[:16].replace("T", " ")
    mark = "*" if e.made_by_app else " "
    return [mark + e.path, torch, e.python or "?", size, check, e.status]


def run_list(args: argparse.Namespace) -> int:
    from app.core.env import registry
    from app.core.lifecycle.discover import discover

    reg = registry.load()
    found = discover(with_size=not args.no_size, only_torch=not args.all)
    if args.json:
        print(json.dumps({"schema_version": 1, "registry": str(registry.registry_file()),
                          "registry_problem": render(reg.problem) if reg.problem else None,
                          "environments": [e.to_dict() for e in found]}, indent=2, ensure_ascii=False))
        return EXIT_OK
    if reg.problem:
        print(f"Note: {render(reg.problem)}", file=sys.stderr)
    if not found:
        print("No PyTorch environment was found. Make one with `torch-setup install --env PATH`.")
        return EXIT_OK
    head = ["ENVIRONMENT (* made here)", "TORCH (BUILD)", "PYTHON", "SIZE", "LAST CHECK", "STATUS"]
    rows = [head, *(_row(e) for e in found)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    for e in found:
        if e.status not in ("ok", "unchecked"):
            print(f"  {e.path}: {render(e.status_text)}")
    return EXIT_OK


# --------------------------------------------------------------------------- check / repair

def run_check(args: argparse.Namespace) -> int:
    from app.commands.doctor import render as render_diag
    from app.commands.verify import render as render_verify
    from app.core.lifecycle.check import check_env
    from app.core.proc.runner import CancelToken

    cancel = CancelToken()
    renderer = Renderer(sys.stderr, quiet=args.json)
    try:
        with cancel_on_signals(cancel, sys.stderr, "stopping the check"):
            res = check_env(args.env, report=_report(args), expect=args.expect, distributed=not args.no_dist,
                            on_event=renderer, cancel=cancel)
    finally:
        renderer.close()
    if args.json:
        print(dumps(res))
    else:
        if res.verify is not None:
            print(render_verify(res.verify))
        else:
            print(f"The verification could not run: {res.probe_error}")
        if res.diagnosis is not None:
            print()
            print(render_diag(res.diagnosis))
        g = res.guard
        print()
        print("Torch guard: " + ("on (" + ", ".join(g.pins) + ")" if g.active else "off"))
    return EXIT_OK if res.ok else EXIT_FAILED


def run_repair(args: argparse.Namespace) -> int:
    from app.core.lifecycle.repair import plan_repair, repair
    from app.core.proc.runner import CancelToken

    out = sys.stderr
    p = plan_repair(args.env, torch=args.torch, variant=args.variant, backend=args.backend, packages=args.packages,
                    index_url=args.index_url, extra_index_urls=args.extra_index_url, find_links=args.find_links,
                    default_index_url=args.default_index_url, installer=args.installer, report=_report(args))
    if not args.json:
        cur = p.current.describe() if p.current is not None else "no torch"
        print(f"Environment : {p.env}", file=out)
        print(f"Now         : {cur}", file=out)
        print(f"Reinstall   : {' '.join(p.packages)}", file=out)
        if p.install_plan.index.torch_index:
            print(f"Torch index : {p.install_plan.index.torch_index}", file=out)
        print("Other packages stay; the environment is snapshotted and restored if anything fails.", file=out)
        for n in (*p.notes, *p.companions.warnings):
            print(f"Note        : {render(n)}", file=out)
    ask(args, "Repair this environment?", out)
    cancel = CancelToken()
    renderer = Renderer(out, quiet=args.json)
    try:
        with cancel_on_signals(cancel, out, "stopping the repair and restoring the environment"):
            res = repair(p, on_event=renderer, cancel=cancel)
    finally:
        renderer.close()
    if args.json:
        print(dumps(res))
    else:
        v = res.verify
        passed = sum(1 for c in v.checks if c.status == "passed")
        print(f"Repaired {res.env}: torch {res.install.torch_version}; verification passed ({passed} checks).")
        print("Torch guard: " + ("on (" + ", ".join(res.guard.pins) + ")" if res.guard.active else "off"))
    return EXIT_OK


# --------------------------------------------------------------------------- guard

def run_guard(args: argparse.Namespace) -> int:
    from app.core.env import guard
    from app.core.lifecycle.common import env_root
    from app.core.lifecycle.protect import guard_env

    env = env_root(args.env)
    st = guard_env(env)
    if args.json:
        print(dumps(st))
    else:
        print(f"Torch guard on for {env}: " + ", ".join(st.pins))
        print(f"  pip: {guard.pip_config_file(env)} names {env / guard.CONSTRAINTS_FILE}")
        print("  uv: " + ("UV_CONSTRAINT while the environment is active (bin/activate)" if st.activate_hook
                          else "not guarded (" + "; ".join(render(n) for n in st.notes) + ")"))
        print("  `uv pip install --python ...` from outside the activated environment is not guarded; "
              "`torch-setup doctor` names such a change afterwards.")
    return EXIT_OK


def run_unguard(args: argparse.Namespace) -> int:
    from app.core.lifecycle.common import env_root
    from app.core.lifecycle.protect import unguard_env

    env = env_root(args.env)
    st = unguard_env(env)
    if args.json:
        print(dumps(st))
    else:
        print(f"Torch guard lifted for {env}: later installs may change torch again "
              f"(`torch-setup envs guard {env}` puts it back).")
    return EXIT_OK


# --------------------------------------------------------------------------- kernel / terminal

def run_kernel(args: argparse.Namespace) -> int:
    from app.core.lifecycle.kernel import install_kernel, remove_kernel

    if args.remove:
        folder = remove_kernel(args.env)
        print(json.dumps({"removed": folder}) if args.json else f"Removed the Jupyter kernel at {folder}.")
        return EXIT_OK
    if args.prefix and not args.system:
        from app.core.base.text import msg

        raise BadInput(msg("lab.prefix_needs_system", "--prefix: it goes with --system (a kernel for every user)."),
                       hint=msg("lab.prefix_needs_system_hint", "Add --system, or leave --prefix out for a kernel of "
                                "your own."))
    renderer = Renderer(sys.stderr, quiet=args.json)
    try:
        kr = install_kernel(args.env, on_event=renderer, system=args.system, prefix=args.prefix)
    finally:
        renderer.close()
    if args.json:
        print(dumps(kr))
    else:
        print(f'Jupyter kernel "{kr.display_name}" ({kr.name}) registered in {kr.path}.')
    return EXIT_OK


def run_module(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.commands._lab import machine, say
    from app.core.base.text import msg
    from app.core.lab.modules import env_modulefiles
    from app.core.lifecycle.common import env_root

    env = env_root(args.env)
    files = env_modulefiles(env, Path(args.out).absolute(), machine(args.from_report), name=args.name)
    if args.json:
        print(dumps(files))
        return EXIT_OK
    say(msg("lab.module_written", "Modulefiles written: {lua} (Lmod) and {tcl} (Environment Modules). Load the "
            "environment with: module use {out} && module load {load}", lua=str(files.lua), tcl=str(files.tcl),
            out=str(Path(args.out).absolute()), load=f"{files.name}/{files.version}"))
    return EXIT_OK


def run_terminal(args: argparse.Namespace) -> int:
    from app.core.lifecycle.common import env_root
    from app.core.lifecycle.terminal import activation

    env = env_root(args.env)
    acts = activation(env)
    if args.json:
        print(json.dumps({"env": str(env), "activate": [a.to_dict() for a in acts]}, indent=2))
        return EXIT_OK
    print(f"To use {env} in a terminal, run:")
    for a in acts:
        print(f"  {a.command}        ({a.shell})")
        if a.note:
            print(f"    {render(a.note)}")
    return EXIT_OK


# --------------------------------------------------------------------------- remove / forget

def run_remove(args: argparse.Namespace) -> int:
    from app.core.lifecycle.remove import plan_remove, remove

    out = sys.stderr
    p = plan_remove(args.env, force=args.force)
    if not args.json:
        print("This deletes:", file=out)
        print(f"  {render(p.summary)}", file=out)
        shown = ", ".join(p.top[:12]) + (" …" if len(p.top) > 12 else "")
        print(f"  top level: {shown}", file=out)
        for n in p.notes:
            print(f"  {render(n)}", file=out)
        if not p.record or not p.record.made_by_app:
            print("  (not in this assistant's list of the environments it made: --force was given)", file=out)
    ask(args, "Delete it?", out)
    res = remove(p)
    if args.json:
        print(json.dumps({"plan": p.to_dict(), "result": res.to_dict()}, indent=2, ensure_ascii=False))
    elif res.removed:
        print(f"Removed {res.path}.")
    for problem in res.problems:
        print(f"  problem: {problem}", file=out)
    return EXIT_OK if res.removed and not res.problems else EXIT_FAILED


def run_forget(args: argparse.Namespace) -> int:
    import os

    from app.core.env import registry

    path = os.path.abspath(os.path.expanduser(args.env))
    if registry.find(path) is None:
        raise BadInput(f"{path} is not in the list of environments.")
    registry.forget(path)
    print(f"{path} was dropped from the list (nothing was deleted).")
    return EXIT_OK
