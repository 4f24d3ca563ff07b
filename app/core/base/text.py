"""Sentences as values: a stable code, an English template and its arguments.

The core never decides the language. Every user-facing sentence it produces is a :class:`Msg`
(``msg("rec.driver_floor", "Driver {driver} supports CUDA up to {cuda}.", driver=..., cuda=...)``)
or a :class:`Joined` of such pieces; the presenter renders it in the language it shows
(``render(text, "zh_CN")``). The code is the key of the translation catalogues
(``resources/i18n/core/<lang>/*.json``, code -> template with the same ``{placeholders}``) and
the stable identity tests, reports and remedies match on; the English template is the source
text and the fallback.

Arguments may themselves be texts (rendered in the same language), sequences of texts
(joined with the language's list separator) or plain values (numbers, names, versions, paths:
formatted as they are, ``{x:.1f}`` specs work). A plain ``str`` is language-neutral: use it
for names and measured values, never for a sentence. ``{x:cap}`` writes a text argument with a
capital first letter (an English matter: a Chinese template simply says ``{x}``).
"""
from __future__ import annotations

import json
import string
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from app.core.base.paths import resources_dir

__all__ = [
    "LANGS",
    "Joined",
    "Msg",
    "Named",
    "Text",
    "TextTable",
    "catalogue",
    "join",
    "msg",
    "normalise_lang",
    "render",
    "render_all",
    "texts",
]

LANGS = ("en", "zh_CN")
_LIST_SEP = {"en": ", ", "zh_CN": "、"}


def normalise_lang(lang: str | None) -> str:
    """"zh", "zh-CN", "zh_CN.UTF-8" -> "zh_CN"; anything else -> "en"."""
    text = (lang or "en").replace("-", "_")
    return "zh_CN" if text.lower().startswith("zh") else "en"


ArgValue = Union["Msg", "Joined", "Named", str, int, float, bool, None, tuple["ArgValue", ...]]


@dataclass(frozen=True)
class Msg:
    """One sentence (or fragment): ``code`` keys the translations, ``en`` is the English template."""

    code: str
    en: str
    args: tuple[tuple[str, ArgValue], ...] = ()

    def render(self, lang: str = "en") -> str:
        lang = normalise_lang(lang)
        template = catalogue(lang).get(self.code, self.en) if lang != "en" else self.en
        values = {k: _render_arg(v, lang) for k, v in self.args}
        return template.format(**values)

    def arg(self, name: str) -> ArgValue:
        """The value given for ``{name}`` (KeyError when there is none)."""
        for k, v in self.args:
            if k == name:
                return v
        raise KeyError(name)

    def __str__(self) -> str:
        return self.render("en")

    def to_dict(self) -> dict[str, object]:
        """``{"code", "text"}`` (English) plus the plain arguments, for JSON and reports."""
        plain = {k: (str(_render_arg(v, "en")) if isinstance(v, (Msg, Joined, Named, tuple)) else v)
                 for k, v in self.args}
        out: dict[str, object] = {"code": self.code, "text": self.render("en")}
        if plain:
            out["args"] = plain
        return out


@dataclass(frozen=True)
class Joined:
    """Texts rendered one after another, with ``sep`` (itself a text) between them."""

    parts: tuple[Text, ...]
    sep: Text = ""

    @property
    def code(self) -> str:
        first = next((p for p in self.parts if isinstance(p, (Msg, Joined))), None)
        return first.code if first is not None else "text.plain"

    def render(self, lang: str = "en") -> str:
        sep = render(self.sep, lang)
        return sep.join(render(p, lang) for p in self.parts)

    def __str__(self) -> str:
        return self.render("en")

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "text": self.render("en")}


@dataclass(frozen=True)
class Named:
    """A proper name that is spelt differently in other languages (a mirror's "Nanjing University",
    南京大学 in Chinese). Not a sentence of the catalogue: the spellings travel with the name, from
    the data file that names it; a language without its own spelling gets ``en``."""

    en: str
    spellings: tuple[tuple[str, str], ...] = ()  # (language, spelling)

    code = "text.name"

    def render(self, lang: str = "en") -> str:
        lang = normalise_lang(lang)
        return next((s for k, s in self.spellings if k == lang), self.en)

    def __str__(self) -> str:
        return self.en

    def to_dict(self) -> str:  # in JSON a name is its English spelling, as a plain name would be
        return self.en


Text = Msg | Joined | Named | str


def msg(code: str, en: str, /, **args: object) -> Msg:
    """A sentence with its stable ``code``; ``en`` must be a literal (the catalogue test scans it)."""
    return Msg(code, en, _frozen_args(args))


@dataclass(frozen=True)
class TextTable:
    """Sentences of one kind by name: ``name``'s code is ``prefix + name``, its English template
    ``templates[name]``. Build it with :func:`texts` from a literal dict (the catalogue test reads
    the codes and templates from the source, as it reads msg() calls)."""

    prefix: str
    templates: Mapping[str, str]

    def __contains__(self, name: object) -> bool:
        return name in self.templates

    def __iter__(self) -> Iterator[str]:
        return iter(self.templates)

    def __len__(self) -> int:
        return len(self.templates)

    def msg(self, name: str, /, **args: object) -> Msg:
        """The sentence ``name`` with ``args``; a template without placeholders takes none."""
        en = self.templates[name]
        return Msg(self.prefix + name, en, _frozen_args(args) if _placeholders(en) else ())


def texts(prefix: str, templates: Mapping[str, str], /) -> TextTable:
    """A :class:`TextTable`; ``prefix`` (``"verify."``, ``"mirrors.note_"``) and ``templates`` literal."""
    return TextTable(prefix, dict(templates))


def _placeholders(template: str) -> bool:
    return any(f for _, f, _, _ in string.Formatter().parse(template))


def join(parts: Iterable[Text], sep: Text = "") -> Joined:
    return Joined(tuple(parts), sep)


def render(text: Text | None, lang: str = "en") -> str:
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    return text.render(lang)


def render_all(texts: Iterable[Text], lang: str = "en") -> list[str]:
    return [render(t, lang) for t in texts]


def _frozen_args(args: Mapping[str, object]) -> tuple[tuple[str, ArgValue], ...]:
    return tuple((k, _freeze(v)) for k, v in args.items())


def _freeze(value: object) -> ArgValue:
    if isinstance(value, (Msg, Joined, Named, str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Sequence):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        raise TypeError("msg() arguments must be texts, plain values or sequences of them, not mappings")
    return str(value)


class _Words(str):
    """A rendered text argument; the format spec ``cap`` capitalises its first letter."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        if spec == "cap":
            return self[:1].upper() + self[1:]
        return str.__format__(str(self), spec)


def _render_arg(value: ArgValue, lang: str) -> object:
    if isinstance(value, (Msg, Joined, Named)):
        return _Words(value.render(lang))
    if isinstance(value, tuple):
        return _Words(_LIST_SEP.get(lang, ", ").join(str(_render_arg(v, lang)) for v in value))
    if isinstance(value, str):
        return _Words(value)
    return value


# ------------------------------------------------------------------------------ catalogues

_lock = threading.Lock()
_catalogues: dict[str, dict[str, str]] = {}


def catalogue_dir(lang: str) -> Path:
    return resources_dir() / "i18n" / "core" / lang


def catalogue(lang: str) -> dict[str, str]:
    """code -> template for ``lang``, merged from every ``*.json`` in its folder ({} for English)."""
    lang = normalise_lang(lang)
    if lang == "en":
        return {}
    with _lock:
        cat = _catalogues.get(lang)
        if cat is None:
            cat = {}
            folder = catalogue_dir(lang)
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
                try:
                    raw = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(raw, dict):
                    cat.update({k: v for k, v in raw.items()
                                if isinstance(k, str) and isinstance(v, str) and v and not k.startswith("_")})
            _catalogues[lang] = cat
        return cat
