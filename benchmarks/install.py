"""Wall time of ``torch-setup install`` (uv) against raw uv and raw pip, from one run.

Each side installs the same requirement (``torch==2.13.0`` from the local wheel folder,
its dependencies from the default index) into a FRESH env:

* assistant: ``torch-setup install --env P --installer uv --packages torch==2.13.0
  --find-links W --yes --no-verify`` (a whole CLI process: start-up, plan, pre-flight with
  its network check, env creation, install, rollback guard, the post-install checks);
* raw uv: ``uv venv P --python PY`` then ``uv pip install --python P/bin/python
  torch==2.13.0 --find-links W``;
* raw pip: ``PY -m venv P`` then ``P/bin/pip install torch==2.13.0 --find-links W``
  (slow: run ``--pip-rounds`` times, default 1).

The uv cache is warmed first (one discarded run of each uv side), rounds alternate which
side goes first, and every round compares its two runs (the headline is the median of
those paired ratios, robust on a shared, noisy machine); the ratios of the medians, of the
minima, and of the children's CPU time are printed too. The script exits 1 when the
assistant's overhead over raw uv is 10 % or more.

    .venv/bin/python benchmarks/install.py [--rounds 7] [--pip-rounds 1] [--wheels /opt/wheels]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


CPU = {"s": 0.0}  # CPU seconds (user + system) of the children, summed per side by the caller


def _timed(argv, env) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["s"] += (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pip-rounds", type=int, default=1)
    ap.add_argument("--wheels", default=os.environ.get("TORCH_SETUP_TEST_WHEELS", "/opt/wheels"))
    ap.add_argument("--requirement", default="torch==2.13.0")
    ap.add_argument("--json-out", help="also write the numbers to this JSON file")
    ap.add_argument("--cold", action="store_true",
                    help="give every uv run an empty cache (a first install: downloads and "
                         "unpacking included) instead of the warm cache")
    args = ap.parse_args(argv)

    from app.core.envs import env_python, find_python, uv_bin

    uv = uv_bin()
    py_info, _ = find_python(f"{sys.version_info[0]}.{sys.version_info[1]}")
    if not uv or py_info is None:
        print("needs uv and a Python", file=sys.stderr)
        return 2
    py = py_info.path
    work = Path(tempfile.mkdtemp(prefix="bench-install-"))
    env = dict(os.environ)
    env["TORCH_SETUP_HOME"] = str(work / "home")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed assistant has its .pyc files
    env.pop("VIRTUAL_ENV", None)
    n = 0

    def fresh() -> Path:
        nonlocal n
        n += 1
        if args.cold:
            env["UV_CACHE_DIR"] = str(work / f"cache {n}")
        return work / f"env {n}"

    def ours() -> float:
        return _timed([sys.executable, "-m", "app.cli", "install", "--env", str(fresh()),
                       "--installer", "uv", "--python", py, "--packages", args.requirement,
                       "--find-links", args.wheels, "--yes", "--no-verify"], env)

    def raw_uv() -> float:
        p = fresh()
        t = _timed([uv, "venv", str(p), "--python", py, "--quiet"], env)
        return t + _timed([uv, "pip", "install", "--python", str(env_python(p)),
                           args.requirement, "--find-links", args.wheels, "--quiet"], env)

    def raw_pip() -> float:
        p = fresh()
        t = _timed([py, "-m", "venv", str(p)], env)
        return t + _timed([str(env_python(p)), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", args.requirement,
                           "--find-links", args.wheels], env)

    try:
        print(f"warming the uv cache and .pyc files ({args.requirement}) ...", flush=True)
        raw_uv()
        ours()
        times: dict[str, list[float]] = {"assistant (uv)": [], "raw uv": [], "raw pip": []}
        cpu: dict[str, list[float]] = {"assistant (uv)": [], "raw uv": []}
        for r in range(args.rounds):
            order = [("assistant (uv)", ours), ("raw uv", raw_uv)]
            if r % 2:
                order.reverse()
            for name, fn in order:
                CPU["s"] = 0.0
                times[name].append(fn())
                cpu[name].append(CPU["s"])
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f} s"
                                                  for k, v in times.items() if v), flush=True)
            for d in list(work.glob("env *")) + list(work.glob("cache *")):
                shutil.rmtree(d, ignore_errors=True)
        for _ in range(args.pip_rounds):
            times["raw pip"].append(raw_pip())
            print(f"raw pip: {times['raw pip'][-1]:.2f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in times.items() if v}
    paired = [a / b for a, b in zip(times["assistant (uv)"], times["raw uv"])]
    a, u = "assistant (uv)", "raw uv"
    overhead = statistics.median(paired) - 1
    print()
    print(f"{'side':16} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU med s':>10}  runs")
    for k, v in times.items():
        if v:
            c = f"{statistics.median(cpu[k]):10.3f}" if k in cpu else " " * 10
            print(f"{k:16} {med[k]:9.3f} {min(v):7.3f} {max(v):7.3f} {c}  {len(v)}")
    print()
    print(f"assistant / raw uv, paired rounds (median): {1 + overhead:.3f}  "
          f"(overhead {overhead * 100:+.1f} %)")
    print(f"assistant / raw uv, medians: {med[a] / med[u]:.3f}; minima: "
          f"{min(times[a]) / min(times[u]):.3f}; CPU time: "
          f"{statistics.median(cpu[a]) / statistics.median(cpu[u]):.3f}")
    if "raw pip" in med:
        print(f"raw pip / raw uv   : {med['raw pip'] / med['raw uv']:.2f}")
        print(f"assistant / raw pip: {med['assistant (uv)'] / med['raw pip']:.3f}")
    print(f"uv cache: {'empty for every run (--cold)' if args.cold else 'warm'}")
    verdict = overhead < 0.10
    print(f"overhead under 10 %: {'yes' if verdict else 'NO'}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"times_s": times, "median_s": med,
                                                   "overhead": overhead, "cpu_s": cpu,
                                                   "paired_ratios": paired}, indent=2))
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
