"""The pipeline: detect → recommend → plan → install → verify → bench → report, in one object.

Both faces drive the same :class:`Session`. The wizard calls one step per page (each long
step in a worker thread); ``torch-setup install`` and answer files (``install --config``)
call :meth:`Session.run_all`, which runs the steps straight through and tells a
:class:`Observer` what happened between them. The session keeps the typed result of every
step, and what a later step needs comes from there, never from a second derivation:

* :meth:`~Session.approve` is the approval point. The plan checked by the pre-flight is
  stored as :attr:`~Session.approved_plan`, and :meth:`~Session.install` runs exactly that
  object. Between approval and run only what can change on disk is measured again (the
  target folder, the free space); that may refuse, but never changes the packages, the
  indexes or the environment.
* Changing a step forgets what was built on it (:data:`DEPENDS`): new choices drop the
  recommendation and the plan; a new plan drops the install and what came after it.
* A step that ran in a worker records its result only if what it was computed from is
  still current, so a slow, outdated answer never overwrites a newer one.
* :meth:`~Session.report` is the session report, written by the wizard's Done page and by
  every unattended run (also when it failed: :meth:`~Session.conclude` records how).
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.core.base.cancel import CancelToken
from app.core.base.errors import (
    EXIT_BAD_INPUT,
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    BadInput,
    Cancelled,
    ForFace,
    UserError,
)
from app.core.base.events import Event, ignore
from app.core.base.text import Msg, Text, join, msg, render

if TYPE_CHECKING:  # start-up: the wizard makes a Session before its first paint; the steps load their modules
    from app.core.base.locks import EnvLock
    from app.core.detection.system import SystemReport
    from app.core.doctor import Diagnosis
    from app.core.install import Check, InstallPlan, InstallRequest, InstallResult
    from app.core.measure.bench import BenchReport
    from app.core.measure.verify import VerifyReport
    from app.core.pipeline.report import SessionReport
    from app.core.recommend import Choices, Recommendation, WheelFiles
    from app.core.remedies import types as remedies_types
    from app.core.sources import Availability, SourceSettings

__all__ = ["DEPENDS", "BenchOptions", "Observer", "Planned", "RunOptions", "Session", "Stage", "revalidate"]

OnEvent = Callable[[Event], None]
T = TypeVar("T")


class Stage(str, Enum):
    """The results a session holds, in pipeline order."""

    SYSTEM = "system"
    RECOMMENDATION = "recommendation"  # with the choices it was made for
    PLAN = "plan"  # the checked plan (approved when no check blocks)
    INSTALL = "install"
    VERIFY = "verify"
    DIAGNOSIS = "diagnosis"
    BENCH = "bench"


#: What each result is built on: forgetting a stage forgets these too (and theirs).
DEPENDS: dict[Stage, tuple[Stage, ...]] = {
    Stage.SYSTEM: (Stage.RECOMMENDATION,),
    Stage.RECOMMENDATION: (Stage.PLAN,),
    Stage.PLAN: (Stage.INSTALL,),
    Stage.INSTALL: (Stage.VERIFY, Stage.BENCH),
    Stage.VERIFY: (Stage.DIAGNOSIS,),
    Stage.DIAGNOSIS: (),
    Stage.BENCH: (),
}


#: The attribute of :class:`Session` that holds each stage's result.
_HELD_IN: dict[Stage, str] = {
    Stage.SYSTEM: "system", Stage.RECOMMENDATION: "recommendation", Stage.PLAN: "planned",
    Stage.INSTALL: "install_result", Stage.VERIFY: "verify_report", Stage.DIAGNOSIS: "diagnosis",
    Stage.BENCH: "bench_report",
}


def _with_dependents(stage: Stage) -> list[Stage]:
    out, todo = [], [stage]
    while todo:
        s = todo.pop(0)
        if s not in out:
            out.append(s)
            todo.extend(DEPENDS[s])
    return out


@dataclass(frozen=True)
class Planned:
    """A plan and its pre-flight, and what the session held when it was made."""

    plan: InstallPlan
    checks: tuple[Check, ...]
    system: SystemReport | None = dataclasses.field(default=None, repr=False, compare=False)
    recommendation: Recommendation | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def approvable(self) -> bool:
        """No check blocks: the plan may be approved and run."""
        return not any(c.blocking for c in self.checks)


@dataclass(frozen=True)
class BenchOptions:
    """What the speed test measures (see :func:`app.core.measure.bench.run_bench`); None: its defaults."""

    device: str = "auto"
    sizes: Sequence[int] | None = None
    dtypes: Sequence[str] | None = None
    budget_s: float = 60.0


@dataclass(frozen=True)
class RunOptions:
    """How :meth:`Session.run_all` goes straight through.

    ``detect``: detect even when the request needs no recommendation (explicit packages or a
    bundle), so the report describes the machine. ``strict``: the run fails unless the
    verification ran and passed (a failed one is diagnosed first); otherwise a verification
    that cannot run is only reported. ``bench``: run the speed test (after a passed
    verification) with these options; None: no speed test.
    """

    detect: bool = True
    target: Path | None = None  # where detection measures the free space
    verify: bool = True
    strict: bool = True
    bench: BenchOptions | None = None


class Observer:
    """What a straight-through face shows between the steps; every method may be left as is.

    ``approved`` is the last moment before anything is written: the CLI asks there, and a
    BadInput raised there ends the run with nothing done.
    """

    def detecting(self) -> None: ...

    def recommended(self, rec: Recommendation | None) -> None: ...

    def planned(self, planned: Planned) -> None: ...

    def approved(self, plan: InstallPlan) -> None: ...

    def installed(self, result: InstallResult) -> None: ...

    def verifying(self) -> None: ...

    def verified(self, report: VerifyReport) -> None: ...

    def verify_failed(self, error: UserError) -> None: ...

    def benching(self, options: BenchOptions) -> None: ...

    def benched(self, report: BenchReport) -> None: ...

    def bench_failed(self, error: UserError) -> None: ...


def revalidate(plan: InstallPlan, checks: Sequence[Check]) -> tuple[Check, ...]:
    """The approved pre-flight with what can change before the run measured again: whether the
    target folder is still ours to create (or the env still writable), and the free space."""
    from app.core.install.checks import check_disk, check_target  # start-up: the install core loads with the step

    fresh = {"target": check_target(plan), "disk": check_disk(plan)}
    return tuple(fresh.get(c.name, c) for c in checks)


def _family_pins(rec: Recommendation) -> list[tuple[str, str]]:
    """``[("torch", "2.14.1"), ("torchvision", "0.29.1")]``: the torch packages the recommendation
    pins, with their public versions."""
    from app.core.env.distinfo import TORCH_FAMILY  # start-up
    from app.core.env.guard import parse_pins

    return [(name, version.split("+", 1)[0]) for name, version in parse_pins(rec.packages).items()
            if name in TORCH_FAMILY]


def _need(value: T | None, missing: Msg, hint: Text) -> T:
    if value is None:
        raise BadInput(missing, hint=hint)
    return value


class Session:
    """The results of one run so far, and the steps that make them (see the module's docstring).

    Read the results as attributes; change them only through the steps (and
    :meth:`invalidate`). Each step records under a lock, so the wizard may run a step in a
    worker thread while its pages read the session.
    """

    def __init__(self, *, source: str = "wizard") -> None:
        self.source = source  # wizard | unattended | cli: named in the report
        self.system: SystemReport | None = None
        self.choices: Choices | None = None
        self.available: WheelFiles | None = None  # what the sources hold: an input of the recommendation
        self.recommendation: Recommendation | None = None
        self.planned: Planned | None = None
        self.install_result: InstallResult | None = None
        self.verify_report: VerifyReport | None = None
        self.diagnosis: Diagnosis | None = None
        self.bench_report: BenchReport | None = None
        self.sources: SourceSettings | None = None  # what the user's sources hold bounds the recommendation
        self.bound_folders: tuple[str, ...] | None = None  # fit_sources bound the engine to these folders' wheels
        self.notes: list[Text] = []
        self.status: str | None = None  # set by conclude()
        self.exit_code: int | None = None
        self.error: UserError | None = None
        self.duration_s: float | None = None
        self._started = time.monotonic()
        self._lock = threading.RLock()

    @classmethod
    def resume(cls, *, source: str = "wizard", system: SystemReport | None = None,
               choices: Choices | None = None, recommendation: Recommendation | None = None,
               install: InstallResult | None = None, verify: VerifyReport | None = None,
               diagnosis: Diagnosis | None = None, bench: BenchReport | None = None) -> Session:
        """A session that picks up from results already at hand (a saved report's parts, an
        environment installed by an earlier run): the later steps run on them."""
        s = cls(source=source)
        s.system, s.choices, s.recommendation = system, choices, recommendation
        s.install_result, s.verify_report, s.diagnosis, s.bench_report = install, verify, diagnosis, bench
        return s

    # ------------------------------------------------------------------ derived
    @property
    def approved_plan(self) -> InstallPlan | None:
        """The plan the pre-flight passed and the user approved: the one install() runs."""
        p = self.planned
        return p.plan if p is not None and p.approvable else None

    @property
    def checks(self) -> tuple[Check, ...]:
        """The pre-flight of the last checked plan."""
        return self.planned.checks if self.planned is not None else ()

    @property
    def recommendation_followed(self) -> Recommendation | None:
        """The recommendation the plan follows (the bundle's when installing from one), else the session's."""
        p = self.planned
        if p is not None and p.plan.recommendation is not None:
            return p.plan.recommendation
        return self.recommendation

    @property
    def expected_accelerator(self) -> str | None:
        """The accelerator the verification must find usable (None: a CPU build or unknown)."""
        if self.planned is not None:
            return self.planned.plan.expected_accelerator
        from app.core.install.request import ACCELERATORS  # start-up; the rule InstallPlan applies

        rec = self.recommendation
        backend = str(rec.backend) if rec is not None else None
        return backend if backend in ACCELERATORS else None

    # ------------------------------------------------------------------ the state machine
    def invalidate(self, stage: Stage) -> None:
        """Forget the result of ``stage`` and of every stage built on it."""
        with self._lock:
            for s in _with_dependents(stage):
                setattr(self, _HELD_IN[s], None)

    def use_system(self, report: SystemReport) -> None:
        """Take ``report`` as this machine's (detected here, or read from a file)."""
        with self._lock:
            self.invalidate(Stage.SYSTEM)
            self.system = report

    def use_sources(self, sources: SourceSettings | None) -> None:
        """The sources the next recommendation is computed over (None or no named source: the
        compatibility data's releases all count as available)."""
        with self._lock:
            self.sources = sources

    def choose(self, choices: Choices | None) -> None:
        """The user's wishes for the recommendation (None: none); forgets the old recommendation."""
        with self._lock:
            self.choices = choices
            self.invalidate(Stage.RECOMMENDATION)

    def use_available(self, available: WheelFiles | None) -> None:
        """The wheel files the install is bound to (None: not bound, every index assumed reachable);
        the recommendation is made anew over them."""
        with self._lock:
            self.available = available
            self.invalidate(Stage.RECOMMENDATION)

    # ------------------------------------------------------------------ the steps
    def detect(self, target: str | Path | None = None) -> SystemReport:
        """Detect this machine (free space measured at ``target``); forgets everything built on the old report."""
        from app.core.detection.detect import detect  # start-up: detection loads when it runs

        report = detect(target=target)
        self.use_system(report)
        return report

    def recommend(self, *, offers: Availability | None = None) -> Recommendation:
        """The recommendation for the detected system, the current :attr:`choices` and what the
        sources hold (:attr:`available`). Raises BadInput when the choices cannot work
        (NoCombination, with the ways out, when they cannot all be had); the old recommendation
        is then gone. ``offers``: what :attr:`sources` offer, when the caller has already asked
        (its index pages are then not read again)."""
        from app.core.recommend import recommend  # start-up
        from app.core.sources import availability  # start-up

        system = _need(self.system, msg("session.no_system", "There is no system report yet."),
                       msg("session.no_system_hint", "Detect this machine first."))
        choices = self.choices
        available = self.available
        try:
            rec = recommend(system, None, choices, available, sources=offers or availability(self.sources))
        except UserError:
            with self._lock:
                if self.system is system and self.choices is choices and self.available is available:
                    self.invalidate(Stage.RECOMMENDATION)
            raise
        with self._lock:
            if self.system is system and self.choices is choices and self.available is available:
                self.invalidate(Stage.RECOMMENDATION)
                self.recommendation = rec
        return rec

    def fit_sources(self, request: InstallRequest, *, offers: Availability | None = None) -> Recommendation | None:
        """Make the recommendation fit ``request``'s sources (the wizard's Environment page, where
        the local wheels folder and the mirrors are set; a command line's or an answer file's
        ``find_links``). Returns the recommendation to plan with:

        * the sources offer every package of it (torch and the ticked companions, the folders
          first): it stays as it is;
        * otherwise it is made anew over what the sources offer (the newest build they offer,
          with that reason), and kept when they offer all of that one;
        * when they still do not, the folders hold torch and no source of the index can be read,
          the engine is bound to the folders' wheel files (:class:`~app.core.recommend.Available`,
          ``only``) and asked again with the same wishes, so the companions pair with a torch the
          folders hold (or NoCombination says which wish to drop); the recommendation's
          ``availability`` says why only the folders are used.

        A binding lasts while the folders stay the same; other folders undo it first. ``offers``:
        what the request's sources offer, when the caller has already asked them."""
        from app.core.sources import Availability  # start-up

        rec = self.recommendation
        if request.packages is not None or request.sources.bundle is not None:
            return rec
        settings = request.sources
        self.use_sources(settings)
        folders = settings.folders
        # what the sources offer, each index page read once in this call (None: no source named)
        av = offers or (Availability(settings) if settings.constrains else None)
        if self.bound_folders is not None and self.bound_folders != folders:
            self._bind(None)
            rec = self.recommend(offers=av) if self.system is not None else None
        if self.bound_folders is not None:  # made from these folders' wheels already
            return rec if rec is not None else self.recommend()  # (none fits: NoCombination, with the ways out)
        if rec is None or av is None or rec.torch_version is None:
            return rec
        if self._lacking(av, rec) is None:
            return rec
        fresh = self.recommend(offers=av)  # the newest build the sources offer
        lacking = self._lacking(av, fresh)
        down = av.unreachable(fresh.index_url, lacking) if lacking is not None and folders else None
        if down is None or not any(lw.wheel.name == "torch" for lw in av.local):
            return fresh
        source, failure = down  # the reason travels with the files: the recommendation's "why this version"
        self._bind(folders, msg("session.unreachable", "{source} cannot be reached ({why})", source=source.name,
                                why=failure.text))
        return self.recommend()

    def _lacking(self, av: Availability, rec: Recommendation) -> str | None:
        """The first torch package of ``rec`` its sources do not offer (the folders first), or None."""
        from app.core.base.wheels import index_local_label  # start-up

        python = rec.env_python or (self.system.python.minor if self.system is not None else None)
        label = index_local_label(rec.index_url, rec.platform)
        return next((name for name, version in _family_pins(rec)
                     if av.has(name, version, rec.index_url, label, python) is None), None)

    def _bind(self, folders: tuple[str, ...] | None, why: Text = "") -> None:
        """Bind the engine to the wheel files of ``folders``, for the reason ``why`` (None: undo the binding)."""
        from app.core.recommend import WheelFiles  # start-up

        with self._lock:
            self.bound_folders = folders
            self.use_available(WheelFiles.from_folders(folders, only=True, why=why) if folders is not None else None)

    def check_plan(self, request: InstallRequest) -> Planned:
        """Plan ``request`` and run the pre-flight, recording nothing (a worker may call it).

        A request that names neither packages, a bundle nor a recommendation installs the
        session's recommendation. Raises BadInput for a request that cannot be planned."""
        from app.core.install import plan, preflight  # start-up

        system, rec = self.system, self.recommendation
        if request.recommendation is None and request.packages is None and request.sources.bundle is None \
                and rec is not None:
            request = dataclasses.replace(request, recommendation=rec)
        the_plan = plan(request, system)
        return Planned(the_plan, tuple(preflight(the_plan)), system=system, recommendation=rec)

    def approve(self, planned: Planned) -> InstallPlan:
        """Record ``planned`` as the session's plan: it becomes :attr:`approved_plan` when no
        check blocks; otherwise BadInput is raised for the first blocking check (the plan and
        its checks are written to a log) and nothing can be installed."""
        from app.core.install import raise_for_checks  # start-up

        with self._lock:
            if planned.system is not self.system or planned.recommendation is not self.recommendation:
                raise BadInput(msg("session.plan_outdated", "The plan was made for an earlier system report or "
                                   "recommendation."),
                               hint=msg("session.plan_outdated_hint", "Check the environment again: the plan is "
                                        "made anew."))
            self.invalidate(Stage.PLAN)
            self.planned = planned
        raise_for_checks(planned.checks, plan=planned.plan)
        return planned.plan

    def plan(self, request: InstallRequest) -> tuple[InstallPlan, tuple[Check, ...]]:
        """:meth:`check_plan` then :meth:`approve`: the plan and its checks, approved (or BadInput)."""
        planned = self.check_plan(request)
        return self.approve(planned), planned.checks

    def install(self, plan: InstallPlan | None = None, *, on_event: OnEvent | None = None,
                cancel: CancelToken | None = None, lock: EnvLock | None = None) -> InstallResult:
        """Install exactly the approved plan (``plan``, when given, must be that object).

        Nothing is planned anew: the target and the free space are checked again
        (:func:`revalidate`) and may refuse (BadInput, nothing written). Raises UserError
        (failed, rolled back) or Cancelled (rolled back) as :func:`app.core.install.install`.
        ``lock``: the environment's lock when the caller already holds it (the CLI holds it from
        before the plan to the end of the verification); otherwise the install takes it."""
        from app.core.install import install  # start-up

        planned = self.planned  # read once: the plan and its checks belong together
        approved = planned.plan if planned is not None and planned.approvable else None
        if planned is None or approved is None:
            raise BadInput(msg("session.no_plan", "No installation plan was approved."),
                           hint=ForFace(msg("session.no_plan_gui", "Go back to the Environment page: the plan its "
                                            "checks pass is the one that is installed."),
                                        msg("session.no_plan_cli", "Check the environment first (torch-setup "
                                            "install): the plan its checks pass is the one that is installed.")))
        if plan is not None and plan is not approved:
            raise BadInput(msg("session.not_approved", "This is not the approved installation plan; nothing was "
                               "done."),
                           hint=msg("session.not_approved_hint", "Check the environment again and install the plan "
                                    "it approves."))
        result = install(approved, on_event=on_event, cancel=cancel, checks=revalidate(approved, planned.checks),
                         lock=lock)
        with self._lock:
            if self.approved_plan is approved:
                self.invalidate(Stage.INSTALL)
                self.install_result = result
        from app.core.lifecycle import protect  # start-up

        protect.record_install(result, approved, None)  # into the list of environments (a stale guard lifted)
        return result

    def _installed(self) -> InstallResult:
        return _need(self.install_result, msg("session.no_install", "There is no installed environment yet."),
                     msg("session.no_install_hint", "Run the installation first."))

    def verify(self, *, on_event: OnEvent | None = None, cancel: CancelToken | None = None) -> VerifyReport:
        """Verify PyTorch in the installed environment (an accelerator build must find its accelerator)."""
        from app.core.measure.verify import run_verify  # start-up

        result = self._installed()
        report = run_verify(result.python, on_event=on_event, cancel=cancel, expect=self.expected_accelerator)
        with self._lock:
            if self.install_result is result:
                self.invalidate(Stage.VERIFY)
                self.verify_report = report
        from app.core.lifecycle import protect  # start-up

        protect.record_verify(result.env_path, report)  # a passed verification guards the torch family
        return report

    def diagnose(self, *, on_event: OnEvent | None = None, cancel: CancelToken | None = None) -> Diagnosis:
        """The doctor's findings for the installed environment (with the verification, if it ran)."""
        from app.core.doctor import diagnose  # start-up

        result, verify = self._installed(), self.verify_report
        diag = diagnose(result.python, report=self.system, verify=verify, on_event=on_event, cancel=cancel,
                        expect=self.expected_accelerator)
        with self._lock:
            if self.install_result is result and self.verify_report is verify:
                self.diagnosis = diag
        return diag

    def bench(self, options: BenchOptions | None = None, *, on_event: OnEvent | None = None,
              cancel: CancelToken | None = None) -> BenchReport:
        """The speed test in the installed environment. A stopped one is recorded too: its
        report has status "cancelled" and the measurements made until then."""
        from app.core.measure.bench import run_bench  # start-up

        o = options or BenchOptions()
        result = self._installed()
        report = run_bench(result.python, device=o.device, sizes=list(o.sizes) if o.sizes else None,
                           dtypes=list(o.dtypes) if o.dtypes else None, budget_s=o.budget_s,
                           on_event=on_event, cancel=cancel, report=self.system)
        with self._lock:
            if self.install_result is result:
                self.bench_report = report
        return report

    # ------------------------------------------------------------------ straight through
    def run_all(self, request: InstallRequest, *, choices: Choices | None = None,
                options: RunOptions | None = None, observer: Observer | None = None,
                on_event: OnEvent | None = None, cancel: CancelToken | None = None,
                lock: EnvLock | None = None) -> InstallResult:
        """Every step in order for ``request`` (a request without packages or a bundle installs
        the recommendation for ``choices``). Raises what the steps raise; with ``strict``
        options also UserError when the verification failed (after the diagnosis and with
        the report's parts recorded)."""
        opts, obs = options or RunOptions(), observer or Observer()
        emit, token = on_event or ignore, cancel or CancelToken()
        wants_rec = request.packages is None and request.sources.bundle is None and request.recommendation is None
        if opts.detect or wants_rec:
            obs.detecting()
            self.detect(opts.target)
        if wants_rec:
            self.choose(choices)
            from app.core.sources import availability  # start-up

            self.use_sources(request.sources)
            offers = availability(request.sources)  # asked once, by both steps
            self.recommend(offers=offers)
            self.fit_sources(request, offers=offers)  # folders alone when no index can be reached
        obs.recommended(self.recommendation)
        planned = self.check_plan(request)
        obs.planned(planned)
        self.approve(planned)
        obs.approved(planned.plan)
        result = self.install(planned.plan, on_event=emit, cancel=token, lock=lock)
        obs.installed(result)
        verify_ok = self._verify_step(opts, obs, emit, token) if opts.verify else True
        if opts.bench is not None and verify_ok:
            self._bench_step(opts.bench, obs, emit, token)
        elif opts.bench is not None:
            self.notes.append(msg("session.bench_skipped", "The speed test was skipped because the verification "
                                  "failed."))
        if opts.strict and not verify_ok:
            raise self._verify_error(result)
        return result

    def _verify_step(self, opts: RunOptions, obs: Observer, emit: OnEvent, cancel: CancelToken) -> bool:
        obs.verifying()
        try:
            report = self.verify(on_event=emit, cancel=cancel)
        except UserError as err:
            if opts.strict or isinstance(err, Cancelled) or err.exit_code == EXIT_CANCELLED:
                raise
            obs.verify_failed(err)
            return False
        obs.verified(report)
        if not report.ok and opts.strict:
            try:
                self.diagnose(cancel=cancel)
            except Cancelled:
                raise
            except UserError as err:
                self.notes.append(msg("session.diagnosis_failed", "The diagnosis could not run: {message}",
                                      message=err.message))
        return report.ok

    def _verify_error(self, result: InstallResult) -> UserError:
        from app.core import remedies  # start-up: only a failed verification needs the catalogue

        report = self.verify_report
        failed = [c for c in report.checks if c.status == "failed"] if report is not None else []
        parts = [join((c.title if render(c.title) else c.name, c.detail), ": ") for c in failed[:3]]
        evidence = [render(c.detail) for c in failed]
        if self.diagnosis is not None:
            evidence += [e for f in self.diagnosis.findings for e in f.evidence]
        return UserError(msg("session.verify_failed", "PyTorch was installed, but the verification failed: {checks}",
                             checks=join(parts, "; ")),
                         hint=ForFace(msg("session.verify_failed_gui", "Read the diagnosis on the Verify page: it "
                                          "explains the cause."),
                                      msg("session.verify_failed_cli", "Read the diagnosis in the report; "
                                          "`torch-setup doctor --env {env}` explains the cause.",
                                          env=str(result.env_path))),
                         log_path=result.log_path, remedies=remedies.diagnose(evidence, self.failure_context()))

    def failure_context(self) -> remedies_types.Context:
        """What the remedy catalogue needs to know about this machine and run."""
        from app.core.compat.data import load_compat  # start-up: read only for a failure
        from app.core.remedies.types import Context

        system = self.system
        gpu = next((g for g in system.gpus if g.vendor == "nvidia"), None) if system is not None else None
        rec = self.recommendation_followed
        try:
            data = load_compat()
        except UserError:
            data = None
        inst = self.install_result
        return Context.with_env(("CUDA_VISIBLE_DEVICES",), os.environ,
                                os_family=system.os.family if system is not None else "",
                                path=str(inst.env_path) if inst is not None else "",
                                torch=(inst.torch_version if inst is not None else None) or "",
                                variant=rec.variant if rec is not None else "",
                                compute_capability=(gpu.compute_capability or "") if gpu else "",
                                driver=(gpu.driver_version or "") if gpu else "", data=data)

    def _bench_step(self, options: BenchOptions, obs: Observer, emit: OnEvent, cancel: CancelToken) -> None:
        obs.benching(options)
        try:
            report = self.bench(options, on_event=emit, cancel=cancel)
        except Cancelled:
            raise
        except UserError as err:  # a failed speed test does not undo a working install
            self.notes.append(msg("session.bench_failed", "The speed test failed: {message}", message=err.message))
            obs.bench_failed(err)
            return
        if report.cancelled:  # its measurements are recorded: the report holds them, marked partial
            raise Cancelled(msg("session.bench_stopped", "The speed test was stopped; the report holds what it "
                                "measured until then."))
        obs.benched(report)

    # ------------------------------------------------------------------ the end
    def conclude(self, error: BaseException | None = None) -> int:
        """Record how the run ended (``error``: what stopped it, None: it went through); returns
        the exit code: 0 ok, 1 failed, 2 bad input or refused, 130 cancelled."""
        from app.core.pipeline.report import STATUS_BAD_INPUT, STATUS_CANCELLED, STATUS_FAILED, STATUS_OK  # start-up

        err = Cancelled() if isinstance(error, KeyboardInterrupt) else error
        if err is None:
            status, code = STATUS_OK, EXIT_OK
        elif not isinstance(err, UserError):
            raise TypeError(f"conclude() takes a UserError or KeyboardInterrupt, not {error!r}")
        elif isinstance(err, Cancelled):  # 130, or 143 / 129 when SIGTERM / SIGHUP stopped it
            status, code = STATUS_CANCELLED, err.exit_code or EXIT_CANCELLED
        elif isinstance(err, BadInput):
            status, code = STATUS_BAD_INPUT, EXIT_BAD_INPUT
        else:
            status, code = STATUS_FAILED, err.exit_code or EXIT_FAILED
        with self._lock:
            self.status, self.exit_code, self.error = status, code, err
            self.duration_s = round(time.monotonic() - self._started, 2)
        return code

    def report(self) -> SessionReport:
        """The session report of everything so far (English; see :mod:`app.core.pipeline.report`)."""
        from app.core.pipeline.report import SessionReport  # start-up: the report loads every part's module

        return SessionReport(system=self.system, recommendation=self.recommendation_followed,
                             install=self.install_result, verify=self.verify_report, bench=self.bench_report,
                             diagnosis=self.diagnosis, status=self.status, exit_code=self.exit_code,
                             error=self.error, duration_s=self.duration_s, source=self.source,
                             notes=tuple(render(n) for n in self.notes))
