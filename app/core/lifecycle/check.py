"""Check one environment: the verify probe, then the doctor, and the outcome kept in the registry.

The same two steps the CLI's ``verify`` and ``doctor`` commands run, on an env chosen from the
environments list. The doctor runs BEFORE the result is recorded, so it still compares the env
with the build verified earlier (the guard rule names what replaced it).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.base.enums import ACCELERATORS, Phase, PhaseState
from app.core.base.errors import BadInput
from app.core.base.events import Event, PhaseEvent, ignore
from app.core.base.text import render
from app.core.doctor import Diagnosis, diagnose
from app.core.env import guard, registry
from app.core.env.backends import env_kind, env_python
from app.core.env.distinfo import TORCH_FAMILY, distributions
from app.core.env.registry import EnvRecord, Verification
from app.core.lifecycle.common import env_root, python_version_of
from app.core.measure.probe import ProbeFailed
from app.core.measure.verify import VerifyReport, run_verify
from app.core.proc.runner import CancelToken

if TYPE_CHECKING:  # start-up: only the type
    from app.core.detection.system import SystemReport

__all__ = ["CheckResult", "check_env"]


@dataclass(frozen=True)
class CheckResult:
    env: str
    verify: VerifyReport | None
    probe_error: str | None
    diagnosis: Diagnosis | None
    record: EnvRecord | None
    guard: guard.GuardStatus

    @property
    def ok(self) -> bool:
        return (self.verify is not None and self.verify.ok
                and (self.diagnosis is None or self.diagnosis.ok))

    def to_dict(self) -> dict[str, object]:
        return {"env": self.env, "ok": self.ok, "verify": self.verify.to_dict() if self.verify else None,
                "probe_error": self.probe_error, "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
                "record": self.record.to_dict() if self.record else None, "guard": self.guard.to_dict()}


def check_env(target: str | os.PathLike[str], *, report: SystemReport | None = None, expect: str | None = None,
              distributed: bool = True, on_event: Callable[[Event], None] | None = None,
              cancel: CancelToken | None = None, record: bool = True, timeout_s: float = 300.0) -> CheckResult:
    """Verify and diagnose the env at ``target``; keep the outcome (``record``). Raises Refused / Cancelled."""
    emit = on_event or ignore
    env = env_root(target)
    py = env_python(env)
    known = registry.find(env)
    if expect is None and known is not None and known.backend in ACCELERATORS:
        expect = known.backend
    emit(PhaseEvent(Phase.VERIFY, PhaseState.START, str(env)))
    verify: VerifyReport | None = None
    error: str | None = None
    try:
        verify = run_verify(py, on_event=emit, cancel=cancel, expect=expect, distributed=distributed,
                            timeout_s=timeout_s)
    except ProbeFailed as exc:
        error = render(exc.message)
    emit(PhaseEvent(Phase.VERIFY, PhaseState.END if verify is not None and verify.ok else PhaseState.FAILED))
    if report is None:
        from app.core.detection.detect import detect  # start-up: detection only when no report was given

        report = detect()
    diag = diagnose(py, report=report, verify=verify, on_event=emit, cancel=cancel)
    saved = known
    if record:
        dists = distributions(env)
        family = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
        outcome = Verification.of(verify) if verify is not None else Verification.could_not_run(error or "")
        try:
            saved = registry.record_verification(env, outcome, family, python=python_version_of(env),
                                                 kind=env_kind(env))
        except (OSError, BadInput):
            saved = known
    return CheckResult(str(env), verify, error, diag, saved, guard.status(env))
