"""What the lifecycle modules share: refusals with a coded text, and reading an env without running it."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from app.core.base.errors import BadInput, Hint, UserError
from app.core.base.text import Text, msg
from app.core.env import registry
from app.core.env.backends import env_kind, is_env

__all__ = ["Failed", "Refused", "env_root", "python_version_of", "pyvenv_cfg", "record_unless_pending"]


class Refused(BadInput):
    """Nothing was done, and why (exit 2); message and hint are texts, rendered in any language."""

    def __init__(self, text: Text, hint: Hint = "", **kw: Any) -> None:
        super().__init__(text, hint, **kw)


class Failed(UserError):
    """It ran and did not work (exit 1); message and hint are texts, rendered in any language."""

    def __init__(self, text: Text, hint: Hint = "", *, lines: list[str] | None = None,
                 log_path: Path | None = None) -> None:
        super().__init__(text, hint, lines=list(lines or []), log_path=log_path)


def env_root(target: str | os.PathLike[str]) -> Path:
    """The env folder for ``target`` (the folder itself, or its python executable). Raises Refused."""
    p = Path(os.path.abspath(os.path.expanduser(os.fspath(target))))
    if p.is_file() and p.parent.name in ("bin", "Scripts") and is_env(p.parent.parent):
        return p.parent.parent
    if p.is_file() and is_env(p.parent):  # a conda env on Windows: python.exe at the top
        return p.parent
    if not p.exists():
        raise Refused(msg("envs.no_such_env", "{path} does not exist", path=str(p)),
                      msg("envs.no_such_env_hint", "Pass an environment folder: `torch-setup envs list` shows them."))
    if not is_env(p):
        raise Refused(msg("envs.not_an_env", "{path} is not a Python environment (it holds neither pyvenv.cfg nor "
                          "conda-meta)", path=str(p)),
                      msg("envs.no_such_env_hint", "Pass an environment folder: `torch-setup envs list` shows them."))
    return p


def pyvenv_cfg(env: Path) -> dict[str, str]:
    """The ``key = value`` lines of a venv's pyvenv.cfg (empty when there is none)."""
    out: dict[str, str] = {}
    try:
        text = (env / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


_CONDA_PY = re.compile(r"^python-(\d+\.\d+(?:\.\d+)?)-")
_LIB_PY = re.compile(r"^python(\d+\.\d+)t?$")


def python_version_of(env: Path) -> str | None:
    """The env's Python version, read from its files (pyvenv.cfg, conda-meta, lib/pythonX.Y)."""
    cfg = pyvenv_cfg(env)
    for key in ("version_info", "version"):
        if cfg.get(key):
            return cfg[key].split()[0]
    if env_kind(env) == "conda":
        found = _first_match(env / "conda-meta", _CONDA_PY)
        if found is not None:
            return found
    return _first_match(env / "lib", _LIB_PY)


def _first_match(folder: Path, pattern: re.Pattern[str]) -> str | None:
    """The first group of the first name in ``folder`` that ``pattern`` matches (None: none, or unreadable)."""
    try:
        for entry in folder.iterdir():
            m = pattern.match(entry.name)
            if m:
                return m.group(1)
    except OSError:
        pass
    return None


def record_unless_pending(env: Path) -> registry.EnvRecord | None:
    """The registry's record of ``env``; refused while an earlier upgrade of it waits to be confirmed
    or undone (a repair or another upgrade would build on an env that may still be swapped back)."""
    record = registry.find(env)
    if record is not None and record.pending_upgrade is not None:
        raise Refused(msg("envs.upgrade_pending", "An earlier upgrade of {path} waits to be confirmed or undone",
                          path=str(env)),
                      msg("envs.upgrade_pending_hint", "Run `torch-setup upgrade --env {path} --confirm` to keep it "
                          "or `--undo` to go back.", path=str(env)))
    return record
