"""Unattended install: ``torch-setup install --config answers.toml --yes``.

The answer file (``app.core.answers``) holds everything the wizard asks. The run:

1. validates the whole answer file and the report folder: any problem is bad input
   (exit 2) before anything happens, and no report is written;
2. detect -> recommend -> plan -> pre-flight -> install -> verify -> speed test, the same
   core calls the wizard makes;
3. always writes the session report (``<report folder>/<host name>.json``, plus Markdown /
   HTML when asked) once step 1 passed, whatever happened after, so a fleet run gets one
   report per host even from the machines that failed.

Exit codes as ``install``: 0 installed and verified, 1 failed (rolled back; or installed
but the verification failed), 2 bad input or refused by the pre-flight (nothing was done),
130 cancelled (rolled back).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from app.commands._render import Renderer, cancel_on_signals, confirm, print_plan
from app.core.errors import EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, BadInput, Cancelled, UserError

# install's options that an answer file replaces; giving both is ambiguous.
_CONFLICTING = {
    "env": "[environment] path", "python": "[environment] python", "backend": "[torch] backend",
    "variant": "[torch] variant", "torch": "[torch] version", "packages": "[torch] packages",
    "index_url": "[sources] index_url", "from_bundle": "[sources] bundle",
    "default_index_url": "[sources] mirror", "ca_bundle": "[sources] ca_bundle",
    "proxy": "[sources] proxy", "existing": "[environment] existing",
    "extra_index_url": "[sources] extra_index_urls", "find_links": "[sources] find_links",
}
DEFAULT_REPORT_DIR = "~/torch-setup-reports"


def _check_no_conflicts(args) -> None:
    given = [opt for opt in _CONFLICTING if getattr(args, opt, None)]
    if given:
        opt = given[0]
        raise BadInput(f"--{opt.replace('_', '-')} cannot be combined with --config: the answer "
                       f"file decides it ({_CONFLICTING[opt]}).",
                       hint="Put the value into the answer file, or drop --config.")
    if getattr(args, "kind", "venv") != "venv" or getattr(args, "installer", "uv") != "uv":
        raise BadInput("--kind / --installer cannot be combined with --config: the answer file "
                       "decides them ([environment] kind / installer).")


def resolve(answers):
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
    bundle = answers.bundle
    if answers.bundle_auto:
        from app.core.bundle import find_bundle

        bundle = find_bundle()
        if bundle is None:
            raise BadInput('The answer file says bundle = "auto", but there is no bundle folder '
                           "next to the assistant.",
                           hint="Put the bundle (the folder holding manifest.json) next to the "
                                "assistant as torch-bundle/, or give its path in [sources] bundle.")
    return report_dir, bundle


def _choices(answers):
    from app.core.recommend import Choices

    python = answers.python if answers.python and "/" not in answers.python \
        and "\\" not in answers.python else None
    return Choices(backend=None if answers.backend == "auto" else answers.backend,
                   variant=answers.variant, torch=answers.torch, python=python,
                   packages=tuple(answers.packages) or None)


def build_request(answers, bundle, report):
    """The InstallRequest, and the recommendation it carries (None with a bundle)."""
    from app.core.install import InstallRequest

    rec = None
    if bundle is None:
        from app.core.recommend import recommend

        rec = recommend(report, None, _choices(answers))
    request = InstallRequest(
        env_path=answers.env_path, kind=answers.env_kind, installer=answers.installer,
        python=answers.python, packages=None, recommendation=rec,
        index_url=answers.index_url, extra_index_urls=tuple(answers.extra_index_urls),
        find_links=tuple(str(p) for p in answers.find_links), bundle=Path(bundle) if bundle else None,
        existing=answers.existing, proxy=answers.proxy,
        ca_bundle=str(answers.ca_bundle) if answers.ca_bundle else None,
        default_index_url=answers.mirror,
    )
    return request, rec


class _Run:
    """One unattended run; collects the parts of the session report as it goes."""

    def __init__(self, answers, bundle) -> None:
        from app.core.runner import CancelToken

        self.answers = answers
        self.bundle = bundle
        self.cancel = CancelToken()
        self.out = sys.stderr
        self.parts: dict = {}
        self.notes: list[str] = []

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def steps(self, renderer) -> int:
        from app.core import install as core
        from app.core.detect import detect

        a = self.answers
        self.say("==> Detecting this machine…")
        target = a.env_path
        while not target.exists() and target != target.parent:
            target = target.parent
        report = detect(target=str(target))
        self.parts["system"] = report
        request, rec = build_request(a, self.bundle, report)
        self.parts["recommendation"] = rec
        if rec is not None:
            self.say(f"==> Recommended: {rec.backend} ({rec.variant}), torch {rec.torch_version}")
        else:
            self.say(f"==> Installing from the offline bundle {self.bundle}")
        plan = core.plan(request, report=report)
        self.parts["recommendation"] = plan.recommendation  # the bundle's, when installing from one
        checks = core.preflight(plan)
        print_plan(plan, checks, self.out)
        core.raise_for_checks(checks)
        result = core.install(plan, on_event=renderer, cancel=self.cancel, checks=checks)
        self.parts["install"] = result
        self.say(f"==> Installed torch {result.torch_version} into {result.env_path} "
                 f"in {result.duration_s:.1f} s")

        verify_ok = True
        if a.verify:
            from app.core.verify import run_verify

            self.say("==> Verifying…")
            verify = run_verify(result.python, on_event=renderer, cancel=self.cancel,
                                expect=plan.expected_accelerator)
            self.parts["verify"] = verify
            verify_ok = verify.ok
            passed = sum(1 for c in verify.checks if c.status == "passed")
            self.say(f"==> Verification {'passed' if verify.ok else 'FAILED'} "
                     f"({passed}/{len(verify.checks)} checks passed)")
            if not verify.ok:
                self._diagnose(result, report, verify)
        from app.core.registry import record_install  # the env goes into the list (and the guard, if verified)

        record_install(result, plan, self.parts.get("verify"))
        if a.bench and verify_ok:
            self._bench(result, report, renderer)
        elif a.bench:
            self.notes.append("The speed test was skipped because the verification failed.")
        if not verify_ok:
            failed = [c for c in self.parts["verify"].checks if c.status == "failed"]
            raise UserError("PyTorch was installed, but the verification failed: "
                            + "; ".join(f"{c.title or c.name}: {c.detail}" for c in failed[:3]),
                            hint="Read the diagnosis in the report; `torch-setup doctor --env "
                                 f"{result.env_path}` explains the cause.",
                            log_path=result.log_path)
        return EXIT_OK

    def _bench(self, result, report, renderer) -> None:
        from app.core.bench import run_bench

        a = self.answers
        self.say(f"==> Speed test (budget {a.bench_budget_s:g} s)…")
        try:
            bench = run_bench(result.python, device=a.bench_device, sizes=list(a.bench_sizes) or None,
                              dtypes=list(a.bench_dtypes) or None, budget_s=a.bench_budget_s,
                              on_event=renderer, cancel=self.cancel, report=report)
        except Cancelled:
            raise
        except UserError as err:  # a failed speed test does not undo a working install
            self.notes.append(f"The speed test failed: {err.message}")
            self.say(f"==> Speed test failed: {err.message}")
            return
        self.parts["bench"] = bench  # a stopped sweep's measurements go into the report, marked partial
        if bench.cancelled:
            raise Cancelled("The speed test was stopped; the report holds what it measured until then.")
        best = bench.best()
        if best is not None:
            self.say(f"==> Best: {best.gflops:.1f} GFLOP/s ({best.device} {best.dtype}, n={best.n})")

    def _diagnose(self, result, report, verify) -> None:
        try:
            from app.core.doctor import diagnose
        except ImportError:
            return
        try:
            self.parts["diagnosis"] = diagnose(result.python, report=report, verify=verify)
        except UserError as err:
            self.notes.append(f"The diagnosis could not run: {err.message}")


def run_unattended(args) -> int:
    """``install --config FILE``: validated answers -> full run -> report. Returns the exit code."""
    from app.core.answers import load_answers
    from app.core.report import STATUS_BAD_INPUT, STATUS_CANCELLED, STATUS_FAILED, STATUS_OK, SessionReport

    started = time.monotonic()
    # 1. Everything that can be wrong with the request, before anything happens.
    _check_no_conflicts(args)
    answers = load_answers(args.config)
    report_dir, bundle = resolve(answers)
    if not getattr(args, "yes", False):
        print(f"Unattended install from {answers.source}: environment {answers.env_path}",
              file=sys.stderr)
        confirm(args, sys.stderr)

    run = _Run(answers, bundle)
    renderer = Renderer(sys.stderr, quiet=False, verbose=getattr(args, "verbose", False))
    error: UserError | None = None
    try:
        with cancel_on_signals(run.cancel, sys.stderr, "stopping and rolling back"):
            code = run.steps(renderer)
        status = STATUS_OK
    except Cancelled as err:
        error, code, status = err, EXIT_CANCELLED, STATUS_CANCELLED
    except BadInput as err:
        error, code, status = err, EXIT_BAD_INPUT, STATUS_BAD_INPUT
    except UserError as err:
        error, code, status = err, err.exit_code or EXIT_FAILED, STATUS_FAILED
    except KeyboardInterrupt:
        error, code, status = Cancelled(), EXIT_CANCELLED, STATUS_CANCELLED
    finally:
        renderer.close()

    session = SessionReport(source="unattended", status=status, exit_code=code, error=error,
                            duration_s=round(time.monotonic() - started, 2), notes=tuple(run.notes),
                            **run.parts)
    # JSON always (the fleet summary reads it); Markdown / HTML as the answer file asks.
    formats = tuple(dict.fromkeys(("json", *answers.report_formats)))
    paths = session.save(report_dir, formats=formats, stem=answers.report_name)
    if getattr(args, "json", False):
        print(session.to_json())
    if error is not None:
        print(f"torch-setup: {error.render()}", file=sys.stderr)
    for p in paths:
        print(f"Report: {p}", file=sys.stderr)
    return code
