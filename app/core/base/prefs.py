"""The user's lasting preferences: ``settings.toml`` in the assistant's configuration folder.

One setting so far::

    [downloads]
    early = true    # fetch the recommended build while the wizard's pages are read

The wizard shows it as a check box on the Environment page and writes it back here; a person
or an admin may edit the file. A file that cannot be read (missing, not TOML, a value of the
wrong type) gives the defaults: the setting never stops the assistant. ``TORCH_SETUP_EARLY_
DOWNLOADS=0`` turns early downloads off for one run (a lab image, a test).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.base.paths import config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["EARLY_ENV", "Prefs", "load_prefs", "prefs_path", "save_prefs"]

FILE = "settings.toml"
EARLY_ENV = "TORCH_SETUP_EARLY_DOWNLOADS"


@dataclass(frozen=True)
class Prefs:
    early_downloads: bool = True  # fetch the recommended build while the wizard's pages are read


def prefs_path() -> Path:
    return config_dir() / FILE


def load_prefs(path: Path | None = None) -> Prefs:
    """The preferences (the defaults where the file says nothing usable)."""
    prefs = Prefs()
    try:
        data = tomllib.loads((path or prefs_path()).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    downloads = data.get("downloads")
    if isinstance(downloads, dict) and isinstance(downloads.get("early"), bool):
        prefs = replace(prefs, early_downloads=downloads["early"])
    if os.environ.get(EARLY_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        prefs = replace(prefs, early_downloads=False)
    return prefs


def save_prefs(prefs: Prefs, path: Path | None = None) -> None:
    """Write the preferences (the whole file: it holds nothing else)."""
    target = path or prefs_path()
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text("# torch-setup's preferences (the wizard writes this file; you may edit it)\n"
                   "[downloads]\n"
                   "# fetch the recommended build while the wizard's pages are read\n"
                   f"early = {'true' if prefs.early_downloads else 'false'}\n", encoding="utf-8")
    os.replace(tmp, target)
