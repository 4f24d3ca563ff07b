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

Two cases are measured in the same run, each with alternating order and the median of
paired per-round ratios (robust on a shared, noisy machine):

* cold: every uv run gets an empty cache, as on a user's first install (downloads of the
  dependencies and unpacking of the wheel included);
* warm: everything cached, a reinstall of half a second, where the assistant's fixed cost
  (interpreter start-up, imports, plan and pre-flight: about 0.1 s) shows as a large ratio.

The script prints both ratios and the fixed cost in ms, and exits 1 when the assistant's
overhead over raw uv on a first install is 10 % or more.

    .venv/bin/python benchmarks/install.py [--mode both|cold|warm] [--rounds 7]
        [--cold-rounds 6] [--pip-rounds 1] [--wheels /opt/wheels]
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
    ap.add_argument("--mode", choices=("both", "cold", "warm"), default="both",
                    help="cold: every uv run gets an empty cache (a first install: downloads and "
                         "unpacking included, what a user does); warm: everything cached (a "
                         "reinstall, where the assistant's fixed start-up cost shows most); "
                         "both (default): one after the other in this run")
    ap.add_argument("--cold-rounds", type=int, default=6)
    args = ap.parse_args(argv)

    from app.core.env.backends import env_python, find_python, uv_bin

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
    state = {"n": 0, "cold": False}

    def fresh() -> Path:
        state["n"] += 1
        if state["cold"]:
            env["UV_CACHE_DIR"] = str(work / f"cache {state['n']}")
        else:
            env.pop("UV_CACHE_DIR", None)
        return work / f"env {state['n']}"

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

    def measure(cold: bool, rounds: int) -> dict:
        state["cold"] = cold
        times: dict[str, list[float]] = {"assistant (uv)": [], "raw uv": []}
        cpu: dict[str, list[float]] = {"assistant (uv)": [], "raw uv": []}
        label = "cold (empty uv cache: a first install)" if cold else "warm (everything cached)"
        print(f"-- {label}", flush=True)
        for r in range(rounds):
            order = [("assistant (uv)", ours), ("raw uv", raw_uv)]
            if r % 2:
                order.reverse()
            for name, fn in order:
                CPU["s"] = 0.0
                times[name].append(fn())
                cpu[name].append(CPU["s"])
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f} s" for k, v in times.items()),
                  flush=True)
            for d in list(work.glob("env *")) + list(work.glob("cache *")):
                shutil.rmtree(d, ignore_errors=True)
        return {"label": label, "times": times, "cpu": cpu}

    results: dict[str, dict] = {}
    pip_times: list[float] = []
    try:
        print(f"warming the uv cache and .pyc files ({args.requirement}) ...", flush=True)
        raw_uv()
        ours()
        if args.mode in ("both", "cold"):
            results["cold"] = measure(True, args.cold_rounds)
        if args.mode in ("both", "warm"):
            results["warm"] = measure(False, args.rounds)
        state["cold"] = False
        for _ in range(args.pip_rounds):
            pip_times.append(raw_pip())
            print(f"raw pip: {pip_times[-1]:.2f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    a, u = "assistant (uv)", "raw uv"
    summary: dict[str, dict] = {}
    print()
    print(f"{'case':6} {'side':16} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU med s':>10}  runs")
    for mode, res in results.items():
        times, cpu = res["times"], res["cpu"]
        for k, v in times.items():
            print(f"{mode:6} {k:16} {statistics.median(v):9.3f} {min(v):7.3f} {max(v):7.3f} "
                  f"{statistics.median(cpu[k]):10.3f}  {len(v)}")
        paired = [x / y for x, y in zip(times[a], times[u], strict=False)]
        diffs = [x - y for x, y in zip(times[a], times[u], strict=False)]
        summary[mode] = {"paired_ratio": statistics.median(paired),
                         "median_ratio": statistics.median(times[a]) / statistics.median(times[u]),
                         "fixed_cost_ms": statistics.median(diffs) * 1000,
                         "times_s": times, "cpu_s": cpu}
    if pip_times:
        print(f"{'':6} {'raw pip':16} {statistics.median(pip_times):9.3f} {min(pip_times):7.3f} "
              f"{max(pip_times):7.3f} {'':10}  {len(pip_times)}")
    print()
    for mode, sm in summary.items():
        print(f"{mode}: assistant / raw uv = {sm['paired_ratio']:.3f} (paired median; medians "
              f"{sm['median_ratio']:.3f}); the assistant adds {sm['fixed_cost_ms']:.0f} ms")
    base = summary.get("cold") or summary.get("warm")
    if pip_times:
        ref = statistics.median(base["times_s"][u])
        print(f"raw pip / raw uv ({'cold' if 'cold' in summary else 'warm'}): "
              f"{statistics.median(pip_times) / ref:.2f}")
    if "warm" in summary:
        print("(warm: the whole install takes about half a second, so the assistant's fixed cost "
              "- interpreter start-up, imports, pre-flight - shows as a large ratio)")
    verdict_mode = "cold" if "cold" in summary else "warm"
    overhead = summary[verdict_mode]["paired_ratio"] - 1
    print(f"overhead over raw uv on a {'first install' if verdict_mode == 'cold' else 'cached reinstall'}: "
          f"{overhead * 100:+.1f} % -> under 10 %: {'yes' if overhead < 0.10 else 'NO'}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"summary": summary, "pip_s": pip_times},
                                                  indent=2))
    return 0 if overhead < 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
