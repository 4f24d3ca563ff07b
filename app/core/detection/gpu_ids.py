"""What a GPU is when its driver did not say: the compute capability of an NVIDIA GPU, the gfx
target of an AMD one, told from the facts at hand. The one home of that rule, used by detection
(:mod:`app.core.detection`) and by the engine (:mod:`app.core.recommend.machine`).

Most exact first (the data: ``resources/compat/hardware.toml``):

1. the **PCI device id** (``10de:1b06``): NVIDIA's ids per chip, AMD's ids per chip, both from
   pci.ids (``[[nvidia_pci]]``, ``[[amd_pci]]``);
2. NVIDIA's **chip code** (``GP102``: pci.ids writes it before the product's name, and lspci shows
   it: ``NVIDIA Corporation GP102 [GeForce GTX 1080 Ti]``), which alone tells the generation
   (``[[nvidia_chip]]``);
3. the **marketing name** (``[[nvidia_name]]``, ``[[amd_name]]``): the pattern that matches the
   longest piece of the name wins, whatever the order of the rows; two rows that match equally
   long pieces and disagree leave the value unknown.

Nothing is guessed beyond that: a value none of them tells is None, and the caller says so.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # pragma: no cover
    from app.core.compat.data import CompatData, NameRule

__all__ = ["Told", "amd_gfx", "best_rule", "chip_code", "clean_name", "compat_or_none", "nvidia_cc", "split_pci_id"]

NVIDIA, AMD = "10de", "1002"

# A chip code: 3 digits (GP102, TU116, AD107, GB202) or 2 digits and a letter (GP10B, GB20B, GK20A:
# the Tegra / system-on-chip parts); then pci.ids' variant letters (GL, GLM, M, B ...).
_CHIP = re.compile(r"\b(G[KMPVAHB]\d{3}|G[KMPVAHB]\d{2}[A-Z]|TU1\d{2}|AD10\d)[A-Z]{0,3}\b")
_MARKS = re.compile(r"\((?:tm|r|c)\)|[™®©]", re.IGNORECASE)


@dataclass(frozen=True)
class Told:
    """A value told from a fact, and which fact it was."""

    value: str  # "6.1" (compute capability) or "gfx1100" (gfx target)
    by: Literal["pci", "chip", "name"]
    fact: str  # "10de:1b06 (GP102)", "GP102", "GeForce GTX 1080 Ti": what it was told from
    source: str  # the data row's source

    def __str__(self) -> str:
        how = {"pci": "its PCI id", "chip": "its chip code", "name": "its name"}[self.by]
        return f"{self.value} from {how} {self.fact}"


@functools.lru_cache(maxsize=1)
def compat_or_none() -> CompatData | None:
    """The compatibility data for detection (None when it cannot be read: nothing is told then)."""
    from app.core.base.errors import BadInput
    from app.core.compat.data import load_compat

    try:
        return load_compat()
    except BadInput:
        return None


def clean_name(name: str | None) -> str:
    """A marketing name without (TM), (R) and extra white space."""
    return " ".join(_MARKS.sub(" ", name or "").split())


def best_rule(rules: tuple[NameRule, ...], name: str | None) -> NameRule | None:
    """The rule whose pattern matches the longest piece of ``name``; None when none matches, or
    when two rules match equally long pieces and disagree."""
    text = clean_name(name)
    if not text:
        return None
    hits: list[tuple[int, NameRule]] = []
    for r in rules:
        m = r.pattern.search(text)
        if m is not None:
            hits.append((m.end() - m.start(), r))
    if not hits:
        return None
    longest = max(n for n, _ in hits)
    top = [r for n, r in hits if n == longest]
    return top[0] if len({r.value for r in top}) == 1 else None


def chip_code(text: str | None) -> str | None:
    """NVIDIA's chip code in a text (``GA104GLM [RTX A5000 Mobile]`` -> ``GA104``), else None."""
    m = _CHIP.search(text or "")
    return m.group(1) if m else None


def split_pci_id(pci_id: str | None) -> tuple[str, int] | None:
    """``"10de:1b06"`` -> ("10de", 0x1b06); anything else -> None."""
    m = re.fullmatch(r"\s*([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\s*", pci_id or "")
    return (m.group(1).lower(), int(m.group(2), 16)) if m else None


def _by_pci(data: CompatData, vendor: str, pci_id: str | None) -> Told | None:
    got = split_pci_id(pci_id)
    if got is None or got[0] != vendor:
        return None
    row = next((r for r in data.pci_ids if r.vendor == vendor and r.holds(got[1])), None)
    if row is None:
        return None
    return Told(row.value, "pci", f"{got[0]}:{got[1]:04x} ({row.chip})", row.source)


def nvidia_cc(data: CompatData | None, *, pci_id: str | None = None, chip: str | None = None,
              name: str | None = None) -> Told | None:
    """An NVIDIA GPU's compute capability from its PCI id, its chip code (given, or found in the
    name) or its name; None when none of them tells it."""
    if data is None:
        return None
    told = _by_pci(data, NVIDIA, pci_id)
    if told is not None:
        return told
    code = chip_code(chip) or chip_code(name)
    row = next((c for c in data.nvidia_chips if code in c.chips), None) if code else None
    if row is not None and code is not None:
        return Told(row.value, "chip", code, row.source)
    rule = best_rule(data.nvidia_names, name)
    return Told(rule.value, "name", clean_name(name), rule.source) if rule is not None else None


def amd_gfx(data: CompatData | None, *, pci_id: str | None = None, name: str | None = None) -> Told | None:
    """An AMD GPU's gfx target from its PCI id or its name; None when neither tells it."""
    if data is None:
        return None
    told = _by_pci(data, AMD, pci_id)
    if told is not None:
        return told
    rule = best_rule(data.amd_names, name)
    return Told(rule.value, "name", clean_name(name), rule.source) if rule is not None else None
