"""What follows from the chosen build: the new environment's Python, the driver that would
unlock a newer build, and what a plain ``pip install torch`` would have given instead.

:class:`Decision` gathers the engine's whole answer (the pick, everything it tried, these
consequences) for :mod:`app.core.recommend.explain` to put into words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.compat import Release, Variant, version_tuple
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.facts import Machine, vtext
from app.core.recommend.types import DriverUpgrade

__all__ = ["Decision", "PypiDefault", "PythonChoice", "choose_python", "decide", "driver_upgrade"]


@dataclass(frozen=True)
class PythonChoice:
    """Which Python the new environment uses, and why (``case``)."""

    case: Literal["asked", "emulated", "unknown", "supported", "too_old", "too_new", "sources"]
    ok: bool | None  # the report's Python can install the build (None: unknown)
    env_python: str | None  # the new environment's Python when it differs from the report's
    python: str | None  # the Python the sentence names
    running: str | None = None  # the report's Python
    found_at: str | None = None  # too_old/too_new: where it is ("" = on the machine, path unknown; None = not yet)


def choose_python(eng: Engine, rel: Release, held: frozenset[str] | None = None) -> PythonChoice:
    """``held``: the Pythons the sources hold the build for (None: any the release supports)."""
    m, data = eng.m, eng.data

    def fits(p: str) -> bool:
        return rel.python_ok(p) and (held is None or p in held)

    if eng.fixed_python:
        ok = m.python == eng.fixed_python if m.python else None
        return PythonChoice("asked", ok, eng.fixed_python if eng.fixed_python != m.python else None,
                            eng.fixed_python)
    if m.emulated_x64:
        py = next((p for p in data.python_preference if fits(p)), max(_ordered(rel, held), key=version_tuple,
                                                                           default=rel.python_max))
        return PythonChoice("emulated", False, py, py)
    if m.python is None:
        return PythonChoice("unknown", None, None, None)
    if fits(m.python):
        return PythonChoice("supported", True, None, m.python)
    found = [(p, exe) for p, exe in m.interpreters if fits(p)]
    found.sort(key=lambda pe: version_tuple(pe[0]), reverse=True)
    pref = [p for p in data.python_preference if fits(p)]
    where: str | None = None
    if found:
        in_pref = [pe for pe in found if pe[0] in pref]
        py, where = (sorted(in_pref, key=lambda pe: pref.index(pe[0]))[0] if in_pref else found[0])
    else:
        py = pref[0] if pref else max(_ordered(rel, held), key=version_tuple, default=rel.python_max)
    if rel.python_ok(m.python):  # the release supports it, the sources hold no wheel for it
        return PythonChoice("sources", False, py, py, m.python, where)
    too_old = version_tuple(m.python) < version_tuple(rel.python_min)
    return PythonChoice("too_old" if too_old else "too_new", False, py, py, m.python, where)


def _ordered(rel: Release, held: frozenset[str] | None) -> list[str]:
    return [p for p in rel.pythons() if held is None or p in held]


def driver_upgrade(eng: Engine, chosen: Evaluation, evals: list[Evaluation]) -> DriverUpgrade | None:
    """The smallest driver that unlocks the best CUDA build the driver alone holds back."""
    m = eng.m
    if m.driver is None:
        return None
    cands = [x for x in evals if x.variant.backend == "cuda" and x.kinds == {"driver"} and x.rank() > chosen.rank()]
    if not cands:
        return None
    best = max(cands, key=lambda x: x.rank())
    same = [x for x in cands if x.release.key == best.release.key]
    floor = min((x.floor for x in same if x.floor), default=best.floor)
    pick = max([x for x in same if x.floor == floor], key=lambda x: x.rank())
    tk = eng.data.toolkits.get(pick.variant.cuda or "")
    tk_text = (tk.windows if m.driver_os == "windows" else tk.linux) if tk else ""
    return DriverUpgrade(driver=pick.floor_text or vtext(floor),
                         unlocks=f"torch {pick.release.latest} ({pick.variant.label()}, {pick.variant.name})",
                         torch_version=pick.release.latest, variant=pick.variant.name, current=m.driver_text,
                         toolkit_driver=tk_text or None)


@dataclass(frozen=True)
class PypiDefault:
    """The build a plain ``pip install torch`` gives here, when it is not the chosen one."""

    variant: Variant
    evaluation: Evaluation | None  # evaluated when it is of the chosen build's backend


@dataclass(frozen=True)
class Decision:
    """The engine's answer, before it is put into words."""

    eng: Engine
    chosen: Evaluation
    tried: tuple[tuple[str, tuple[Evaluation, ...]], ...]  # (backend, its candidates), in the order tried
    torch_version: str
    python: PythonChoice
    upgrade: DriverUpgrade | None
    pypi: PypiDefault | None

    @property
    def m(self) -> Machine:
        return self.eng.m

    @property
    def all_evals(self) -> list[Evaluation]:
        return [x for _, es in self.tried for x in es]


def decide(eng: Engine, chosen: Evaluation, tried: list[tuple[str, list[Evaluation]]]) -> Decision:
    rel, v = chosen.release, chosen.variant
    if chosen.held_version:
        torch_version = chosen.held_version
    else:
        torch_version = eng.pinned_version(rel) if eng.choices.torch else rel.latest
    frozen = tuple((b, tuple(es)) for b, es in tried)
    evals = [x for _, es in frozen for x in es]
    upgrade = driver_upgrade(eng, chosen, evals) if v.backend == "cuda" else None
    return Decision(eng, chosen, frozen, torch_version, choose_python(eng, rel, chosen.pythons), upgrade,
                    _pypi_default(eng, chosen))


def _pypi_default(eng: Engine, chosen: Evaluation) -> PypiDefault | None:
    m, rel, v = eng.m, chosen.release, chosen.variant
    pypi = rel.pypi_default.get(m.platform or "")
    if chosen.on_cpu or not pypi or pypi == v.name or v.backend not in ("cuda", "rocm", "xpu"):
        return None
    pv = next((x for x in rel.variants_for(m.platform) if x.name == pypi), None)
    if pv is None:
        return None
    return PypiDefault(pv, eng.evaluate(rel, pv) if pv.backend == v.backend else None)
