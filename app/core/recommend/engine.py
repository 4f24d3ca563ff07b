"""The decision: which backend, which build, which torch release; or why none can be had.

``recommend(report, data, choices)`` is a pure function of the SystemReport, the compat data and
the user's wishes: it tries the backends the hardware calls for, in order of preference
(CUDA, ROCm, XPU, MPS, CPU), evaluates every release x build of each on this platform, and
picks the newest release that serves the most GPUs with the newest CUDA / ROCm. It reads no
language or other global state; its sentences are texts rendered by the presenters.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.actions import Action, ActionKind, Remedy
from app.core.compat import BACKENDS, CompatData, load_compat, version_tuple
from app.core.enums import Backend
from app.core.errors import BadInput, ForFace, Hint
from app.core.recommend.assemble import build
from app.core.recommend.decide import Availed, choose_python, decide
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.types import Choices, Recommendation
from app.core.recommend.words import backend_words, platform_words
from app.core.system import SystemReport
from app.core.text import Text, join, msg
from app.core.wheels import index_local_label

if TYPE_CHECKING:  # start-up: the sources load only when the user named some
    from app.core.sources import Availability, Offer

__all__ = ["recommend"]

_PREFERENCE = ("cuda", "rocm", "xpu", "mps", "cpu")
Tried = list[tuple[str, list[Evaluation]]]


def recommend(report: SystemReport | dict[str, object], data: CompatData | None = None,
              choices: Choices | None = None, available: Availability | None = None) -> Recommendation:
    """The PyTorch build for this machine, explained. Raises BadInput for impossible wishes.

    ``available``: what the user's sources offer (:mod:`app.core.sources`); the newest build
    they offer is chosen ("newest" means newest available) and a reason says so. None: every
    release of the compatibility data counts as available."""
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    choices = choices or Choices()
    eng = Engine(report, data, choices)
    req_backend, req_variant = _asked_build(choices, data)
    explicit = bool(req_backend or req_variant)
    if not any(r.variants_for(eng.platform_for_wheels()) for r in data.releases):
        raise BadInput(msg("recommend.no_platform", "No PyTorch release in the compatibility data has wheels for "
                           "{platform}.", platform=platform_words(eng.m.platform)))
    if choices.torch and not req_backend:
        # a pin keeps the backend this machine gets without it; it never silently falls to CPU
        try:
            req_backend = recommend(report, data, Choices(python=choices.python, packages=choices.packages)).backend
        except BadInput:
            pass  # nothing works unpinned either; the pinned search below explains why
    tried: Tried = []
    for b in [req_backend] if req_backend else _PREFERENCE:
        if not req_backend and not _calls_for(eng, b):
            continue
        evals = eng.candidates(b, req_variant, explicit=explicit)
        tried.append((b, evals))
        best = _pick(evals, eng)
        if best is not None and available is not None:
            found = _pick_available(evals, eng, available)
            if found is not None:
                return build(decide(eng, found[0], tried, found[1]))
            return build(decide(eng, best, tried, _unavailable(eng, best, available)))
        if best is not None:
            return build(decide(eng, best, tried))
    raise _refusal(eng, req_backend, req_variant, tried)


def _asked_build(choices: Choices, data: CompatData) -> tuple[str | None, str | None]:
    """The backend and build the user asked for (a build implies its backend); BadInput when they clash."""
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
        if backend and backend != of_variant:
            raise BadInput(msg("recommend.variant_clash", "--variant {variant} is a {of} build, but --backend "
                               "{backend} was asked for", variant=variant, of=of_variant, backend=backend))
        backend = of_variant
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
    gpus = eng.targets(ok[0].variant.backend)
    everyone = [e for e in ok if len(e.served) == len(gpus)]
    return max(everyone or ok, key=lambda e: e.rank())


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
    everyone = sorted((e for e in ok if len(e.served) == len(gpus)), key=lambda e: e.rank(), reverse=True)
    rest = sorted((e for e in ok if e not in everyone), key=lambda e: e.rank(), reverse=True)
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


def _refusal(eng: Engine, backend: str | None, variant: str | None, tried: Tried) -> BadInput:
    evals = [e for _, es in tried for e in es]
    what: list[Text] = []
    if variant:
        what.append(msg("recommend.asked_variant", "the {variant} build", variant=variant))
    elif backend:
        what.append(backend_words(backend))
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
        newest = max(evals, key=lambda e: (e.release.key, -len(e.whys)))
        why = join(newest.whys[:2], "; ")
    gui = msg("recommend.refused_gui", "Choose another combination with Change…, or go back to the recommended "
              "build.")
    cli = msg("recommend.refused_cli", "Run without that override to get the recommended build, or see the valid "
              "choices with torch-setup recommend.")
    hint: Hint = ForFace(gui, cli)
    found: tuple[Remedy, ...] = ()
    plain = Choices(python=eng.choices.python, packages=eng.choices.packages)
    if plain != eng.choices:
        try:
            fallback = recommend(eng.report, eng.data, plain)
            works = msg("recommend.works_here", "The build that works here is torch {version} ({variant}).",
                        version=fallback.torch_version, variant=fallback.variant)
            hint = ForFace(join((works, gui), " "), join((works, cli), " "))
            found = (Remedy("recommend-refused", works,
                            (Action(ActionKind.SET_TORCH_VERSION, fallback.torch_version or "",
                                    variant=fallback.variant or ""),),
                            source="the recommendation engine"),)
        except BadInput:
            pass
    return BadInput(msg("recommend.refused", "Cannot recommend {asked} on this machine: {why}.", asked=asked, why=why),
                    hint=hint, remedies=found)
