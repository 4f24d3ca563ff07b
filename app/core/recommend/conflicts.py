"""The user's wishes one by one: what each costs, and how to get out when they cannot all be had.

Every wish (a companion, a companion's version, a Python version, a torch version, a backend or
build, the sources) is a constraint of the engine. :func:`wishes` lists those in a call;
:func:`relaxations` the changes that give up or move one of them, nearest first (a pin moved
before a wish dropped); the engine tries them (:mod:`app.core.recommend.engine`). The sentences
say what a wish cost, or which wish to drop; none decides anything.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from app.core.base.requirements import requirement_name
from app.core.base.text import Text, msg
from app.core.compat.data import version_tuple
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.types import Choices
from app.core.recommend.words import build_label

__all__ = ["Wish", "cost", "relaxations", "wishes"]


@dataclass(frozen=True)
class Wish:
    """One constraint the user set, and the call without it."""

    kind: str  # companion | companion_pin | python | torch | variant | backend | sources
    words: Text  # "torchvision", "Python 3.9", "your sources"
    without: Choices  # the choices with this wish given up
    keeps_sources: bool = True  # False: the call without the sources (what the indexes would give)
    related: tuple[str, ...] = ()  # the evaluation problems this wish causes


def wishes(eng: Engine) -> list[Wish]:
    """The wishes of this call whose cost can be measured, in the order a reader meets them."""
    ch = eng.choices
    out: list[Wish] = []
    pins = dict(eng.wishes.companion_pins)
    for pkg in eng.wishes.companions:
        rest = tuple(p for p in ch.packages or () if _name(p) != pkg)
        words: Text = f"{pkg} {pins[pkg]}" if pkg in pins else pkg
        out.append(Wish("companion_pin" if pkg in pins else "companion", words,
                        replace(ch, packages=rest or None), related=("companion", "sources")))
    if eng.fixed_python:
        out.append(Wish("python", msg("rec.wish_python", "Python {python}", python=eng.fixed_python),
                        replace(ch, python=None), related=("python", "sources")))
    if eng.sources_bound:
        out.append(Wish("sources", msg("rec.wish_sources", "What your sources hold"), ch, keeps_sources=False,
                        related=("sources",)))
    return out


def relaxations(eng: Engine) -> list[tuple[str, Text, Choices | None]]:
    """(kind, label, choices) for each way to give up or move one wish, nearest first; the
    plain recommendation (no wishes at all) last."""
    ch, data = eng.choices, eng.data
    out: list[tuple[str, Text, Choices | None]] = []
    if ch.torch:
        out.append(("torch", msg("rec.drop_torch", "Use another torch version"), replace(ch, torch=None)))
    if eng.fixed_python:
        have = version_tuple(eng.fixed_python)
        others = sorted({p for r in data.releases for p in r.pythons()} - {eng.fixed_python},
                        key=lambda p: (abs(version_tuple(p)[1] - have[1]), -version_tuple(p)[1]))
        for p in others:
            out.append(("python", msg("rec.use_python", "Use Python {python}", python=p), replace(ch, python=p)))
    if ch.variant:
        out.append(("variant", msg("rec.drop_variant", "Use another build"), replace(ch, variant=None)))
    if ch.backend:
        out.append(("backend", msg("rec.drop_backend", "Let the assistant choose the build"),
                    replace(ch, backend=None, variant=None)))
    pins = dict(eng.wishes.companion_pins)
    for pkg in eng.wishes.companions:
        if pkg in pins:
            kept = tuple(pkg if _name(p) == pkg else p for p in ch.packages or ())
            out.append(("companion_pin", msg("rec.drop_companion_pin", "Use the {pkg} that matches", pkg=pkg),
                        replace(ch, packages=kept)))
    for pkg in eng.wishes.companions:
        rest = tuple(p for p in ch.packages or () if _name(p) != pkg)
        out.append(("companion", msg("rec.drop_companion", "Drop {pkg}", pkg=pkg), replace(ch, packages=rest or None)))
    out.append(("all", msg("rec.drop_all", "Use the recommendation"), None))
    return out


def cost(wish: Wish, chosen: Evaluation, better: Evaluation, now: Evaluation) -> Text | None:
    """What ``wish`` cost: the build without it was ``better``; ``now`` is that build judged
    with it. None when it cost nothing (the same build)."""
    same = (better.release.key, better.variant.name, better.on_cpu) == (chosen.release.key, chosen.variant.name,
                                                                       chosen.on_cpu)
    if same:
        return None
    found = now.first_by_kind()
    why = next((found[k] for k in wish.related if k in found), None)
    if why is None:
        return None
    if wish.kind == "sources":
        if better.release.key > chosen.release.key:
            return msg("rec.cost_sources_release", "torch {better} is not in your sources: {why}.",
                       better=better.torch_version, why=why)
        return msg("rec.cost_sources_build", "The {better} build is not in your sources: {why}.",
                   better=_build_words(better), why=why)
    if better.release.key > chosen.release.key:
        return msg("rec.cost_release", "{wish} needs torch {torch} or older: {why}.", wish=wish.words,
                   torch=chosen.torch_version, why=why)
    return msg("rec.cost_build", "With {wish}, the {build} build rather than the {better} one: {why}.",
               wish=wish.words, build=_build_words(chosen), better=_build_words(better), why=why)


def _build_words(e: Evaluation) -> Text:
    if e.on_cpu:
        return msg("rec.build_standard_on_cpu", "standard ({build}, run on the processor)",
                   build=build_label(e.variant))
    return build_label(e.variant)


def _name(req: str) -> str | None:
    return requirement_name(req)
