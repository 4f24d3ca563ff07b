"""macOS: whether the Command Line Tools are there before any ``/usr/bin`` developer shim is run.

``/usr/bin/python3`` (and ``/usr/bin/pip3``, ``/usr/bin/git``, ``/usr/bin/python`` on older macOS)
are shims: with neither the Command Line Tools nor Xcode installed, running one opens Apple's
"install the command line developer tools" dialog instead of a Python. ``xcode-select -p`` is the
honest test and opens nothing: it prints the active developer directory, or exits 2 with
``xcode-select: error: Unable to get active developer directory...`` (a real output:
tests/fixtures/xcode-select/). Detection and the install's search ask it first and pass the shims
over when it names no folder that exists.

Every path is taken inside ``root`` (``""``: this machine), so tests build a fake Mac on Linux.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from app.core.detection import parser, record, run_tool, snippet
from app.core.detection.system import ProbeRecord

__all__ = ["CLT_SHIMS", "DeveloperDir", "developer_dir", "in_root", "is_clt_shim", "parse_xcode_select"]

# The /usr/bin programs that are developer-tool shims (xcode-select(1)); the Pythons among them are
# what detection would otherwise run.
CLT_SHIMS = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|pip\d*(?:\.\d+)?|git|clang|cc|make|xcrun)$")


def in_root(root: str, path: str) -> str:
    """``path`` (absolute, as on the machine) inside ``root``."""
    return os.path.join(root, path.lstrip("/\\")) if root else path


@parser(lambda: None)
def parse_xcode_select(stdout: str) -> str | None:
    """The developer directory a successful ``xcode-select -p`` printed (its first line, a path), or None."""
    line = next((ln.strip() for ln in (stdout or "").splitlines() if ln.strip()), "")
    return line if line.startswith("/") else None


@dataclass(frozen=True)
class DeveloperDir:
    """What ``xcode-select -p`` said: the folder (None: no Command Line Tools, or not known)."""

    path: str | None
    record: ProbeRecord

    @property
    def missing(self) -> bool:
        return self.path is None


def _xcode_select(root: str, environ: Mapping[str, str]) -> str | None:
    from app.core.proc.runner import which

    folders = [in_root(root, f) for f in (environ.get("PATH") or "").split(os.pathsep) if f]
    found = which("xcode-select", path=os.pathsep.join(folders)) if folders else None
    fallback = in_root(root, "/usr/bin/xcode-select")
    return found or (fallback if os.access(fallback, os.X_OK) else None)


def developer_dir(timeout_s: float, *, root: str = "", environ: Mapping[str, str] | None = None) -> DeveloperDir:
    """Ask ``xcode-select -p`` (on ``environ``'s PATH inside ``root``, else ``/usr/bin``); never raises.
    No xcode-select, a failure, or a folder that does not exist all count as missing: a shim is
    run only when the tools are known to be there."""
    started = time.monotonic()
    env = os.environ if environ is None else environ
    tool = _xcode_select(root, env)
    if tool is None:
        return DeveloperDir(None, record("xcode-select", "not-found", "xcode-select was not found, so the Command "
                                         "Line Tools are taken as missing: /usr/bin's developer shims (python3, "
                                         "pip3) were not run", started))
    res, rec = run_tool("xcode-select", [tool, "-p"], timeout_s)
    folder = parse_xcode_select(res.stdout) if rec is None and res.returncode == 0 else None
    if folder is not None and os.path.isdir(in_root(root, folder)):
        return DeveloperDir(folder, record("xcode-select", "ok", f"developer directory {folder}", started, res.argv))
    said = snippet(res.stdout + res.stderr, 200) if rec is None else rec.detail
    why = (f"xcode-select -p names {folder}, which does not exist" if folder is not None
           else f"xcode-select -p: {res.describe()}: {said}")
    return DeveloperDir(None, record("xcode-select", "not-found", f"the Command Line Tools are not installed ({why}); "
                                     "/usr/bin/python3 is Apple's stub that opens their install dialog, so it was "
                                     "not run", started, res.argv))


def is_clt_shim(path: str, root: str = "") -> bool:
    """Whether ``path`` is one of /usr/bin's developer shims (inside ``root``)."""
    folder = os.path.normcase(os.path.normpath(os.path.dirname(path)))
    return folder == os.path.normcase(os.path.normpath(in_root(root, "/usr/bin"))) and \
        bool(CLT_SHIMS.match(os.path.basename(path)))
