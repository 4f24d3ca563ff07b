"""How long does the GUI thread block while the wizard installs PyTorch?

Issue 6 demands the GUI thread never blocks longer than 50 ms during an install. This script
shows the real Install page (offscreen) running a REAL install of the torch CPU wheel into
a temporary venv, while a QTimer ticking every 10 ms records the gaps between its ticks: a
gap of 10 ms is a free thread, anything longer is time the event loop could not run.

It measures, in the same run:
  1. baseline: the same timer on an idle wizard for a few seconds (what the machine gives);
  2. install:  the whole install (pre-flight, venv, download/link, rollback-free finish);
  3. flood:    100 000 log lines pushed through the page's event path as fast as a worker
               thread can emit them (the live log's batching under the worst installer).
and prints max and p99 block (gap minus the 10 ms interval) for each, their ratio to the
baseline, and PASS/FAIL against the 50 ms limit.

Measured on the 2-core development VM (shared with other jobs, load ~5), 2026-11-30:
  baseline max 2-7 ms; uv install (warm cache, ~1 s) max 7-30 ms; uv cold cache (13-14 s)
  max 13-27 ms, p99 3-4 ms; pip install (45 s) max 20.7 ms, p99 3.8 ms; 100k-line flood
  max 11-29 ms (one run at 107 ms under load). A gen-2 garbage collection alone is ~22 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_responsiveness.py [--installer uv|pip]
        [--find-links DIR] [--baseline-s 3] [--flood 100000] [--cold-cache]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.core.sources.settings import SourceSettings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TICK_MS = 10
LIMIT_MS = 50.0


def find_links_default() -> str | None:
    env = os.environ.get("TORCH_SETUP_TEST_WHEELS")
    if env:
        return env.split(os.pathsep)[0]
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                             text=True, timeout=30).stdout
    except Exception:
        return None
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            for part in value.strip().strip("'\"").split():
                p = Path(part.replace("file://", ""))
                if p.is_dir() and any(p.glob("torch-*.whl")):
                    return str(p)
    return None


class GapMeter:
    """A 10 ms QTimer; records how late each tick came (the GUI thread's blocks)."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self._last: float | None = None

    def start(self) -> None:
        self.gaps = []
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append((now - self._last) * 1000.0)
        self._last = now

    def stats(self) -> dict:
        blocks = sorted(max(0.0, g - TICK_MS) for g in self.gaps)
        if not blocks:
            return {"ticks": 0, "max_ms": 0.0, "p99_ms": 0.0, "mean_gap_ms": 0.0}
        p99 = blocks[min(len(blocks) - 1, round(0.99 * (len(blocks) - 1)))]
        return {"ticks": len(blocks), "max_ms": blocks[-1], "p99_ms": p99,
                "mean_gap_ms": sum(self.gaps) / len(self.gaps)}


def run_until(app, done, timeout_s: float) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(20)
    deadline = time.monotonic() + timeout_s
    poll.timeout.connect(lambda: loop.quit() if done() or time.monotonic() > deadline else None)
    poll.start()
    loop.exec()
    poll.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--installer", choices=("uv", "pip"), default="uv")
    ap.add_argument("--find-links", default=None, help="folder with the torch wheel")
    ap.add_argument("--baseline-s", type=float, default=3.0)
    ap.add_argument("--flood", type=int, default=100_000, help="log lines for the flood phase (0: skip)")
    ap.add_argument("--timeout-s", type=float, default=600.0)
    ap.add_argument("--cold-cache", action="store_true",
                    help="give uv / pip an empty cache, so the install really unpacks and links everything")
    args = ap.parse_args(argv)
    links = args.find_links or find_links_default()
    if not links:
        print("no local torch wheel folder (pass --find-links or set TORCH_SETUP_TEST_WHEELS)", file=sys.stderr)
        return 2

    from PySide6.QtWidgets import QApplication, QWizard, QWizardPage

    from app.core.base.events import LogEvent
    from app.core.install import InstallRequest
    from app.gui.pages._common import EventBatcher
    from app.gui.pages.install import InstallPage
    from app.gui.state import WizardState
    from app.gui.worker import Task

    tmp = Path(tempfile.mkdtemp(prefix="gui-resp-"))
    os.environ.setdefault("TORCH_SETUP_HOME", str(tmp / "home"))
    if args.cold_cache:
        os.environ["UV_CACHE_DIR"] = str(tmp / "uv-cache")
        os.environ["PIP_NO_CACHE_DIR"] = "1"
    app = QApplication.instance() or QApplication([])
    state = WizardState()  # the plan is approved here, as the Environment page would
    state.session.plan(InstallRequest(env_path=tmp / "env", kind="venv", installer=args.installer,
                                      packages=["torch==2.13.0"], sources=SourceSettings(find_links=[links])))
    wiz = QWizard()
    wiz.setPage(0, QWizardPage())
    page = InstallPage(state)
    wiz.setPage(1, page)
    wiz.resize(900, 640)
    wiz.show()
    page.log.set_expanded(True)  # the visible log is the expensive case
    meter = GapMeter()
    results = {}
    try:
        # 1. baseline: an idle wizard.
        meter.start()
        run_until(app, lambda: False, args.baseline_s)
        meter.stop()
        results["baseline"] = meter.stats()

        # 2. a real install through the page.
        t0 = time.perf_counter()
        meter.start()
        wiz.next()
        run_until(app, lambda: page.status() in ("succeeded", "failed", "cancelled"), args.timeout_s)
        meter.stop()
        install_s = time.perf_counter() - t0
        results["install"] = meter.stats()
        if page.status() != "succeeded":
            print(f"install did not succeed ({page.status()}): {page.error_panel.message.text()}", file=sys.stderr)
            return 1
        results["install"]["lines"] = page.log.line_count()

        # 3. a flood of log lines through the same event path (worker thread -> queued signal).
        if args.flood > 0:
            n = args.flood
            page.log.clear()
            def spew(on_event, cancel):
                sink = EventBatcher(on_event)  # what the Install page wraps the core's callback in
                for i in range(n):
                    sink(LogEvent(f"flood line {i}: Downloading some-package-1.0-py3-none-any.whl"))
                sink.close()
                return n

            flood = Task(spew, page, name="flood")
            flood.event.connect(page.on_event)
            meter.start()
            flood.start()
            run_until(app, lambda: not flood.is_running() and page.log.line_count() >= n and page.log.pending() == 0,
                      args.timeout_s)
            meter.stop()
            results["flood"] = meter.stats()
            results["flood"]["lines"] = page.log.line_count()
    finally:
        wiz.close()
        shutil.rmtree(tmp, ignore_errors=True)

    base = results["baseline"]
    print(f"GUI thread responsiveness (QTimer every {TICK_MS} ms; block = gap - {TICK_MS} ms)")
    print(f"{'phase':<10}{'ticks':>8}{'max ms':>10}{'p99 ms':>10}{'max/base':>10}  notes")
    ok = True
    for name, st in results.items():
        ratio = st["max_ms"] / base["max_ms"] if base["max_ms"] > 0 else float("inf")
        note = ""
        if name == "install":
            note = f"{args.installer}, {install_s:.1f} s, {st.get('lines', 0)} log lines"
        elif name == "flood":
            note = f"{st.get('lines', 0)} log lines"
        print(f"{name:<10}{st['ticks']:>8}{st['max_ms']:>10.1f}{st['p99_ms']:>10.1f}{ratio:>10.2f}  {note}")
        if name != "baseline" and st["max_ms"] > LIMIT_MS:
            ok = False
    worst = max((st["max_ms"], name) for name, st in results.items() if name != "baseline")
    print(("PASS" if ok else "FAIL") + f": longest GUI-thread block during the install "
          f"{results['install']['max_ms']:.1f} ms (p99 {results['install']['p99_ms']:.1f} ms); worst phase "
          f"{worst[1]} {worst[0]:.1f} ms; limit {LIMIT_MS:.0f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
