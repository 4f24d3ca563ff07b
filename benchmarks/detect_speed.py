"""How long does `torch-setup detect --json` take, against the cost of starting Python at all?

Measured in one run, alternating, N rounds each (median and min printed):
  baseline   `python -c pass` (the same interpreter: the floor any CLI pays)
  cli-only   `python -m app --version` (imports + argument parsing, no detection)
  cold       `python -m app detect --json` with the interpreter/tool cache off
             (every Python interpreter found is started once, concurrently)
  warm       `python -m app detect --json` with the cache (no process started for
             unchanged interpreters and tools)
  hung-smi   warm, with a fake `nvidia-smi` that never answers first on PATH (NVML off):
             bounded by the 3 s probe limit, not by the tool

    .venv/bin/python benchmarks/detect_speed.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(argv, env) -> float:
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')[-400:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        bindir = Path(tmp) / "bin"
        bindir.mkdir()
        smi = bindir / "nvidia-smi"
        smi.write_text("#!/bin/sh\nexec sleep 60\n", encoding="utf-8")
        smi.chmod(0o755)
        base = dict(os.environ, TORCH_SETUP_HOME=str(home))
        cases = {
            "baseline": ([py, "-c", "pass"], base),
            "cli-only": ([py, "-m", "app", "--version"], base),
            "cold": ([py, "-m", "app", "detect", "--json"], dict(base, TORCH_SETUP_NO_CACHE="1")),
            "warm": ([py, "-m", "app", "detect", "--json"], base),
            "hung-smi": ([py, "-m", "app", "detect", "--json"],
                         dict(base, TORCH_SETUP_NO_NVML="1", PATH=f"{bindir}{os.pathsep}{base.get('PATH', '')}")),
        }
        timed(*cases["warm"])  # fill the cache once
        results: dict[str, list[float]] = {k: [] for k in cases}
        for r in range(args.rounds):
            order = list(cases) if r % 2 == 0 else list(reversed(cases))
            for k in order:
                if k == "hung-smi" and r >= 2:
                    continue  # 3 s each: two rounds are enough
                results[k].append(timed(*cases[k]))
    base_med = statistics.median(results["baseline"])
    print(f"{'case':10} {'median s':>9} {'min s':>7} {'x baseline':>11}  (n)")
    for k, ts in results.items():
        med = statistics.median(ts)
        print(f"{k:10} {med:9.3f} {min(ts):7.3f} {med / base_med:11.1f}  ({len(ts)})")
    print(f"\ncold detect costs {statistics.median(results['cold']) - statistics.median(results['cli-only']):.3f} s "
          f"over the bare CLI; warm "
          f"{statistics.median(results['warm']) - statistics.median(results['cli-only']):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
