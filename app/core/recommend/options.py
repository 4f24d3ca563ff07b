"""What each selector of the "Change…" dialog may offer under the CURRENT wishes.

:func:`options` asks the engine, for every entry of every selector (backend, build, torch
version, Python, each companion), whether the wishes with that one entry changed still give a
build: an entry is offered only then, and greyed with the engine's reason otherwise. Picking
any offered entry therefore keeps the whole combination working. The selectors cascade as the
dialog shows them: a backend is judged with its build and torch version left to the engine, a
build with the torch version left to it; the Python and the companions with everything else as
it is. When the current wishes give nothing (they came from elsewhere), :attr:`Options.nearest`
is the nearest combination that works (the first of :class:`NoCombination`'s ways out).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from app.core.base.errors import BadInput
from app.core.base.requirements import requirement_name
from app.core.base.text import Text, msg
from app.core.compat.data import BACKENDS, CompatData, load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import engine
from app.core.recommend.evaluate import Engine
from app.core.recommend.types import COMPANIONS, Choices, NoCombination, Recommendation
from app.core.recommend.wheelfiles import WheelFiles
from app.core.recommend.words import build_label, semicolons

__all__ = ["SELECTORS", "Entry", "Options", "options"]


@dataclass(frozen=True)
class Entry:
    """One entry of a selector: ``value`` None is "let the assistant choose"."""

    value: str | None
    valid: bool
    why: Text  # valid: what it gives ("torch 2.14.1 (CPU-only)"); else why not
    standard: bool = False  # a build entry: PyPI's standard (GPU) build run on the processor
    torch: str | None = None  # valid: the torch version it gives


@dataclass(frozen=True)
class Options:
    """Every selector's entries under ``choices`` (and the sources), and what ``choices`` give."""

    choices: Choices
    recommendation: Recommendation | None  # what the current wishes give (None: nothing)
    conflict: NoCombination | None  # why not, with the ways out
    backends: tuple[Entry, ...]
    variants: tuple[Entry, ...]  # the builds of the chosen backend (only "automatic" when none is chosen)
    torches: tuple[Entry, ...]
    pythons: tuple[Entry, ...]
    companions: tuple[Entry, ...]  # value: the package; valid: it can be ticked (or unticked) here

    @property
    def nearest(self) -> Choices | None:
        """The nearest wishes that work (None when the current ones do, or nothing does)."""
        if self.conflict is None or not self.conflict.drops:
            return None
        return self.conflict.drops[0].choices or Choices()


SELECTORS = ("backends", "variants", "torches", "pythons", "companions")


# long: one judgement per entry of each of the five selectors, in the dialog's cascade
def options(report: SystemReport | dict[str, object], data: CompatData | None = None,
            choices: Choices | None = None, available: WheelFiles | None = None,
            selectors: tuple[str, ...] = SELECTORS) -> Options:
    """Each selector's entries for the current wishes, valid (the engine finds a build) or why not.
    ``selectors``: only these are judged (the others come back empty)."""
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    ch = choices or Choices()
    try:
        rec: Recommendation | None = engine.recommend(report, data, ch, available)
        conflict: NoCombination | None = None
    except NoCombination as err:
        rec, conflict = None, err
    eng = Engine(report, data, Choices(), available)
    plat = eng.platform_for_wheels()

    def judge(value: str | None, wishes: Choices, standard: bool = False) -> Entry:
        try:
            pick = engine.choose(report, data, wishes, available)
        except BadInput as err:
            return Entry(value, False, err.message, standard)
        if pick.best is None:
            evals = [e for _, es in pick.tried for e in es]
            if not evals:
                return Entry(value, False, msg("rec.no_build_here", "no such build here"), standard)
            return Entry(value, False, semicolons(engine.nearest_miss(evals).whys[:2]), standard)
        b = pick.best
        return Entry(value, True, msg("rec.drop_gives", "torch {torch} ({build})", torch=b.torch_version,
                                      build=build_label(b.variant)), standard, b.torch_version)

    backends: list[Entry] = []
    variants: list[Entry] = []
    torches: list[Entry] = []
    pythons: list[Entry] = []
    companions: list[Entry] = []
    if "backends" in selectors:
        backends = [judge(None, replace(ch, backend=None, variant=None, torch=None))]
        backends += [judge(b, replace(ch, backend=b, variant=None, torch=None)) for b in BACKENDS]
    if "variants" in selectors:
        variants = [judge(None, replace(ch, variant=None, torch=None))]
    if "variants" in selectors and ch.backend:
        names = list(dict.fromkeys(v.name for r in data.releases for v in r.variants_for(plat)
                                   if v.backend == ch.backend))
        standard = [] if ch.backend != "cpu" else list(dict.fromkeys(
            n for r in data.releases for n in [r.pypi_default.get(plat or "")] if n and n not in names))
        variants += [judge(n, replace(ch, variant=n, torch=None)) for n in names]
        variants += [judge(n, replace(ch, variant=n, torch=None), True) for n in standard]
    if "torches" in selectors:
        torches = [judge(None, replace(ch, torch=None))]
        torches += [judge(r.latest, replace(ch, torch=r.latest)) for r in data.releases]
    if "pythons" in selectors:
        all_pythons = sorted({p for r in data.releases for p in r.pythons()}, key=version_tuple, reverse=True)
        pythons = [judge(None, replace(ch, python=None))] + [judge(p, replace(ch, python=p)) for p in all_pythons]
    have = {requirement_name(p) for p in ch.packages or ()}
    for pkg in COMPANIONS if "companions" in selectors else ():
        if pkg in have:
            rest = tuple(p for p in ch.packages or () if requirement_name(p) != pkg)
            companions.append(judge(pkg, replace(ch, packages=rest or None)))
        else:
            companions.append(judge(pkg, replace(ch, packages=(*(ch.packages or ()), pkg))))
    return Options(ch, rec, conflict, tuple(backends), tuple(variants), tuple(torches), tuple(pythons),
                   tuple(companions))
