"""Does `torch-setup bench` report the speed torch really reaches?

For each round: `run_bench` (the product: probe, sweep, median of N) with sizes 1024 2048
and fp32, and right before/after it an independent torch.mm timing written here (plain
perf_counter loop, its own warm-up, its own median) in the same env. The order alternates
between rounds so drift on a shared, noisy machine hits both sides equally. Prints both
numbers per size and round, the ratio bench / independent, the median ratio and its spread,
and the CPU's estimated peak and the fraction reached.

    .venv/bin/python benchmarks/bench_fidelity.py [--env PATH] [--rounds 3] [--sizes 1024 2048]

Without --env a throwaway venv with the local torch CPU wheel is created (uv + --find-links).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.measure.bench import run_bench
from app.core.measure.probe import resolve_python
from app.core.proc.runner import clean_env, run

INDEPENDENT = r"""
import json, statistics, sys, time
import torch
n, repeats = int(sys.argv[1]), int(sys.argv[2])
a = torch.rand(n, n); b = torch.rand(n, n)
for _ in range(2):
    t = time.perf_counter(); torch.mm(a, b); first = time.perf_counter() - t
# as many timed runs as the product takes (at least `repeats`, at least 0.25 s, at most 50), so
# that neither side's median or best run profits from a larger sample
runs = min(50, max(repeats, int(0.25 / max(first, 1e-6)))) if first * repeats < 0.25 else repeats
ts = []
for _ in range(runs):
    t = time.perf_counter(); torch.mm(a, b); ts.append(time.perf_counter() - t)
med = statistics.median(ts)
print(json.dumps({"n": n, "median_s": med, "gflops": 2 * n ** 3 / med / 1e9,
                  "best_gflops": 2 * n ** 3 / min(ts) / 1e9}))
"""


def independent(python: Path, n: int, repeats: int) -> tuple[float, float]:
    """(median GFLOP/s, best-run GFLOP/s) of a plain torch.mm loop in a fresh process."""
    res = run([str(python), "-I", "-c", INDEPENDENT, str(n), str(repeats)], timeout=600, env=clean_env())
    res.raise_for_status("the independent torch.mm timing failed")
    d = json.loads(res.stdout.strip().splitlines()[-1])
    return d["gflops"], d["best_gflops"]


def make_env(root: Path) -> Path:
    from uv import find_uv_bin

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from conftest import _pip_find_links  # the same wheel folder the tests use

    links = [d for d in _pip_find_links() if any(d.glob("torch-*.whl"))]
    if not links:
        sys.exit("no local torch wheel folder: pass --env or set TORCH_SETUP_TEST_WHEELS")
    uv = find_uv_bin()
    run([uv, "venv", "--quiet", "--python", sys.executable, str(root)], timeout=120).raise_for_status("uv venv")
    py = resolve_python(root)
    run([uv, "pip", "install", "--quiet", "--python", str(py), "--find-links", str(links[0]), "torch==2.13.0",
         "numpy"], timeout=600).raise_for_status("torch install")
    return py


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, help="OMP_NUM_THREADS for both sides (default: torch's own choice); "
                                                "1 makes the comparison far less sensitive to other load")
    args = ap.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
        os.environ["MKL_NUM_THREADS"] = str(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        py = resolve_python(args.env) if args.env else make_env(Path(tmp) / "env")
        ratios: dict[int, list[float]] = {n: [] for n in args.sizes}
        sides: dict[int, tuple[list[float], list[float]]] = {n: ([], []) for n in args.sizes}
        best_ratios: list[float] = []  # best run vs best run: insensitive to other load (it only adds time)
        peak = None
        print(f"env python: {py}")
        print(f"{'round':>5} {'n':>6} {'bench GFLOP/s':>14} {'torch.mm GFLOP/s':>17} {'ratio':>7}  order")
        for rnd in range(args.rounds):
            first_indep = rnd % 2 == 1
            ind_before = {n: independent(py, n, args.repeats) for n in args.sizes} if first_indep else {}
            rep = run_bench(py, device="cpu", sizes=args.sizes, dtypes=["fp32"], budget_s=60,
                            repeats=args.repeats, warmup=2)
            peak = rep.peak
            ind = ind_before or {n: independent(py, n, args.repeats) for n in args.sizes}
            for r in sorted(rep.results, key=lambda r: r.n):
                ind_best = ind[r.n][1]
                ind_n = ind[r.n] = ind[r.n][0]
                best_ratios.append((2 * r.n ** 3 / r.min_s / 1e9) / ind_best)
                ratio = r.gflops / ind_n
                ratios[r.n].append(ratio)
                sides[r.n][0].append(r.gflops)
                sides[r.n][1].append(ind[r.n])
                frac = f"{r.fraction_of_peak * 100:.0f} % of peak" if r.fraction_of_peak else ""
                print(f"{rnd + 1:>5} {r.n:>6} {r.gflops:>14.1f} {ind[r.n]:>17.1f} {ratio:>7.3f}  "
                      f"{'mm, bench' if first_indep else 'bench, mm'}  {frac}")
        print()
        all_r = [x for v in ratios.values() for x in v]
        for n, v in ratios.items():
            b, i = sides[n]
            print(f"n={n}: median ratio {statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f}); "
                  f"median bench {statistics.median(b):.1f} vs median torch.mm {statistics.median(i):.1f} GFLOP/s "
                  f"= {statistics.median(b) / statistics.median(i):.3f}")
        med = statistics.median(all_r)
        print(f"overall median ratio bench / independent: {med:.3f} "
              f"(spread {min(all_r):.3f} .. {max(all_r):.3f}); within 10 %: {abs(med - 1) <= 0.10}")
        print(f"best-run ratio (fastest timed run of each side, robust to other load): median "
              f"{statistics.median(best_ratios):.3f} (spread {min(best_ratios):.3f} .. {max(best_ratios):.3f})")
        try:
            import psutil

            print(f"load average during the run: {', '.join(f'{x:.1f}' for x in psutil.getloadavg())} "
                  f"on {psutil.cpu_count()} CPUs (other work on the machine makes single rounds noisy)")
        except Exception:
            pass
        if peak is not None:
            print(f"estimated CPU peak fp32: {peak.gflops['fp32']:.0f} GFLOP/s")
            for a in peak.assumptions:
                print(f"  {a}")
    return 0 if abs(med - 1) <= 0.10 else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
