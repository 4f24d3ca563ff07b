"""What do verified routing and our own downloads cost? "Install" to "installed", both ways.

One netlab index on 127.0.0.1 serves the torch 2.13.0 CPU wheel and its dependencies (the
local wheel folder). Each round times, in alternating order:

* **ours**: plan → pre-flight (the PyTorch server, here a refusing port, fails; the local
  mirror is verified for the exact file: page, sha256, a timed range request) → install
  (a new uv venv, ``uv pip compile`` of the whole set, every wheel fetched by our downloader
  with hash checks into the per-run wheelhouse, ``uv pip install --no-index --require-hashes``);
* **raw**: ``uv venv`` + ``uv pip install --index-url <mirror> torch==2.13.0+cpu`` from the
  same server.

Both start cold (a fresh uv cache and a fresh download folder per sample). Prints every
sample, the medians and the overhead (goal: under 10 %).

    .venv/bin/python benchmarks/sources.py [--rounds 3] [--find-links DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.netlab import IndexServer, gather_wheelhouse  # noqa: E402
from tests.netlab.clients import clean_env  # noqa: E402
from tests.netlab.unreachable import Unreachable  # noqa: E402

from app.core.base.events import Event, PhaseEvent  # noqa: E402
from app.core.detection.system import SystemReport  # noqa: E402
from app.core.env.backends import uv_bin  # noqa: E402
from app.core.install import InstallRequest, install, plan, preflight  # noqa: E402
from app.core.recommend import Choices, recommend  # noqa: E402
from app.core.sources.settings import SourceSettings  # noqa: E402

CPU_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64",
           "python": {"version": f"{sys.version_info[0]}.{sys.version_info[1]}.0"}, "gpus": []}


ADDED: list[float] = []  # per "ours" sample: seconds of the steps raw uv does not have


def ours(work: Path, mirror: str, default_index: str) -> float:
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, Choices(torch="2.13.0"))
    request = InstallRequest(work / "env-ours", recommendation=rec, python=sys.executable,
                             sources=SourceSettings(mirrors=(mirror,), default_index=default_index))
    phases: dict[str, float] = {}

    def on_event(e: Event) -> None:
        if isinstance(e, PhaseEvent):
            phases[f"{e.name}:{e.state}"] = time.perf_counter()

    began = time.perf_counter()
    p = plan(request)
    checks = preflight(p)  # the verified routing
    checked = time.perf_counter()
    result = install(p, checks=checks, on_event=on_event)
    took = time.perf_counter() - began
    assert result.torch_version == "2.13.0+cpu", result
    assert result.downloads and all(s.source_id == "mirror-1" for s in result.downloads), result.downloads
    download = phases["download:end"] - phases["download:start"]  # uv pip compile + our downloads
    ADDED.append(checked - began + download)
    print(f"         plan + pre-flight (routing) {checked - began:.2f} s, download phase (resolve + fetch "
          f"{sum(s.size for s in result.downloads) / 1e6:.0f} MB) {download:.2f} s", flush=True)
    return took


def raw(work: Path, index: str) -> float:
    env = work / "env-raw"
    began = time.perf_counter()
    subprocess.run([uv_bin() or "uv", "venv", str(env), "--python", sys.executable, "--quiet"], check=True,
                   env=clean_env(UV_CACHE_DIR=os.environ["UV_CACHE_DIR"]))
    subprocess.run([uv_bin() or "uv", "pip", "install", "--python", str(env / "bin" / "python"), "--index-url",
                    index, "torch==2.13.0+cpu", "--quiet"], check=True,
                   env=clean_env(UV_CACHE_DIR=os.environ["UV_CACHE_DIR"]))
    return time.perf_counter() - began


def sample(kind: str, server: IndexServer) -> float:
    work = Path(tempfile.mkdtemp(prefix=f"sources-bench-{kind}-"))
    os.environ["UV_CACHE_DIR"] = str(work / "uv-cache")  # cold: nothing cached from an earlier sample
    os.environ["TORCH_SETUP_HOME"] = str(work / "home")  # a fresh download folder and logs
    try:
        if kind == "ours":
            return ours(work, server.whl_url("cpu").replace("/cpu/", "/{variant}/"), server.simple_url())
        return raw(work, server.whl_url("cpu"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--find-links", default="/opt/wheels", help="the folder holding the torch CPU wheel")
    ap.add_argument("--seed-wheels", default="/opt/pypi/files",
                    help="a folder holding pip/setuptools/wheel wheels: the server holds them, as every package "
                         "index does (the new env is seeded with pip from its package index)")
    args = ap.parse_args()
    house = gather_wheelhouse([Path(args.find_links)])
    seeds = sorted(p for p in Path(args.seed_wheels).glob("*.whl")
                   if p.name.split("-")[0].lower() in ("pip", "wheel")) if Path(args.seed_wheels).is_dir() else []
    times: dict[str, list[float]] = {"ours": [], "raw": []}
    with Unreachable() as gone:
        os.environ["TORCH_SETUP_TORCH_INDEX"] = gone.refused_url.replace("/simple/", "/whl/")
        server = IndexServer([*house.files, *seeds])
        server.start()
        try:
            print(f"server {server.origin}: {len(house.files)} wheels (+ {len(seeds)} for seeding pip), "
                  f"{sum(f.stat().st_size for f in house.files) / 1e6:.0f} MB")
            for r in range(args.rounds):
                order = ("ours", "raw") if r % 2 == 0 else ("raw", "ours")
                for kind in order:
                    t = sample(kind, server)
                    times[kind].append(t)
                    print(f"round {r + 1}  {kind:4}  {t:6.2f} s", flush=True)
        finally:
            server.stop()
    med = {k: statistics.median(v) for k, v in times.items()}
    over = (med["ours"] / med["raw"] - 1) * 100
    paired = statistics.median(o / r for o, r in zip(times["ours"], times["raw"], strict=True))
    print(f"median: ours {med['ours']:.2f} s (verified routing + own downloads + --no-index install), "
          f"raw uv {med['raw']:.2f} s; overhead {over:+.1f} % (paired median ratio {paired:.3f}; goal: under 10 %)")
    added = statistics.median(ADDED)
    print(f"the steps raw uv does not have (pre-flight routing, resolve, own downloads): median {added:.2f} s "
          f"= {added / med['raw'] * 100:.1f} % of raw uv's median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
