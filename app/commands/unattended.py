"""Unattended install: ``torch-setup install --config answers.toml --yes``.

The answer file (``app.core.pipeline.answers``) holds everything the wizard asks. The run:

1. validates the whole answer file and the report folder: any problem is bad input
   (exit 2) before anything happens, and no report is written;
2. runs the session (:class:`app.core.pipeline.session.Session`) straight through: detect ->
   recommend -> plan -> pre-flight -> install -> verify -> speed test, the steps the wizard
   runs page by page; this module only says what happens (one ``==>`` line per step);
3. always writes the session report (``<report folder>/<host name>.json``, plus Markdown /
   HTML when asked) once step 1 passed, whatever happened after, so a fleet run gets one
   report per host even from the machines that failed.

The environment's lock is held from the plan to the end of the speed test: a second run into
the same folder is refused at once (exit 2, naming the run that holds it).

Exit codes as ``install``: 0 installed and verified, 1 failed (rolled back; or installed
but the verification failed), 2 bad input or refused by the pre-flight (nothing was done),
130 / 143 / 129 cancelled by SIGINT / SIGTERM / SIGHUP (rolled back; during the verification
the installed environment is kept and the report says so).
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._render import Console, Renderer, SignalCancel, cancel_on_signals, confirm, print_plan
from app.core.base.disk import existing_ancestor
from app.core.base.errors import BadInput, Cancelled, UserError
from app.core.pipeline.session import BenchOptions, Observer, Planned, RunOptions, Session
from app.core.proc.runner import CancelToken

if TYPE_CHECKING:  # start-up: the core's larger modules load when the run starts
    from app.core.install import InstallRequest, InstallResult
    from app.core.measure.bench import BenchReport
    from app.core.measure.verify import VerifyReport
    from app.core.pipeline.answers import Answers
    from app.core.recommend import Choices, Recommendation

# install's options that an answer file replaces; giving both is ambiguous.
_CONFLICTING = {
    "env": "[environment] path", "python": "[environment] python", "backend": "[torch] backend",
    "variant": "[torch] variant", "torch": "[torch] version", "packages": "[torch] packages",
    "index_url": "[sources] index_url", "from_bundle": "[sources] bundle",
    "default_index_url": "[sources] mirror", "ca_bundle": "[sources] ca_bundle",
    "proxy": "[sources] proxy", "existing": "[environment] existing",
    "extra_index_url": "[sources] extra_index_urls", "find_links": "[sources] find_links",
    "mirrors": "[sources] mirrors", "lock": "[torch] lock",
}
DEFAULT_REPORT_DIR = "~/torch-setup-reports"


def _check_no_conflicts(args: argparse.Namespace) -> None:
    given = [opt for opt in _CONFLICTING if opt != "mirrors" and getattr(args, opt, None)]
    if getattr(args, "mirrors", "auto") not in (None, "auto"):
        given.append("mirrors")
    if given:
        opt = given[0]
        raise BadInput(f"--{opt.replace('_', '-')} cannot be combined with --config: the answer "
                       f"file decides it ({_CONFLICTING[opt]}).",
                       hint="Put the value into the answer file, or drop --config.")
    if getattr(args, "kind", "venv") != "venv" or getattr(args, "installer", "uv") != "uv":
        raise BadInput("--kind / --installer cannot be combined with --config: the answer file "
                       "decides them ([environment] kind / installer).")


def resolve(answers: Answers) -> tuple[Path, Path | None]:
    """Settle what the answer file leaves to the machine, still before anything happens:
    the report folder (created, and proven writable) and ``bundle = "auto"``."""
    report_dir = answers.report_dir or Path(os.path.expanduser(DEFAULT_REPORT_DIR))
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        probe = report_dir / f".torch-setup-write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise BadInput(f"The report folder {report_dir} cannot be written: {exc.strerror or exc}.",
                       hint="Set [report] folder in the answer file to a folder you can write to.") from None
    return report_dir, resolve_bundle(answers)


def resolve_bundle(answers: Answers) -> Path | None:
    """The bundle the answer file names, ``bundle = "auto"`` settled (BadInput when there is none)."""
    bundle = answers.sources.bundle
    if answers.bundle_auto:
        from app.core.install.bundle import find_bundle

        bundle = find_bundle()
        if bundle is None:
            raise BadInput('The answer file says bundle = "auto", but there is no bundle folder '
                           "next to the assistant.",
                           hint="Put the bundle (the folder holding manifest.json) next to the "
                                "assistant as torch-bundle/, or give its path in [sources] bundle.")
    return bundle


def _choices(answers: Answers) -> Choices:
    from app.core.recommend import Choices

    python = answers.python if answers.python and "/" not in answers.python \
        and "\\" not in answers.python else None
    return Choices(backend=None if answers.backend == "auto" else answers.backend,
                   variant=answers.variant, torch=answers.torch, python=python,
                   packages=tuple(answers.packages) or None)


def build_request(answers: Answers, bundle: Path | None) -> InstallRequest:
    """The InstallRequest the answer file describes (the session adds its recommendation)."""
    from app.core.install import InstallRequest

    assert answers.env_path is not None  # load_answers requires [environment] path
    request = InstallRequest(
        env_path=answers.env_path, kind=answers.env_kind, installer=answers.installer,
        python=answers.python, packages=None,
        sources=replace(answers.sources, bundle=bundle), existing=answers.existing)
    if answers.lock is None:
        return request
    from app.core.install.lockplan import lock_request  # [torch] lock: its pins, Python and sources
    from app.core.pylock.lockfile import read_lock

    return lock_request(request, read_lock(answers.lock))


def run_options(answers: Answers) -> RunOptions:
    """Straight through, strict: a failed verification fails the run (after the diagnosis)."""
    bench = BenchOptions(device=answers.bench_device, sizes=answers.bench_sizes or None,
                         dtypes=answers.bench_dtypes or None, budget_s=answers.bench_budget_s) \
        if answers.bench else None
    assert answers.env_path is not None
    return RunOptions(detect=True, target=existing_ancestor(answers.env_path), verify=answers.verify,
                      strict=True, bench=bench)


class _Narrator(Observer):
    """One ``==>`` line per step on standard error (the renderer shows the installer's progress)."""

    def __init__(self, out: Console, bundle: Path | None) -> None:
        self.out = out
        self.bundle = bundle
        self.signals: SignalCancel | None = None  # what a signal says it stops

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def detecting(self) -> None:
        self.say("==> Detecting this machine…")

    def recommended(self, rec: Recommendation | None) -> None:
        if rec is not None:
            self.say(f"==> Recommended: {rec.backend} ({rec.variant}), torch {rec.torch_version}")
        else:
            self.say(f"==> Installing from the offline bundle {self.bundle}")

    def planned(self, planned: Planned) -> None:
        print_plan(planned.plan, planned.checks, self.out)

    def installed(self, result: InstallResult) -> None:
        self.say(f"==> Installed torch {result.torch_version} into {result.env_path} "
                 f"in {result.duration_s:.1f} s")
        if self.signals is not None:
            self.signals.what = f"stopping; the installed environment {result.env_path} is kept"

    def verifying(self) -> None:
        self.say("==> Verifying…")

    def verified(self, report: VerifyReport) -> None:
        passed = sum(1 for c in report.checks if c.status == "passed")
        self.say(f"==> Verification {'passed' if report.ok else 'FAILED'} "
                 f"({passed}/{len(report.checks)} checks passed)")

    def benching(self, options: BenchOptions) -> None:
        self.say(f"==> Speed test (budget {options.budget_s:g} s)…")

    def bench_failed(self, error: UserError) -> None:
        self.say(f"==> Speed test failed: {error.message}")

    def benched(self, report: BenchReport) -> None:
        best = report.best()
        if best is not None:
            self.say(f"==> Best: {best.gflops:.1f} GFLOP/s ({best.device} {best.dtype}, n={best.n})")


def run_unattended(args: argparse.Namespace) -> int:
    """``install --config FILE``: validated answers -> full run -> report. Returns the exit code."""
    from app.core.pipeline.answers import load_answers

    session = Session(source="unattended")
    # 1. Everything that can be wrong with the request, before anything happens.
    _check_no_conflicts(args)
    answers = load_answers(args.config)
    if getattr(args, "dry_run", False):  # the plan this machine (or the report's) would approve; nothing made
        from app.commands._lab import machine
        from app.commands.dryrun import dry_run

        described = machine(args.from_report) if getattr(args, "from_report", None) else None
        return dry_run(args, build_request(answers, resolve_bundle(answers)), _choices(answers), report=described,
                       source="unattended")
    report_dir, bundle = resolve(answers)
    if not getattr(args, "yes", False):
        print(f"Unattended install from {answers.source}: environment {answers.env_path}",
              file=sys.stderr)
        confirm(args, sys.stderr)

    # 2. The session, straight through, holding the env's lock from the plan to the end.
    from app.core.base import locks

    cancel = CancelToken()
    out = Console(sys.stderr)
    renderer = Renderer(out, quiet=False, verbose=getattr(args, "verbose", False))
    narrator = _Narrator(out, bundle)
    error: UserError | KeyboardInterrupt | None = None
    try:
        assert answers.env_path is not None  # load_answers requires it
        with locks.env_lock(str(answers.env_path), "install") as lock, \
                cancel_on_signals(cancel, out, "stopping and rolling back") as narrator.signals:
            try:
                session.run_all(build_request(answers, bundle), choices=_choices(answers),
                                options=run_options(answers), observer=narrator, on_event=renderer,
                                cancel=cancel, lock=lock)
            except Cancelled:
                done = session.install_result
                if done is None or session.verify_report is not None:
                    raise  # before the install (rolled back), or the speed test (its report says so)
                raise Cancelled(f"The install is complete; the verification was cancelled. The environment "
                                f"is kept: {done.env_path}.", log_path=done.log_path) from None
    except (UserError, KeyboardInterrupt) as err:
        error = err
    finally:
        renderer.close()
    code = session.conclude(error)

    # 3. The report, whatever happened: JSON always (the fleet summary reads it); Markdown /
    #    HTML as the answer file asks.
    report = session.report()
    formats = tuple(dict.fromkeys(("json", *answers.report_formats)))
    paths = report.save(report_dir, formats=formats, stem=answers.report_name)
    if getattr(args, "json", False):
        print(report.to_json(), file=Console(sys.stdout))
    if session.error is not None:
        from app.commands._errors import format_error  # start-up: only when the run failed

        print(f"torch-setup: {format_error(session.error, sys.argv[1:])}", file=out)
    for p in paths:
        print(f"Report: {p}", file=out)
    return code
