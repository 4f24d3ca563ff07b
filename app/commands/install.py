"""``torch-setup install``: create an environment and install PyTorch into it.

Without ``--packages`` / ``--from-bundle`` it detects this machine and installs what
``recommend`` chose (the recommend overrides --backend/--variant/--torch apply). It shows
the plan and the pre-flight, asks before changing anything (unless ``--yes``), shows
progress, and ends with the verification summary.

Exit codes: 0 installed, 1 failed (rolled back), 2 bad input or refused by the pre-flight
(nothing was done), 130 cancelled (rolled back).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._render import Renderer, cancel_on_signals, confirm, print_plan
from app.commands.unattended import run_unattended
from app.core.enums import Phase, PhaseState
from app.core.errors import EXIT_CANCELLED, EXIT_OK, BadInput, UserError
from app.core.events import PhaseEvent

if TYPE_CHECKING:  # start-up: the core is imported when the command runs, not when it registers
    from app.core.install import InstallPlan, InstallRequest, InstallResult
    from app.core.recommend import Recommendation
    from app.core.runner import CancelToken
    from app.core.system import SystemReport
    from app.core.verify import VerifyReport


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared with ``bundle``: what to install and where it comes from."""
    p.add_argument("--backend", choices=("cpu", "cuda", "rocm", "mps", "xpu"),
                   help="override the recommended accelerator backend")
    p.add_argument("--variant", help="override the wheel variant (cpu, cu126, rocm6.4, xpu …)")
    p.add_argument("--torch", metavar="VERSION", help="override the torch version")
    p.add_argument("--packages", nargs="+", metavar="REQ",
                   help="install exactly these requirements (e.g. torch==2.13.0 torchvision) "
                        "instead of the recommendation's")
    p.add_argument("--index-url", metavar="URL",
                   help="the index for the torch packages (default: the recommendation's, "
                        "e.g. https://download.pytorch.org/whl/cu126); a mirror of it works too")
    p.add_argument("--extra-index-url", metavar="URL", action="append", default=[],
                   help="an additional index (repeatable)")
    p.add_argument("--find-links", metavar="DIR", action="append", default=[],
                   help="a folder (or URL) of wheels to use as well (repeatable)")


def register(sub) -> None:
    p = sub.add_parser(
        "install", help="create an environment and install PyTorch into it",
        description="Create a Python environment and install the right PyTorch build into it. "
                    "Exit codes: 0 installed, 1 failed (rolled back), 2 bad input or refused "
                    "before anything was done, 130 cancelled (rolled back).")
    p.add_argument("--env", metavar="PATH", help="the environment folder (new, or existing "
                                                 "with --existing)")
    p.add_argument("--kind", choices=("venv", "conda"), default="venv",
                   help="environment type (default: venv)")
    p.add_argument("--installer", choices=("uv", "pip"), default="uv",
                   help="uv (default, fast) or pip")
    p.add_argument("--python", metavar="X.Y|PATH",
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
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="print every line of the installer's output")
    p.add_argument("--config", metavar="FILE",
                   help="an answer file for unattended installs (see docs)")
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- run

def recommend_for(args: argparse.Namespace, report: SystemReport) -> Recommendation:
    """The recommendation for ``report`` with the command line's --backend/--variant/--torch/--python."""
    try:
        from app.core.recommend import Choices, recommend
    except ImportError as exc:
        raise UserError("The recommendation engine is not available in this build "
                        f"({exc}).", hint="Pass --packages (and --index-url) explicitly.") from None
    choices = Choices(backend=args.backend, variant=args.variant, torch=args.torch,
                      python=args.python if args.python and "." in args.python
                      and os.sep not in args.python else None)
    return recommend(report, None, choices)


def detect_machine() -> SystemReport:
    try:
        from app.core.detect import detect
    except ImportError as exc:
        raise UserError(f"System detection is not available in this build ({exc}).",
                        hint="Pass --packages explicitly.") from None
    return detect()


def build_request(args: argparse.Namespace, *,
                  report: SystemReport | None = None) -> tuple[InstallRequest, SystemReport | None]:
    """The InstallRequest for parsed ``args`` (detects + recommends when needed)."""
    from app.core.install import InstallRequest

    if not args.env:
        raise BadInput("No environment folder was given.", hint="Pass --env PATH.")
    if args.from_bundle and args.packages:
        raise BadInput("--from-bundle and --packages cannot be combined: the bundle decides "
                       "the packages.")
    rec = None
    if not args.packages and not args.from_bundle:
        report = report or detect_machine()
        rec = recommend_for(args, report)
    return InstallRequest(
        env_path=args.env, kind=args.kind, installer=args.installer, python=args.python,
        packages=tuple(args.packages) if args.packages else None, recommendation=rec,
        index_url=args.index_url, extra_index_urls=tuple(args.extra_index_url or ()),
        find_links=tuple(args.find_links or ()), bundle=Path(args.from_bundle) if args.from_bundle else None,
        existing=args.existing, proxy=args.proxy, ca_bundle=args.ca_bundle,
        default_index_url=args.default_index_url,
    ), report


def run(args: argparse.Namespace) -> int:
    if getattr(args, "config", None):
        return run_unattended(args)
    from app.core import install as core
    from app.core.runner import CancelToken

    out = sys.stderr
    request, report = build_request(args)
    the_plan = core.plan(request, report=report)
    checks = core.preflight(the_plan)
    if not args.json:
        print_plan(the_plan, checks, out)
    core.raise_for_checks(checks, plan=the_plan)
    confirm(args, out)

    cancel = CancelToken()
    renderer = Renderer(out, quiet=args.json, verbose=args.verbose)
    try:
        with cancel_on_signals(cancel, out, "stopping the installer and rolling back"):
            result = core.install(the_plan, on_event=renderer, cancel=cancel, checks=checks)
            verify = None if args.no_verify else _verify(result, the_plan, renderer, cancel)
    finally:
        renderer.close()
    from app.core.registry import record_install  # the env goes into the list (and the guard, if verified)

    record_install(result, the_plan, verify)

    payload = {"install": result.to_dict(), "plan": the_plan.to_dict(),
               "verify": verify.to_dict() if verify is not None else None}
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        _print_summary(result, verify)
    return EXIT_OK


def _verify(result: InstallResult, plan: InstallPlan, renderer: Renderer,
            cancel: CancelToken) -> VerifyReport | None:
    try:
        from app.core.verify import run_verify
    except ImportError:
        return None
    renderer(PhaseEvent(Phase.VERIFY, PhaseState.START))
    try:
        report = run_verify(result.python, on_event=renderer, cancel=cancel, expect=plan.expected_accelerator)
    except UserError as err:
        if err.exit_code == EXIT_CANCELLED:
            raise
        renderer(PhaseEvent(Phase.VERIFY, PhaseState.FAILED, err.message))
        return None
    renderer(PhaseEvent(Phase.VERIFY, PhaseState.END))
    return report


def _print_summary(result: InstallResult, verify: VerifyReport | None) -> None:
    print(f"Installed torch {result.torch_version or '(not installed)'} into {result.env_path} "
          f"in {result.duration_s:.1f} s.")
    print(f"Python: {result.python}")
    if verify is not None:
        status = "passed" if verify.ok else "FAILED"
        passed = sum(1 for c in verify.checks if c.status == "passed")
        print(f"Verification {status} ({passed} of {len(verify.checks)} checks passed):")
        skipped = [c for c in verify.checks if c.status == "skipped"]
        for c in verify.checks:
            if c.status != "skipped":
                print(f"  [{c.status:6}] {c.title or c.name}: {c.detail}")
        if skipped:
            print(f"  [skip  ] {len(skipped)} check(s) skipped: {skipped[0].detail}")
    print(f"Log: {result.log_path}")
