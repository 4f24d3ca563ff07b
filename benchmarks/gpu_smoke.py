#!/usr/bin/env python3
"""GPU smoke test in ONE short script: verify and bench on the accelerator, and the bench's bf16
matmul at 8192 against an independent ``torch.mm`` timing on the same device.

    .venv/bin/python benchmarks/gpu_smoke.py (--env PATH | --python /usr/bin/python3) [--budget-s 60]
        [--out DIR] [--limit 0.10]

* ``--env``: an environment that holds torch; ``--python``: an interpreter whose torch is used
  (the device machine's own): a throwaway venv with ``--system-site-packages`` is made from it.
* verify (the product's probe, ``expect`` = the wheel's backend) must pass its accelerator checks;
* bench (the product's probe) sweeps the accelerator, bf16 up to 8192;
* an independent timing (a plain loop written here: warm-up, then CUDA events around
  ``torch.mm(a, b)`` bf16 8192, as many runs as the product takes, their median) runs before and
  after the bench (two samples, alternating with it), and the script prints bench / independent.
  On an NVIDIA machine the ratio must be within ``--limit`` (10 %) of 1.

Without a GPU the same script runs its CPU path (verify, a short CPU bench, the same comparison
with fp32 at 512 on the CPU) and exits 0 when that works: there is nothing to smoke on a GPU.
``--out DIR`` keeps verify.json / bench.json / smoke.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.base.text import render  # noqa: E402
from app.core.measure.bench import BenchReport, headline_text, notes, run_bench  # noqa: E402
from app.core.measure.probe import resolve_python  # noqa: E402
from app.core.measure.verify import VerifyReport, run_verify  # noqa: E402
from app.core.proc.runner import clean_env, run  # noqa: E402

ACCEL = ("accelerator", "arch_list", "device_round_trip", "device_matmul", "device_conv2d", "device_training",
         "dnn_library", "device_autocast", "device_memory")

# The independent measurement: the same work the bench times (a fresh torch.mm(a, b), its output
# allocated each time, as users write `a @ b`), timed by hand. On CUDA with events; elsewhere with
# perf_counter after a synchronise.
INDEPENDENT = r"""
import json, statistics, sys, time
import torch
device, dtype_name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
if device == "cuda":
    torch.backends.cuda.matmul.allow_tf32 = False
g = torch.Generator(device="cpu").manual_seed(n)
a = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)
b = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)

def sync():
    if device == "cuda":
        torch.cuda.synchronize()

def once():
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); torch.mm(a, b); end.record(); end.synchronize()
        return start.elapsed_time(end) / 1000.0
    sync(); t = time.perf_counter(); torch.mm(a, b); sync()
    return time.perf_counter() - t

for _ in range(3):
    first = once()
runs = min(50, max(5, int(0.25 / max(first, 1e-6)))) if first * 5 < 0.25 else 5
times = [once() for _ in range(runs)]
med = statistics.median(times)
name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
print(json.dumps({"device": device, "name": name, "dtype": dtype_name, "n": n, "runs": runs, "median_s": med,
                  "gflops": 2 * n ** 3 / med / 1e9}))
"""


# The site folders of an interpreter (a system Python's, or a venv's own when ``python`` is one).
SITE_DIRS = ("import json, site, sysconfig; p = sysconfig.get_paths(); "
             "print(json.dumps([p['purelib'], p['platlib'], *site.getsitepackages()]))")


def make_env(python: str, root: Path) -> Path:
    """A venv that sees ``python``'s own packages (its torch): ``--system-site-packages``, plus a
    .pth naming ``python``'s site folders (for a ``python`` that is itself in a venv, whose own
    packages --system-site-packages would not show)."""
    run([python, "-m", "venv", "--system-site-packages", str(root)], timeout=300).raise_for_status(
        f"could not make a venv from {python}")
    py = resolve_python(root)
    res = run([python, "-c", SITE_DIRS], timeout=60, env=clean_env())
    res.raise_for_status(f"could not ask {python} for its site folders")
    theirs = [d for d in dict.fromkeys(json.loads(res.stdout.strip().splitlines()[-1])) if Path(d).is_dir()]
    mine = run([str(py), "-c", SITE_DIRS], timeout=60, env=clean_env())
    mine.raise_for_status("could not ask the new venv for its site folder")
    own = Path(json.loads(mine.stdout.strip().splitlines()[-1])[0])
    (own / "_device_python.pth").write_text("".join(f"{d}\n" for d in theirs), encoding="utf-8")
    res = run([str(py), "-c", "import torch; print(torch.__version__)"], timeout=300, env=clean_env())
    res.raise_for_status(f"{python} has no torch to share (import torch failed in the venv)")
    print(f"venv {root} (system site-packages of {python}): torch {res.stdout.strip()}")
    return py


def independent(py: Path, device: str, dtype: str, n: int) -> dict:
    res = run([str(py), "-I", "-c", INDEPENDENT, device, dtype, str(n)], timeout=600, env=clean_env())
    res.raise_for_status("the independent torch.mm timing failed")
    return json.loads(res.stdout.strip().splitlines()[-1])


def show_verify(v: VerifyReport) -> list[str]:
    print(f"verify: torch {v.torch_version} accelerator={v.accelerator} ok={v.ok} ({v.duration_s:.1f} s)")
    for d in v.devices:
        print(f"  device {d.index}: {d.name} CC={d.compute_capability or d.gfx_target} "
              f"mem={(d.total_memory or 0) / 2**30:.0f} GiB arch_supported={d.arch_supported}")
    for c in v.checks:
        print(f"  {c.status:>7} {c.name}: {render(c.detail)[:140]}")
    return [c.name for c in v.checks if c.name in ACCEL and c.status == "failed"]


def show_bench(b: BenchReport) -> None:
    print(f"bench: {b.device} {b.device_name} CC={b.compute_capability} status={b.status} "
          f"({b.elapsed_s:.1f} s)")
    for r in sorted(b.results, key=lambda r: (r.dtype, r.n)):
        frac = f"{r.fraction_of_peak * 100:.0f} %" if r.fraction_of_peak else "?"
        spread = f"±{r.spread * 100:.0f} %" if r.spread is not None else ""
        print(f"  {r.dtype:>5} n={r.n:>5} {r.gflops:>12.1f} GFLOP/s {spread:>7} ({r.runs} runs)  {frac} of peak")
    for s in b.speedup:
        print(f"  speed-up {s.dtype} n={s.n}: {s.speedup:.1f}x over the CPU")
    for c in b.copy:
        print(f"  copy {c.direction} {c.memory}: {c.gb_per_s:.1f} GB/s")
    head = headline_text(b)
    if head is not None:
        print(f"  {render(head)}")
    for m in notes(b):
        print(f"  {render(m)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--env", help="an environment holding torch")
    where.add_argument("--python", help="an interpreter with torch: a --system-site-packages venv is made from it")
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--limit", type=float, default=0.10, help="allowed |bench / independent - 1| (0.10)")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpu-smoke-") as tmp:
        py = resolve_python(a.env) if a.env else make_env(a.python, Path(tmp) / "env")

        facts = run_verify(py, facts_only=True, timeout_s=300)
        cuda = facts.backend("cuda").available or facts.backend("rocm").available
        expect = "rocm" if facts.backend("rocm").available else ("cuda" if cuda else None)
        v = run_verify(py, expect=expect, timeout_s=600)
        bad = show_verify(v)
        if out:
            (out / "verify.json").write_text(json.dumps(v.to_dict(), indent=2, default=str), encoding="utf-8")

        device, dtype, n = ("cuda", "bf16", 8192) if cuda else ("cpu", "fp32", 512)
        sizes = [1024, 2048, 4096, 8192] if cuda else [256, 512]
        dtypes = ["fp32", "tf32", "bf16", "fp16"] if cuda else ["fp32", "bf16"]
        if not cuda:
            print("no CUDA/ROCm device in this environment: the CPU path (nothing to smoke on a GPU)")
        # independent, bench, independent: the bench sits between two samples of the reference
        ref = [independent(py, device, dtype, n)]
        b = run_bench(py, device=device, sizes=sizes, dtypes=dtypes, budget_s=a.budget_s)
        ref.append(independent(py, device, dtype, n))
        show_bench(b)
        if out:
            (out / "bench.json").write_text(json.dumps(b.to_dict(), indent=2, default=str), encoding="utf-8")

    point = next((r for r in b.results if r.dtype == dtype and r.n == n), None)
    ind = statistics.median(x["gflops"] for x in ref)
    ratio = point.gflops / ind if point is not None else None
    print(f"independent torch.mm {dtype} {n}x{n} on {ref[0]['name']}: "
          + ", ".join(f"{x['gflops']:,.1f}" for x in ref) + f" GFLOP/s (median {ind:,.1f})")
    if ratio is None:
        print(f"the bench did not measure {dtype} at n={n}")
    else:
        print(f"bench {dtype} n={n}: {point.gflops:,.1f} GFLOP/s -> bench / independent = {ratio:.3f} "
              f"(within {a.limit:.0%}: {abs(ratio - 1) <= a.limit})")
    # On a GPU the bench must agree with the independent timing; the CPU path proves the script
    # (a CPU shared with other programs is too noisy for a 10 % verdict, see b.busy).
    agrees = ratio is not None and (abs(ratio - 1) <= a.limit or not cuda)
    ok = v.ok and not bad and bool(b.results) and agrees
    summary = {"device": device, "name": ref[0]["name"], "dtype": dtype, "n": n, "ratio": ratio,
               "bench_gflops": point.gflops if point else None, "independent_gflops": [x["gflops"] for x in ref],
               "verify_ok": v.ok, "accelerator_failed": bad, "busy": b.busy, "seconds": time.monotonic() - started}
    if out:
        (out / "smoke.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    label = "GPU SMOKE" if cuda else "CPU PATH"
    print(f"{label} {'OK' if ok else 'FAILED'} in {summary['seconds']:.0f} s"
          + ("" if ok else f": verify ok={v.ok}, failed {bad}, ratio {ratio}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
