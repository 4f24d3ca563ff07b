"""How fast does `torch-setup recommend --from-report FILE` answer, interpreter start included?

The issue asks for under 0.3 s wall. Each round runs, from a fresh process each time:
  1. the baseline  `python -c pass`              (the interpreter's own start-up)
  2. the command   `python -m app recommend --from-report R --json`
alternating, so load on a shared machine hits both equally. Prints every round, the median,
the best, and the ratio command / baseline. Bytecode is compiled first (as an installed package
has it), so the numbers are not inflated by PYTHONDONTWRITEBYTECODE.

The verdict (exit 1 when not met) is the ratio of the medians, not a wall time: a busy machine
slows both alike (the test suite's old `test_from_report_is_fast`, "< 0.3 s wall", lives here now).
--max-ratio 10 is the 0.3 s target on a machine whose interpreter starts in 30 ms; measured on the
2-core development VM: baseline ~32 ms, recommend ~217 ms, 6.8x.

    .venv/bin/python benchmarks/recommend_speed.py [--rounds 10] [--report FILE] [--max-ratio 10]
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORT = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"},
          "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "580.82.07",
                    "compute_capability": "6.1", "index": 0}]}


def _time(argv, env) -> float:
    t = time.perf_counter()
    res = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{argv} failed: {res.stderr.decode()[-500:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--report", help="a SystemReport JSON (default: a GTX 1080 Ti Linux machine)")
    ap.add_argument("--max-ratio", type=float, default=10.0,
                    help="the verdict: median recommend / median baseline must stay under this")
    args = ap.parse_args()
    compileall.compile_dir(str(REPO / "app"), quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        report = args.report
        if report is None:
            report = str(Path(tmp) / "report.json")
            Path(report).write_text(json.dumps(REPORT), encoding="utf-8")
        cmd = [sys.executable, "-m", "app", "recommend", "--from-report", report, "--json"]
        base = [sys.executable, "-c", "pass"]
        _time(cmd, env)  # warm the file cache
        bases, cmds = [], []
        for i in range(args.rounds):
            pair = [(base, bases), (cmd, cmds)] if i % 2 == 0 else [(cmd, cmds), (base, bases)]
            for argv, sink in pair:
                sink.append(_time(argv, env))
            print(f"round {i + 1:2d}: python -c pass {bases[-1] * 1000:6.1f} ms   recommend {cmds[-1] * 1000:6.1f} ms")
    mb, mc = statistics.median(bases), statistics.median(cmds)
    print(f"\nbaseline  python -c pass : median {mb * 1000:6.1f} ms, best {min(bases) * 1000:6.1f} ms")
    print(f"recommend --from-report  : median {mc * 1000:6.1f} ms, best {min(cmds) * 1000:6.1f} ms")
    print(f"ratio recommend / baseline (medians): {mc / mb:.2f}x; recommend's own work ~{(mc - mb) * 1000:.0f} ms")
    print(f"target < 300 ms wall: {'met' if mc < 0.3 else 'NOT met'} (median), "
          f"{'met' if min(cmds) < 0.3 else 'NOT met'} (best)")
    ok = mc / mb < args.max_ratio
    print(f"verdict: ratio {mc / mb:.2f}x {'<' if ok else '>='} {args.max_ratio:g}x: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
