#!/usr/bin/env python3
"""Screenshots of the Speed test page after a REAL speed test on this machine's CPU.

The wizard (its real Speed test page) measures fp32, bf16 and fp16 in a torch environment
(``--env``, or a throwaway uv venv with the local torch CPU wheel), then saves the window in
English and Chinese. With ``--burn N``, N busy-loop processes run beside the test (outside the
assistant's process tree, as another program's would be: see :func:`burners`): the page then
says that the machine was busy.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/speedtest_screens.py [--env PATH]
        [--out docs/screenshots] [--name 7-speedtest] [--burn 0] [--budget-s 25]

Under Xvfb (``Xvfb :99 & DISPLAY=:99 QT_QPA_PLATFORM=xcb``) the real X11 path draws it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

BURN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


def make_env(root: Path) -> Path:
    from uv import find_uv_bin

    from app.core.measure.probe import resolve_python
    from app.core.proc.runner import run

    sys.path.insert(0, str(REPO / "tests"))
    from conftest import _pip_find_links  # the wheel folder the tests use

    links = [d for d in _pip_find_links() if any(d.glob("torch-*.whl"))]
    if not links:
        raise SystemExit("no local torch wheel folder: pass --env")
    uv = find_uv_bin()
    run([uv, "venv", "--quiet", "--python", sys.executable, str(root)], timeout=120).raise_for_status("uv venv")
    py = resolve_python(root)
    run([uv, "pip", "install", "--quiet", "--python", str(py), "--find-links", str(links[0]), "torch==2.13.0",
         "numpy"], timeout=600).raise_for_status("torch install")
    return py


def burners(n: int, seconds: float) -> list:
    """N CPU-burning processes outside the assistant's process tree, as another program's would be.

    The speed test counts this process and all its descendants as its own (the wizard runs
    in-process here), so a child, even in a session of its own, would count as the assistant's
    work. Each burner is started by a shell that exits at once: it is re-parented (to init or the
    nearest subreaper) and is no descendant of this process. Each also stops by itself after
    ``seconds``. Returns them as psutil processes, taken at once: :func:`stop` then never signals
    a later process that reused a burner's id."""
    import psutil

    code = BURN.format(seconds=seconds)
    out = subprocess.run(["sh", "-c", 'for i in $(seq "$1"); do "$2" -c "$3" >/dev/null 2>&1 & echo $!; done',
                          "sh", str(n), sys.executable, code], capture_output=True, text=True, check=True)
    procs = []
    for pid in out.stdout.split():
        try:
            procs.append(psutil.Process(int(pid)))
        except psutil.Error:  # ended already
            pass
    return procs


def stop(procs: list) -> None:
    import psutil

    for p in procs:
        try:
            p.kill()  # psutil checks that it is still the same process (its start time)
        except psutil.Error:  # ended by itself already
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env")
    ap.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    ap.add_argument("--name", default="7-speedtest")
    ap.add_argument("--burn", type=int, default=0)
    ap.add_argument("--budget-s", type=float, default=25.0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512, 1024])
    args = ap.parse_args()

    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QApplication
    from tests.factories import make_install_result

    from app.core.measure.probe import resolve_python
    from app.core.pipeline.session import Session
    from app.gui import i18n
    from app.gui.pages import PageId
    from app.gui.pages.speedtest import SpeedTestPage
    from app.gui.state import WizardState
    from app.gui.wizard import SetupWizard

    with tempfile.TemporaryDirectory() as tmp:
        py = resolve_python(args.env) if args.env else make_env(Path(tmp) / "env")
        app = QApplication.instance() or QApplication([])
        session = Session.resume(install=make_install_result(py.parent.parent, py))
        state = WizardState(session=session, bench_sizes=args.sizes,
                            bench_dtypes=["fp32", "bf16", "fp16"], bench_budget_s=args.budget_s, bench_device="cpu")
        wiz = SetupWizard(state=state, lang="en", auto_detect=False)
        wiz.build_pages()
        wiz.resize(QSize(980, 900))
        burning = burners(args.burn, args.budget_s + 60) if args.burn else []
        try:
            wiz.setStartId(int(PageId.SPEEDTEST))
            wiz.restart()
            wiz.show()
            page = wiz.currentPage()
            assert isinstance(page, SpeedTestPage)
            deadline = time.monotonic() + args.budget_s + 180
            while page.status() in ("idle", "running") and time.monotonic() < deadline:
                app.processEvents()
                time.sleep(0.05)
        finally:
            stop(burning)
        print(f"status {page.status()}: {page.summary.text()}")
        print(page.warning_text() or "(no warning)")
        print(page.details.text())
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        page.peak_box.set_expanded(True)  # the assumptions, shown once
        for lang in ("en", "zh_CN"):
            wiz.welcome.select_language(lang)
            for _ in range(20):
                app.processEvents()
                time.sleep(0.02)
            path = out / f"{args.name}-{lang}.png"
            wiz.grab().save(str(path))
            print(path)
        wiz.welcome.select_language("en")
        i18n.set_language("en")
    return 0 if page.status() == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
