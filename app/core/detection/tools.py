"""Environment tools and their versions: uv, conda, mamba, micromamba (GPU tools' versions
come from their own probes)."""
from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping

from app.core.detection import parser, record, run_tool, snippet
from app.core.detection.cache import StampCache
from app.core.detection.system import ProbeRecord, ToolInfo

ENV_TOOLS = ("uv", "conda", "mamba", "micromamba")


@parser(lambda: None)
def parse_tool_version(name: str, text: str) -> str | None:
    """The version in ``uv 0.13.9 (hash date)``, ``conda 24.1.2``, ``mamba 1.5.8\\nconda 24.1.2``,
    ``micromamba``'s bare ``2.0.5``; None when the text has none."""
    t = text or ""
    # [ \t]* (not \s*, which crosses lines) and \d+\.\d[-+.\w]* (the same words as
    # \d+(?:\.\d+)+(?:[-+.\w]*)?, without overlapping runs): linear on hostile text
    m = re.search(rf"(?im)^[ \t]*{re.escape(name)}\s+v?(\d+\.\d[-+.\w]*)", t)
    if m:
        return m.group(1).rstrip(".")
    first = next((ln.strip() for ln in t.splitlines() if ln.strip()), "")
    m = re.fullmatch(r"v?(\d+\.\d[-+.\w]*)", first)
    return m.group(1) if m else None


def _bundled_uv() -> str | None:
    """The uv binary shipped with the assistant (the ``uv`` wheel), if any."""
    try:
        from uv import find_uv_bin

        p = find_uv_bin()
        return p if p and os.path.exists(p) else None
    except Exception:
        return None


def find_tools(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> path of the environment tools present (conda also via CONDA_EXE / MAMBA_EXE)."""
    from app.core.proc.runner import which

    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in ENV_TOOLS:
        p = which(name)
        if not p and name == "conda" and env.get("CONDA_EXE") and os.path.exists(env["CONDA_EXE"]):
            p = env["CONDA_EXE"]
        if not p and name == "micromamba" and env.get("MAMBA_EXE") and os.path.exists(env["MAMBA_EXE"]):
            p = env["MAMBA_EXE"]
        if not p and name == "uv":
            p = _bundled_uv()
        if p:
            out[name] = p
    return out


def tool_version(name: str, path: str, timeout_s: float,
                 cache: StampCache | None) -> tuple[ToolInfo, ProbeRecord]:
    started = time.monotonic()
    cached = cache.get("tool", path) if cache is not None else None
    if isinstance(cached, str):
        return ToolInfo(name, path, cached), record(name, "ok", f"{name} {cached} at {path} (cached)", started)
    res, rec = run_tool(name, [path, "--version"], timeout_s)
    if rec is not None:
        return ToolInfo(name, path, None), rec
    version = parse_tool_version(name, res.stdout + "\n" + res.stderr)
    if version is None:
        return ToolInfo(name, path, None), record(name, "garbage", f"{name} --version printed no version "
                                                  f"({res.describe()}): {snippet(res.stdout + res.stderr)}",
                                                  started, res.argv)
    if cache is not None:
        cache.put("tool", path, version)
    return ToolInfo(name, path, version), record(name, "ok", f"{name} {version} at {path}", started, res.argv)
