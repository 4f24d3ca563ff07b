"""CLI-level smoke for a machine with a GPU: `torch-setup verify --json` and `bench --json`
in the given env, printing the device names and the numbers, and failing if the accelerator
checks did not pass. On a machine without a GPU it reports that and exits 0 (nothing to smoke).

    .venv/bin/python benchmarks/gpu_smoke.py --env PATH [--budget-s 60] [--out DIR]

`--out DIR` keeps verify.json / bench.json / doctor.json for the issue note.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.runner import run

ACCEL = ("accelerator", "arch_list", "device_round_trip", "device_matmul", "device_conv2d", "device_training",
         "dnn_library", "device_autocast", "device_memory")


def cli(*args: str, timeout: float = 900) -> tuple[int, dict]:
    res = run([sys.executable, "-m", "app.cli", *args], timeout=timeout, cwd=Path(__file__).resolve().parents[1])
    try:
        return res.returncode, json.loads(res.stdout)
    except ValueError:
        print(res.stdout[-3000:], res.stderr[-3000:], sep="\n")
        raise SystemExit(f"`torch-setup {' '.join(args)}` printed no JSON ({res.describe()})") from None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", required=True)
    ap.add_argument("--budget-s", default="60")
    ap.add_argument("--out")
    a = ap.parse_args()
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)

    rc, v = cli("verify", "--env", a.env, "--json")
    if out:
        (out / "verify.json").write_text(json.dumps(v, indent=2), encoding="utf-8")
    print(f"verify rc={rc} torch={v.get('torch_version')} accelerator={v.get('accelerator')}")
    for d in v.get("devices", []):
        print(f"  device {d['index']}: {d['name']} CC={d.get('compute_capability') or d.get('gfx_target')} "
              f"mem={(d.get('total_memory') or 0) / 2**30:.0f} GiB free={(d.get('free_memory') or 0) / 2**30:.0f} GiB "
              f"arch_supported={d.get('arch_supported')}")
    for c in v.get("checks", []):
        print(f"  {c['status']:>7} {c['name']}: {c['detail'][:140]}")
    if not v.get("accelerator"):
        print("no accelerator in this env: nothing to smoke-test on a GPU")
        return 0 if rc == 0 else 1

    rc_b, b = cli("bench", "--env", a.env, "--json", "--budget-s", a.budget_s)
    if out:
        (out / "bench.json").write_text(json.dumps(b, indent=2), encoding="utf-8")
    print(f"bench rc={rc_b} device={b.get('device')} name={b.get('device_name')} CC={b.get('compute_capability')}")
    for r in sorted(b.get("results", []), key=lambda r: (r["dtype"], r["n"])):
        frac = f"{r['fraction_of_peak'] * 100:.0f} %" if r.get("fraction_of_peak") else "?"
        print(f"  {r['dtype']:>5} n={r['n']:>5} {r['gflops']:>12.1f} GFLOP/s  {frac} of peak")
    for s in b.get("speedup", []):
        print(f"  speedup {s['dtype']} n={s['n']}: {s['speedup']:.1f}x over CPU")
    for c in b.get("copy", []):
        print(f"  copy {c['direction']} {c['memory']}: {c['gb_per_s']:.1f} GB/s")
    for s in b.get("skipped", []):
        print(f"  skipped {s['dtype']} n={s['n']}: {s['reason']}")
    _, d = cli("doctor", "--env", a.env, "--json")
    if out:
        (out / "doctor.json").write_text(json.dumps(d, indent=2), encoding="utf-8")
    print(f"doctor findings: {[f['code'] for f in d.get('findings', [])]}")

    bad = [c for c in v.get("checks", []) if c["name"] in ACCEL and c["status"] == "failed"]
    ok = rc == 0 and rc_b == 0 and not bad and b.get("results")
    print("GPU SMOKE OK" if ok else f"GPU SMOKE FAILED: {[c['name'] for c in bad]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
