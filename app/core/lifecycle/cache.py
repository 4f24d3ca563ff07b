"""The installers' download caches: where they are, how big, and pruning them.

uv's cache (``uv cache dir``: ``UV_CACHE_DIR``, else the per-user cache folder) grows to tens or
hundreds of GB with torch builds (research field-2026-12 §1 item 14); pip's (``pip cache dir``:
``PIP_CACHE_DIR`` / pip's configuration, else the per-user cache folder) too. Both tools prune
their own: ``uv cache prune`` removes what no longer serves anything (entries of removed
environments stay hard-linked where an env still uses them), ``pip cache purge`` empties pip's
wheel cache. The sizes are measured with :func:`.sizes.tree_size` (bounded: a huge cache is
reported as "at least").
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core import runner
from app.core.envs import uv_bin
from app.core.events import Event, StepEvent, ignore
from app.core.lifecycle.sizes import TreeSize, tree_size
from app.core.text import Text, msg

__all__ = ["CacheInfo", "PruneResult", "caches", "prune"]


@dataclass(frozen=True)
class CacheInfo:
    tool: str  # uv | pip
    path: str | None
    size: TreeSize | None
    note: Text = ""

    def to_dict(self) -> dict[str, object]:
        return {"tool": self.tool, "path": self.path, "size": self.size.to_dict() if self.size else None,
                "note": str(self.note)}


@dataclass(frozen=True)
class PruneResult:
    tool: str
    ok: bool
    before: int
    after: int
    detail: str = ""

    @property
    def freed(self) -> int:
        return max(0, self.before - self.after)

    def to_dict(self) -> dict[str, object]:
        return {"tool": self.tool, "ok": self.ok, "before_bytes": self.before, "after_bytes": self.after,
                "freed_bytes": self.freed, "detail": self.detail}


def _pip_python() -> str | None:
    """A Python with pip to ask: the assistant's own (not when frozen) ."""
    if getattr(sys, "frozen", False) or importlib.util.find_spec("pip") is None:
        return None
    return sys.executable


def _uv_dir() -> tuple[str | None, Text]:
    uv = uv_bin()
    if uv is None:
        return None, msg("envs.cache_no_uv", "uv was not found")
    res = runner.run([uv, "cache", "dir"], timeout=30)
    if not res.ok or not res.stdout.strip():
        return None, msg("envs.cache_tool_failed", "{tool} did not say where its cache is ({why})", tool="uv",
                         why=res.describe())
    return res.stdout.strip().splitlines()[-1], ""


def _pip_dir() -> tuple[str | None, Text]:
    py = _pip_python()
    if py is None:
        env = os.environ.get("PIP_CACHE_DIR")
        if env:
            return env, ""
        import platformdirs  # start-up: only this fallback needs it

        return platformdirs.user_cache_dir("pip", appauthor=False), msg(
            "envs.cache_pip_default", "pip's default place (pip itself was not asked)")
    res = runner.run([py, "-m", "pip", "cache", "dir", "--disable-pip-version-check"], timeout=60)
    if not res.ok or not res.stdout.strip():
        return None, msg("envs.cache_tool_failed", "{tool} did not say where its cache is ({why})", tool="pip",
                         why=res.describe())
    return res.stdout.strip().splitlines()[-1], ""


def caches(*, max_seconds: float = 8.0) -> list[CacheInfo]:
    """uv's and pip's caches with their sizes (bounded walk)."""
    out = []
    for tool, where in (("uv", _uv_dir), ("pip", _pip_dir)):
        path, note = where()
        size = tree_size(path, max_seconds=max_seconds, max_entries=2_000_000) if path and Path(path).exists() \
            else None
        if path and size is None and not note:
            note = msg("envs.cache_empty", "there is no cache yet")
        out.append(CacheInfo(tool, path, size, note))
    return out


def prune(*, on_event: Callable[[Event], None] | None = None, cancel: runner.CancelToken | None = None,
          tools: tuple[str, ...] = ("uv", "pip")) -> list[PruneResult]:
    """``uv cache prune`` and ``pip cache purge`` through the runner; sizes before and after."""
    emit = on_event or ignore
    out = []
    for info in caches():
        if info.tool not in tools or info.path is None:
            continue
        before = info.size.bytes if info.size else 0
        if info.tool == "uv":
            argv = [uv_bin() or "uv", "cache", "prune"]
        else:
            py = _pip_python()
            if py is None:
                out.append(PruneResult("pip", False, before, before, "pip is not available to prune its cache"))
                continue
            argv = [py, "-m", "pip", "cache", "purge", "--disable-pip-version-check"]
        emit(StepEvent(f"prune:{info.tool}", "running", " ".join(argv)))
        res = runner.run(argv, timeout=1800, cancel=cancel)
        after = tree_size(info.path, max_seconds=8.0, max_entries=2_000_000).bytes if Path(info.path).exists() else 0
        detail = " / ".join(runner.relevant_lines(res.tail, 3))
        out.append(PruneResult(info.tool, res.ok, before, after, detail))
        emit(StepEvent(f"prune:{info.tool}", "passed" if res.ok else "failed", detail))
    return out
