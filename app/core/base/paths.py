"""Where things live: resources (source tree or frozen bundle), logs, config, cache.

Logs go under the per-user log directory from platformdirs; ``TORCH_SETUP_HOME``
relocates logs, config and cache together (tests and portable installs use it).
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

APP_NAME = "torch-setup-assistant"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def app_root() -> Path:
    """The folder holding ``app/`` and ``resources/`` (or PyInstaller's unpack dir)."""
    if is_frozen():
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    import app  # the package this module belongs to, wherever in it this module lives

    return Path(app.__file__).resolve().parent.parent


def resources_dir() -> Path:
    here = app_root() / "resources"
    if here.is_dir() or is_frozen():
        return here
    # Installed from a wheel: resources/ travels as data files under the prefix.
    installed = Path(sys.prefix) / "share" / APP_NAME / "resources"
    return installed if installed.is_dir() else here


def probes_dir() -> Path:
    return app_root() / "app" / "probes"


def _home_override(sub: str) -> Path | None:
    home = os.environ.get("TORCH_SETUP_HOME")
    return Path(home) / sub if home else None


def _user_dir(sub: str) -> Path:
    """``$TORCH_SETUP_HOME/<sub>`` when set, else the per-user folder platformdirs names for ``sub``; made."""
    d = _home_override(sub)
    if d is None:
        import platformdirs  # start-up: only a first use of these folders needs it

        finders: dict[str, Callable[..., str]] = {
            "logs": platformdirs.user_log_dir, "config": platformdirs.user_config_dir,
            "cache": platformdirs.user_cache_dir, "data": platformdirs.user_data_dir,
            "state": platformdirs.user_state_dir}
        d = Path(finders[sub](APP_NAME, appauthor=False))
    d.mkdir(parents=True, exist_ok=True)
    return d


def log_dir() -> Path:
    return _user_dir("logs")


def config_dir() -> Path:
    return _user_dir("config")


def cache_dir() -> Path:
    return _user_dir("cache")


def path_lines(raw: bytes) -> list[str]:
    """The paths a tool's list file holds, one per line (conda's environments.txt), as the OS spells
    them: on POSIX a path is bytes, so one that is not UTF-8 (a Latin-1 folder name) is kept as it
    is (surrogate escapes, which every os function takes back); on Windows undecodable bytes are
    replaced (such a line names no folder there anyway)."""
    out = []
    for line in raw.splitlines():
        line = line.strip()
        if line:
            out.append(os.fsdecode(line) if os.name != "nt" else line.decode("utf-8", "replace"))
    return out


def data_dir() -> Path:
    """Per-user data that must survive (the registry of environments this app made)."""
    return _user_dir("data")


def state_dir() -> Path:
    """Per-user run state (locks): may be lost without harm."""
    return _user_dir("state")


def identity(path: str | os.PathLike[str]) -> list[int] | None:
    """A file's or folder's identity: [device, inode] (a link's own); None when nothing is there.
    A folder deleted and made again at the same path is another one."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return [st.st_dev, st.st_ino]


def new_log_path(name: str) -> Path:
    """A fresh, unique log file path such as ``install-20261130-101502-1234.log``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return log_dir() / f"{name}-{stamp}-{os.getpid()}-{time.monotonic_ns() % 100000}.log"
