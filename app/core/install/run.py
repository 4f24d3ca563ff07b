"""``install(plan)``: create the env (if new) and install, streaming events; undo on failure or cancel.

The phases, each reported as a :class:`~app.core.base.events.PhaseEvent`: ``preflight`` (the checks
given, or run here), ``snapshot`` (an existing env) or ``create-env`` (a new one), ``install``,
and on failure ``rollback`` / ``restore``. After the installer finished, the env's
``*.dist-info`` are read: every package asked for must be there, and torch, torchvision and
torchaudio must come from one build (``+cpu`` and ``+cu126`` never mixed).

Safety (nothing that was not ours is touched):

* the env's lock (:mod:`app.core.base.locks`) is held for the whole call, rollback included; a
  caller that holds it already (from its pre-flight to its verification) passes it as ``lock``;
* before the installer runs, the env's interpreter must run as the env
  (:func:`~app.core.install.interpreter.ensure_own_interpreter`): the installer can never fall
  back to another Python;
* rollback removes only what this run created (:class:`~app.core.install.transaction.Rollback`)
  and names what it kept; an existing env is restored package by package;
* the event consumer cannot stop a rollback: an exception it raises (a closed console) is
  written to the log and otherwise ignored.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core import remedies
from app.core.base import disk, locks, wheels
from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import Cancelled, ForFace, UserError
from app.core.base.events import Event, LogEvent, PhaseEvent, StepEvent, WarningEvent, ignore
from app.core.base.paths import new_log_path
from app.core.base.progress import ProgressParser, unpack_watch
from app.core.base.requirements import requirement_name
from app.core.base.secrets import append_private
from app.core.base.text import Msg, Text, join, msg, render
from app.core.compat.data import CompatData, load_compat
from app.core.env import backends as envs
from app.core.env.backends import env_python
from app.core.env.distinfo import TORCH_FAMILY
from app.core.install.checks import preflight, raise_for_checks, route_of
from app.core.install.interpreter import ensure_own_interpreter
from app.core.install.prefetch import EarlyFetch, fetch_wheelhouse, wheelhouse_index
from app.core.install.request import Check, CommandRun, InstallPlan, InstallResult, masked
from app.core.install.transaction import Rollback, Snapshot, kept_text, rollback, take_snapshot
from app.core.proc import runner
from app.core.sources.routing import Route
from app.core.sources.settings import python_mirror_env
from app.core.sources.wheelhouse import Wheelhouse, cleanup

__all__ = ["TORCH_FAMILY", "install", "installer_failure", "mixed_variants", "outcome"]


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


def outcome(res: runner.RunResult) -> Msg:
    """How a command ended, in words (the translated :meth:`~app.core.proc.runner.RunResult.describe`)."""
    return remedies.run_outcome(res.returncode, timed_out=res.timed_out, duration_s=res.duration_s,
                                start_error=res.start_error)


def installer_failure(message: Text, res: runner.RunResult, ctx: remedies.Context, default_hint: Text = "",
                      log_path: Path | None = None) -> UserError:
    """The error for a failed installer run: its output through the remedy catalogue (the
    explanation and actions; ``default_hint`` when it knows nothing), its error lines and the
    installer's reasoning kept."""
    found = remedies.diagnose([*res.tail, res.start_error or ""], ctx)
    return UserError(msg("install.failed_with", "{what} ({outcome})", what=message, outcome=outcome(res)),
                     hint="" if found else default_hint, lines=remedies.failure_lines(res.tail),
                     log_path=log_path, remedies=found)


def os_family() -> str:
    return "windows" if os.name == "nt" else ("macos" if sys.platform == "darwin" else "linux")


class _Run:
    """One install of one plan: the log, the events, what to undo."""

    def __init__(self, p: InstallPlan, emit: Callable[[Event], None], cancel: runner.CancelToken,
                 log_path: Path | None = None, env_drop: Sequence[str] = ()) -> None:
        self.p = p
        self._consumer = emit
        self._consumer_failed = False
        self.cancel = cancel
        self.log_path = log_path or new_log_path("install")
        self.started = time.monotonic()
        self.child_env = p.backend.child_env(p.index, p.request.sources.proxy)
        for var in env_drop:
            self.child_env.pop(var, None)
        if p.installer == "pip" and p.kind == "venv":
            self.child_env["PIP_REQUIRE_VIRTUALENV"] = "1"  # pip itself refuses a Python that is not a venv
        self.child_env.update(python_mirror_env(p.request.sources.mirrors))  # a Python-builds mirror the user chose
        self.guard: Rollback | None = None
        self.snapshot: Snapshot | None = None
        self.phase = Phase.SNAPSHOT
        self.warnings: list[Text] = []
        self.installed: dict[str, str] = {}
        self.route: Route | None = None  # the verified sources the pre-flight found
        self.house: Wheelhouse | None = None  # the per-run wheelhouse, once filled
        self.early: EarlyFetch | None = None  # the route's torch wheels, fetched from the pre-flight on
        self.commands_run: list[CommandRun] = []

    def emit(self, event: Event) -> None:
        """Tell the consumer; its failure (a closed console, a GUI bug) never stops the run or its rollback."""
        try:
            self._consumer(event)
        except Exception as exc:
            if not self._consumer_failed:
                self._consumer_failed = True
                self._log_line(f"# the event consumer failed ({exc!r}); the run goes on")

    def _log_line(self, line: str) -> None:
        try:
            append_private(self.log_path, line + "\n")  # masked, mode 0600: no secret reaches a log file
        except OSError:
            pass

    def info(self, text: str) -> None:
        """A line of the assistant's own, to the live log and the log file."""
        self.emit(LogEvent(text, "info"))
        self._log_line(f"# {text}")

    def context(self) -> remedies.Context:
        """What the catalogue needs to give its actions real values (sizes, the folder, versions)."""
        p = self.p
        torch = next((r.split("==", 1)[1] for r in p.packages if requirement_name(r) == "torch" and "==" in r), "")
        try:
            data: CompatData | None = load_compat()
        except UserError:  # the catalogue then suggests no version
            data = None
        return remedies.Context.with_env(
            ("CUDA_VISIBLE_DEVICES",), os.environ, os_family=os_family(), path=str(p.env_path),
            python=p.python.version if p.python else (p.python_request or ""), torch=torch, variant=p.variant or "",
            installer=p.installer, bundle=p.bundle_manifest is not None, need_mb=p.estimate_mb,
            free_mb=disk.free_mb(disk.existing_ancestor(p.env_path)), data=data)

    def fail(self, message: Text, res: runner.RunResult, default_hint: Text) -> UserError:
        return installer_failure(message, res, self.context(), default_hint, self.log_path)

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
        self.route = route_of(checks)
        for c in checks:
            if c.severity == "warning" and (not c.ok or p.python is None):
                self.emit(WarningEvent(c.message))
                self.warnings.append(c.message)
        self.emit(PhaseEvent(Phase.PREFLIGHT, PhaseState.END))
        self.cancel.raise_if_cancelled()

    def take_snapshot(self) -> None:
        self.emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.START))
        self.snapshot = take_snapshot(self.p, self.log_path, self.cancel)
        self.info(f"snapshot of {self.p.env_path}: {len(self.snapshot.packages)} packages in {self.snapshot.folder}")
        self.emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.END, str(self.snapshot.folder)))

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
            if step == "seed-pip":  # it runs the env's Python: only while that Python runs AS the env
                ensure_own_interpreter(p.env_path, log_path=self.log_path)
            res = self._run(step, argv, lambda s, ln: self.emit(LogEvent(ln, s)))
            if not res.ok and "--seed" in argv and env_python(p.env_path).exists() \
                    and any("seed packages" in ln for ln in res.tail):
                self._seed_without_sources()  # the env is made; only its pip did not come from the sources
            elif not res.ok:
                raise self._create_failed(res)
        if self.guard is not None:
            self.guard.record_created()
        if not env_python(p.env_path).exists():
            raise UserError(msg("install.no_python_after_create", "The environment at {path} has no Python after "
                                "creation.", path=str(p.env_path)), log_path=self.log_path)
        self.emit(PhaseEvent(Phase.CREATE_ENV, PhaseState.END))

    def _seed_without_sources(self) -> None:
        """``uv venv --seed`` made the env but found no pip in the sources (an index that holds only
        the user's packages): the pip its Python bundles goes in instead (uv from ensurepip's wheel,
        else ``python -m ensurepip``); without one the env still works (``uv pip``), and a warning
        says so. Never a failed install for want of pip."""
        p = self.p
        offline = dataclasses.replace(p.index, offline=True)
        argv = p.backend.seed_argv(p.env_path, p.python, offline)  # ensurepip's own pip, put in by uv when it can
        if argv is not None and (p.python is None or p.python.can_venv):
            # the seed runs the env's Python (or uv --python on it): only when that Python runs AS the env
            # (pyvenv.cfg gone, it would be the base interpreter, and pip would go there)
            ensure_own_interpreter(p.env_path, log_path=self.log_path)
            res = self._run("seed-pip", argv, lambda s, ln: self.emit(LogEvent(ln, s)))
            if res.ok:
                return
        text = msg("install.no_pip_seeded", "pip could not be added to the environment (its sources hold no pip and "
                   "its Python has no ensurepip); use uv pip install in it, or add pip later.")
        self.warnings.append(text)
        self.emit(WarningEvent(text))

    def _create_failed(self, res: runner.RunResult) -> UserError:
        p = self.p
        if p.python is None and p.installer == "uv" and p.kind == "venv":
            want = p.python_request or "3"
            err = self.fail(msg("install.no_python_found", "No Python {version} was found on this machine, and uv "
                                "could not download one", version=want), res, "")
            mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
            err.hint = ForFace(
                msg("install.no_python_gui", "Downloading a Python needs internet access. Install Python {version} "
                    "(python.org, your package manager or pyenv), or choose a Python that is on this computer on "
                    "the Environment page.", version=want),
                msg("install.no_python_cli", "Downloading a Python needs internet access. Install Python {version} "
                    "(python.org, your package manager or pyenv), or choose a Python you have with --python (a "
                    "version such as {mine} or a path).", version=want, mine=mine))
            return err
        who = p.python.executable if p.python and p.python.executable else (p.python_request or "python")
        return self.fail(msg("install.create_failed", "Could not create the environment at {path} with {python}",
                             path=str(p.env_path), python=who), res,
                         msg("install.create_failed_hint", "Check the Python interpreter, or create the environment "
                             "with uv instead."))

    def start_downloads(self) -> None:
        """The route's torch wheels start to arrive now, while the environment is made."""
        if self.route is not None:
            self.early = EarlyFetch(self.p, self.route, self.emit, self.cancel)

    def stop_downloads(self) -> None:
        if self.early is not None:
            self.early.close(stop=True)

    def fetch_wheels(self) -> None:
        """The verified route's wheels (and, for a new env, every other wheel) into a per-run wheelhouse."""
        if self.route is None or self.early is None:
            return
        self.phase = Phase.DOWNLOAD
        self.house = fetch_wheelhouse(self.p, self.route, self.early, self.emit, self.cancel, self.child_env,
                                      self.log_path, self.info, self.warnings, self.commands_run)

    def install_packages(self) -> None:
        p = self.p
        self.phase = Phase.INSTALL
        lock = p.request.lock  # an install from a lock names its file, a bundle's "bundle"
        what = ", ".join(p.packages) or (lock.name if lock else "bundle")
        self.emit(PhaseEvent(Phase.INSTALL, PhaseState.START, what))
        # the unpacking, which no installer reports, is measured on disk (UnpackWatch)
        parser = ProgressParser(p.installer, self.emit,
                                watch=unpack_watch(p.installer, p.env_path, p.estimate_mb, self.emit, self.child_env))

        def on_line(stream: str, line: str) -> None:
            self.emit(LogEvent(line, stream))
            parser.feed(line)

        if self.house is not None:  # the wheelhouse's files, with no index (or only for the rest)
            packages, index, req_file = wheelhouse_index(p, self.house)
            argv = p.backend.install_argv(p.env_path, packages, index, requirements=req_file,
                                          pip_version=envs.pip_version_in(p.env_path), reinstall=p.reinstall)
        else:
            argv = p.install_argv()  # exactly the command the plan showed
        ensure_own_interpreter(p.env_path, log_path=self.log_path)
        try:
            res = self._run("install", argv, on_line)
        finally:
            parser.close()
        if not res.ok:
            failed = msg("install.install_failed", "Installing {packages} failed", packages=p.packages) if p.packages \
                else msg("install.lock_failed", "Installing from the lock {file} failed", file=str(lock)) if lock \
                else msg("install.bundle_failed", "Installing the bundle failed")
            raise self.fail(failed, res, msg("install.see_log", "See the lines above and the full log."))
        self.check_installed()
        self.emit(PhaseEvent(Phase.INSTALL, PhaseState.END))

    def check_installed(self) -> None:
        """Every package asked for is there, and the torch packages come from one build."""
        self.installed = envs.installed_distributions(self.p.env_path)
        mixed = mixed_variants(self.installed)
        if mixed:
            raise UserError(msg("install.mixed_builds", "The environment ended up with torch packages from "
                                "different builds: {mixed}.", mixed=mixed),
                            hint=msg("install.mixed_builds_hint", "Pin torch, torchvision and torchaudio to one "
                                     "variant (e.g. all +cpu or all +cu126) and use one torch index."),
                            log_path=self.log_path)
        missing = [n for n in (requirement_name(x) for x in self.p.packages) if n and n not in self.installed]
        if missing:
            raise UserError(msg("install.missing_after", "The installer finished but {packages} is not in the "
                                "environment.", packages=tuple(missing)), log_path=self.log_path)

    # ---------------------------------------------------------------- the end
    def undo(self, exc: BaseException) -> UserError:
        """Roll back after ``exc``; returns the error to raise (the cause, told what was undone)."""
        cancelled = isinstance(exc, (Cancelled, KeyboardInterrupt)) or self.cancel.cancelled
        self.emit(PhaseEvent(self.phase, PhaseState.FAILED,
                             msg("install.phase_cancelled", "cancelled") if cancelled else str(exc)[:200]))
        problems = self._roll_back()
        self.info("rolled back" + (f" with problems: {problems}" if problems else "")
                  + (f"; kept (not ours): {self.guard.kept}" if self.guard is not None and self.guard.kept else ""))
        extra: Text = ""
        if problems:
            extra = (msg("install.not_restored", "The environment could not be fully restored: {problems}",
                         problems="; ".join(problems[:8])) if not self.p.new_env else
                     msg("install.not_removed", "Some files could not be removed: {problems}",
                         problems="; ".join(problems[:8])))
        done = self._undone(problems)
        if cancelled:
            kept = self.guard is not None and bool(self.guard.kept)
            head: Text
            if self.p.new_env and not kept:
                head = msg("install.cancelled_removed", "Cancelled. The new environment was removed.")
            elif not self.p.new_env and done:
                head = msg("install.cancelled_restored", "Cancelled. The environment was restored to its earlier "
                           "state.")
            else:
                head = join([t for t in (msg("install.cancelled_word", "Cancelled."), done) if t], " ")
            return Cancelled(join((head, extra), " ") if extra else head, log_path=self.log_path)
        if isinstance(exc, UserError):
            if extra:
                exc.lines = [*exc.lines, render(extra)]
            if done:
                exc.message = join((exc.message, done), " ")
            return exc
        return UserError(msg("install.unexpected", "Unexpected error during {phase}: {error}", phase=str(self.phase),
                             error=repr(exc)),
                         hint=msg("install.bug_hint", "This is a bug; please report it with the log."),
                         lines=[render(extra)] if extra else [], log_path=self.log_path)

    def _roll_back(self) -> list[str]:
        """Undo; nothing the consumer does can stop it (see :meth:`emit`)."""
        if self.guard is None and self.snapshot is None:
            return []
        try:
            return rollback(self.p, snapshot=self.snapshot, guard=self.guard, on_event=self.emit,
                            log_path=self.log_path)
        except Exception as rb_exc:  # never let a cleanup problem hide the real error
            return [f"rollback failed: {rb_exc!r}"]

    def _undone(self, problems: list[str]) -> Text:
        """What the rollback did, in one sentence ("" when there was nothing to undo)."""
        p, guard = self.p, self.guard
        if p.new_env and guard is not None and guard.kept:
            return msg("rollback.removed_but_kept", "The new environment was removed, except {env}, kept with {what}.",
                       env=str(p.env_path), what=kept_text(guard.kept))
        if p.new_env:
            return msg("install.left_nothing", "Nothing was left behind: the new environment was removed.")
        if self.snapshot is not None and not problems:
            return msg("install.restored", "The environment was restored to its earlier state.")
        return ""

    def result(self) -> InstallResult:
        p = self.p
        return InstallResult(
            env_path=p.env_path, python=env_python(p.env_path), torch_version=self.installed.get("torch"),
            log_path=self.log_path, duration_s=round(time.monotonic() - self.started, 3),
            packages=dict(sorted(self.installed.items())), kind=p.kind, installer=p.installer,
            created=p.new_env, warnings=tuple(self.warnings), commands_run=tuple(self.commands_run),
            downloads=self.house.served if self.house is not None else (),
        )


def install(p: InstallPlan, *, on_event: Callable[[Event], None] | None = None,
            cancel: runner.CancelToken | None = None, checks: Sequence[Check] | None = None,
            lock: locks.EnvLock | None = None, log_path: Path | None = None,
            env_drop: Sequence[str] = ()) -> InstallResult:
    """Create the env (if new) and install; roll back on failure or cancel.

    Raises BadInput (pre-flight refused, or another run holds the env; nothing written),
    UserError (failed, rolled back) or Cancelled (rolled back). ``checks``: the pre-flight
    already run (else it runs here). ``lock``: the env's lock when the caller holds it already
    (it should, from its pre-flight to its verification); else it is taken for this call.
    ``log_path``: the log to append to (default: a new install log). ``env_drop``: variables
    the installer must not see (the staged upgrade: the guard's ``UV_CONSTRAINT`` of the env
    being upgraded).
    """
    if lock is not None and not (lock.held and lock.covers(p.env_path)):
        raise ValueError(f"the lock given is not held for {p.env_path}")
    own = locks.acquire(p.env_path, "install") if lock is None else None
    try:
        return _install(_Run(p, on_event or ignore, cancel or runner.CancelToken(), log_path, env_drop), checks)
    finally:
        if own is not None:
            own.release()


def _install(run: _Run, checks: Sequence[Check] | None) -> InstallResult:
    p = run.p
    run.checks(checks)
    run.guard = Rollback(p.env_path, p.kind) if p.new_env else None
    run.start_downloads()
    try:
        if p.new_env:
            run.create_env()
        else:
            run.take_snapshot()
        run.cancel.raise_if_cancelled()
        run.fetch_wheels()
        run.install_packages()
        run.cancel.raise_if_cancelled()  # a cancel that came while the last check ran still counts
    except BaseException as exc:
        run.stop_downloads()
        if run.house is not None:
            cleanup(run.house, keep_downloads=True)  # a retry goes on from these downloads
        error = run.undo(exc)
        if error is exc:
            raise
        if isinstance(error, Cancelled):
            raise error from None
        raise error from exc
    if run.house is not None:  # freeing a GB of downloads takes a second or more: not while the user waits
        threading.Thread(target=cleanup, args=(run.house,), kwargs={"keep_downloads": False},
                         name="install-cleanup").start()
    return run.result()
