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
import signal
import sys
import threading
import time

from app.core.errors import EXIT_BAD_INPUT, EXIT_OK, BadInput, UserError


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


# --------------------------------------------------------------------------- rendering

_PHASES = {
    "preflight": "Checking",
    "create-env": "Creating the environment",
    "snapshot": "Recording the environment's packages",
    "install": "Installing",
    "rollback": "Cleaning up",
    "restore": "Restoring the environment",
    "verify": "Verifying",
}
_PLAIN_KEEP = ("Resolved", "Prepared", "Installed", "Downloading", " Downloaded", " + ", " - ",
               "Collecting", "Successfully installed", "Installing collected", "Processing",
               "Using CPython", "Creating virtual environment", "ERROR", "error:", "warning:")


class Renderer:
    """Events -> terminal: a redrawn bar on a TTY, plain lines otherwise. Thread-safe."""

    def __init__(self, stream=None, quiet: bool = False, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.quiet = quiet
        self.verbose = verbose
        self.lock = threading.Lock()
        self._bar_shown = False
        self._downloads: dict[str, tuple[int, int]] = {}
        self._packages = (0, 0)
        self._last_plain = 0.0

    def _write(self, text: str) -> None:
        if self._bar_shown:
            self.stream.write("\r\033[K")
            self._bar_shown = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event) -> None:
        if self.quiet:
            return
        kind = getattr(event, "kind", "")
        with self.lock:
            if kind == "phase":
                label = _PHASES.get(event.name, event.name)
                if event.state == "start":
                    self._write(f"==> {label}…" + (f" {event.detail}" if event.detail and
                                                   event.name != "preflight" else ""))
                elif event.state == "failed":
                    self._write(f"==> {label}: failed" + (f" ({event.detail})" if event.detail
                                                          else ""))
            elif kind == "log":
                line = event.text
                if self.verbose or (not self.tty and line.lstrip().startswith(
                        tuple(k.strip() for k in _PLAIN_KEEP))):
                    self._write("    " + line)
                elif self.tty and line.startswith(" + "):
                    self._write("    " + line)
            elif kind == "warning":
                self._write(f"Warning: {event.text}")
            elif kind == "progress":
                self._progress(event)
            elif kind == "step" and event.status in ("failed", "warning"):
                self._write(f"    {event.status}: {event.detail}")

    def _progress(self, e) -> None:
        if getattr(e, "unit", "bytes") == "packages":
            self._packages = (e.done_bytes, e.total_bytes)
        elif e.package:
            self._downloads[e.package] = (e.done_bytes, e.total_bytes)
        if not self.tty:
            return
        done = sum(d for d, _ in self._downloads.values())
        total = sum(t for _, t in self._downloads.values())
        width = 30
        if total:
            frac = min(1.0, done / total)
            what = f"{done / 1e6:7.1f}/{total / 1e6:.1f} MB"
        elif self._packages[1]:
            frac = self._packages[0] / self._packages[1]
            what = f"{self._packages[0]}/{self._packages[1]} packages"
        else:
            return
        current = e.package or ""
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        self.stream.write(f"\r\033[K[{bar}] {frac * 100:3.0f}% {what} {current}"[:120])
        self.stream.flush()
        self._bar_shown = True

    def close(self) -> None:
        with self.lock:
            if self._bar_shown:
                self.stream.write("\n")
                self.stream.flush()
                self._bar_shown = False


# --------------------------------------------------------------------------- run

def _recommend(args, report):
    try:
        from app.core.recommend import Choices, recommend
    except ImportError as exc:
        raise UserError("The recommendation engine is not available in this build "
                        f"({exc}).", hint="Pass --packages (and --index-url) explicitly.")
    choices = Choices(backend=args.backend, variant=args.variant, torch=args.torch,
                      python=args.python if args.python and "." in args.python
                      and os.sep not in args.python else None)
    return recommend(report, None, choices)


def _detect():
    try:
        from app.core.detect import detect
    except ImportError as exc:
        raise UserError(f"System detection is not available in this build ({exc}).",
                        hint="Pass --packages explicitly.")
    return detect()


def build_request(args, *, report=None):
    """The InstallRequest for parsed ``args`` (detects + recommends when needed)."""
    from app.core.install import InstallRequest

    if not args.env:
        raise BadInput("No environment folder was given.", hint="Pass --env PATH.")
    if args.from_bundle and args.packages:
        raise BadInput("--from-bundle and --packages cannot be combined: the bundle decides "
                       "the packages.")
    rec = None
    if not args.packages and not args.from_bundle:
        report = report or _detect()
        rec = _recommend(args, report)
    return InstallRequest(
        env_path=args.env, kind=args.kind, installer=args.installer, python=args.python,
        packages=args.packages, recommendation=rec, index_url=args.index_url,
        extra_index_urls=tuple(args.extra_index_url or ()),
        find_links=tuple(args.find_links or ()), bundle=args.from_bundle,
        existing=args.existing, proxy=args.proxy, ca_bundle=args.ca_bundle,
        default_index_url=args.default_index_url,
    ), report


def _print_plan(plan, checks, out) -> None:
    d = plan.to_dict()
    print(f"Environment : {d['env_path']} ({'new ' if d['new_env'] else 'existing '}"
          f"{d['kind']}, {d['installer']})", file=out)
    py = d["python"]
    print("Python      : " + (f"{py['version']} ({py['path']})" if py else
                              f"{d['python_request'] or 'default'} (uv will look for it)"),
          file=out)
    print("Packages    : " + (" ".join(d["packages"]) or f"from bundle {d['bundle']}"), file=out)
    if d["torch_index"]:
        print(f"Torch index : {d['torch_index']}", file=out)
    if d["find_links"]:
        print(f"Find links  : {', '.join(d['find_links'])}", file=out)
    for note in d["notes"]:
        print(f"Note        : {note}", file=out)
    for c in checks:
        mark = "ok " if c.ok and c.severity == "error" else ("!! " if c.blocking else "?  ")
        print(f"  {mark}{c.message}", file=out)


def _confirm(args, out) -> None:
    if args.yes:
        return
    if not sys.stdin or not sys.stdin.isatty():
        raise BadInput("Refusing to install without confirmation: standard input is not a "
                       "terminal.", hint="Pass --yes to install unattended.")
    out.flush()
    answer = input("Proceed? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise BadInput("Not confirmed; nothing was done.")


def run(args) -> int:
    if getattr(args, "config", None):
        from app.commands.unattended import run_unattended

        return run_unattended(args)
    from app.core import install as core
    from app.core.runner import CancelToken

    out = sys.stderr
    request, report = build_request(args)
    the_plan = core.plan(request, report=report)
    checks = core.preflight(the_plan)
    if not args.json:
        _print_plan(the_plan, checks, out)
    core.raise_for_checks(checks, plan=the_plan)
    _confirm(args, out)

    cancel = CancelToken()
    renderer = Renderer(out, quiet=args.json, verbose=args.verbose)
    previous = {}

    def on_signal(signum, _frame):
        if not cancel.cancelled:
            try:
                out.write("\nCancelling: stopping the installer and rolling back…\n")
            except Exception:
                pass
        cancel.cancel()

    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        result = core.install(the_plan, on_event=renderer, cancel=cancel, checks=checks)
        verify = None
        if not args.no_verify:
            verify = _verify(result, the_plan, renderer, cancel)
    finally:
        renderer.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    payload = {"install": result.to_dict(), "plan": the_plan.to_dict(),
               "verify": verify.to_dict() if verify is not None else None}
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        _print_summary(result, verify)
    return EXIT_OK


def _verify(result, plan, renderer, cancel):
    try:
        from app.core.verify import run_verify
    except ImportError:
        return None
    from app.core.events import PhaseEvent

    rec = plan.request.recommendation
    if rec is None and plan.bundle_manifest is not None:  # what the bundle was built for
        rec = plan.bundle_manifest.recommendation
    backend = (rec.get("backend") if isinstance(rec, dict) else getattr(rec, "backend", None))
    expect = backend if backend in ("cuda", "rocm", "mps", "xpu") else None
    renderer(PhaseEvent("verify", "start"))
    try:
        report = run_verify(result.python, on_event=renderer, cancel=cancel, expect=expect)
    except UserError as err:
        if getattr(err, "exit_code", 1) == 130:
            raise
        renderer(PhaseEvent("verify", "failed", err.message))
        return None
    renderer(PhaseEvent("verify", "end"))
    return report


def _print_summary(result, verify) -> None:
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
