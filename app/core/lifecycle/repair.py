"""Repair: reinstall the right torch build for this machine into an env, keeping the user's other packages.

The build is the recommendation for this machine, constrained by what the env has: its Python,
its torch family members (torchvision / torchaudio pinned to match), and by default the torch
version verified there earlier (the guard's pins: a repair after a bypass goes back to it), else
the one it has (a repair fixes the build, it does not upgrade; ``torch=`` changes that).
Packages whose metadata requires another torch stop the repair before anything changes.

It runs through the install transaction (:func:`app.core.install.install` on the existing env)
inside a snapshot of its own, holding the env's lock:

1. the guard is lifted (it pins the old build), a ``pip freeze`` snapshot is taken;
2. when the right build is the one already installed (broken files), the torch family is
   reinstalled by the installer itself (uv ``--reinstall-package``, pip ``--force-reinstall``),
   which takes the old files out only once it has the new ones (it never uninstalled first:
   with the sources unreachable that left a verified env without torch);
3. install, then the verify probe on this machine;
4. a failure anywhere (or a failed verification, or a cancel) restores the snapshot and puts the
   old guard back; success records the env and guards the new build.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.enums import ACCELERATORS, Phase, PhaseState
from app.core.base.errors import BadInput, Cancelled, UserError
from app.core.base.events import Event, PhaseEvent, StepEvent, ignore
from app.core.base.locks import env_lock
from app.core.base.paths import new_log_path
from app.core.base.requirements import requirement_name
from app.core.base.text import Text, join, msg, render
from app.core.compat.data import CompatData, load_compat
from app.core.env import guard
from app.core.env.backends import env_kind
from app.core.env.distinfo import TORCH_FAMILY, TorchBuildInfo, distributions, torch_build
from app.core.env.registry import EnvRecord
from app.core.install import InstallPlan, InstallRequest, InstallResult, install, plan, restore, take_snapshot
from app.core.lifecycle import protect
from app.core.lifecycle.common import Failed, Refused, env_root, python_version_of, record_unless_pending
from app.core.lifecycle.companions import CompanionReport, check_companions
from app.core.measure.probe import ProbeFailed
from app.core.measure.verify import VerifyReport, run_verify
from app.core.proc import runner
from app.core.sources.settings import SourceSettings

if TYPE_CHECKING:  # start-up: only the types
    from app.core.detection.system import SystemReport
    from app.core.recommend import Recommendation

__all__ = ["RepairPlan", "RepairResult", "plan_repair", "repair"]


@dataclass(frozen=True)
class RepairPlan:
    env: Path
    install_plan: InstallPlan
    current: TorchBuildInfo | None
    companions: CompanionReport
    reinstall: tuple[str, ...]  # installed again: the right build is the one installed (its files may be broken)
    expect: str | None
    record: EnvRecord | None = None
    recommendation: Recommendation | None = None
    notes: tuple[Text, ...] = ()

    @property
    def packages(self) -> tuple[str, ...]:
        return self.install_plan.packages

    def to_dict(self) -> dict[str, object]:
        return {"env": str(self.env), "current": self.current.to_dict() if self.current else None,
                "packages": list(self.packages), "reinstall": list(self.reinstall), "expect": self.expect,
                "companions": self.companions.to_dict(), "install_plan": self.install_plan.to_dict(),
                "notes": [str(n) for n in self.notes]}


@dataclass(frozen=True)
class RepairResult:
    env: str
    install: InstallResult
    verify: VerifyReport
    record: EnvRecord | None
    guard: guard.GuardStatus

    def to_dict(self) -> dict[str, object]:
        return {"env": self.env, "install": self.install.to_dict(), "verify": self.verify.to_dict(),
                "record": self.record.to_dict() if self.record else None, "guard": self.guard.to_dict()}


def _recommend(report: SystemReport | None, data: CompatData | None, *, torch: str | None, variant: str | None,
               backend: str | None, python: str | None, family: Sequence[str]) -> tuple[Recommendation, list[Text]]:
    from app.core.detection.detect import detect  # start-up: detection and the engine only when recommending
    from app.core.recommend import Choices, recommend

    report = report or detect()
    minor = ".".join((python or "").split(".")[:2]) or None
    choices = Choices(torch=torch, variant=variant, backend=backend, python=minor, packages=tuple(family))
    try:
        return recommend(report, data, choices), []
    except BadInput:
        if torch is None:
            raise
        rec = recommend(report, data, Choices(variant=variant, backend=backend, python=minor, packages=tuple(family)))
        return rec, [msg("envs.repair_version_unavailable", "torch {version} cannot be installed for this machine; "
                         "the repair installs {other}", version=torch, other=rec.torch_version or "?")]


def _base(version: str | None) -> str | None:
    return version.split("+", 1)[0] if version else None


def _verified_torch(record: EnvRecord | None) -> str | None:
    """The torch the guard pins (else the one last verified): a repair goes back to it."""
    if record is None:
        return None
    if record.guard is not None and record.guard.enabled:
        pinned = guard.parse_pins(record.guard.pins).get("torch")
        if pinned:
            return pinned
    return record.verified_family.get("torch")


# long: the plan gathers the recommendation, the sources and the companion check, each refusing on its own
def plan_repair(target: str | os.PathLike[str], *, torch: str | None = None, variant: str | None = None,
                backend: str | None = None, packages: Sequence[str] | None = None, index_url: str | None = None,
                extra_index_urls: Sequence[str] = (), find_links: Sequence[str] = (),
                default_index_url: str | None = None, installer: str | None = None,
                report: SystemReport | None = None, data: CompatData | None = None) -> RepairPlan:
    """What a repair would install, decided without writing anything. Raises Refused / BadInput."""
    env = env_root(target)
    record = record_unless_pending(env)
    dists = distributions(env)
    current = torch_build(env, dists)
    python = python_version_of(env)
    try:
        data = data if data is not None else load_compat()
    except BadInput:
        data = None
    notes: list[Text] = []
    rec: Recommendation | None = None
    if packages:
        pkgs = tuple(packages)
        for p in pkgs:
            requirement_name(p)
    else:
        family = [n for n in TORCH_FAMILY if n in dists] or ["torch"]
        want = torch or _base(_verified_torch(record)) or _base(current.version if current is not None else None)
        rec, notes = _recommend(report, data, torch=want, variant=variant, backend=backend, python=python,
                                family=family)
        pkgs = tuple(rec.packages)
    new_torch = next((p.split("==", 1)[1].lstrip("=") for p in pkgs
                      if requirement_name(p) == "torch" and "==" in p), None)
    comp = check_companions(dists, new_torch or (current.version if current else ""), data, python=python) \
        if new_torch else CompanionReport({})
    if not comp.ok:
        raise Refused(msg("envs.repair_conflicts", "Nothing was changed: {count} installed package(s) do not fit "
                          "torch {torch}: {list}", count=len(comp.conflicts), torch=new_torch or "?",
                          list="; ".join(str(c.text) for c in comp.conflicts)),
                      msg("envs.upgrade_conflicts_hint", "Upgrade or remove those packages first, or choose a torch "
                          "version they accept (--torch)."))
    src = record.sources if record is not None else SourceSettings()
    same_variant = rec is not None and record is not None and record.variant == rec.variant
    torch_index = index_url or (src.torch_index if same_variant or rec is None else None)
    request = InstallRequest(
        env_path=env, kind=env_kind(env) or "venv", installer=installer or (record.installer if record else "uv"),
        packages=pkgs, recommendation=rec, existing=True,
        sources=SourceSettings(torch_index=torch_index, default_index=default_index_url or src.default_index,
                               extra_index_urls=tuple(extra_index_urls) or src.extra_index_urls,
                               find_links=tuple(find_links) or src.find_links))
    the_plan = plan(request, report)
    installed = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
    reinstall = tuple(n for n in TORCH_FAMILY if n in installed and any(
        requirement_name(p) == n and p.split("==", 1)[-1].lstrip("=") == installed[n] for p in pkgs))
    if reinstall:  # the installer replaces them once it has the new files (never taken out first)
        the_plan = dataclasses.replace(the_plan, reinstall=reinstall)
    b = str(rec.backend) if rec is not None else None
    expect = b if b in ACCELERATORS else None
    return RepairPlan(env, the_plan, current, comp, reinstall, expect, record, rec, tuple(notes))


def repair(p: RepairPlan, *, on_event: Callable[[Event], None] | None = None,
           cancel: runner.CancelToken | None = None) -> RepairResult:
    """Reinstall and verify; on any failure the env goes back to its snapshot. Raises Failed / Cancelled."""
    emit = on_event or ignore
    cancel = cancel or runner.CancelToken()
    log = new_log_path("repair")
    ip = p.install_plan
    with env_lock(p.env, "repair") as lock:
        before = guard.status(p.env)
        if before.constraints or before.pip_config or before.activate_hook:
            guard.lift(p.env)
            emit(StepEvent("guard", "passed", "lifted for the repair"))
        emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.START))
        try:
            snapshot = take_snapshot(ip, log, cancel)
        except BaseException:
            if before.active:
                guard.apply(p.env, before.pins)
            raise
        emit(PhaseEvent(Phase.SNAPSHOT, PhaseState.END, str(snapshot)))
        try:
            # the packages to reinstall go in the same installer run (--reinstall-package /
            # --force-reinstall): the old files stay until the new ones are downloaded, so sources
            # that cannot be reached leave the env as it was, torch included
            result = install(ip, on_event=emit, cancel=cancel, lock=lock)  # this run holds the lock
            verify = _verify(result, p, emit, cancel)
        except BaseException as exc:
            problems = restore(ip, snapshot, on_event=emit, log_path=log)
            if before.active:
                guard.apply(p.env, before.pins)
            if isinstance(exc, (Cancelled, KeyboardInterrupt)):
                raise
            if isinstance(exc, UserError):
                exc.message = join((exc.message, msg("install.restored", "The environment was restored to its earlier "
                                                     "state.") if not problems else
                                    msg("envs.repair_restore_problems", "Restoring the environment met problems: "
                                        "{problems}", problems="; ".join(problems[:3]))), " ")
            raise
        saved = protect.record_install(result, ip, verify)
    return RepairResult(str(p.env), result, verify, saved, guard.status(p.env))


def _verify(result: InstallResult, p: RepairPlan, emit: Callable[[Event], None],
            cancel: runner.CancelToken) -> VerifyReport:
    emit(PhaseEvent(Phase.VERIFY, PhaseState.START))
    try:
        report = run_verify(result.python, on_event=emit, cancel=cancel, expect=p.expect)
    except ProbeFailed as exc:
        emit(PhaseEvent(Phase.VERIFY, PhaseState.FAILED, render(exc.message)[:200]))
        raise Failed(msg("envs.repair_verify_error", "The repaired environment does not work: {why}",
                         why=render(exc.message)[:300]), lines=list(exc.lines)[-12:], log_path=exc.log_path) from None
    if not report.ok:
        emit(PhaseEvent(Phase.VERIFY, PhaseState.FAILED))
        raise Failed(msg("envs.repair_verify_failed", "The reinstalled PyTorch failed verification ({names})",
                         names=", ".join(c.name for c in report.failed)),
                     lines=[f"{c.name}: {c.detail}" for c in report.failed][:12],
                     log_path=Path(report.log_path) if report.log_path else None)
    emit(PhaseEvent(Phase.VERIFY, PhaseState.END))
    return report
