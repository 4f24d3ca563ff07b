#!/usr/bin/env python3
"""The wait hidden behind the wizard: "Install click -> done" after 30 s on the pages, against the cold path.

The generated CUDA-like wheel set (tests/netlab/wheelset.py, ``--scale 0.2`` by default: a 100 MB
torch-like wheel and twelve libraries, 265 MB) is served by a netlab index in its own process,
paced as the ``capped`` link (10 Mbit/s per connection, 200 Mbit/s in all, 40 ms per request).
Each round, in alternating order, from empty caches:

* **cold**: the Environment page's plan and pre-flight, then the Install click: ``install()`` timed;
* **after reading**: the wizard's early downloads start as the Recommendation page shows the
  build (:class:`app.core.install.early.Prefetch`, what the wizard runs), the plan and
  pre-flight run as on the Environment page, the user reads for ``--read`` seconds (30), then
  the Install click: ``install()`` timed (it takes what the early downloads have, and waits for a
  file they are still fetching rather than fetching it twice).

Printed: each sample, the medians, and after / cold (goal: at most 0.3). How much the reading
hides depends on the set's size against the link: at this link (about 7.5 MB/s with six
connections) 30 s of reading fetch about 200 MB.

    .venv/bin/python benchmarks/prefetch.py [--scale 0.2] [--read 30] [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.eta import serve  # noqa: E402
from benchmarks.links_ours import CUDA_BOX  # noqa: E402
from tests.netlab import cuda_like_set  # noqa: E402
from tests.netlab.clients import clean_env  # noqa: E402
from tests.netlab.unreachable import Unreachable  # noqa: E402

GOAL = 0.3


def sample(origin: str, refused: str, read_s: float | None) -> tuple[float, str]:
    """Seconds from the Install click to done (``read_s`` None: cold, no early downloads)."""
    from app.core.detection.system import SystemReport
    from app.core.env.backends import uv_bin
    from app.core.install import InstallRequest, install, plan, preflight
    from app.core.install.early import Ahead, Prefetch
    from app.core.recommend import Choices, recommend
    from app.core.sources import SourceSettings

    work = Path(tempfile.mkdtemp(prefix="prefetch-"))
    env = clean_env(UV_CACHE_DIR=str(work / "uv"), TORCH_SETUP_HOME=str(work / "home"), TORCH_SETUP_TORCH_INDEX=refused)
    os.environ.clear()  # this machine's pip / uv / proxy settings never reach the install
    os.environ.update(env)
    mirror, simple = f"{origin}/whl/{{variant}}/", f"{origin}/simple/"
    try:
        rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
        began = time.monotonic()
        early = None
        if read_s is not None:  # the Recommendation page is shown: the early downloads start
            ahead = Ahead(rec.packages, rec.index_url, f"{sys.version_info[0]}.{sys.version_info[1]}",
                          SourceSettings(mirrors=(mirror,)), default_index=simple)
            early = Prefetch(ahead, uv=uv_bin()).start()
        p = plan(InstallRequest(work / "env", recommendation=rec, python=sys.executable,
                                sources=SourceSettings(mirrors=(mirror,), default_index=simple)))
        checks = preflight(p)  # the Environment page, while the user reads
        if read_s is not None:
            time.sleep(max(0.0, read_s - (time.monotonic() - began)))
        fetched = early.done_bytes if early is not None else 0
        clicked = time.monotonic()
        result = install(p, checks=checks)
        took = time.monotonic() - clicked
        assert result.torch_version == "2.13.0+cu132", result
        if early is not None:
            early.wait(60)
        if early is None:
            return took, "no early downloads"
        return took, f"{fetched / 1e6:.0f} of {early.total_bytes / 1e6:.0f} MB in before the click ({early.state})"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--read", type=float, default=30.0, help="seconds on the pages before the Install click")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    wheels = cuda_like_set(scale=args.scale)
    print(f"capped link; {len(wheels.files)} wheels, {wheels.total_bytes / 1e6:.0f} MB; reading {args.read:.0f} s; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    proc, origin, lab = serve(wheels, "capped", lifetime=7200)
    times: dict[str, list[float]] = {"cold": [], "after reading": []}
    try:
        with Unreachable() as gone:
            refused = gone.refused_url.replace("/simple/", "/whl/")
            for r in range(args.rounds):
                order = ["cold", "after reading"] if r % 2 == 0 else ["after reading", "cold"]
                for kind in order:
                    took, note = sample(origin, refused, None if kind == "cold" else args.read)
                    times[kind].append(took)
                    print(f"round {r + 1}  {kind:13}  Install click -> done {took:6.1f} s  ({note})", flush=True)
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(lab, ignore_errors=True)
    cold, warm = statistics.median(times["cold"]), statistics.median(times["after reading"])
    paired = statistics.median(w / c for w, c in zip(times["after reading"], times["cold"], strict=True))
    print(f"median: cold {cold:.1f} s, after {args.read:.0f} s of reading {warm:.1f} s; after / cold {warm / cold:.2f} "
          f"(paired {paired:.2f}; goal: at most {GOAL}); load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
