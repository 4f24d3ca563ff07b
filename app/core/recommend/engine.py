"""The decision: which backend, which build, which torch release; or why none can be had.

``recommend(report, data, choices, available)`` is a pure function of the SystemReport, the
compat data, the user's wishes and what the sources hold: it tries the backends the hardware
calls for, in order of preference (CUDA, ROCm, XPU, MPS, CPU), evaluates every release x build
of each on this platform, and picks the newest release that serves the most GPUs with the
newest CUDA / ROCm. Every wish is a constraint of that search: the answer is the newest
combination that satisfies all of them, with what each wish cost (``Recommendation.costs``);
when none does, :class:`~app.core.recommend.types.NoCombination` says which wish to drop, as
choices that work. It reads no language or other global state; its sentences are texts
rendered by the presenters.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.core.base.actions import Action, ActionKind, Remedy
from app.core.base.enums import Backend
from app.core.base.errors import BadInput, ForFace, Hint
from app.core.base.text import Text, join, msg, render
from app.core.base.wheels import index_local_label
from app.core.compat.data import BACKENDS, CompatData, load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import conflicts
from app.core.recommend.assemble import build
from app.core.recommend.decide import Availed, choose_python, decide
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.types import Choices, Drop, NoCombination, Recommendation, code_of
from app.core.recommend.wheelfiles import WheelFiles
from app.core.recommend.words import backend_words, build_label, platform_words, semicolons

if TYPE_CHECKING:  # start-up: the sources load only when the user named some
    from app.core.sources import Availability, Offer

__all__ = ["Pick", "choose", "nearest_miss", "recommend"]

_PREFERENCE = ("cuda", "rocm", "xpu", "mps", "cpu")
Tried = list[tuple[str, list[Evaluation]]]


@dataclass
class Pick:
    """The engine's search for one set of wishes: the best build (None: none fits) and what it tried."""

    eng: Engine
    best: Evaluation | None
    tried: Tried
    backend: str | None
    variant: str | None
    availed: Availed | None = None  # what the user's sources decided (``sources`` given)


def recommend(report: SystemReport | dict[str, object], data: CompatData | None = None,
              choices: Choices | None = None, available: WheelFiles | None = None,
              sources: Availability | None = None) -> Recommendation:
    """The PyTorch build for this machine, explained. Raises NoCombination (a BadInput) when the
    wishes cannot all be had, BadInput for wishes that are malformed.

    ``available``: the wheel files the install is bound to (folders or a bundle; the builds they
    make are the only candidates when ``available.only``). ``sources``: what the user's sources
    offer, folders first and index pages on demand (:mod:`app.core.sources`); the newest build they
    offer is chosen ("newest" means newest available) and a reason says so. None: every release
    of the compatibility data counts as available."""
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    pick = choose(report, data, choices or Choices(), available, sources)
    if pick.best is None:
        raise _refusal(pick)
    costs = _costs(pick.eng, pick.best)
    return build(decide(pick.eng, pick.best, pick.tried, pick.availed), costs)


def choose(report: SystemReport, data: CompatData, choices: Choices, available: WheelFiles | None,
           sources: Availability | None = None) -> Pick:
    """The best build for these wishes (``best`` None: none satisfies them); BadInput for malformed wishes."""
    eng = Engine(report, data, choices, available)
    req_backend, req_variant = _asked_build(choices, data, standard_on_cpu=eng.sources_bound)
    explicit = bool(req_backend or req_variant)
    if not any(r.variants_for(eng.platform_for_wheels()) for r in data.releases):
        raise BadInput(msg("recommend.no_platform", "No PyTorch release in the compatibility data has wheels for "
                           "{platform}.", platform=platform_words(eng.m.platform)))
    if choices.torch and not req_backend:
        # a pin keeps the backend this machine gets without it; it never silently falls to CPU
        plain = choose(report, data, Choices(python=choices.python, packages=choices.packages), available, sources)
        if plain.best is not None:
            req_backend = plain.best.backend
    tried: Tried = []
    for b in [req_backend] if req_backend else _PREFERENCE:
        if not req_backend and not _calls_for(eng, b):
            continue
        evals = eng.candidates(b, req_variant, explicit=explicit)
        tried.append((b, evals))
        best = _pick(evals, eng)
        if best is None and b == "cpu" and not req_variant and eng.sources_bound:
            # the sources hold no CPU-only build that fits: PyPI's standard build runs on the processor too
            standard = eng.on_cpu_candidates()
            tried.append((b, standard))
            best = _pick(standard, eng)
        if best is not None and sources is not None and not eng.sources_bound:  # bound: the files decided
            found = _pick_available(evals, eng, sources)
            if found is not None:
                return Pick(eng, found[0], tried, req_backend, req_variant, found[1])
            return Pick(eng, best, tried, req_backend, req_variant, _unavailable(eng, best, sources))
        if best is not None:
            return Pick(eng, best, tried, req_backend, req_variant)
    return Pick(eng, None, tried, req_backend, req_variant)


def _asked_build(choices: Choices, data: CompatData, *, standard_on_cpu: bool = False) -> tuple[str | None, str | None]:
    """The backend and build the user asked for (a build implies its backend); BadInput when they clash.

    With ``standard_on_cpu`` (the sources are all there is), the processor with a GPU build
    (``cpu`` + ``cu130``) is PyPI's standard build run on the CPU."""
    backend = (choices.backend or "").strip().lower() or None
    variant = (choices.variant or "").strip().lower() or None
    if backend and Backend.parse(backend) is None:
        raise BadInput(msg("recommend.bad_backend", "--backend {value!r} is not one of {choices}",
                           value=str(choices.backend), choices=", ".join(BACKENDS)))
    if variant:
        names = data.variant_names()
        if variant not in names:
            raise BadInput(msg("recommend.bad_variant", "--variant {value!r} is not a build the compatibility data "
                               "knows ({names})", value=str(choices.variant), names=", ".join(names)))
        of_variant = next(v.backend for r in data.releases for v in r.variants if v.name == variant)
        standard = standard_on_cpu and any(variant in r.pypi_default.values() for r in data.releases)
        if backend and backend != of_variant and not (backend == "cpu" and standard):
            raise BadInput(msg("recommend.variant_clash", "--variant {variant} is a {of} build, but --backend "
                               "{backend} was asked for", variant=variant, of=of_variant, backend=backend))
        backend = backend or of_variant
    return backend, variant


def _calls_for(eng: Engine, backend: str) -> bool:
    """Without a wish, is ``backend`` worth trying on this hardware?"""
    m = eng.m
    return backend == "cpu" or bool(eng.targets(backend)) or (backend == "mps" and m.platform == "macos-arm64")


def _pick(evals: list[Evaluation], eng: Engine) -> Evaluation | None:
    """The best build that runs: one serving every GPU if any, the newest release, the newest runtime."""
    ok = [e for e in evals if e.ok]
    if not ok:
        return None
    gpus = eng.targets(ok[0].backend)
    everyone = [e for e in ok if len(e.served) == len(gpus)]
    return max(everyone or ok, key=eng.pick_key)


def _wanted(eng: Engine, e: Evaluation) -> str:
    return eng.pinned_version(e.release) if eng.choices.torch else e.release.latest


def _offer(eng: Engine, e: Evaluation, available: Availability) -> tuple[str, Offer] | None:
    """The version of ``e``'s release (the wanted one, else its newest) the sources offer, and where."""
    rel, v = e.release, e.variant
    label = index_local_label(v.index_url, eng.platform_for_wheels())
    pc = choose_python(eng, rel, v)
    python = pc.env_python or pc.python
    want = _wanted(eng, e)
    exact = str(eng.choices.torch or "").strip().lstrip("v").count(".") == 2

    def accept(version: str) -> bool:
        return version == want if exact else version.split(".")[:2] == rel.torch.split(".")[:2]

    for remote in (False, True):  # the folders first: a request only when they lack the wanted build
        offers = [o for o in available.offers("torch", v.index_url, label, python, remote=remote) if accept(o.version)]
        hit = next((o for o in offers if o.version == want), None)
        if hit is not None:
            return want, hit
    if not offers:
        return None
    newest = max(offers, key=lambda o: version_tuple(o.version))
    return newest.version, newest


def _pick_available(evals: list[Evaluation], eng: Engine, available: Availability) -> tuple[Evaluation, Availed] | None:
    """The best build that runs AND that the sources offer, with what that decided."""
    ok = [e for e in evals if e.ok]
    if not ok:
        return None
    gpus = eng.targets(ok[0].variant.backend)
    everyone = sorted((e for e in ok if len(e.served) == len(gpus)), key=eng.pick_key, reverse=True)
    rest = sorted((e for e in ok if e not in everyone), key=eng.pick_key, reverse=True)
    top = (everyone or rest)[0]
    for e in everyone + rest:
        found = _offer(eng, e, available)
        if found is None:
            continue
        version, offer = found
        skipped = None if (e is top and version == _wanted(eng, top)) else top
        reachable = not available.failures(top.variant.index_url)
        return e, Availed(version, offer, skipped, _wanted(eng, top), reachable)
    return None


def _unavailable(eng: Engine, best: Evaluation, available: Availability) -> Availed:
    """No build that runs is on offer: the plain pick, said to be unavailable."""
    reachable = not available.failures(best.variant.index_url)
    return Availed(_wanted(eng, best), None, best, _wanted(eng, best), reachable)


def nearest_miss(evals: list[Evaluation]) -> Evaluation:
    """The build that came closest: one the sources hold, the fewest problems, the newest release."""
    return min(evals, key=lambda e: (any(code_of(w) == "rec.sources_no_torch" for w in e.whys), len(e.whys),
                                     tuple(-k for k in e.release.key)))


# ------------------------------------------------------------------ what each wish cost


def _costs(eng: Engine, chosen: Evaluation) -> tuple[Text, ...]:
    """One sentence per wish that kept a better build out (the standard build on the processor says why)."""
    out: list[Text] = []
    for wish in conflicts.wishes(eng):
        if wish.kind == "sources" and chosen.on_cpu:
            out.append(_standard_build_cost(eng, chosen))
            continue
        other = choose(eng.report, eng.data, wish.without, eng.available if wish.keeps_sources else None)
        if other.best is None:
            continue
        now = eng.evaluate(other.best.release, other.best.variant, explicit=True, on_cpu=other.best.on_cpu)
        text = conflicts.cost(wish, chosen, other.best, now)
        if text is not None:
            out.append(text)
    return tuple(dict.fromkeys(out))


def _standard_build_cost(eng: Engine, chosen: Evaluation) -> Text:
    """Why PyPI's standard (GPU) build runs on the processor here: the CPU-only pairs the sources lack."""
    assert eng.available is not None
    plat = eng.platform_for_wheels()
    whys: list[Text] = []
    for rel in eng.data.releases:
        if rel.key < chosen.release.key and whys:
            break
        for v in rel.variants_for(plat):
            if v.backend == "cpu":
                e = eng.evaluate(rel, v)
                found = e.first_by_kind()
                if "sources" in found and code_of(found["sources"]) != "rec.sources_no_torch":
                    whys.append(found["sources"])
    names = ["torch", *eng.wishes.companions]
    size = eng.available.bytes_of(names, plat) + eng.available.runtime_bytes(plat)
    pairs = tuple(f"{pkg} {ver.split('+')[0]}" for pkg, ver in chosen.pins if pkg != "torch")
    why: Text = semicolons(list(dict.fromkeys(whys))[:2]) or msg("rec.sources_no_cpu_build", "your sources hold "
                                                                   "no CPU-only build that fits")
    if pairs:
        return msg("rec.cost_standard_build_with", "The standard build of torch {torch} ({size}, with {build} "
                   "libraries it will not use here) with {pairs} works on this computer: {why}.", why=why,
                   torch=chosen.torch_version, size=_gb(size), build=build_label(chosen.variant), pairs=pairs)
    return msg("rec.cost_standard_build", "The standard build of torch {torch} ({size}, with {build} libraries "
               "it will not use here) works on this computer: {why}.", why=why, torch=chosen.torch_version,
               size=_gb(size), build=build_label(chosen.variant))


def _gb(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


# ------------------------------------------------------------------ no combination


def _refusal(pick: Pick) -> BadInput:
    """Why nothing fits; with wishes, the ways out that work (NoCombination)."""
    eng = pick.eng
    evals = [e for _, es in pick.tried for e in es]
    what: list[Text] = []
    if pick.variant:
        what.append(msg("recommend.asked_variant", "the {variant} build", variant=pick.variant))
    elif pick.backend:
        what.append(backend_words(pick.backend))
    if eng.choices.torch:
        what.append(msg("recommend.asked_torch", "torch {version}", version=str(eng.choices.torch)))
    if eng.fixed_python:
        what.append(msg("recommend.asked_python", "Python {version}", version=eng.fixed_python))
    if eng.wishes.companions:
        what.append(join(eng.wishes.companions, msg("recommend.and", " and ")))
    asked: Text = join(what, msg("recommend.with", " with ")) if what else msg("recommend.any_build", "any build")
    why: Text
    if not evals:
        why = msg("recommend.no_such_build", "no such build exists for {platform}",
                  platform=platform_words(eng.m.platform))
    else:
        why = semicolons(nearest_miss(evals).whys[:2])
    message = msg("recommend.refused", "Cannot recommend {asked} on this machine: {why}.", asked=asked, why=why)
    gui = msg("recommend.refused_gui", "Choose another combination with Change…, or go back to the recommended "
              "build.")
    cli = msg("recommend.refused_cli", "Run without that override to get the recommended build, or see the valid "
              "choices with torch-setup recommend.")
    if eng.choices == Choices():
        return BadInput(message, hint=ForFace(gui, cli))
    drops = _drops(eng)
    hint: Hint = ForFace(gui, cli)
    found: tuple[Remedy, ...] = ()
    first = next((d for d in drops if d.choices is not None and d.choices.torch), None)
    if first is not None and first.choices is not None:  # a remedy the user can apply: its action is the first way
        found = (Remedy("recommend-refused", msg("recommend.works_here_build", "The build that works here is {gives}.",
                                                 gives=first.gives),
                        (Action(ActionKind.SET_TORCH_VERSION, first.choices.torch or "",
                                variant=first.choices.variant or ""),),
                        source="the recommendation engine"),)
    others = [d for d in drops if d is not first]  # the remedy's way is said once, by its action
    if others:
        ways = [f"{_flags(d.choices)} (gives {render(d.gives)})" for d in others[:3]]
        hint = ForFace(msg("recommend.drops_gui", "Choose one of the combinations that work, or go back to the "
                           "recommended build."),
                       msg("recommend.drops_cli", "Any of these works: {ways}.", ways="; ".join(ways)))
    elif found:
        hint = ForFace(msg("recommend.drops_gui", "Choose one of the combinations that work, or go back to the "
                           "recommended build."),
                       msg("recommend.refused_other_cli", "Run without that override to get the recommended "
                           "build."))
    return NoCombination(message, hint, why=msg("rec.no_combination", "No build satisfies all your choices: {why}.",
                                                why=why),
                         drops=drops, remedies=found)
def _flags(choices: Choices | None) -> str:
    """The command-line options that ask for ``choices`` ("without overrides" for none)."""
    ch = choices or Choices()
    parts = [f"--{name} {value}" for name, value in (("backend", ch.backend), ("variant", ch.variant),
                                                      ("torch", ch.torch), ("python", ch.python)) if value]
    if ch.packages:
        parts.append("--packages " + " ".join(ch.packages))
    return " ".join(parts) or "without overrides"


def _drops(eng: Engine) -> tuple[Drop, ...]:
    """Each relaxation of the wishes that gives a build, nearest first (one per kind, and one
    per resulting set of choices: dropping the only wish is the plain recommendation)."""
    out: list[Drop] = []
    kinds: set[str] = set()
    tried: list[Choices] = []
    for kind, label, choices in conflicts.relaxations(eng):
        if kind in kinds or (choices or Choices()) in tried:
            continue
        tried.append(choices or Choices())
        try:
            pick = choose(eng.report, eng.data, choices or Choices(), eng.available)
        except BadInput:
            continue
        if pick.best is None:
            continue
        kinds.add(kind)
        best = pick.best
        if kind == "torch" and choices is not None:  # the pin moves to the version that works
            choices = replace(choices, torch=best.torch_version)
            label = msg("rec.use_torch", "Use torch {torch}", torch=best.torch_version)
        elif kind == "variant" and choices is not None:
            choices = replace(choices, variant=best.variant.name)
            label = msg("rec.use_build", "Use the {build} build", build=build_label(best.variant))
        out.append(Drop(label, choices, msg("rec.drop_gives", "torch {torch} ({build})", torch=best.torch_version,
                                            build=build_label(best.variant)), kind))
    return tuple(out)
