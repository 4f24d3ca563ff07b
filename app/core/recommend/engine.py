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

from app.core.compat import BACKENDS, CompatData, load_compat
from app.core.enums import Backend
from app.core.errors import BadInput
from app.core.recommend import conflicts
from app.core.recommend.assemble import build
from app.core.recommend.available import Available
from app.core.recommend.decide import decide
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.types import Choices, Drop, NoCombination, Recommendation, code_of
from app.core.recommend.words import backend_words, build_label, platform_words, semicolons
from app.core.system import SystemReport
from app.core.text import Text, msg, render

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


def recommend(report: SystemReport | dict[str, object], data: CompatData | None = None,
              choices: Choices | None = None, available: Available | None = None) -> Recommendation:
    """The PyTorch build for this machine, explained. Raises NoCombination (a BadInput) when the
    wishes cannot all be had, BadInput for wishes that are malformed."""
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    pick = choose(report, data, choices or Choices(), available)
    if pick.best is None:
        raise _refusal(pick)
    costs = _costs(pick.eng, pick.best)
    return build(decide(pick.eng, pick.best, pick.tried), costs)


def choose(report: SystemReport, data: CompatData, choices: Choices, available: Available | None) -> Pick:
    """The best build for these wishes (``best`` None: none satisfies them); BadInput for malformed wishes."""
    eng = Engine(report, data, choices, available)
    req_backend, req_variant = _asked_build(choices, data, standard_on_cpu=eng.sources_bound)
    explicit = bool(req_backend or req_variant)
    if not any(r.variants_for(eng.platform_for_wheels()) for r in data.releases):
        raise BadInput("No PyTorch release in the compatibility data has wheels for "
                       f"{render(platform_words(eng.m.platform))}.")
    if choices.torch and not req_backend:
        # a pin keeps the backend this machine gets without it; it never silently falls to CPU
        plain = choose(report, data, Choices(python=choices.python, packages=choices.packages), available)
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
        raise BadInput(f"--backend {choices.backend!r} is not one of {', '.join(BACKENDS)}")
    if variant:
        names = data.variant_names()
        if variant not in names:
            raise BadInput(f"--variant {choices.variant!r} is not a build the compatibility data knows "
                           f"({', '.join(names)})")
        of_variant = next(v.backend for r in data.releases for v in r.variants if v.name == variant)
        standard = standard_on_cpu and any(variant in r.pypi_default.values() for r in data.releases)
        if backend and backend != of_variant and not (backend == "cpu" and standard):
            raise BadInput(f"--variant {variant} is a {of_variant} build, but --backend {backend} was asked for")
        backend = backend or of_variant
    return backend, variant


def _calls_for(eng: Engine, backend: str) -> bool:
    """Without a wish, is ``backend`` worth trying on this hardware?"""
    m = eng.m
    if backend == "rocm" and m.family == "windows":
        return False  # AMD's own index only when asked for
    return backend == "cpu" or bool(eng.targets(backend)) or (backend == "mps" and m.platform == "macos-arm64")


def _pick(evals: list[Evaluation], eng: Engine) -> Evaluation | None:
    """The best build that runs: one serving every GPU if any, the newest release, the newest runtime."""
    ok = [e for e in evals if e.ok]
    if not ok:
        return None
    gpus = eng.targets(ok[0].backend)
    everyone = [e for e in ok if len(e.served) == len(gpus)]
    return max(everyone or ok, key=lambda e: e.rank())


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
    what = []
    if pick.variant:
        what.append(f"the {pick.variant} build")
    elif pick.backend:
        what.append(render(backend_words(pick.backend)))
    if eng.choices.torch:
        what.append(f"torch {eng.choices.torch}")
    if eng.fixed_python:
        what.append(f"Python {eng.fixed_python}")
    if eng.wishes.companions:
        what.append(" and ".join(eng.wishes.companions))
    asked = " with ".join(what) or "any build"
    if not evals:
        why: Text = msg("rec.no_such_build", "no such build exists for {platform}",
                        platform=platform_words(eng.m.platform))
    else:
        why = semicolons(nearest_miss(evals).whys[:2])
    if eng.choices == Choices():
        return BadInput(f"Cannot recommend {asked} on this machine: {render(why)}.",
                        hint="See the valid choices (GUI: Change…).")
    drops = _drops(eng)
    hint = "Run without that override to get the recommended build, or see the valid choices (GUI: Change…)."
    if drops:
        ways = [f"{_flags(d.choices)} (gives {render(d.gives)})" for d in drops[:3]]
        hint = "Any of these works: " + "; ".join(ways) + "."
    return NoCombination(f"Cannot recommend {asked} on this machine: {render(why)}.", hint,
                         why=msg("rec.no_combination", "No build satisfies all your choices: {why}.", why=why),
                         drops=drops)


def _flags(choices: Choices | None) -> str:
    """The command-line options that ask for ``choices`` ("without overrides" for none)."""
    ch = choices or Choices()
    parts = [f"--{name} {value}" for name, value in (("backend", ch.backend), ("variant", ch.variant),
                                                      ("torch", ch.torch), ("python", ch.python)) if value]
    if ch.packages:
        parts.append("--packages " + " ".join(ch.packages))
    return " ".join(parts) or "without overrides"


def _drops(eng: Engine) -> tuple[Drop, ...]:
    """Each relaxation of the wishes that gives a build, nearest first (one per kind)."""
    out: list[Drop] = []
    kinds: set[str] = set()
    for kind, label, choices in conflicts.relaxations(eng):
        if kind in kinds:
            continue
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
