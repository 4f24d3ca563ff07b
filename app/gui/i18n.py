"""Translations: Qt Linguist catalogues in ``resources/i18n/torch_setup_<lang>.qm``.

The language follows the system locale (``QLocale.system()``) unless the user picks one
(``torch-setup gui --lang zh_CN`` or the selector on the Welcome page). Switching installs a
new :class:`QTranslator`; Qt then sends ``QEvent.LanguageChange`` to every widget and each
page re-sets its texts in ``retranslate()``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLocale

if TYPE_CHECKING:
    from PySide6.QtCore import QTranslator

    from app.core.base.errors import Face, Hint
    from app.core.base.text import Text

from app.core.base.paths import resources_dir

#: Qt's own file dialog words that Qt's Chinese catalogue (qtbase_zh_CN of Qt 6.11) lacks since they gained their
#: shortcut letter: translated in ours (context QFileDialog; Qt asks every catalogue installed), so the dialog
#: Browse… opens shows no English on a Chinese screen.
QT_FILE_DIALOG = (QT_TRANSLATE_NOOP("QFileDialog", "&Look in:"), QT_TRANSLATE_NOOP("QFileDialog", "Files of &type:"))

#: (code, name in its own language): what the Welcome page offers.
LANGUAGES: tuple[tuple[str, str], ...] = (("en", "English"), ("zh_CN", "简体中文"))
CATALOGUE = "torch_setup"


def i18n_dir() -> Path:
    return resources_dir() / "i18n"


def normalize(lang: str | None) -> str:
    """Map "zh", "zh-CN", "zh_Hans_CN", "en_US" ... onto a language we ship."""
    if not lang:
        return "en"
    low = lang.replace("-", "_").lower()
    if low.startswith("zh"):
        return "zh_CN"
    return "en"


def system_language() -> str:
    loc = QLocale.system()
    if loc.language() == QLocale.Language.Chinese:
        return "zh_CN"
    for name in loc.uiLanguages():
        if name.lower().startswith("zh"):
            return "zh_CN"
        if name.lower().startswith("en"):
            return "en"
    return normalize(loc.name())


def catalogue_path(lang: str) -> Path:
    return i18n_dir() / f"{CATALOGUE}_{lang}.qm"


class Translations:
    """Owns the installed translators; one per application."""

    def __init__(self) -> None:
        self.language = "en"
        self._installed: list[QTranslator] = []

    def set_language(self, lang: str | None) -> str:
        """Install the catalogues for ``lang`` (English needs none). Returns the language in use."""
        app = QCoreApplication.instance()
        lang = normalize(lang)
        # The core's own sentences (recommendation reasons, pre-flight checks, ...) are rendered in
        # this language (app.core.base.text.render); set before the translators change, so the
        # LanguageChange handlers that re-render see it.
        self.language = lang
        if app is None:
            return lang
        for tr in self._installed:
            app.removeTranslator(tr)
        self._installed = []
        if lang != "en":
            from PySide6.QtCore import QLibraryInfo, QTranslator  # English needs no catalogue

            ours = QTranslator(app)
            if ours.load(str(catalogue_path(lang))):
                app.installTranslator(ours)
                self._installed.append(ours)
            # Qt's own strings (file dialogs, context menus); optional: a frozen build may drop them.
            qt = QTranslator(app)
            if qt.load(QLocale(lang), "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
                app.installTranslator(qt)
                self._installed.append(qt)
        return lang


_translations: Translations | None = None


def translations() -> Translations:
    global _translations
    if _translations is None:
        _translations = Translations()
    return _translations


def set_language(lang: str | None) -> str:
    return translations().set_language(lang)


def current_language() -> str:
    return translations().language


_CODE = re.compile(r"`([^`\n]+)`")


def plain(text: str) -> str:
    """Markdown's `code` marks as quotes: the core's sentences mark commands and names for the command
    line and the Markdown report, and the wizard's labels are plain text (a beginner saw the backticks)."""
    return _CODE.sub("“\\1”", text) if "`" in text else text


def render(text: Text | None, lang: str | None = None) -> str:
    """A core text as the wizard shows it: in ``lang`` (default: the wizard's), its `code` marks as quotes."""
    from app.core.base.text import render as core_render

    return plain(core_render(text, lang or current_language()))


def render_hint(hint: Hint, lang: str | None = None, face: Face = "gui") -> str:
    """A core hint as the wizard tells it (its own controls, not command-line options), like :func:`render`."""
    from app.core.base.errors import render_hint as core_hint

    return plain(core_hint(hint, lang or current_language(), face))
