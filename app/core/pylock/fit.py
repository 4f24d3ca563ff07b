"""Can a lock's torch build run on a machine, and if not, what is the nearest build that can?

:func:`fit_lock` judges a lock against a SystemReport (this machine's, or a host's from a fleet):

1. every locked wheel's platform tag against the machine's platform (``win_amd64`` on Linux, an
   arm64 wheel on x86_64) and a ``manylinux_X_Y`` wheel against its glibc;
2. the locked build (torch release and variant, with the lock's Python) through the
   recommendation engine, which checks the driver floor of the build's CUDA, the GPU's compute
   capability against the build's architectures (:mod:`app.core.compat.cuda`), ROCm targets, Python
   ranges; the engine's refusal is the reason, and its nearest way out (the same torch with
   another build, else the plain recommendation) is the nearest working choice.

A lock whose build the compatibility data does not know is judged by its tags alone, and a
note says so. When it fits, :attr:`Fit.recommendation` is the engine's view of the locked build
on that machine (what the verification then expects: the accelerator).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.base.errors import BadInput, ForFace, UserError
from app.core.base.text import Joined, Msg, Text, join, msg
from app.core.base.wheels import parse_wheel, variant_of_version
from app.core.compat.data import CompatData, load_compat
from app.core.detection.system import SystemReport
from app.core.pylock.lockfile import Lock
from app.core.recommend import Choices, NoCombination, Recommendation, recommend
from app.core.recommend.machine import wheel_platform
from app.core.recommend.wheelfiles import platform_tag_fits
from app.core.recommend.words import platform_words

__all__ = ["Fit", "engine_reason", "fit_lock", "flags_of", "locked_variant"]

_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_")
_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


@dataclass(frozen=True)
class Fit:
    """The verdict: ``problems`` empty means the locked build runs there."""

    problems: tuple[Text, ...] = ()
    nearest: Choices | None = None  # the nearest working choice (None: nothing is known to work)
    nearest_gives: Text = ""  # what it gives: "torch 2.13.0 (CUDA 12.6)"
    notes: tuple[Text, ...] = ()
    recommendation: Recommendation | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def refusal(self, lock: Lock, where: Text) -> BadInput:
        """The BadInput (exit 2) that says why, and the nearest working choice."""
        build = f"{lock.torch or '?'} ({lock.variant or '?'})"
        message = msg("lab.lock_refused", "The locked torch {build} cannot run on {where}: {why}. Nothing was "
                      "changed.", build=build, where=where, why=join(self.problems, "; "))
        if self.nearest is None:
            return BadInput(message, hint=msg("lab.lock_refused_nothing", "No PyTorch build is known to run there; "
                                              "`torch-setup recommend` says why."))
        flags = flags_of(self.nearest)
        return BadInput(message, hint=ForFace(
            msg("lab.nearest_gui", "The nearest build that runs there is {gives}; choose it, or export a lock from "
                "a machine like this one.", gives=self.nearest_gives),
            msg("lab.nearest_cli", "The nearest build that runs there is {gives}: torch-setup install --env PATH "
                "{flags}; or export a lock from a machine like this one.", gives=self.nearest_gives, flags=flags)))


def flags_of(choices: Choices) -> str:
    """The command-line options that ask for ``choices`` (``--torch 2.13.0 --variant cu126``)."""
    parts = [f"--{k} {v}" for k, v in (("torch", choices.torch), ("variant", choices.variant),
                                       ("python", choices.python)) if v]
    return " ".join(parts)


def locked_variant(lock: Lock, data: CompatData, platform: str | None) -> str | None:
    """The locked torch's build: the lock's word, its version label, else PyPI's default there."""
    found = lock.variant or variant_of_version(lock.torch)
    if found or not lock.torch_public:
        return found
    minor = ".".join(lock.torch_public.split(".")[:2])
    rel = next((r for r in data.releases if r.torch == minor), None)
    return rel.pypi_default.get(platform or "") if rel is not None else None


def _glibc_ok(tag: str, glibc: str | None) -> bool:
    need = _LEGACY.get(tag.split("_", 1)[0]) if not tag.startswith("manylinux_") else None
    m = _MANYLINUX.match(tag + "_")
    if m:
        need = (int(m.group(1)), int(m.group(2)))
    if need is None or not glibc:
        return True
    try:
        have = tuple(int(x) for x in glibc.split(".")[:2])
    except ValueError:
        return True
    return have >= need


def _file_fits(name: str, platform: str | None, glibc: str | None) -> bool | None:
    """Does one of the file's tags install there (None: not a wheel, e.g. an sdist)?"""
    w = parse_wheel(name)
    if w is None:
        return None
    return any(platform_tag_fits(t.rsplit("-", 1)[-1], platform) and _glibc_ok(t.rsplit("-", 1)[-1], glibc)
               for t in w.tags)


def _tag_problems(lock: Lock, platform: str | None, glibc: str | None) -> list[Text]:
    out: list[Text] = []
    torch_first = sorted(lock.hashed, key=lambda p: p.name != "torch")
    for p in torch_first:
        verdicts = [_file_fits(f.name, platform, glibc) for f in p.files]
        if any(v is None or v for v in verdicts):
            continue
        tags = sorted({t.rsplit("-", 1)[-1] for f in p.files if (w := parse_wheel(f.name)) for t in w.tags})
        out.append(msg("lab.wrong_platform", "{name} {version} is built for {tags}, not for {platform}",
                       name=p.name, version=p.version, tags=", ".join(tags[:3]), platform=platform_words(platform)))
        if len(out) >= 3:
            break
    return out


def engine_reason(err: UserError) -> Text:
    """The engine's reason without its frame ("Cannot recommend … on this machine: {why}."): the why itself."""
    m = err.message
    if isinstance(m, Msg) and m.code == "recommend.refused":
        why = m.arg("why")
        if isinstance(why, (Msg, Joined, str)):
            return why
    return m


def _nearest(report: SystemReport, data: CompatData, lock: Lock) -> tuple[Choices | None, Text]:
    """The same torch release with the build that runs there, else the plain recommendation."""
    for choices in (Choices(torch=lock.torch_public), Choices()):
        try:
            rec = recommend(report, data, choices)
        except UserError:
            continue
        return Choices(torch=rec.torch_version, variant=rec.variant), _gives(rec)
    return None, ""


def _gives(rec: Recommendation) -> Text:
    """``torch 2.13.0 (cu126)``: names and numbers, the same in every language."""
    return f"torch {rec.torch_version or '?'} ({rec.variant})"


def _engine(report: SystemReport, data: CompatData, lock: Lock, variant: str | None) -> Fit:
    public = lock.torch_public or ""
    known = variant in data.variant_names() and any(public.startswith(r.torch + ".") or public == r.torch
                                                    for r in data.releases)
    if not known or not public:
        return Fit(notes=(msg("lab.build_unknown", "The compatibility data ({version}) does not know torch {torch} "
                              "({variant}); only the wheels' tags were checked.", version=data.version,
                              torch=lock.torch or "?", variant=variant or "?"),))
    try:
        rec = recommend(report, data, Choices(variant=variant, torch=public, python=lock.python_minor))
    except NoCombination as err:
        way = next((d for d in err.drops if d.choices is not None), None)
        if way is not None and way.choices is not None:
            return Fit((engine_reason(err),), way.choices, way.gives)
        nearest, gives = _nearest(report, data, lock)
        return Fit((engine_reason(err),), nearest, gives)
    except BadInput as err:
        nearest, gives = _nearest(report, data, lock)
        return Fit((engine_reason(err),), nearest, gives)
    return Fit(recommendation=rec)


def fit_lock(lock: Lock, report: SystemReport, data: CompatData | None = None) -> Fit:
    """Whether ``lock``'s build runs on the machine of ``report`` (see the module's docstring)."""
    data = data or load_compat()
    platform = wheel_platform(report.os.family or "", report.arch)
    problems = _tag_problems(lock, platform, report.os.glibc if report.os.family == "linux" else None)
    if problems:
        nearest, gives = _nearest(report, data, lock)
        return Fit(tuple(problems), nearest, gives)
    return _engine(report, data, lock, locked_variant(lock, data, platform))
