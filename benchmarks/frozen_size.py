"""Size of the PyInstaller onedir and its ``--self-test`` time against the same run from source.

    python benchmarks/frozen_size.py                 # measures dist/torch-setup (build it first:
                                                     #   bash installer/build_linux.sh)
    python benchmarks/frozen_size.py --build         # builds into a temp folder with this Python
                                                     # (PyInstaller installed), timing the build
    python benchmarks/frozen_size.py --runs 5

Prints the folder's size (goal: <= 170 MB with uv inside), the biggest parts, and the median
wall time of ``torch-setup --self-test`` frozen and from source (``python -m app``), measured
in the same run, as a ratio. Both runs are offscreen and use a throw-away TORCH_SETUP_HOME.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.proc.runner import clean_env, run  # noqa: E402

GOAL_MB = 170.0


def folder_bytes(folder: Path) -> int:
    total = 0
    for p in folder.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def biggest(folder: Path, n: int = 8) -> list[tuple[int, str]]:
    files = [(p.stat().st_size, p.relative_to(folder).as_posix())
             for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    return sorted(files, reverse=True)[:n]


def build(dist: Path, work: Path) -> float:
    started = time.perf_counter()
    res = run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(dist), "--workpath", str(work), str(ROOT / "build.spec")],
              cwd=ROOT, timeout=1800)
    res.raise_for_status("PyInstaller failed")
    return time.perf_counter() - started


def time_runs(argv: list[str], runs: int, cwd: Path) -> tuple[list[float], str]:
    times = []
    last = ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="frozen-size-home-") as home:
            env = clean_env({"QT_QPA_PLATFORM": "offscreen", "TORCH_SETUP_HOME": home})
            started = time.perf_counter()
            res = run(argv, env=env, cwd=cwd, timeout=300)
            times.append(time.perf_counter() - started)
            last = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.describe()
            if not res.ok:
                raise SystemExit(f"{' '.join(argv)} failed ({res.describe()}):\n{res.stdout}\n{res.stderr}")
    return times, last


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist" / "torch-setup",
                    help="the onedir folder (default dist/torch-setup)")
    ap.add_argument("--build", action="store_true", help="build into a temp folder first")
    ap.add_argument("--runs", type=int, default=3, help="self-test runs per side (median)")
    args = ap.parse_args(argv)

    tmp = None
    build_s = None
    dist = args.dist.resolve()
    if args.build:
        tmp = tempfile.TemporaryDirectory(prefix="frozen-size-")
        build_s = build(Path(tmp.name) / "dist", Path(tmp.name) / "work")
        dist = Path(tmp.name) / "dist" / "torch-setup"
    exe = dist / ("torch-setup.exe" if os.name == "nt" else "torch-setup")
    if not exe.is_file():
        print(f"{exe} does not exist: build it first (bash installer/build_linux.sh) or pass --build",
              file=sys.stderr)
        return 2
    try:
        size = folder_bytes(dist)
        mb = size / 1e6
        print(f"onedir: {dist}")
        if build_s is not None:
            print(f"build time: {build_s:.1f} s")
        print(f"size: {mb:.1f} MB ({size / 2**20:.1f} MiB) - goal <= {GOAL_MB:.0f} MB: "
              f"{'met' if mb <= GOAL_MB else 'NOT met'}")
        uv = dist / "_internal" / "bin" / ("uv.exe" if os.name == "nt" else "uv")
        if uv.is_file():
            print(f"  of which uv: {uv.stat().st_size / 1e6:.1f} MB; without uv: "
                  f"{(size - uv.stat().st_size) / 1e6:.1f} MB")
        print("  biggest files:")
        for nbytes, rel in biggest(dist):
            print(f"    {nbytes / 1e6:7.1f} MB  {rel}")

        # Warm both once (page cache), then time them alternately-ish: frozen runs, source runs.
        time_runs([str(exe), "--self-test"], 1, ROOT)
        time_runs([sys.executable, "-m", "app", "--self-test"], 1, ROOT)
        frozen, frozen_last = time_runs([str(exe), "--self-test"], args.runs, Path(tempfile.gettempdir()))
        source, source_last = time_runs([sys.executable, "-m", "app", "--self-test"], args.runs, ROOT)
        f_med, s_med = statistics.median(frozen), statistics.median(source)
        print(f"--self-test frozen:      median {f_med:.2f} s of {args.runs} "
              f"({', '.join(f'{t:.2f}' for t in frozen)})  [{frozen_last}]")
        print(f"--self-test from source: median {s_med:.2f} s of {args.runs} "
              f"({', '.join(f'{t:.2f}' for t in source)})  [{source_last}]")
        print(f"frozen / source: {f_med / s_med:.2f}x")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
