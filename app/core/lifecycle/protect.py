"""The torch guard's policy, one home for the wizard, the session and the command line.

* After an install or a verification (:func:`record_install`, :func:`record_verify`): a passed
  verification puts the guard in place for the verified torch family; a guard left from before
  that pins another build is lifted (nothing verified is there to protect). After an install, the
  env's activation sets the recommendation's variables (the GPUs PyTorch sees). Then the registry
  writes down what was done (:mod:`app.core.env.registry` only keeps the records: it changes no env).
* On request (``torch-setup envs guard|unguard``; :func:`guard_env`, :func:`unguard_env`): only a
  build that was verified is guarded.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.errors import BadInput
from app.core.base.text import msg
from app.core.env import activate_vars, guard, registry
from app.core.env.distinfo import TORCH_FAMILY, distributions
from app.core.env.registry import EnvRecord, GuardRecord
from app.core.lifecycle.common import env_root

if TYPE_CHECKING:
    from app.core.install import InstallPlan, InstallResult
    from app.core.measure.verify import VerifyReport

__all__ = ["guard_env", "guard_verified", "record_install", "record_verify", "unguard_env"]


def guard_verified(env: Path, family: Mapping[str, str], passed: bool) -> GuardRecord | None:
    """Guard the verified ``family`` (``passed``), or lift a guard that pins another build.
    The record of what was done; None when nothing changed (or the guard's files could not be written)."""
    try:
        if passed and family:
            done = guard.apply(env, guard.pins_for(family))
            return GuardRecord(done.active, done.pins, registry.now())
        before = guard.status(env)
        if before.constraints and set(before.pins) != set(guard.pins_for(family)):
            guard.lift(env)
            return GuardRecord(False, (), registry.now())
    except OSError:
        return None
    return None


def record_install(result: InstallResult, plan: InstallPlan, verify: VerifyReport | None = None, *,
                   protect: bool = True) -> EnvRecord | None:
    """After a successful install (with its verification, if it ran): the guard's policy, then the
    registry's record. Never raises for the registry's own problems (None then)."""
    family = registry.family_of(result.packages)
    done = guard_verified(result.env_path, family, verify is not None and verify.ok and protect)
    rec = plan.recommendation
    activation_vars(result.env_path, rec.env_vars if rec is not None else {})
    return registry.record_install(result, plan, verify, guard_record=done)


def activation_vars(env: Path, env_vars: Mapping[str, str]) -> None:
    """The recommendation's variables (the GPUs PyTorch sees, an HSA override) set by the env's
    activation, and by the probes run in it (:mod:`app.core.env.activate_vars`); never raises."""
    try:
        activate_vars.apply(env, env_vars)
    except (OSError, ValueError):
        pass


def record_verify(env_path: str | os.PathLike[str], report: VerifyReport, *, protect: bool = True) -> EnvRecord | None:
    """After a verification of an env (the wizard's Verify page, the session): the torch family is
    read from the env's dist-info; a passed verification guards it. Never raises for the registry."""
    env = Path(os.path.abspath(os.fspath(env_path)))
    dists = distributions(env)
    family = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
    done = guard_verified(env, family, report.ok and protect)
    return registry.record_verify(env, report, family, guard_record=done)


def guard_env(target: str | os.PathLike[str]) -> guard.GuardStatus:
    """Guard the env's torch build, which must be the one last verified. Raises BadInput."""
    env = env_root(target)
    rec = registry.find(env)
    dists = distributions(env)
    family = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
    verified = rec.verified_family if rec is not None else {}
    if not family:
        raise BadInput(msg("envs.guard_no_torch", "{path} has no PyTorch to guard.", path=str(env)))
    if verified != family:
        raise BadInput(msg("envs.guard_unverified", "The PyTorch in {path} ({family}) has not been verified, so it is "
                           "not guarded.", path=str(env), family=", ".join(f"{n} {v}" for n, v in family.items())),
                       hint=msg("envs.guard_unverified_hint", "Check it first: torch-setup envs check {path}",
                                path=str(env)))
    st = guard.apply(env, guard.pins_for(family))
    registry.update(env, lambda r: replace(r, guard=GuardRecord(st.active, st.pins, registry.now()),
                                           updated=registry.now()) if r else None)
    return st


def unguard_env(target: str | os.PathLike[str]) -> guard.GuardStatus:
    """Lift the env's torch guard, and write down that it is off."""
    env = env_root(target)
    st = guard.lift(env)
    if registry.find(env) is not None:
        registry.update(env, lambda r: replace(r, guard=GuardRecord(False, (), registry.now()),
                                               updated=registry.now()) if r else None)
    return st
