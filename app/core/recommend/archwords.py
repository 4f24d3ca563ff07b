"""Why an interpreter's own architecture keeps it out of the new environment, in words.

The engine leaves out every interpreter no wheel of the build serves (:class:`UnfitPython`:
a 32-bit Python, an x86_64 Python under Rosetta on an Apple silicon Mac, an ARM64 Python on
Windows on Arm); these sentences say so, with what the data says of the wheels that do exist.
"""
from __future__ import annotations

from app.core.base.text import Text, msg
from app.core.compat.data import CompatData, version_tuple
from app.core.recommend.facts import Machine, UnfitPython
from app.core.recommend.words import platform_words

__all__ = ["arch_download", "skipped_reasons", "unfit_why"]

_ARCH_WORDS = {"x86_64": "x86_64 (64-bit Intel/AMD)", "x86": "x86 (32-bit)", "arm64": "ARM64", "aarch64": "ARM64"}


def _last_with(data: CompatData, platform: str) -> str | None:
    """The newest torch patch with wheels for ``platform`` in the data (None: none)."""
    rels = [r for r in data.releases if r.variants_for(platform)]
    return max((r.latest for r in rels), key=version_tuple, default=None)


def unfit_why(u: UnfitPython, m: Machine, data: CompatData) -> Text:
    """What the interpreter is and why no wheel of the build serves it (a fragment: "a 32-bit build, ...")."""
    if u.arch in ("x86", "arm"):
        return msg("rec.pyarch_32bit", "a 32-bit build, and PyTorch publishes no 32-bit wheels")
    if m.family == "macos" and u.arch == "x86_64" and u.needs == "arm64":
        return msg("rec.pyarch_rosetta", "an x86_64 build that runs under Rosetta 2 on this Apple silicon Mac: it "
                   "installs only macOS x86_64 wheels (the last are torch {last}, without MPS), not this build's "
                   "arm64 wheels", last=_last_with(data, "macos-x86_64") or "—")
    if m.family == "windows" and u.arch == "arm64" and _last_with(data, "windows-arm64") is None:
        return msg("rec.pyarch_win_arm64", "an ARM64 build, and PyTorch publishes no Windows ARM64 (win_arm64) "
                   "wheels; an x64 Python runs under Windows' x64 emulation and installs the x64 wheels")
    return msg("rec.pyarch_other", "a {arch} build, but this build's wheels are for {platform}",
               arch=_ARCH_WORDS.get(u.arch, u.arch), platform=platform_words(m.platform))


def arch_download(needs: str | None, python: str) -> Text:
    """Where the new environment's Python comes from when none of the right architecture is here."""
    return msg("rec.python_arch_download", "; no {arch} Python {python} is on this machine yet: uv downloads a "
               "managed one of that architecture, or install the {arch} build from python.org before using pip",
               arch=_ARCH_WORDS.get(needs or "", needs or "?"), python=python)


def skipped_reasons(m: Machine, data: CompatData) -> list[Text]:
    """One sentence per other interpreter left out for its architecture."""
    out: list[Text] = []
    for u in m.unfit:
        where: Text = msg("rec.python_at", " at {exe}", exe=u.executable) if u.executable else ""
        out.append(msg("rec.python_arch_skipped", "Python {python}{where} is not offered: it is {why}.",
                       python=u.minor or "?", where=where, why=unfit_why(u, m, data)))
    return out
