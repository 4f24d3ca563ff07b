"""The other builds: the recommendation's alternatives, and :func:`valid_choices` (every backend,
build, torch release and Python on this platform, each valid or with the reason it is not: what
the GUI's "Change…" dialog offers)."""
from __future__ import annotations

from collections.abc import Callable

from app.core.base.enums import Backend
from app.core.base.text import Text
from app.core.compat.data import BACKENDS, CompatData, load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import explain
from app.core.recommend.evaluate import Engine, Evaluation
from app.core.recommend.types import Alternative, BuildOption, Choices, Option, ValidChoices
from app.core.recommend.wheelfiles import WheelFiles
from app.core.recommend.words import sentence

__all__ = ["alternatives", "valid_choices"]

_ORDER = {b: i for i, b in enumerate(BACKENDS)}
_OUT_OF_REACH = frozenset({"hardware", "platform", "explicit"})  # the whole backend is out, not this build


def alternatives(eng: Engine, chosen: Evaluation, evals: list[Evaluation]) -> tuple[Alternative, ...]:
    """For each build on this platform: its newest valid release and why it was not chosen, or why it fails."""
    seen = {(x.release.torch, x.variant.name) for x in evals if not x.on_cpu}
    plat = eng.platform_for_wheels()
    extra = [eng.evaluate(r, v, explicit=True) for r in eng.releases() for v in r.variants_for(plat)
             if (r.torch, v.name) not in seen]
    by_name: dict[tuple[str, str], list[Evaluation]] = {}
    for x in evals + extra:
        by_name.setdefault((x.backend, x.variant.name), []).append(x)
    out: list[Alternative] = []
    for (backend, _name), xs in by_name.items():
        xs.sort(key=lambda x: x.release.key, reverse=True)
        out.extend(_of_build(chosen, Backend(backend), xs, out))
    for b in BACKENDS:
        if b not in {backend for backend, _ in by_name}:
            out.append(Alternative(Backend(b), b if b in ("mps", "xpu", "cpu") else "", None, False,
                                   explain.backend_unavailable(b, eng.m.platform)))
    out.sort(key=lambda a: (not a.valid, _ORDER.get(a.backend, 9), a.variant))
    return tuple(out)


def _of_build(chosen: Evaluation, backend: Backend, xs: list[Evaluation],
              so_far: list[Alternative]) -> list[Alternative]:
    """The alternatives one build gives (``xs``: its evaluations, newest release first)."""
    name = xs[0].variant.name
    valid = [x for x in xs if x.ok]
    if not valid:
        x = xs[0]
        if x.kinds <= _OUT_OF_REACH and backend != chosen.backend:
            if any(a.backend == backend and not a.valid and a.torch_version is None for a in so_far):
                return []
            return [Alternative(backend, "", None, False, sentence(x.whys[0]))]
        return [Alternative(backend, name, x.torch_version, False, explain.why_invalid(x))]
    best = valid[0]
    newer_bad = [x for x in xs if x.release.key > best.release.key]
    out: list[Alternative] = []
    is_chosen = (backend, name, best.torch_version) == (chosen.backend, chosen.variant.name,
                                                          chosen.torch_version)
    if not is_chosen:
        out.append(Alternative(backend, name, best.torch_version, True, explain.why_not_chosen(chosen, best)))
    if newer_bad and (is_chosen or backend == chosen.backend):  # newer releases of this build that fail
        out.append(Alternative(backend, name, newer_bad[0].torch_version, False, explain.why_invalid(newer_bad[0])))
    return out


def valid_choices(report: SystemReport | dict[str, object], data: CompatData | None = None,
                  choices: Choices | None = None, available: WheelFiles | None = None) -> ValidChoices:
    """Every backend / build / torch release / Python on this platform, each valid or with why not.

    ``choices.python``, ``choices.packages`` and the sources narrow it (a backend, build or
    release the user picked is what the dialog lets them change; :func:`app.core.recommend.options`
    gives each selector's entries under all the current wishes).
    """
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    base = choices or Choices()
    eng = Engine(report, data, Choices(python=base.python, packages=base.packages), available)
    evals = eng.all_builds()
    options = tuple(BuildOption(Backend(x.variant.backend), x.variant.name, x.torch_version, x.ok,
                                "" if x.ok else explain.why_invalid(x)) for x in evals)
    backends = _summarize(evals, "backend", lambda x: x.variant.backend)
    have = {o.name for o in backends}
    backends += tuple(Option("backend", b, False, explain.no_wheels_for(b, eng.m.platform), backend=Backend(b))
                      for b in BACKENDS if b not in have)
    variants = _summarize(evals, "variant", lambda x: x.variant.name)
    torches = _summarize(evals, "torch", lambda x: x.release.latest)
    pythons = []
    for p in sorted({p for r in data.releases for p in r.pythons()}, key=version_tuple, reverse=True):
        rels = [r for r in data.releases if r.python_ok(p)]
        why: Text = f"torch {rels[-1].torch}–{rels[0].torch}" if rels else explain.no_release_for_python()
        pythons.append(Option("python", p, bool(rels), why))
    return ValidChoices(options, backends, variants, torches, tuple(pythons), data.version, eng.m.platform)


def _summarize(evals: list[Evaluation], kind: str, key: Callable[[Evaluation], str]) -> tuple[Option, ...]:
    """One option per ``key``: valid with its newest working build, or the newest one's problems."""
    groups: dict[str, list[Evaluation]] = {}
    for x in evals:
        groups.setdefault(key(x), []).append(x)
    out = []
    for name, xs in groups.items():
        ok = [x for x in xs if x.ok]
        if ok:
            why = explain.newest_working(max(ok, key=lambda x: x.release.key))
        else:
            why = explain.why_invalid(max(xs, key=lambda x: x.release.key))
        first = xs[0]
        out.append(Option(kind, name, bool(ok), why,
                          backend=Backend(first.variant.backend) if kind in ("backend", "variant") else None,
                          variant=first.variant.name if kind == "variant" else None,
                          torch_version=first.release.latest if kind == "torch" else None))
    return tuple(out)
