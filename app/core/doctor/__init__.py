"""``diagnose``: why doesn't PyTorch use the accelerator in this environment?

:mod:`app.core.doctor.facts` gathers what is known (the verify probe's facts, the
SystemReport, the environment variables, where ``import torch`` really loads from, the
libraries on LD_LIBRARY_PATH) into one frozen :class:`Facts`; :mod:`app.core.doctor.rules`
turns it into :class:`Finding` s, each naming the cause in words (texts by code,
``doctor.*``) and the fix. :func:`analyze` is a pure function of the facts and the compat
data, so recorded probe results and ``collect_env`` outputs can be fed to it in tests;
:func:`diagnose` gathers them on this machine.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.base.actions import Action
from app.core.base.errors import BadInput
from app.core.base.events import EventCallback
from app.core.base.text import msg
from app.core.compat.data import CompatData, load_compat
from app.core.detection.detect import detect
from app.core.detection.system import SystemReport
from app.core.doctor.collect_env import from_collect_env
from app.core.doctor.facts import (
    Facts,
    ProbeError,
    WhereTorch,
    env_for_checks,
    python_on_path,
    scan_library_path,
    where_torch,
)
from app.core.doctor.rules import SEVERITIES, Finding, run_rules
from app.core.env import registry
from app.core.env.guard import GuardFacts
from app.core.measure.probe import ProbeFailed, resolve_python
from app.core.measure.verify import VerifyReport, run_verify
from app.core.proc.runner import CancelToken

__all__ = [
    "SEVERITIES",
    "Diagnosis",
    "Facts",
    "Finding",
    "ProbeError",
    "WhereTorch",
    "analyze",
    "diagnose",
    "from_collect_env",
    "scan_library_path",
]


@dataclass(frozen=True)
class Diagnosis:
    python: str
    env_path: str
    findings: tuple[Finding, ...]
    facts: Facts = field(default_factory=Facts)
    accelerator_ok: bool | None = None  # torch could use an accelerator (None: unknown)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_dict(self) -> dict[str, object]:
        return {"python": self.python, "env_path": self.env_path, "findings": [f.to_dict() for f in self.findings],
                "facts": self.facts.to_dict(), "accelerator_ok": self.accelerator_ok, "ok": self.ok}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Diagnosis:
        """A saved diagnosis (a report read back): the findings in the English they were saved in.

        The gathered facts are a summary in JSON, not the facts themselves; only the variables
        come back (the rules never run again on a read-back diagnosis).
        """
        findings = tuple(Finding(code=str(f["code"]), severity=str(f["severity"]), title=str(f.get("title", "")),
                                 explanation=str(f.get("explanation", "")), fix=str(f.get("fix", "")),
                                 evidence=tuple(str(x) for x in f.get("evidence") or ()),
                                 actions=tuple(Action.from_dict(a) for a in f.get("actions") or ()
                                               if isinstance(a, Mapping)))
                         for f in d.get("findings") or ())
        facts = d.get("facts") or {}
        env = facts.get("env") if isinstance(facts, Mapping) else None
        ok = d.get("accelerator_ok")
        return cls(python=str(d.get("python", "")), env_path=str(d.get("env_path", "")), findings=findings,
                   facts=Facts(env={str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else {}),
                   accelerator_ok=ok if isinstance(ok, bool) else None)


def _compat() -> CompatData | None:
    try:
        return load_compat()
    except BadInput:  # the doctor must work even when the compat data cannot be read
        return None


def analyze(*, verify: VerifyReport | None = None, report: SystemReport | None = None,
            env: Mapping[str, str] | None = None, probe_error: ProbeError | None = None, python: str | None = None,
            env_dir: str | None = None, where: WhereTorch | None = None, path_python: str | None = None,
            lib_dirs: Mapping[str, tuple[str, ...]] | None = None, data: CompatData | None = None,
            guard: GuardFacts | None = None, expected: str | None = None) -> list[Finding]:
    """The findings for these facts (pure; no I/O but reading the compat data when ``data`` is None)."""
    facts = Facts(verify=verify, report=report, env=dict(env or {}), probe_error=probe_error, python=python,
                  env_dir=env_dir, where=where, path_python=path_python, lib_dirs=dict(lib_dirs or {}), guard=guard,
                  expected=expected)
    return run_rules(facts, data if data is not None else _compat())


def _not_an_env(target: Path, exc: BadInput) -> Diagnosis:
    f = Finding("not-an-env", "error",
                msg("doctor.not_an_env.title", "{target} is not a Python environment", target=str(target)),
                msg("doctor.not_an_env.why", "It holds no bin/python (or Scripts/python.exe), so nothing can run "
                    "PyTorch from it."),
                msg("doctor.not_an_env.fix", "Pass the folder that `torch-setup install` created, a venv/conda env "
                    "folder, or the path of a Python interpreter."), (exc.text(),))
    return Diagnosis(str(target), str(target), (f,))


def diagnose(python: str | os.PathLike[str], report: SystemReport | None = None, verify: VerifyReport | None = None,
             *, env: Mapping[str, str] | None = None, on_event: EventCallback | None = None,
             cancel: CancelToken | None = None, check_path: bool = True, expect: str | None = None) -> Diagnosis:
    """Diagnose the environment at ``python`` (an env folder or interpreter path). ``expect`` is the
    accelerator the env was installed for (cuda|rocm|mps|xpu); None: the one the registry recorded
    for an env this app installed, if any."""
    env_vars = dict(os.environ if env is None else env)
    target = Path(python)
    try:
        py = resolve_python(target)
    except BadInput as exc:
        if target.exists():
            return _not_an_env(target, exc)
        raise
    env_dir = str(py.parent.parent) if py.parent.name in ("bin", "Scripts") else str(py.parent)
    if report is None:
        report = detect()
    probe_error = None
    if verify is None:
        try:
            verify = run_verify(py, facts_only=True, on_event=on_event, cancel=cancel, timeout_s=180)
        except ProbeFailed as exc:
            probe_error = ProbeError.of(exc)
    try:
        where = where_torch(py, env_vars)
    except Exception:  # a broken interpreter: the probe error already says so
        where = None
    prefix = (verify.interpreter.prefix if verify is not None else None) or env_dir
    facts = Facts(verify=verify, report=report, env=env_for_checks(report, env_vars), probe_error=probe_error,
                  python=str(py), env_dir=env_dir, where=where,
                  path_python=python_on_path(env_vars) if check_path else None,
                  lib_dirs=scan_library_path(env_vars.get("LD_LIBRARY_PATH"), exclude_under=[prefix]),
                  guard=registry.guard_facts(env_dir), expected=expect or registry.installed_for(env_dir))
    accel = None
    if verify is not None:
        accel = any(verify.backend(b).available for b in ("cuda", "rocm", "mps", "xpu"))
    return Diagnosis(str(py), env_dir, tuple(run_rules(facts, _compat())), facts, accel)
