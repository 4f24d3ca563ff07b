"""The recommendation's public types: the user's wishes (:class:`Choices`) and the answer
(:class:`Recommendation`, its :class:`Alternative`, :class:`GpuRef`, :class:`UnservedGpu`,
:class:`DriverUpgrade`), and :func:`valid_choices`' :class:`ValidChoices` of :class:`Option` and
:class:`BuildOption`; all re-exported by :mod:`app.core.recommend`.

Every type is a frozen dataclass with immutable fields (tuples; the two mappings are read-only by
contract). Sentences are :data:`~app.core.base.text.Text` values: the engine never picks a language;
presenters call :meth:`Recommendation.texts` (or :func:`app.core.base.text.render`) with theirs.
``to_dict()`` gives the JSON contract (``recommend --json``): sentences rendered in English, with
their codes beside them (``reason_codes``, ``warning_codes``, ``code`` per alternative).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from app.core.base.enums import Backend
from app.core.base.errors import BadInput, Hint
from app.core.base.requirements import split_list
from app.core.base.schema import Record
from app.core.base.text import Joined, Msg, Text, msg, render

#: the packages pinned to match torch (the rest of a package list comes from the default index)
COMPANIONS = ("torchvision", "torchaudio")
PLAIN = "text.plain"  # the code of a text that is not a message (a name, or words read from JSON)
SENTENCE = "rec.sentence"  # "{text:cap}.": punctuation around a text, whose code it is


def code_of(text: Text) -> str:
    """The stable code of a text: a message's own, or for a sentence made of one, that one's."""
    if isinstance(text, Msg) and text.code == SENTENCE and text.args:
        inner = text.args[0][1]
        return code_of(inner) if isinstance(inner, (Msg, Joined, str)) else PLAIN
    if isinstance(text, Joined):
        first = next((p for p in text.parts if isinstance(p, (Msg, Joined))), None)
        return code_of(first) if first is not None else PLAIN
    return text.code if isinstance(text, Msg) else PLAIN


@dataclass(frozen=True)
class Rendered(Msg):
    """A sentence read back from JSON: its code and its English words.

    Its arguments are not in the JSON, so it cannot be translated: it renders as the English
    it was saved with, in every language.
    """

    def render(self, lang: str = "en") -> str:
        return self.en


def _loaded(text: object, code: object = None) -> Text:
    words = "" if text is None else str(text)
    return Rendered(code, words) if isinstance(code, str) and code != PLAIN else words


def _loaded_all(texts: object, codes: object = None) -> tuple[Text, ...]:
    items = list(texts) if isinstance(texts, (list, tuple)) else []
    code_list = list(codes) if isinstance(codes, (list, tuple)) and len(codes) == len(items) else [None] * len(items)
    return tuple(_loaded(t, c) for t, c in zip(items, code_list, strict=True))


def _backend(value: object, where: str) -> Backend:
    b = Backend.parse(str(value)) if value is not None else None
    if b is None:
        raise BadInput(f"{where}: {value!r} is not a backend ({', '.join(m.value for m in Backend)})")
    return b


# ----------------------------------------------------------------------------- the wishes

@dataclass(frozen=True)
class Choices:
    """The user's overrides; ``None`` = let the engine decide.

    ``packages`` may be given as a list or as text (``"torch torchvision"``); it is kept as a
    tuple of the items.
    """

    backend: str | None = None  # cuda | rocm | xpu | mps | cpu
    variant: str | None = None  # cu126, rocm6.4, xpu, cpu, mps, rocm10.0-amd
    torch: str | None = None  # "2.14" or "2.14.1": a pin, honoured or refused with the reason
    python: str | None = None  # "3.12": the new environment's Python
    packages: tuple[str, ...] | None = None  # torch, torchvision, torchaudio, others

    def __post_init__(self) -> None:
        given: object = self.packages
        if isinstance(given, str):
            object.__setattr__(self, "packages", tuple(split_list(given)))
        elif isinstance(given, Iterable):
            object.__setattr__(self, "packages", tuple(split_list([str(p) for p in given])))

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "variant": self.variant, "torch": self.torch,
                "python": self.python, "packages": list(self.packages) if self.packages else None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Choices:
        d = d or {}
        pk = d.get("packages")
        return cls(backend=d.get("backend"), variant=d.get("variant"), torch=d.get("torch"),
                   python=d.get("python"), packages=tuple(str(p) for p in pk) if pk else None)


def _normalise(obj: object) -> None:
    """Let callers pass plain values: "cuda" for a Backend, lists for tuples (the fields stay typed)."""
    for f in fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if f.name == "backend" and isinstance(value, str) and not isinstance(value, Backend):
            object.__setattr__(obj, f.name, Backend(value))
        elif isinstance(value, list):
            object.__setattr__(obj, f.name, tuple(value))


# ----------------------------------------------------------------------------- the answer

@dataclass(frozen=True)
class Alternative:
    """Another build for this machine: valid but not chosen, or why it cannot be used."""

    backend: Backend
    variant: str  # "" when the whole backend is out ("MPS exists only on Apple Silicon Macs")
    torch_version: str | None
    valid: bool
    why: Text

    def __post_init__(self) -> None:
        _normalise(self)

    @property
    def code(self) -> str:
        return code_of(self.why)

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend.value, "variant": self.variant, "torch_version": self.torch_version,
                "valid": self.valid, "why": render(self.why), "code": self.code}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Alternative:
        return cls(_backend(d.get("backend"), "alternatives[].backend"), str(d.get("variant") or ""),
                   d.get("torch_version"), bool(d.get("valid")), _loaded(d.get("why"), d.get("code")))


@dataclass(frozen=True)
class GpuRef(Record):
    """A GPU a build serves (or not), as the report names it."""

    index: int  # the vendor tool's index (or the GPU's position among its vendor's)
    name: str
    vendor: str
    compute_capability: str | None
    gfx_target: str | None
    driver_version: str | None


@dataclass(frozen=True)
class UnservedGpu:
    gpu: GpuRef
    why: Text

    def to_dict(self) -> dict[str, Any]:
        return {**self.gpu.to_dict(), "why": render(self.why)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> UnservedGpu:
        return cls(GpuRef.from_dict(d), _loaded(d.get("why")))


@dataclass(frozen=True)
class DriverUpgrade(Record):
    """The NVIDIA driver that would unlock a newer build than the chosen one."""

    driver: str  # "580": the smallest driver for it
    unlocks: str  # "torch 2.15.0 (CUDA 13.0, cu130)"
    torch_version: str
    variant: str
    current: str | None  # the driver this machine has
    toolkit_driver: str | None  # the driver the CUDA toolkit of that build ships with


@dataclass(frozen=True)
class RecommendationText:
    """A recommendation's sentences rendered in one language (what a presenter shows)."""

    summary: str
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    unknowns: tuple[str, ...]
    alternatives: tuple[str, ...]  # each alternative's why, in the order of ``alternatives``
    unserved: tuple[str, ...]  # each unserved GPU's why
    availability: str = ""  # why this version, when the user's sources decided it
    costs: tuple[str, ...] = ()  # what each wish cost


@dataclass(frozen=True)
class Recommendation:
    """The build for this machine (``recommend --json``), explained."""

    backend: Backend
    variant: str
    torch_version: str | None
    python_ok: bool | None  # the report's Python can install this build (None: unknown)
    env_python: str | None  # "3.12" when the new environment should use another Python
    index_url: str
    packages: tuple[str, ...]
    command: tuple[str, ...]  # pip form; commands["uv"] for uv
    reasons: tuple[Text, ...]
    warnings: tuple[Text, ...]
    alternatives: tuple[Alternative, ...]
    compat_data_version: str
    compat_data_date: str = ""
    env_vars: Mapping[str, str] = field(default_factory=dict)  # read-only
    served_gpus: tuple[GpuRef, ...] = ()
    unserved_gpus: tuple[UnservedGpu, ...] = ()
    driver_upgrade: DriverUpgrade | None = None
    commands: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # pip, uv, pip_extra, uv_extra
    platform: str | None = None
    torch_release: str | None = None
    unknowns: tuple[Text, ...] = ()
    choices: Choices = field(default_factory=Choices)
    summary: Text = ""
    install_size_mb: int | None = None  # torch + its runtime installed, when the data knows it for this build
    facts_assumed: bool = False  # the build's facts are assumed (a release found on the index, an unconfirmed row)
    compat_data_origin: str = "bundled"  # bundled | downloaded (a verified newer copy, compat refresh)
    availability: Text = ""  # why this version when the user's sources decided it (also among reasons)
    # what each of the user's wishes cost ("torchvision needs torch 2.14.1 or older: ..."), in order
    costs: tuple[Text, ...] = ()
    # the Pythons this build installs for (the release's range, narrowed by the sources and the user's wish)
    pythons: tuple[str, ...] = ()
    python_range: tuple[str, str] | None = None  # the release's (lowest, highest) Python
    find_links: tuple[str, ...] = ()  # wheel folders the build is installed from
    no_index: bool = False  # from those folders only: no index is reachable or needed
    needs_pip: bool = False  # only pip installs it (AMD's own index answers 403 for what it lacks: uv stops)

    def __post_init__(self) -> None:
        _normalise(self)

    @property
    def reason_codes(self) -> tuple[str, ...]:
        return tuple(code_of(t) for t in self.reasons)

    @property
    def cost_codes(self) -> tuple[str, ...]:
        return tuple(code_of(t) for t in self.costs)

    def python_problem(self, version: str) -> Text | None:
        """Why an interpreter of ``version`` ("3.9", "3.9.18") cannot install this build (None: it can)."""
        minor = ".".join(str(version).split(".")[:2])
        if not self.pythons or minor in self.pythons:
            return None
        fits = ", ".join(self.pythons)
        torch = self.torch_version or self.torch_release or "?"
        if self.choices.python:
            return msg("rec.python_not_chosen", "you chose Python {fits} for torch {torch}", fits=fits, torch=torch)
        lo, hi = self.python_range or (self.pythons[0], self.pythons[-1])
        if _in_range(minor, lo, hi):
            return msg("rec.python_not_in_sources", "your sources hold torch {torch} only for Python {fits}",
                       torch=torch, fits=fits)
        return msg("rec.python_outside", "torch {torch} supports Python {lo}–{hi}", torch=torch, lo=lo, hi=hi)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(code_of(t) for t in self.warnings)

    def texts(self, lang: str = "en") -> RecommendationText:
        """Every sentence, rendered in ``lang``."""

        def all_(texts: Sequence[Text]) -> tuple[str, ...]:
            return tuple(render(t, lang) for t in texts)

        return RecommendationText(
            summary=render(self.summary, lang), reasons=all_(self.reasons), warnings=all_(self.warnings),
            unknowns=all_(self.unknowns), alternatives=all_([a.why for a in self.alternatives]),
            unserved=all_([u.why for u in self.unserved_gpus]), availability=render(self.availability, lang),
            costs=all_(self.costs))

    def to_dict(self) -> dict[str, Any]:
        en = self.texts("en")
        return {
            "backend": self.backend.value, "variant": self.variant, "torch_version": self.torch_version,
            "python_ok": self.python_ok, "env_python": self.env_python, "index_url": self.index_url,
            "packages": list(self.packages), "command": list(self.command), "reasons": list(en.reasons),
            "warnings": list(en.warnings), "alternatives": [a.to_dict() for a in self.alternatives],
            "compat_data_version": self.compat_data_version, "compat_data_date": self.compat_data_date,
            "env_vars": dict(self.env_vars), "served_gpus": [g.to_dict() for g in self.served_gpus],
            "unserved_gpus": [g.to_dict() for g in self.unserved_gpus],
            "driver_upgrade": self.driver_upgrade.to_dict() if self.driver_upgrade else None,
            "commands": {k: list(v) for k, v in self.commands.items()}, "platform": self.platform,
            "torch_release": self.torch_release, "unknowns": list(en.unknowns), "choices": self.choices.to_dict(),
            "summary": en.summary, "reason_codes": list(self.reason_codes), "warning_codes": list(self.warning_codes),
            "install_size_mb": self.install_size_mb, "facts_assumed": self.facts_assumed,
            "compat_data_origin": self.compat_data_origin,
            "availability": en.availability,
            "availability_code": code_of(self.availability) if self.availability else None,
            "costs": list(en.costs), "cost_codes": list(self.cost_codes), "pythons": list(self.pythons),
            "python_range": list(self.python_range) if self.python_range else None,
            "find_links": list(self.find_links), "no_index": self.no_index, "needs_pip": self.needs_pip,
        }

    @classmethod
    def from_dict(cls, d: object) -> Recommendation:
        """Read ``to_dict()``'s JSON back; its sentences keep their codes and English words."""
        if not isinstance(d, dict):
            raise BadInput("a recommendation must be a JSON object")
        missing = [k for k in ("backend", "variant", "index_url", "compat_data_version") if k not in d]
        if missing:
            raise BadInput(f"recommendation is missing {', '.join(missing)}")
        upgrade = d.get("driver_upgrade")
        return cls(
            backend=_backend(d["backend"], "backend"), variant=str(d["variant"]), torch_version=d.get("torch_version"),
            python_ok=d.get("python_ok"), env_python=d.get("env_python"), index_url=str(d["index_url"]),
            packages=_strings(d.get("packages")), command=_strings(d.get("command")),
            reasons=_loaded_all(d.get("reasons"), d.get("reason_codes")),
            warnings=_loaded_all(d.get("warnings"), d.get("warning_codes")),
            alternatives=tuple(Alternative.from_dict(a) for a in d.get("alternatives") or [] if isinstance(a, dict)),
            compat_data_version=str(d["compat_data_version"]), compat_data_date=str(d.get("compat_data_date") or ""),
            env_vars={str(k): str(v) for k, v in (d.get("env_vars") or {}).items()},
            served_gpus=tuple(GpuRef.from_dict(g, path=f"served_gpus[{i}]")
                              for i, g in enumerate(d.get("served_gpus") or []) if isinstance(g, dict)),
            unserved_gpus=tuple(UnservedGpu.from_dict(g) for g in d.get("unserved_gpus") or [] if isinstance(g, dict)),
            driver_upgrade=DriverUpgrade.from_dict(upgrade, path="driver_upgrade") if isinstance(upgrade, dict)
            else None,
            commands={str(k): _strings(v) for k, v in (d.get("commands") or {}).items()},
            platform=d.get("platform"), torch_release=d.get("torch_release"), unknowns=_loaded_all(d.get("unknowns")),
            choices=Choices.from_dict(d.get("choices")), summary=_loaded(d.get("summary")),
            install_size_mb=_size(d.get("install_size_mb")), facts_assumed=bool(d.get("facts_assumed")),
            compat_data_origin=str(d.get("compat_data_origin") or "bundled"),
            availability=_loaded(d.get("availability"), d.get("availability_code")),
            costs=_loaded_all(d.get("costs"), d.get("cost_codes")), pythons=_strings(d.get("pythons")),
            python_range=_range(d.get("python_range")), find_links=_strings(d.get("find_links")),
            no_index=bool(d.get("no_index")), needs_pip=bool(d.get("needs_pip")))


def _size(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


def _in_range(minor: str, lo: str, hi: str) -> bool:
    def key(v: str) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in v.split(".")[:2])
        except ValueError:
            return (0,)

    return key(lo) <= key(minor) <= key(hi)


def _range(value: object) -> tuple[str, str] | None:
    items = _strings(value)
    return (items[0], items[1]) if len(items) == 2 else None


# ----------------------------------------------------------------------------- no combination

@dataclass(frozen=True)
class Drop:
    """A way out when the wishes cannot all be had: the wishes with one given up or changed."""

    label: Text  # the choice, as a button says it: "Drop torchvision", "Use Python 3.12"
    choices: Choices | None  # the wishes that work (None: none at all, the plain recommendation)
    gives: Text  # what they give: "torch 2.15.0 (CPU-only)"
    kind: str = ""  # what is given up: companion | python | torch | variant | backend | all

    def to_dict(self) -> dict[str, Any]:
        return {"label": render(self.label), "code": code_of(self.label), "kind": self.kind,
                "choices": self.choices.to_dict() if self.choices is not None else None,
                "gives": render(self.gives)}


class NoCombination(BadInput):
    """No build satisfies all of the user's wishes; ``drops`` lists the ways out that work,
    nearest first. ``why`` says it in words the presenters render in their language."""

    def __init__(self, message: Text, hint: Hint = "", *, why: Text = "", drops: Sequence[Drop] = (),
                 **kw: Any) -> None:
        super().__init__(message, hint, **kw)
        self.why: Text = why or message
        self.drops: tuple[Drop, ...] = tuple(drops)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["error"] = "BadInput"  # the JSON contract names the kind of error; the ways out come beside it
        d["why"] = render(self.why)
        d["drops"] = [x.to_dict() for x in self.drops]
        return d


# ----------------------------------------------------------------------------- valid_choices

@dataclass(frozen=True)
class Option:
    """One backend, build, torch release or Python of :func:`valid_choices`, valid or why not."""

    kind: str  # backend | variant | torch | python
    name: str  # what the dialog shows: "CUDA 12.8", "2.13.0", "3.12"
    valid: bool
    why: Text  # why it is (or is not) valid on this machine
    backend: Backend | None = None
    variant: str | None = None
    torch_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "valid": self.valid, "why": render(self.why),
                "backend": self.backend.value if self.backend else None, "variant": self.variant,
                "torch_version": self.torch_version}


@dataclass(frozen=True)
class BuildOption:
    """One (build, torch release) on this platform: valid, or why not."""

    backend: Backend
    variant: str
    torch_version: str
    valid: bool
    why: Text  # "" when valid

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend.value, "variant": self.variant, "torch_version": self.torch_version,
                "valid": self.valid, "why": render(self.why)}


@dataclass(frozen=True)
class ValidChoices:
    """Everything the "Change…" dialog may offer on this machine, each valid or with the reason."""

    options: tuple[BuildOption, ...]
    backends: tuple[Option, ...]
    variants: tuple[Option, ...]
    torch_versions: tuple[Option, ...]
    pythons: tuple[Option, ...]
    compat_data_version: str
    platform: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"options": [o.to_dict() for o in self.options], "backends": [o.to_dict() for o in self.backends],
                "variants": [o.to_dict() for o in self.variants],
                "torch_versions": [o.to_dict() for o in self.torch_versions],
                "pythons": [o.to_dict() for o in self.pythons], "compat_data_version": self.compat_data_version,
                "platform": self.platform}
