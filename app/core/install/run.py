"""``install(plan)``: create the env (if new) and install, streaming events; undo on failure or cancel.

The phases, each reported as a :class:`~app.core.events.PhaseEvent`: ``preflight`` (the checks
given, or run here), ``snapshot`` (an existing env) or ``create-env`` (a new one), ``install``,
and on failure ``rollback`` / ``restore``. After the installer finished, the env's
``*.dist-info`` are read: every package asked for must be there, and torch, torchvision and
torchaudio must come from one build (``+cpu`` and ``+cu126`` never mixed).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core import envs, runner, wheels
from app.core.enums import Phase, PhaseState
from app.core.envs import env_python
from app.core.errors import Cancelled, UserError
from app.core.events import Event, LogEvent, PhaseEvent, StepEvent, WarningEvent, ignore
from app.core.install.checks import preflight, raise_for_checks
from app.core.install.request import Check, CommandRun, InstallPlan, InstallResult, masked
from app.core.install.transaction import Rollback, rollback, take_snapshot
from app.core.installer_hints import hint_for
from app.core.paths import new_log_path
from app.core.progress import ProgressParser
from app.core.requirements import requirement_name
from app.core.text import Text, msg, render

__all__ = ["TORCH_FAMILY", "install", "mixed_variants"]

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


def mixed_variants(installed: dict[str, str]) -> str:
    """``"torch 2.13.0+cpu, torchvision 0.28.0+cu126"`` when the torch packages come from
    different builds (by their variant labels), else ``""``."""
    variants = {n: wheels.variant_of_version(installed[n]) for n in TORCH_FAMILY if n in installed}
    labelled = {n: v for n, v in variants.items() if v}
    if len(set(labelled.values())) > 1:
        return ", ".join(f"{n} {installed[n]}" for n in labelled)
    return ""


def _check_status(c: Check) -> str:
    return "passed" if c.ok else ("failed" if c.severity == "error" else "warning")


class _Run:
    """One install of one plan: the log, the events, what to undo."""

    def __init__(self, p: InstallPlan, emit: Callable[[Event], None], cancel: runner.CancelToken) -> None:
        self.p = p
        self.emit = emit
        self.cancel = cancel
        self.log_path = new_log_path("install")
        self.started = time.monotonic()
        self.child_env = p.backend.child_env(p.index, p.request.proxy)
        self.guard: Rollback | None = None
        self.snapshot: Path | None = None
        self.phase = Phase.SNAPSHOT
        self.warnings: list[Text] = []
        self.installed: dict[str, str] = {}
        self.commands_run: list[CommandRun] = []

    def info(self, text: str) -> None:
        """A line of the assistant's own, to the live log and the log file."""
        self.emit(LogEvent(text, "info"))
        try:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(f"# {text}\n")
        except OSError:
            pass

    def fail(self, message: str, res: runner.RunResult, default_hint: str) -> UserError:
        hint = hint_for([*res.tail, res.start_error or ""], default_hint)
        return UserError(f"{message} ({res.describe()})", hint=render(hint),
                         lines=runner.relevant_lines(res.tail, 12), log_path=self.log_path)

    # ---------------------------------------------------------------- phases
    def checks(self, checks: Sequence[Check] | None) -> None:
        p = self.p
        self.emit(PhaseEvent(Phase.PREFLIGHT, PhaseState.START))
        if checks is None:
            checks = preflight(p)
        for c in checks:
            self.emit(StepEvent(f"check:{c.name}", _check_status(c), render(c.message)))
        self.info("plan: " + repr(p.to_dict()))
        for c in checks:
            self.info(f"check {c.name}: {'ok' if c.ok else 'FAILED'}: {render(c.message)}")
        if any(c.blocking for c in checks):
            self.emit(PhaseEvent(Phase.PREFLIGHT, PhaseState.FAILED))
            raise_for_checks(checks, self.log_path)
        for c in checks:
            if c.severity == "warning" and (not c.ok or p.python is None):
                self.emit(WarningEvent(c.message))
                self.warnings.append(c.message)
        self.emit(PhaseEvent(Phase.PREFLIGHT, PhaseState.END))
        self.cancel.raise_if_cancelled()

    def take_snapshot(self) -> None:
        self.emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.START))
        self.snapshot, _ = take_snapshot(self.p, self.log_path, self.cancel)
        self.info(f"snapshot of {self.p.env_path}: {self.snapshot}")
        self.emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.END, str(self.snapshot)))

    def _run(self, step: str, argv: list[str], on_line: runner.LineCallback) -> runner.RunResult:
        started = time.monotonic()
        res = runner.run(argv, env=self.child_env, cancel=self.cancel, log_path=self.log_path,
                         timeout=self.p.request.timeout_s, on_line=on_line)
        done = not (res.cancelled or res.start_error)
        self.commands_run.append(CommandRun(step, masked(argv), res.returncode if done else None,
                                            round(time.monotonic() - started, 3)))
        if res.cancelled:
            raise Cancelled(log_path=self.log_path)
        return res

    def create_env(self) -> None:
        p = self.p
        self.phase = Phase.CREATE_ENV
        self.emit(PhaseEvent(Phase.CREATE_ENV, PhaseState.START, str(p.env_path)))
        for step, argv in p.create_steps():
            res = self._run(step, argv, lambda s, ln: self.emit(LogEvent(ln, s)))
            if not res.ok:
                raise self._create_failed(res)
        if not env_python(p.env_path).exists():
            raise UserError(f"The environment at {p.env_path} has no Python after creation.", log_path=self.log_path)
        self.emit(PhaseEvent(Phase.CREATE_ENV, PhaseState.END))

    def _create_failed(self, res: runner.RunResult) -> UserError:
        p = self.p
        if p.python is None and p.installer == "uv" and p.kind == "venv":
            want = p.python_request or "3"
            err = self.fail(f"No Python {want} was found on this machine, and uv could not download one", res, "")
            err.hint = (f"Downloading a Python needs internet access. Install Python {want} (python.org, your "
                        "package manager or pyenv), or choose a Python you have with --python (a version such as "
                        f"{sys.version_info[0]}.{sys.version_info[1]} or a path).")
            return err
        who = p.python.path if p.python else (p.python_request or "python")
        return self.fail(f"Could not create the environment at {p.env_path} with {who}", res,
                         "Check the Python interpreter, or try --installer uv.")

    def install_packages(self) -> None:
        p = self.p
        self.phase = Phase.INSTALL
        self.emit(PhaseEvent(Phase.INSTALL, PhaseState.START, ", ".join(p.packages) or "bundle"))
        parser = ProgressParser(p.installer, self.emit)

        def on_line(stream: str, line: str) -> None:
            self.emit(LogEvent(line, stream))
            parser.feed(line)

        res = self._run("install", p.install_argv(), on_line)
        parser.close()
        if not res.ok:
            raise self.fail("Installing " + (", ".join(p.packages) or "the bundle") + " failed", res,
                            "See the lines above and the full log.")
        self.check_installed()
        self.emit(PhaseEvent(Phase.INSTALL, PhaseState.END))

    def check_installed(self) -> None:
        """Every package asked for is there, and the torch packages come from one build."""
        self.installed = envs.installed_distributions(self.p.env_path)
        mixed = mixed_variants(self.installed)
        if mixed:
            raise UserError(f"The environment ended up with torch packages from different builds: {mixed}.",
                            hint="Pin torch, torchvision and torchaudio to one variant (e.g. all +cpu or all "
                                 "+cu126) and use one torch index.", log_path=self.log_path)
        missing = [n for n in (requirement_name(x) for x in self.p.packages) if n and n not in self.installed]
        if missing:
            raise UserError(f"The installer finished but {', '.join(missing)} is not in the environment.",
                            log_path=self.log_path)

    # ---------------------------------------------------------------- the end
    def undo(self, exc: BaseException) -> UserError:
        """Roll back after ``exc``; returns the error to raise (the cause, told what was undone)."""
        p = self.p
        cancelled = isinstance(exc, (Cancelled, KeyboardInterrupt)) or self.cancel.cancelled
        self.emit(PhaseEvent(self.phase, PhaseState.FAILED,
                             msg("install.phase_cancelled", "cancelled") if cancelled else str(exc)[:200]))
        try:
            problems = (rollback(p, snapshot=self.snapshot, guard=self.guard, on_event=self.emit,
                                 log_path=self.log_path)
                        if (self.guard is not None or self.snapshot is not None) else [])
        except Exception as rb_exc:  # never let a cleanup problem hide the real error
            problems = [f"rollback failed: {rb_exc!r}"]
        self.info("rolled back" + (f" with problems: {problems}" if problems else ""))
        extra = ""
        if problems:
            extra = ("The environment could not be fully restored: " if not p.new_env
                     else "Some files could not be removed: ") + "; ".join(problems[:5])
        if cancelled:
            text = "Cancelled. " + ("The new environment was removed." if p.new_env
                                    else "The environment was restored to its earlier state.")
            return Cancelled(text + (" " + extra if extra else ""), log_path=self.log_path)
        if isinstance(exc, UserError):
            if extra:
                exc.lines = [*exc.lines, extra]
            if p.new_env:
                exc.message += " Nothing was left behind: the new environment was removed."
            elif self.snapshot is not None and not problems:
                exc.message += " The environment was restored to its earlier state."
            return exc
        return UserError(f"Unexpected error during {self.phase}: {exc!r}",
                         hint="This is a bug; please report it with the log.",
                         lines=[extra] if extra else [], log_path=self.log_path)

    def result(self) -> InstallResult:
        p = self.p
        return InstallResult(
            env_path=p.env_path, python=env_python(p.env_path), torch_version=self.installed.get("torch"),
            log_path=self.log_path, duration_s=round(time.monotonic() - self.started, 3),
            packages=dict(sorted(self.installed.items())), kind=p.kind, installer=p.installer,
            created=p.new_env, warnings=tuple(self.warnings), commands_run=tuple(self.commands_run),
        )


def install(p: InstallPlan, *, on_event: Callable[[Event], None] | None = None,
            cancel: runner.CancelToken | None = None, checks: Sequence[Check] | None = None) -> InstallResult:
    """Create the env (if new) and install; roll back on failure or cancel.

    Raises BadInput (pre-flight refused; nothing written), UserError (failed, rolled back)
    or Cancelled (rolled back). ``checks``: the pre-flight already run (else it runs here).
    """
    run = _Run(p, on_event or ignore, cancel or runner.CancelToken())
    run.checks(checks)
    run.guard = Rollback(p.env_path) if p.new_env else None
    try:
        if p.new_env:
            run.create_env()
        else:
            run.take_snapshot()
        run.cancel.raise_if_cancelled()
        run.install_packages()
    except BaseException as exc:
        error = run.undo(exc)
        if error is exc:
            raise
        if isinstance(error, Cancelled):
            raise error from None
        raise error from exc
    return run.result()
