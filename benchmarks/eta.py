#!/usr/bin/env python3
"""Is the Install page's "About N left" true? Its estimate against the real remaining time, on a paced link.

The generated CUDA-like wheel set (tests/netlab/wheelset.py) is served by a netlab index in its own
process, paced as one of tests/netlab/link.py's profiles (default: ``capped``, 10 Mbit/s per
connection and 200 Mbit/s in all, 40 ms per request). This process runs the assistant's install
(the recommendation for a CUDA machine, the lab's index as the mirror, as in benchmarks/links.py)
and feeds its events to the Install page's own arithmetic (:class:`app.core.base.progress_model.
InstallProgress`, what the page draws its bar and "About N left" from), reading the estimate
twice a second. When the install has finished, each reading is compared with the time that was
really left then (to the end of the install, not of the download).

Printed per round: the readings from 10 % of the bytes on (estimate, real, error), and the
largest error once 20 % of the bytes are in (goal: within 20 %), over all readings and over those
with at least 10 s really left (near the end a second is a large share).

    .venv/bin/python benchmarks/eta.py [--profile capped] [--scale 0.3] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.links import SEED_WHEELS  # noqa: E402
from benchmarks.links_ours import CUDA_BOX  # noqa: E402
from tests.netlab import PROFILES, WheelSet, cuda_like_set  # noqa: E402
from tests.netlab.clients import clean_env  # noqa: E402
from tests.netlab.unreachable import Unreachable  # noqa: E402

GOAL = 0.20


def serve(wheels: WheelSet, profile: str, lifetime: float) -> tuple[subprocess.Popen, str, Path]:  # type: ignore[type-arg]
    """The set (and pip, for the new environments' seeding) served by a netlab index in a process of
    its own (its pacing never competes with this one for the GIL): the process, its origin, its folder."""
    folder = Path(tempfile.mkdtemp(prefix="lab-"))
    for f in [*wheels.files, *sorted(SEED_WHEELS.glob("pip-*.whl"))]:
        os.link(f, folder / f.name)
    ready = folder / "ready.json"
    proc = subprocess.Popen([sys.executable, "-m", "tests.netlab", "serve", "--root", str(folder), "--link", profile,
                             "--lifetime", str(lifetime), "--ready-file", str(ready)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ready.is_file():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("the lab's index did not start")
        time.sleep(0.1)
    return proc, json.loads(ready.read_text(encoding="utf-8"))["origin"], folder


def one_install(origin: str, work: Path) -> tuple[list[tuple[float, int, int, str, float | None]], float, float]:
    """Readings (time, done, total, mode, estimate) over one install; its start and end."""
    from app.core.base.events import Event, ProgressEvent
    from app.core.base.progress_model import InstallProgress
    from app.core.detection.system import SystemReport
    from app.core.install import InstallRequest, install, plan, preflight
    from app.core.recommend import Choices, recommend
    from app.core.sources import SourceSettings

    rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
    p = plan(InstallRequest(work / "env", recommendation=rec, python=sys.executable,
                            sources=SourceSettings(mirrors=(f"{origin}/whl/{{variant}}/",),
                                                   default_index=f"{origin}/simple/")))
    checks = preflight(p)  # on the Environment page, before the Install click
    model, lock = InstallProgress(), threading.Lock()
    readings: list[tuple[float, int, int, str, float | None]] = []
    stop = threading.Event()

    def on_event(e: Event) -> None:
        if isinstance(e, ProgressEvent):
            with lock:
                model.feed(e)

    def read() -> None:
        while not stop.wait(0.5):
            with lock:
                done, total = model.byte_totals()
                readings.append((time.monotonic(), done, total, model.mode, model.eta()))

    reader = threading.Thread(target=read, daemon=True)
    began = time.monotonic()
    reader.start()
    result = install(p, checks=checks, on_event=on_event)
    ended = time.monotonic()
    stop.set()
    reader.join()
    assert result.torch_version == "2.13.0+cu132", result
    return readings, began, ended


def report(readings: list[tuple[float, int, int, str, float | None]], began: float, ended: float) -> dict:  # type: ignore[type-arg]
    final = max((tot for _t, _d, tot, _m, _e in readings), default=0)  # every file's size, known in the end
    rows = [(t, d / final, est, ended - t) for t, d, tot, _mode, est in readings if tot and est is not None]
    downloading = [t for t, _d, _tot, mode, _e in readings if mode == "download"]
    print(f"  install took {ended - began:.1f} s; the bytes were in after {max(downloading, default=began) - began:.1f}"
          f" s")
    print(f"  {'done':>5} {'estimate':>9} {'real':>7} {'error':>7}")
    shown = 0.0
    for _t, frac, est, real in rows:
        if frac >= 0.1 and frac >= shown:
            shown = frac + 0.1
            print(f"  {frac * 100:4.0f}% {est:8.1f}s {real:6.1f}s {(est / real - 1) * 100:+6.1f}%")
    after = [(est, real) for _t, frac, est, real in rows if frac >= 0.2 and real > 0]
    long = [(est, real) for est, real in after if real >= 10]
    worst = max((abs(e / r - 1) for e, r in after), default=None)
    worst_long = max((abs(e / r - 1) for e, r in long), default=None)
    worst_abs = max((abs(e - r) for e, r in after), default=None)
    within = sum(1 for e, r in after if abs(e / r - 1) <= GOAL or abs(e - r) <= 1.0)
    print(f"  once 20 % of the bytes are in ({len(after)} readings): largest error "
          f"{worst * 100 if worst is not None else float('nan'):.1f} % "
          f"({worst_abs or 0:.1f} s); with 10 s or more left ({len(long)} readings): "
          f"{worst_long * 100 if worst_long is not None else float('nan'):.1f} % (goal: {GOAL * 100:.0f} %); "
          f"{within} of {len(after)} within 20 % or 1 s")
    return {"seconds": ended - began, "worst": worst, "worst_long": worst_long, "worst_abs_s": worst_abs,
            "readings": [(round(f, 3), round(e, 2), round(r, 2)) for _t, f, e, r in rows],
            "bytes": [(round(t - began, 2), d, tot, mode) for t, d, tot, mode, _e in readings]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="capped", choices=sorted(PROFILES))
    ap.add_argument("--scale", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json-out")
    args = ap.parse_args()
    wheels = cuda_like_set(scale=args.scale)
    print(f"{PROFILES[args.profile].title}; {len(wheels.files)} wheels, {wheels.total_bytes / 1e9:.2f} GB; load "
          f"average {os.getloadavg()[0]:.2f}", flush=True)
    proc, origin, lab = serve(wheels, args.profile, lifetime=3600)
    results = []
    try:
        with Unreachable() as gone:
            for r in range(args.rounds):
                work = Path(tempfile.mkdtemp(prefix="eta-"))
                env = clean_env(UV_CACHE_DIR=str(work / "uv"), TORCH_SETUP_HOME=str(work / "home"),
                                TORCH_SETUP_TORCH_INDEX=gone.refused_url.replace("/simple/", "/whl/"))
                os.environ.clear()  # this machine's pip / uv / proxy settings never reach the install
                os.environ.update(env)
                try:
                    print(f"round {r + 1}", flush=True)
                    results.append(report(*one_install(origin, work)))
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(lab, ignore_errors=True)
    worst = max((x["worst"] for x in results if x["worst"] is not None), default=None)
    print(f"all rounds: largest error once 20 % of the bytes are in: {worst * 100 if worst is not None else 0:.1f} %; "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
