"""What follows from the chosen build: the new environment's Python, the driver that would
unlock a newer build, and what a plain ``pip install torch`` would have given instead.

:class:`Decision` gathers the engine's whole answer (the pick, everything it tried, these
consequences) for :mod:`app.core.recommend.explain` to put into words.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from app.core.compat import cuda
from app.core.compat.data import DriverCeiling, Release, Variant, version_tuple
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.facts import GpuView, Machine, vtext
from app.core.recommend.types import DriverUpgrade

if TYPE_CHECKING:  # start-up: the sources load only when the user named some
    from app.core.sources import Offer

__all__ = ["Availed", "Decision", "PypiDefault", "PythonChoice", "ceilings", "choose_python", "decide",
           "driver_upgrade"]


@dataclass(frozen=True)
class Availed:
    """What the user's sources decided: the version they offer (``offer`` None: none of the
    builds that run here is on offer) and the better build they do not offer (``skipped``,
    whose version is ``skipped_version``; ``reachable``: its sources answered but lack it)."""

    version: str
    offer: Offer | None
    skipped: Evaluation | None
    skipped_version: str
    reachable: bool


@dataclass(frozen=True)
class PythonChoice:
    """Which Python the new environment uses, and why (``case``)."""

    case: Literal["asked", "emulated", "unknown", "supported", "too_old", "too_new", "sources", "arch"]
    ok: bool | None  # the report's Python can install the build (None: unknown)
    env_python: str | None  # the new environment's Python when it differs from the report's
    python: str | None  # the Python the sentence names
    running: str | None = None  # the report's Python
    found_at: str | None = None  # too_old/too_new: where it is ("" = on the machine, path unknown; None = not yet)


def choose_python(eng: Engine, rel: Release, v: Variant | None = None,
                  held: frozenset[str] | None = None) -> PythonChoice:
    """The new environment's Python for build ``v`` of ``rel`` (the build's own range when it has
    one); ``held``: the Pythons the sources hold the build for (None: any the build supports)."""
    m, data = eng.m, eng.data
    lo, hi = v.python_range(rel) if v is not None else (rel.python_min, rel.python_max)

    def supported(minor: str) -> bool:
        return v.python_ok(rel, minor) if v is not None else rel.python_ok(minor)

    def ok(minor: str) -> bool:
        return supported(minor) and (held is None or minor in held)

    def newest() -> str:
        return max((p for p in rel.pythons() if ok(p)), key=version_tuple, default=hi)

    unfit = m.python_unfit is not None  # its own architecture has no wheel here (32-bit, Rosetta, ARM64 on WoA)
    if eng.fixed_python:
        same = (m.python == eng.fixed_python and not unfit) if m.python else None
        return PythonChoice("asked", same, eng.fixed_python if eng.fixed_python != m.python or unfit else None,
                            eng.fixed_python)
    if m.emulated_x64 and m.python_fits is None:  # nothing known of its architecture: say which one to get
        py = next((p for p in data.python_preference if ok(p)), newest())
        return PythonChoice("emulated", False, py, py)
    if m.python is None:
        return PythonChoice("unknown", None, None, None)
    if ok(m.python) and not unfit:
        return PythonChoice("supported", True, None, m.python)
    py, where = _another(m, [p for p in data.python_preference if ok(p)], ok, newest)
    if unfit:
        return PythonChoice("arch", False, py, py, m.python, where)
    if supported(m.python):  # the build supports it, the sources hold no wheel for it
        return PythonChoice("sources", False, py, py, m.python, where)
    too_old = version_tuple(m.python) < version_tuple(lo)
    return PythonChoice("too_old" if too_old else "too_new", False, py, py, m.python, where)


def _another(m: Machine, pref: list[str], ok: Callable[[str], bool],
             newest: Callable[[], str]) -> tuple[str, str | None]:
    """(the Python the new environment uses, where it is: a path, "" somewhere here, None not yet):
    one of the interpreters found that a wheel serves, in the order of preference, else the first
    preferred one (uv can download it)."""
    found = [(p, exe) for p, exe in m.interpreters if ok(p)]  # m.interpreters holds no unfit architecture
    found.sort(key=lambda pe: version_tuple(pe[0]), reverse=True)
    if found:
        in_pref = [pe for pe in found if pe[0] in pref]
        return sorted(in_pref, key=lambda pe: pref.index(pe[0]))[0] if in_pref else found[0]
    return (pref[0] if pref else newest()), None


def ceilings(eng: Engine, gpus: tuple[GpuView, ...] | list[GpuView]) -> list[tuple[GpuView, DriverCeiling]]:
    """The GPUs among ``gpus`` whose architecture stops at a driver branch, with that ceiling."""
    out = []
    for g in gpus:
        c = cuda.driver_ceiling(g.cc_text, eng.data) if g.cc else None
        if c is not None:
            out.append((g, c))
    return out


def driver_upgrade(eng: Engine, chosen: Evaluation, evals: list[Evaluation]) -> DriverUpgrade | None:
    """The smallest driver that unlocks the best CUDA build the driver alone holds back, never
    past a served GPU's driver ceiling (R580 for Maxwell, Pascal, Volta)."""
    m = eng.m
    if m.driver is None or eng.cc_unknown("cuda"):  # a GPU of unknown generation: a newer driver is no promise
        return None
    capped = [c for _, c in ceilings(eng, chosen.served)]
    cands = [x for x in evals if x.variant.backend == "cuda" and x.kinds == {"driver"} and x.rank() > chosen.rank()
             and x.floor_text and cuda.capped_driver(x.floor_text, capped)]
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
    availed: Availed | None = None  # None: no source bounds the choice

    @property
    def m(self) -> Machine:
        return self.eng.m

    @property
    def all_evals(self) -> list[Evaluation]:
        return [x for _, es in self.tried for x in es]


def decide(eng: Engine, chosen: Evaluation, tried: list[tuple[str, list[Evaluation]]],
           availed: Availed | None = None) -> Decision:
    rel, v = chosen.release, chosen.variant
    if chosen.held_version:
        torch_version = chosen.held_version
    else:
        torch_version = eng.pinned_version(rel) if eng.choices.torch else rel.latest
    if availed is not None and availed.offer is not None:
        torch_version = availed.version
    frozen = tuple((b, tuple(es)) for b, es in tried)
    evals = [x for _, es in frozen for x in es]
    upgrade = driver_upgrade(eng, chosen, evals) if v.backend == "cuda" else None
    return Decision(eng, chosen, frozen, torch_version, choose_python(eng, rel, v, chosen.pythons), upgrade,
                    _pypi_default(eng, chosen), availed)


def _pypi_default(eng: Engine, chosen: Evaluation) -> PypiDefault | None:
    m, rel, v = eng.m, chosen.release, chosen.variant
    pypi = rel.pypi_default.get(m.platform or "")
    if chosen.on_cpu or not pypi or pypi == v.name or v.backend not in ("cuda", "rocm", "xpu"):
        return None
    pv = next((x for x in rel.variants_for(m.platform) if x.name == pypi), None)
    if pv is None:
        return None
    return PypiDefault(pv, eng.evaluate(rel, pv) if pv.backend == v.backend else None)
