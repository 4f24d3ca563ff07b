"""``torch-setup install``: create an environment and install PyTorch into it.

Without ``--packages`` / ``--from-bundle`` it detects this machine and installs what
``recommend`` chose (the recommend overrides --backend/--variant/--torch apply). It shows
the plan and the pre-flight, asks before changing anything (unless ``--yes``), shows
progress, and ends with the verification summary. The steps are the session's
(:meth:`app.core.pipeline.session.Session.run_all`); this module parses, asks and shows.

The environment's lock (:mod:`app.core.base.locks`) is held from before the plan to the end of the
verification: a second run into the same folder is refused at once (exit 2, naming the run
that holds it).

Exit codes: 0 installed (and verified), 1 failed (rolled back) or installed but the
verification failed (the environment is kept and the message says so), 2 bad input or refused
by the pre-flight (nothing was done), 130 / 143 / 129 cancelled by SIGINT (Ctrl-C) / SIGTERM /
SIGHUP (rolled back; during the verification the installed environment is kept and the
message says so).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING

from app.commands._args import add_build_overrides, add_json, add_packages, python_spec
from app.commands._render import Console, Renderer, SignalCancel, cancel_on_signals, confirm, print_plan
from app.commands.unattended import run_unattended
from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import EXIT_FAILED, EXIT_OK, BadInput, Cancelled, UserError
from app.core.base.events import PhaseEvent
from app.core.base.locations import folder_path
from app.core.base.text import msg
from app.core.pipeline.session import Observer, Planned, RunOptions, Session
from app.core.proc.runner import CancelToken

if TYPE_CHECKING:  # start-up: the core is imported when the command runs, not when it registers
    from app.core.base import locks
    from app.core.detection.system import SystemReport
    from app.core.install import InstallPlan, InstallRequest, InstallResult
    from app.core.measure.verify import VerifyReport
    from app.core.recommend import Choices, Recommendation
    from app.core.sources import Availability


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared with ``bundle``: what to install and where it comes from."""
    add_build_overrides(p)
    add_packages(p, "REQ", "install exactly these requirements (e.g. torch==2.13.0 torchvision) "
                           "instead of the recommendation's")
    p.add_argument("--index-url", metavar="URL",
                   help="the index for the torch packages (default: the recommendation's, "
                        "e.g. https://download.pytorch.org/whl/cu126); a mirror of it works too")
    p.add_argument("--extra-index-url", metavar="URL", action="append", default=[],
                   help="an additional index (repeatable)")
    p.add_argument("--find-links", metavar="DIR", action="append", default=[],
                   help="a folder (or URL) of wheels to use as well (repeatable); what the folders hold "
                        "bounds the recommendation, and when they hold everything no index is used")
    p.add_argument("--mirrors", metavar="auto|off|ID,URL,...", default="auto",
                   help="mirrors of the PyTorch index: auto (the catalogue's, only when the PyTorch server "
                        "fails), off, or catalogue ids / URLs tried after it (docs/mirrors.md)")


def register(sub) -> None:
    p = sub.add_parser(
        "install", help="create an environment and install PyTorch into it",
        description="Create a Python environment and install the right PyTorch build into it. "
                    "Exit codes: 0 installed and verified, 1 failed (rolled back) or installed but "
                    "the verification failed (the environment is kept), 2 bad input or refused "
                    "before anything was done (also: another run is changing that environment), "
                    "130/143/129 cancelled by SIGINT/SIGTERM/SIGHUP (rolled back).")
    p.add_argument("--env", metavar="PATH", help="the environment folder (new, or existing "
                                                 "with --existing)")
    p.add_argument("--kind", choices=("venv", "conda"), default="venv",
                   help="environment type (default: venv)")
    p.add_argument("--installer", choices=("uv", "pip"), default="uv",
                   help="uv (default, fast) or pip")
    p.add_argument("--python", metavar="X.Y|PATH", type=python_spec,
                   help='the Python of the new env: a version like "3.11" or an interpreter path')
    add_source_arguments(p)
    p.add_argument("--from-bundle", metavar="DIR",
                   help="install from an offline bundle (no network is used)")
    p.add_argument("--default-index-url", metavar="URL",
                   help="a mirror that replaces PyPI for the packages other than torch")
    p.add_argument("--ca-bundle", metavar="FILE",
                   help='a CA certificate file for HTTPS (or "system" for the OS trust store)')
    p.add_argument("--proxy", metavar="URL",
                   help="an HTTP(S) proxy (default: HTTPS_PROXY/HTTP_PROXY from the environment)")
    p.add_argument("--existing", action="store_true",
                   help="add to an existing environment (it is snapshotted and restored if "
                        "anything fails)")
    p.add_argument("--no-verify", action="store_true", help="skip the verification afterwards")
    p.add_argument("--vcredist", metavar="FILE",
                   help="Windows: run this vc_redist.x64.exe (Microsoft's Visual C++ runtime, from "
                        "https://aka.ms/vc14/vc_redist.x64.exe) with /install /quiet /norestart before "
                        "installing (asks first unless --yes)")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_json(p, "print the result as JSON")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="print every line of the installer's output")
    p.add_argument("--config", metavar="FILE",
                   help="an answer file for unattended installs (see docs)")
    p.add_argument("--lock", metavar="FILE",
                   help="reproduce a pylock.toml (torch-setup export): the same versions and files, checked by "
                        "sha256; refused before anything is created when its build cannot run here")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan this machine would approve (with its pre-flight) and create nothing")
    p.add_argument("--from-report", metavar="FILE",
                   help="with --dry-run: plan for the machine a saved detect report describes (its pre-flight "
                        "is that machine's to run)")
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- run

def choices_for(args: argparse.Namespace) -> Choices:
    """The recommendation overrides of the command line: --backend/--variant/--torch/--python."""
    from app.core.recommend import Choices

    return Choices(backend=args.backend, variant=args.variant, torch=args.torch,
                   python=args.python if args.python and "." in args.python
                   and os.sep not in args.python else None)


def recommend_for(args: argparse.Namespace, report: SystemReport,
                  available: Availability | None = None) -> Recommendation:
    """The recommendation for ``report`` with the command line's overrides (``bundle`` uses it),
    over what ``available`` sources hold (None: every release counts as available)."""
    from app.core.recommend import recommend

    return recommend(report, None, choices_for(args), sources=available)


def detect_machine() -> SystemReport:
    from app.core.detection.detect import detect

    return detect()


def build_request(args: argparse.Namespace) -> InstallRequest:
    """The InstallRequest for parsed ``args``; without --packages / --from-bundle it names no
    packages, and the session installs its recommendation."""
    from app.core.install import InstallRequest
    from app.core.sources.settings import SourceSettings, parse_mirrors

    if not args.env:
        raise BadInput("No environment folder was given.", hint="Pass --env PATH.")
    if args.from_bundle and args.packages:
        raise BadInput("--from-bundle and --packages cannot be combined: the bundle decides "
                       "the packages.")
    return InstallRequest(
        env_path=args.env, kind=args.kind, installer=args.installer, python=args.python,
        packages=tuple(args.packages) if args.packages else None,
        sources=SourceSettings(torch_index=args.index_url, extra_index_urls=tuple(args.extra_index_url or ()),
                               find_links=tuple(args.find_links or ()),
                               bundle=folder_path(args.from_bundle) if args.from_bundle else None, proxy=args.proxy,
                               ca_bundle=args.ca_bundle, default_index=args.default_index_url,
                               mirrors=parse_mirrors(args.mirrors)),
        existing=args.existing)


class _Terminal(Observer):
    """The plan and its checks, the question, and the verification as phases of the progress."""

    def __init__(self, args: argparse.Namespace, out: Console, renderer: Renderer, cancel: CancelToken,
                 stack: ExitStack) -> None:
        self.args, self.out, self.renderer, self.cancel, self.stack = args, out, renderer, cancel, stack
        self.signals: SignalCancel | None = None
        self.verify_error = ""  # why the verification could not run ("" when it ran)

    def planned(self, planned: Planned) -> None:
        if not self.args.json:
            print_plan(planned.plan, planned.checks, self.out)

    def approved(self, plan: InstallPlan) -> None:
        confirm(self.args, self.out)
        # From here on SIGINT / SIGTERM / SIGHUP stop the installer and roll back (until the run ends).
        self.signals = self.stack.enter_context(
            cancel_on_signals(self.cancel, self.out, "stopping the installer and rolling back"))

    def installed(self, result: InstallResult) -> None:
        if self.signals is not None:
            self.signals.what = f"stopping the verification; the installed environment {result.env_path} is kept"

    def verifying(self) -> None:
        self.renderer(PhaseEvent(Phase.VERIFY, PhaseState.START))

    def verified(self, report: VerifyReport) -> None:
        self.renderer(PhaseEvent(Phase.VERIFY, PhaseState.END))

    def verify_failed(self, error: UserError) -> None:
        self.verify_error = f"could not run: {error.message}"
        self.renderer(PhaseEvent(Phase.VERIFY, PhaseState.FAILED, error.message))


_NOT_WITH_LOCK = ("packages", "from_bundle", "torch", "variant", "backend")


def with_lock(args: argparse.Namespace, request: InstallRequest) -> InstallRequest:
    """``--lock FILE``: the request made the lock's (its pins, Python and sources); the lock decides
    the packages, so the options that name packages or a build are refused beside it."""
    from app.commands._lab import refuse_beside_lock
    from app.core.install.lockplan import lock_request
    from app.core.pylock.lockfile import read_lock

    refuse_beside_lock(args, _NOT_WITH_LOCK)
    return lock_request(request, read_lock(args.lock))


def run(args: argparse.Namespace) -> int:
    if getattr(args, "from_report", None) and not getattr(args, "dry_run", False):
        raise BadInput(msg("lab.report_needs_dry_run", "--from-report plans for another machine: it goes with "
                           "--dry-run only."),
                       hint=msg("lab.report_needs_dry_run_hint", "Add --dry-run, or leave --from-report out to "
                                "install on this machine."))
    if getattr(args, "config", None):
        return run_unattended(args)
    from app.core.base import locks

    request = build_request(args)
    if getattr(args, "lock", None):
        request = with_lock(args, request)
    if getattr(args, "dry_run", False):
        from app.commands._lab import machine
        from app.commands.dryrun import dry_run

        return dry_run(args, request, choices_for(args),
                       report=machine(args.from_report) if args.from_report else None)
    # held from the plan to the end of the verification: a second run is refused at once
    with locks.env_lock(args.env, "install") as lock:
        return _run_locked(args, request, lock)


def run_vcredist_first(args: argparse.Namespace, out: Console) -> None:
    """``--vcredist FILE``: Microsoft's runtime installer, run once the user confirmed (or --yes)."""
    from app.core.base.shells import current_shell, join
    from app.core.base.text import render
    from app.core.install.winchecks import VCREDIST_ARGS, run_vcredist

    if os.name != "nt":
        raise BadInput("--vcredist is for Windows: the Visual C++ runtime exists only there.")
    print(f"The Visual C++ runtime installer will run: {join([args.vcredist, *VCREDIST_ARGS], current_shell())} "
          "(Windows asks for an administrator's permission).", file=out)
    confirm(args, out)
    result = run_vcredist(args.vcredist)
    if not result.ok:
        raise BadInput(result.message, hint="Get it from https://aka.ms/vc14/vc_redist.x64.exe, run it yourself, "
                       "then run this command again without --vcredist.")
    print(render(result.message), file=out)


def _run_locked(args: argparse.Namespace, request: InstallRequest, lock: locks.EnvLock) -> int:
    if getattr(args, "vcredist", None):
        run_vcredist_first(args, Console(sys.stderr))
    session = Session(source="cli")
    # Detection only when the recommendation is needed; a verification that cannot run is reported, not fatal.
    # a lock is checked against this machine before anything is created: its report is needed then
    options = RunOptions(detect=request.lock is not None, verify=not args.no_verify, strict=False)
    cancel = CancelToken()
    out = Console(sys.stderr)
    renderer = Renderer(out, quiet=args.json, verbose=args.verbose)
    try:
        with ExitStack() as stack:
            terminal = _Terminal(args, out, renderer, cancel, stack)
            try:
                result = session.run_all(request, choices=choices_for(args), options=options, observer=terminal,
                                         on_event=renderer, cancel=cancel, lock=lock)
            except Cancelled:
                done = session.install_result
                if done is None:
                    raise
                # the install is complete: only the verification stopped, and the env stays
                raise Cancelled(f"The install is complete; the verification was cancelled. The environment is "
                                f"kept: {done.env_path}.", log_path=done.log_path) from None
    finally:
        renderer.close()
    plan, verify = session.approved_plan, session.verify_report
    assert plan is not None  # run_all installed it
    stdout = Console(sys.stdout)
    if args.json:
        payload = {"install": result.to_dict(), "plan": plan.to_dict(),
                   "verify": verify.to_dict() if verify is not None else None}
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str), file=stdout)
    else:
        _print_summary(result, verify, stdout)
    failed = terminal.verify_error or (verify is not None and not verify.ok)
    if failed and not args.json:
        why = (terminal.verify_error or "failed").rstrip(".")
        print(f"torch-setup: PyTorch was installed into {result.env_path} (it is kept), but the verification "
              f"{why}. `torch-setup doctor --env {result.env_path}` explains the cause.", file=out)
    return EXIT_FAILED if failed else EXIT_OK


def _print_summary(result: InstallResult, verify: VerifyReport | None, out: Console) -> None:
    print(f"Installed torch {result.torch_version or '(not installed)'} into {result.env_path} "
          f"in {result.duration_s:.1f} s.", file=out)
    print(f"Python: {result.python}", file=out)
    if verify is not None:
        status = "passed" if verify.ok else "FAILED"
        passed = sum(1 for c in verify.checks if c.status == "passed")
        print(f"Verification {status} ({passed} of {len(verify.checks)} checks passed):", file=out)
        skipped = [c for c in verify.checks if c.status == "skipped"]
        for c in verify.checks:
            if c.status != "skipped":
                print(f"  [{c.status:6}] {c.title or c.name}: {c.detail}", file=out)
        if skipped:
            print(f"  [skip  ] {len(skipped)} check(s) skipped: {skipped[0].detail}", file=out)
    print(f"Log: {result.log_path}", file=out)
