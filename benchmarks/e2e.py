#!/usr/bin/env python3
"""The whole unattended path against the raw path a person would type, in one run.

Each round runs both sides into a FRESH environment, in alternating order (so that drift on a
shared machine hits both alike):

* assistant: ``torch-setup install --env E --packages torch==2.13.0 --find-links DIR --yes``
  (one CLI process: start-up, plan, pre-flight, create the venv, install, verify);
* raw: ``uv venv E`` + ``uv pip install --python E/bin/python torch==2.13.0 --find-links DIR``
  + ``E/bin/python -c "import torch; <one training step>; <one matmul>"`` (the step a person
  runs to see that it works: a small model, ``torch.optim.SGD``, forward, backward, step).

Both use the same base interpreter and the same (warm, private to the run) uv cache, and neither sets
PYTHONDONTWRITEBYTECODE (a user's shell does not; the first import writes the .pyc files on
both sides). Printed, from the same rounds:

1. the end-to-end ratio assistant / raw (median of the paired per-round ratios; goal <= 1.2);
2. the verification against a bare ``import torch`` in the new env (goal <= 2): the
   assistant's verify phase (from its "Verifying" line to its exit, the first import after the
   install) against the raw side's ``import torch`` (interpreter start to import done, also the
   first import after its install); and the same warm, alternating ``run_verify`` with a bare
   ``python -c "import torch"`` on the assistant's env after each round;
3. where the assistant's time goes: start-up + plan + pre-flight, create + install, verify.

    .venv/bin/python benchmarks/e2e.py [--rounds 3] [--wheels /opt/wheels] [--json-out FILE]

Exit status 1 when a ratio is over its goal.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

E2E_LIMIT = 1.2
VERIFY_LIMIT = 2.0

# The raw side's check that torch works: import, one training step, one matmul. It prints when
# its import finished (wall clock), so that the import is timed from the interpreter's start.
RAW_STEP = r"""
import json, time
import torch
imported = time.time()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randn(64, 1)
loss = torch.nn.functional.mse_loss(model(x), y)
loss.backward()
opt.step()
c = torch.randn(256, 256) @ torch.randn(256, 256)
print(json.dumps({"imported_at": imported, "loss": float(loss), "matmul": float(c.sum())}))
"""


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def timed(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - t


def assistant(env_path: Path, py: str, wheels: str, req: str, env: dict[str, str]) -> dict[str, float]:
    """One unattended install; the times of its phases from the wall clock of its stderr lines."""
    argv = [sys.executable, "-m", "app.cli", "install", "--env", str(env_path), "--python", py,
            "--packages", req, "--find-links", wheels, "--yes"]
    marks: dict[str, float] = {}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace")
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    lines: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        now = time.perf_counter() - t0
        lines.append(line)
        for key, word in (("create", "==> Creating the environment"), ("install", "==> Installing"),
                          ("verify", "==> Verifying")):
            if line.startswith(word) and key not in marks:
                marks[key] = now
    rc = proc.wait()
    total = time.perf_counter() - t0
    reader.join()
    if rc != 0 or "verify" not in marks:
        raise SystemExit(f"torch-setup install failed (rc {rc}):\n{''.join(lines)[-3000:]}")
    if "Verification passed" not in "".join(out):  # the summary is on stdout
        raise SystemExit("the verification did not pass:\n" + "".join(out)[-3000:] + "".join(lines)[-3000:])
    return {"total": total, "startup_plan_preflight": marks.get("create", 0.0),
            "create_install": marks["verify"] - marks.get("create", 0.0), "verify": total - marks["verify"]}


def raw(env_path: Path, py: str, wheels: str, req: str, uv: str, env: dict[str, str]) -> dict[str, float]:
    t0 = time.perf_counter()
    timed([uv, "venv", str(env_path), "--python", py, "--quiet"], env)
    timed([uv, "pip", "install", "--python", str(python_of(env_path)), req, "--find-links", wheels, "--quiet"], env)
    installed = time.perf_counter()
    launched = time.time()
    res = subprocess.run([str(python_of(env_path)), "-c", RAW_STEP], env=env, capture_output=True, text=True,
                         check=True)
    total = time.perf_counter() - t0
    data = json.loads(res.stdout.strip().splitlines()[-1])
    return {"total": total, "create_install": installed - t0, "python": total - (installed - t0),
            "import": data["imported_at"] - launched}


def python_of(env_path: Path) -> Path:
    from app.core.env.backends import env_python

    return env_python(env_path)


def warm_pair(env_path: Path, env: dict[str, str]) -> tuple[float, float]:
    """(run_verify, bare `import torch`) on an env whose .pyc files exist, in this order."""
    from app.core.measure.verify import run_verify

    py = python_of(env_path)
    t = time.perf_counter()
    report = run_verify(py)
    verify = time.perf_counter() - t
    if not report.ok:
        raise SystemExit("the warm verification failed")
    bare = timed([str(py), "-c", "import torch"], env)
    return verify, bare


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--wheels", default=os.environ.get("TORCH_SETUP_TEST_WHEELS", "/opt/wheels"))
    ap.add_argument("--requirement", default="torch==2.13.0")
    ap.add_argument("--json-out", help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)

    from app.core.env.backends import find_python, uv_bin

    uv = uv_bin()
    info, _ = find_python(f"{sys.version_info[0]}.{sys.version_info[1]}")
    if not uv or info is None:
        print("needs uv and a Python", file=sys.stderr)
        return 2
    py = str(info.path)
    work = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    env = dict(os.environ)
    for var in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(var, None)
    env["TORCH_SETUP_HOME"] = str(work / "home")
    env["UV_CACHE_DIR"] = str(work / "uv-cache")  # the same for both sides, warmed below, private to this run
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # run_verify's probe, as a user runs it
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    warm: list[tuple[float, float]] = []
    load_seen = [load()]
    print(f"load average {load_seen[0]} on {os.cpu_count()} CPUs; {args.rounds} rounds; {args.requirement} "
          f"from {args.wheels}", flush=True)
    try:
        # warm the uv cache (both sides use it) and the page cache
        raw(work / "warm-up", py, args.wheels, args.requirement, uv, env)
        shutil.rmtree(work / "warm-up", ignore_errors=True)
        for r in range(args.rounds):
            a_env, r_env = work / f"a{r}", work / f"r{r}"
            sides = [("assistant", lambda a_env=a_env: ours.append(assistant(a_env, py, args.wheels, args.requirement,
                                                                             env))),
                     ("raw", lambda r_env=r_env: theirs.append(raw(r_env, py, args.wheels, args.requirement, uv,
                                                                   env)))]
            if r % 2:
                sides.reverse()
            for _name, fn in sides:
                fn()
            pair = warm_pair(work / f"a{r}", env)
            warm.append(pair)
            load_seen.append(load())
            a, b = ours[-1], theirs[-1]
            print(f"round {r + 1} ({' then '.join(n for n, _ in sides)}): assistant {a['total']:.2f} s "
                  f"(start-up+plan+pre-flight {a['startup_plan_preflight']:.2f}, create+install "
                  f"{a['create_install']:.2f}, verify {a['verify']:.2f}) | raw {b['total']:.2f} s (venv+install "
                  f"{b['create_install']:.2f}, import+step+matmul {b['python']:.2f}, of which import {b['import']:.2f})"
                  f" | warm: run_verify {pair[0]:.2f} s, bare import {pair[1]:.2f} s | load {load_seen[-1]}",
                  flush=True)
            for d in work.glob("[ar]*"):
                shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    e2e_pairs = [a["total"] / b["total"] for a, b in zip(ours, theirs, strict=True)]
    cold_pairs = [a["verify"] / b["import"] for a, b in zip(ours, theirs, strict=True)]
    warm_pairs = [v / i for v, i in warm]
    res = {
        "rounds": args.rounds, "load_average": load_seen,
        "assistant_total_s": med([a["total"] for a in ours]), "raw_total_s": med([b["total"] for b in theirs]),
        "e2e_ratio": med(e2e_pairs),
        "assistant_startup_plan_preflight_s": med([a["startup_plan_preflight"] for a in ours]),
        "assistant_create_install_s": med([a["create_install"] for a in ours]),
        "raw_create_install_s": med([b["create_install"] for b in theirs]),
        "assistant_verify_s": med([a["verify"] for a in ours]), "raw_import_s": med([b["import"] for b in theirs]),
        "raw_python_s": med([b["python"] for b in theirs]),
        "verify_import_ratio": med(cold_pairs),
        "warm_verify_s": med([v for v, _ in warm]), "warm_import_s": med([i for _, i in warm]),
        "warm_verify_import_ratio": med(warm_pairs),
    }
    res["ok"] = res["e2e_ratio"] <= E2E_LIMIT and res["verify_import_ratio"] <= VERIFY_LIMIT
    print()
    print(f"unattended path   assistant {res['assistant_total_s']:6.2f} s   raw {res['raw_total_s']:6.2f} s   "
          f"ratio {res['e2e_ratio']:.2f}x (goal <= {E2E_LIMIT}): "
          f"{'OK' if res['e2e_ratio'] <= E2E_LIMIT else 'OVER'}")
    print(f"verification      verify {res['assistant_verify_s']:6.2f} s   "
          f"bare import torch {res['raw_import_s']:6.2f} s"
          f"   ratio {res['verify_import_ratio']:.2f}x (goal <= {VERIFY_LIMIT}, first import after the install): "
          f"{'OK' if res['verify_import_ratio'] <= VERIFY_LIMIT else 'OVER'}")
    print(f"  warm (.pyc written): run_verify {res['warm_verify_s']:.2f} s, bare import {res['warm_import_s']:.2f} s,"
          f" ratio {res['warm_verify_import_ratio']:.2f}x")
    print(f"  where the assistant's time goes: start-up+plan+pre-flight {res['assistant_startup_plan_preflight_s']:.2f}"
          f" s, create+install {res['assistant_create_install_s']:.2f} s (raw {res['raw_create_install_s']:.2f} s),"
          f" verify {res['assistant_verify_s']:.2f} s (raw import+step+matmul {res['raw_python_s']:.2f} s)")
    print(f"median of {args.rounds} alternating rounds (paired ratios); load average seen: {', '.join(load_seen)}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({**res, "assistant": ours, "raw": theirs, "warm": warm},
                                                  indent=2), encoding="utf-8")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
