#!/usr/bin/env python3
"""Save a PNG of every wizard page, in English and Chinese, from a real run under Xvfb.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots] [--wheels DIR] [--lang en] [--offline]

Runs ``torch-setup gui --screenshot-dir OUT`` under ``xvfb-run`` with the xcb platform (the
real X11 code path, fonts and all); without xvfb-run it falls back to Qt's offscreen
platform. The run is real: detection, recommendation, a new uv venv in a temporary folder,
the PyTorch install (from --wheels / pip's find-links folder when there is one), the
verification and a short speed test. Takes about a minute with a warm uv cache.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    ap.add_argument("--wheels", default=None, help="a folder holding the torch wheel (find-links)")
    ap.add_argument("--lang", default=None, help="only this language (en or zh_CN)")
    ap.add_argument("--offline", action="store_true",
                    help="the PyTorch index out of reach, only the local wheels field filled with a folder holding "
                         "torch and everything it needs (made from --wheels with tests.netlab); *-offline-*.png")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.offline:
        sys.path.insert(0, str(REPO))
        from tests.netlab import gather_wheelhouse

        folder = Path(args.wheels) if args.wheels else Path("/opt/wheels")
        args.wheels = str(gather_wheelhouse([folder]).folder)
        env["TORCH_SETUP_SCREENSHOT_OFFLINE"] = "1"
    if args.wheels:
        env["TORCH_SETUP_WHEELS"] = args.wheels
    cmd = [sys.executable, "-m", "app", "gui", "--screenshot-dir", args.out]
    if args.lang:
        cmd += ["--lang", args.lang]
    if shutil.which("xvfb-run"):
        env["QT_QPA_PLATFORM"] = "xcb"
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x900x24", *cmd]
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(cmd, cwd=REPO, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
