"""The installers' download caches: where they are, how big, and pruning them.

uv's cache (``uv cache dir``: ``UV_CACHE_DIR``, else the per-user cache folder) grows to tens or
hundreds of GB with torch builds (research field-2026-12 §1 item 14); pip's (``pip cache dir``:
``PIP_CACHE_DIR`` / pip's configuration, else the per-user cache folder) too. Both tools prune
their own: ``uv cache prune`` removes what no longer serves anything (entries of removed
environments stay hard-linked where an env still uses them), ``pip cache purge`` empties pip's
wheel cache. The sizes are measured with :func:`.sizes.tree_size` (bounded: a huge cache is
reported as "at least").

A variable (``UV_CACHE_DIR``, ``PIP_CACHE_DIR``) can name any folder, one of the user's own
included, and the tools prune what they find there. So a cache is pruned only when it is
recognisably the tool's: every entry at its top is one the tool makes (uv: its versioned buckets
``wheels-v5``, ``archive-v0`` … and ``CACHEDIR.TAG``; pip: ``http``, ``http-v2``, ``wheels``,
``selfcheck``). Anything else there is named (:attr:`CacheInfo.foreign`) and the cache is left
alone, saying why.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.base.events import Event, StepEvent, ignore
from app.core.base.text import Text, msg, render
from app.core.env.backends import uv_bin
from app.core.lifecycle.sizes import TreeSize, tree_size
from app.core.proc import runner

__all__ = ["CacheInfo", "PruneResult", "caches", "foreign_entries", "prune"]

# What each tool makes at the top of its cache (uv: a bucket per kind, versioned; its tag, lock and
# temporary folders): anything else is not the tool's
_UV_OWN = re.compile(r"(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*-v\d+|CACHEDIR\.TAG|\.gitignore|\.lock|\.tmp\w*)")
_PIP_OWN = frozenset({"http", "http-v2", "wheels", "selfcheck", "selfcheck.json", ".DS_Store"})
_VARIABLE = {"uv": "UV_CACHE_DIR", "pip": "PIP_CACHE_DIR"}


def foreign_entries(tool: str, path: str | os.PathLike[str], *, limit: int = 5) -> tuple[str, ...]:
    """The names at the top of ``path`` that ``tool`` does not make (at most ``limit``)."""
    out: list[str] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                own = _UV_OWN.fullmatch(entry.name) if tool == "uv" else entry.name in _PIP_OWN
                if not own:
                    out.append(entry.name)
                    if len(out) >= limit:
                        break
    except OSError:
        pass
    return tuple(sorted(out))


@dataclass(frozen=True)
class CacheInfo:
    tool: str  # uv | pip
    path: str | None
    size: TreeSize | None
    note: Text = ""
    foreign: tuple[str, ...] = ()  # entries at its top that the tool does not make: never pruned then

    @property
    def prunable(self) -> bool:
        return self.path is not None and self.size is not None and not self.foreign

    def refusal(self) -> Text:
        """Why this cache is left alone (its foreign entries, and the variable that named it)."""
        var = _VARIABLE.get(self.tool, "")
        named = msg("envs.cache_named_by", " ({variable} names it)", variable=var) if os.environ.get(var) else ""
        return msg("envs.cache_not_the_tools", "{path}{named} holds files that are not {tool}'s cache ({names}): "
                   "it is left as it is, nothing in it was deleted", path=self.path or "?", named=named,
                   tool=self.tool, names=", ".join(self.foreign))

    def to_dict(self) -> dict[str, object]:
        return {"tool": self.tool, "path": self.path, "size": self.size.to_dict() if self.size else None,
                "note": str(self.note), "foreign": list(self.foreign)}


@dataclass(frozen=True)
class PruneResult:
    tool: str
    ok: bool
    before: int
    after: int
    detail: str = ""
    refused: bool = False  # not the tool's cache: left alone

    @property
    def freed(self) -> int:
        return max(0, self.before - self.after)

    def to_dict(self) -> dict[str, object]:
        return {"tool": self.tool, "ok": self.ok, "before_bytes": self.before, "after_bytes": self.after,
                "freed_bytes": self.freed, "detail": self.detail, "refused": self.refused}


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
        foreign = foreign_entries(tool, path) if path and size is not None else ()
        out.append(CacheInfo(tool, path, size, note, foreign))
    return out


def prune(*, on_event: Callable[[Event], None] | None = None, cancel: runner.CancelToken | None = None,
          tools: tuple[str, ...] = ("uv", "pip"), found: list[CacheInfo] | None = None) -> list[PruneResult]:
    """``uv cache prune`` and ``pip cache purge`` through the runner; sizes before and after. Only
    caches that are the tools' own (:attr:`CacheInfo.prunable`): another is refused, untouched.
    ``found``: the caches as :func:`caches` reported them (shown to the user before asking)."""
    emit = on_event or ignore
    out = []
    for info in found if found is not None else caches():
        if info.tool not in tools or info.path is None:
            continue
        before = info.size.bytes if info.size else 0
        if info.foreign:  # a folder of someone's files: the tool would prune whatever it finds there
            out.append(PruneResult(info.tool, False, before, before, render(info.refusal()), refused=True))
            emit(StepEvent(f"prune:{info.tool}", "skipped", render(info.refusal())))
            continue
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
