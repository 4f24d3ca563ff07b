#!/usr/bin/env python3
"""The whole screen with the wizard on it, at a scale, on a small screen: does it fit?

    .venv/bin/python scripts/screenshot_scaled.py [--screen 1366x768] [--scale 2] [--page environment]
        [--lang en] [--out docs/screenshots/wizard-200pct-1366x768.png]
    # the Environment page with no wheel folder and the PyTorch index out of reach (issue 28):
    .venv/bin/python scripts/screenshot_scaled.py --screen 1280x900 --scale 1 --window --size 980x720 \
        --torch-index http://127.0.0.1:9/whl/ --lang zh_CN --out docs/screenshots/4-environment-unreachable-zh_CN.png

Runs itself again under ``xvfb-run`` with a screen of that many physical pixels, the xcb
platform and ``QT_SCALE_FACTOR``; the real wizard detects this machine and is walked with Next
to the page asked for; then the whole screen is saved (so what lies off-screen is visibly
missing; ``--window``: the window alone) and the Next button's place is printed against the
screen's available geometry. ``--torch-index`` points TORCH_SETUP_TORCH_INDEX somewhere (the
discard port 9 refuses: the PyTorch server out of reach).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHILD = "TSA_SCREENSHOT_SCALED_CHILD"


def _settled(page) -> bool:
    """Nothing runs on the page, and no check waits to start (the Environment page's short delay)."""
    debounce = getattr(page, "_debounce", None)
    return not page.is_busy() and not (debounce is not None and debounce.isActive())


def child(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QApplication, QWizard

    from app.gui.pages import PageId
    from app.gui.screenshots import wait, wait_until
    from app.gui.wizard import SetupWizard

    app = QApplication([])
    wiz = SetupWizard(lang=args.lang)
    if args.size:
        w, h = (int(x) for x in args.size.split("x"))
        wiz.resize(w, h)
    wiz.show()
    wait(300)
    target = PageId[args.page.upper()]
    while wiz.currentId() != int(target):
        page = wiz.currentPage()
        if wiz.currentId() != int(PageId.WELCOME):
            wait_until(lambda page=page: page.isComplete() and not page.is_busy(), 120, "the page to finish")
        wiz.next()
        wait(200)
    page = wiz.currentPage()
    for _ in range(3):  # settled: its checks (and the mirror check they may start) ended, and stayed so
        wait_until(lambda: _settled(page), 120, "the page to finish")
        wait(700)
    screen = wiz.screen()
    nb = wiz.button(QWizard.WizardButton.NextButton)
    where = QRect(nb.mapToGlobal(QPoint(0, 0)), nb.size())
    avail = screen.availableGeometry()
    print(f"screen {screen.geometry().width()}x{screen.geometry().height()} logical at "
          f"{screen.devicePixelRatio():g}x, available {avail.getRect()}, window {wiz.frameGeometry().getRect()}, "
          f"Next {where.getRect()} {'inside' if avail.contains(where) else 'OUTSIDE'}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    (wiz.grab() if args.window else screen.grabWindow(0)).save(str(out))
    print(out)
    for p in wiz.busy_pages():
        p.cancel_and_wait(30)
    app.closeAllWindows()
    return 0 if avail.contains(where) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--screen", default="1366x768", help="physical pixels, WxH")
    ap.add_argument("--scale", default="2", help="QT_SCALE_FACTOR")
    ap.add_argument("--page", default="environment", help="a PageId name: welcome, system, environment, ...")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--window", action="store_true", help="save the window alone, not the whole screen")
    ap.add_argument("--size", default="", help="resize the window to WxH (logical pixels) first")
    ap.add_argument("--torch-index", default="", help="TORCH_SETUP_TORCH_INDEX for the run")
    ap.add_argument("--out", default=str(REPO / "docs" / "screenshots" / "wizard-200pct-1366x768.png"))
    args = ap.parse_args()
    if os.environ.get(CHILD) == "1":
        return child(args)
    if not shutil.which("xvfb-run"):
        print("xvfb-run is needed (apt-get install xvfb xauth)", file=sys.stderr)
        return 2
    env = {**os.environ, CHILD: "1", "QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": args.scale}
    if args.torch_index:
        env["TORCH_SETUP_TORCH_INDEX"] = args.torch_index
    cmd = ["xvfb-run", "-a", "-s", f"-screen 0 {args.screen}x24", sys.executable, __file__, "--screen", args.screen,
           "--scale", args.scale, "--page", args.page, "--lang", args.lang, "--out", args.out,
           *(["--window"] if args.window else []), *(["--size", args.size] if args.size else [])]
    return subprocess.run(cmd, cwd=REPO, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
