"""Plain-language core texts in the user's language (Qt-free).

The core writes its sentences as English templates passed through :func:`tr`:
``tr("Your {gpu} is supported.", gpu=name)``. With the language set to ``zh_CN`` the
template is looked up in ``resources/i18n/core_zh_CN.json`` (English template -> Chinese
template, same ``{placeholders}``); otherwise, or when a template has no entry, the English
template is used as is. Either way the result is ``template.format(**kwargs)``, so English
output is exactly what the code spells out (a literal brace is written ``{{`` / ``}}``).

The language is one module-level value: the GUI sets it (``set_language``) before work
starts and when the user switches; worker threads only read it. The CLI never sets it, so
its output stays English.
"""
from __future__ import annotations

import json
import threading

from .paths import resources_dir

__all__ = ["set_language", "get_language", "tr", "catalogue", "SUPPORTED"]

SUPPORTED = ("en", "zh_CN")

_lock = threading.Lock()
_language = "en"
_catalogues: dict[str, dict[str, str]] = {}


def _normalise(lang: str | None) -> str:
    text = (lang or "en").replace("-", "_")
    if text.lower().startswith("zh"):
        return "zh_CN"
    return "en"


def set_language(lang: str | None) -> str:
    """Use ``lang`` ("en", "zh_CN"; "zh", "zh-CN" also work) for core texts from now on."""
    global _language
    norm = _normalise(lang)
    if norm != "en":
        catalogue(norm)  # load it now, on the caller's thread
    _language = norm
    return norm


def get_language() -> str:
    return _language


def catalogue(lang: str) -> dict[str, str]:
    """The template -> translation mapping for ``lang`` ({} for English or a missing file)."""
    if lang == "en":
        return {}
    with _lock:
        cat = _catalogues.get(lang)
        if cat is None:
            path = resources_dir() / "i18n" / f"core_{lang}.json"
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raw = {}
            cat = {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str) and v
                   and not k.startswith("_")}
            _catalogues[lang] = cat
        return cat


def tr(template: str, /, **kwargs) -> str:
    """``template`` in the current language, with ``{name}`` placeholders filled from kwargs."""
    lang = _language
    text = catalogue(lang).get(template, template) if lang != "en" else template
    return text.format(**kwargs)
