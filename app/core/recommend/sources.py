"""Does the build the engine evaluates exist in the sources? (:class:`~.available.Available`)

When the sources are all there is (``available.only``), a build counts only if they hold its
torch wheel for this platform and for a Python the release supports (the user's, when they
named one), and a matching wheel of every companion the user wished for, of the same build:
the local label, or PyPI's default build for unlabelled files. The answer says which version
the files hold (an older patch release may be all a folder has), for which Pythons, and the
exact version strings to pin.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.base.text import Text, msg
from app.core.compat.data import Release, Variant
from app.core.recommend.wheelfiles import Held, WheelFiles, pythons_for, variant_of_file
from app.core.recommend.words import build_label

__all__ = ["SourcesFit", "fit"]


@dataclass(frozen=True)
class SourcesFit:
    """What the sources hold of one build (``problems`` empty: all that is needed)."""

    problems: tuple[Text, ...] = ()
    torch_version: str | None = None  # the newest version of the release they hold (no label)
    pythons: frozenset[str] = frozenset()  # the Pythons they hold everything for
    pins: tuple[tuple[str, str], ...] = ()  # (package, exact version as in the files)


def _companion_version(rel: Release, pkg: str, torch_version: str) -> tuple[str | None, str]:
    """(exact version, or None for "same minor") and the minor prefix of ``pkg`` for ``torch_version``."""
    want = rel.companions.get(pkg, "")
    minor = ".".join(want.split(".")[:2]) + "."
    return (want if torch_version == rel.latest else None), minor


def fit(av: WheelFiles, rel: Release, v: Variant, platform: str | None, pythons: Sequence[str],
        companions: Sequence[str], pinned: str | None = None,
        companion_pins: Mapping[str, str] | None = None) -> SourcesFit:
    """What ``av`` holds of build ``v`` of ``rel`` (``pinned``: an exact torch version asked for)."""
    torches = av.builds("torch", rel.torch + ".", rel, v, platform, exact=pinned)
    if not torches:
        other = [h for h in av.files("torch") if (h.wheel.version.split("+")[0] + ".").startswith(rel.torch + ".")]
        if other:
            kinds = sorted({variant_of_file(h.wheel, rel, platform) or "?" for h in other})
            return SourcesFit((msg("rec.sources_other_build", "your sources hold torch {torch} only as the {have} "
                                   "build, not the {build} one", torch=rel.torch,
                                   have=tuple(_label(rel, k, platform) for k in kinds), build=build_label(v)),))
        return SourcesFit((msg("rec.sources_no_torch", "your sources hold no torch {torch} wheel for this computer",
                               torch=pinned or rel.torch),))
    version = torches[0].wheel.version.split("+", 1)[0]
    same = [h for h in torches if h.wheel.version.split("+", 1)[0] == version]
    groups: list[list[Held]] = [same]
    pins = [("torch", same[0].wheel.version)]
    for pkg in companions:
        exact, minor = _companion_version(rel, pkg, version)
        if companion_pins and pkg in companion_pins:
            exact = companion_pins[pkg]
        files = av.builds(pkg, minor, rel, v, platform, exact=exact)
        if not files:
            return SourcesFit((_no_companion(av, pkg, exact or minor.rstrip("."), rel, v, platform),), version)
        top = files[0].wheel.version
        groups.append([h for h in files if h.wheel.version == top])
        pins.append((pkg, top))
    fits = pythons_for(groups, pythons)
    if not fits:
        held = sorted(pythons_for([same], [f"3.{m}" for m in range(6, 20)]), key=lambda p: int(p.split(".")[1]))
        return SourcesFit((msg("rec.sources_python", "your sources hold torch {torch} ({build}) only for Python "
                               "{have}", torch=version, build=build_label(v), have=", ".join(held) or "?"),), version)
    return SourcesFit((), version, frozenset(fits), tuple(pins))


def _no_companion(av: WheelFiles, pkg: str, want: str, rel: Release, v: Variant, platform: str | None) -> Text:
    """Why the sources lack ``pkg`` for this build: absent, or present only as another build."""
    same_version = [h for h in av.files(pkg) if (h.wheel.version.split("+")[0] + ".").startswith(want + ".")
                    or h.wheel.version.split("+")[0] == want]
    other = sorted({variant_of_file(h.wheel, rel, platform) or "?" for h in same_version} - {v.name})
    if other:
        return msg("rec.sources_companion_other_build", "the {pkg} {version} in your sources is the {have} build, "
                   "which does not work with the {build} torch", pkg=pkg, version=want,
                   have=tuple(_label(rel, k, platform) for k in other), build=build_label(v))
    return msg("rec.sources_no_companion", "your sources hold no {pkg} {version} for the {build} build", pkg=pkg,
               version=want, build=build_label(v))


def _label(rel: Release, name: str, platform: str | None) -> Text:
    """A build's words from its variant name ("CUDA 13.0"), or the name when the release has no such build."""
    found = next((x for x in rel.variants_for(platform) if x.name == name), None)
    return build_label(found) if found is not None else name
