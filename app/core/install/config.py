"""Where packages other than torch come from by default: the user's pip / uv configuration.

pip reads ``PIP_INDEX_URL``, then its configuration files (the last ``index-url`` of the
``[global]`` / ``[install]`` sections wins, files read from the system's to the user's, then
``PIP_CONFIG_FILE``); uv reads ``UV_DEFAULT_INDEX`` (or the older ``UV_INDEX_URL``). Without
any, both use PyPI.
"""
from __future__ import annotations

import configparser
import os
from pathlib import Path

from app.core.env.backends import WINDOWS

__all__ = ["CONDA_FORGE", "PYPI_SIMPLE", "default_index_for", "pip_config_files", "pip_config_index"]

PYPI_SIMPLE = "https://pypi.org/simple"
CONDA_FORGE = "https://conda.anaconda.org/conda-forge"


def pip_config_files() -> list[Path]:
    """pip's configuration files, in the order pip reads them (later ones win)."""
    if WINDOWS:
        files = [Path(os.environ.get("APPDATA", "")) / "pip" / "pip.ini"]
    else:
        files = [Path("/etc/pip.conf"), Path("/etc/xdg/pip/pip.conf"),
                 Path.home() / ".config" / "pip" / "pip.conf", Path.home() / ".pip" / "pip.conf"]
    cfg_file = os.environ.get("PIP_CONFIG_FILE")
    if cfg_file:
        files.append(Path(cfg_file))
    return files


def _index_in(path: Path) -> str | None:
    """The ``index-url`` a pip configuration file sets (``[install]`` over ``[global]``), or None."""
    found = None
    try:
        if not path.is_file():
            return None
        cp = configparser.ConfigParser()
        cp.read(path, encoding="utf-8")
        for section in ("global", "install"):
            if cp.has_option(section, "index-url"):
                found = cp.get(section, "index-url").split()[0]
    except (OSError, configparser.Error, UnicodeDecodeError):
        return found
    return found


def pip_config_index() -> str | None:
    """The index-url of the user's pip configuration (env var, then config files)."""
    url = os.environ.get("PIP_INDEX_URL")
    if url:
        return url.split()[0]
    found = None
    for f in pip_config_files():
        found = _index_in(f) or found
    if found:  # a token in the user's pip.conf is hidden wherever the URL goes (checks, logs, reports)
        from app.core.base.secrets import remember_url

        remember_url(found)
    return found


def default_index_for(installer: str, mirror: str | None = None) -> str:
    """The index packages other than torch come from, for this installer and user."""
    if mirror:
        return mirror
    if installer == "uv":
        return os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("UV_INDEX_URL") or PYPI_SIMPLE
    return pip_config_index() or PYPI_SIMPLE
