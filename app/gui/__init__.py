"""The PySide6 wizard: a thin presenter over app.core. Never imports torch.

Importing this package loads PySide6, its support code from a bytecode cache (see
:mod:`app.gui.pyside_support`), and makes its import hook cheaper (see
:func:`lighter_feature_check`): every module of the wizard is imported after it.
"""
from __future__ import annotations

import sys
from types import ModuleType

from app.gui.pyside_support import import_pyside

import_pyside()  # (installs PySide6's import hook, which the next lines lighten)


def lighter_feature_check() -> bool:
    """Answer PySide6's per-import question without reading each module's source through
    ``inspect``.

    Once PySide6 is loaded, every module imported after it gets a check: does its source contain
    the word "PySide6"? (PySide needs this for the per-module ``from __feature__ import ...``
    switches; napari/napari#8584 measured the cost.) PySide asks ``inspect.getsource``, which
    decodes and caches every line. That is 25 ms over the wizard's start here, 3.5 ms of it before
    the first window. A ``.py`` file's bytes give the same answer for any ASCII-compatible
    encoding, in about a quarter of the time. Anything else (no file, a ``.pyc`` alone, an
    extension module) is still asked of PySide's own function.

    PySide keeps the check in a private module, so this is guarded: without the function (a
    PySide6 that changed it) nothing is replaced. Returns True when the lighter check is in place.
    """
    feature = sys.modules.get("shibokensupport.feature")
    own = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(own):
        return False
    if getattr(own, "pyside_own", None) is not None:  # already in place
        return True

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as source:
                    return b"PySide6" in source.read()
            except OSError:
                pass
        return bool(own(module))

    uses_pyside.pyside_own = own  # type: ignore[attr-defined]  # (tests compare the two answers)
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]  # (a private name)
    return True


lighter_feature_check()
