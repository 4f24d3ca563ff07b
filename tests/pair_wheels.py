"""The working torch + torchvision pair this machine can reach, as a wheel folder for tests.

Only PyPI's torchvision wheels are reachable here (the configured local index /opt/pypi-more
holds torchvision 0.28.0, 0.29.0, 0.29.1), and PyPI's Linux torchvision is built against PyPI's
default torch (the CUDA build: its ``_C.so`` links libtorch_cuda), so it does not load with a
``+cpu`` torch. The pair that works on this (CPU-only) computer is PyPI's torch 2.14.1 (CUDA
13.0 build, with its nvidia-* runtime wheels) + torchvision 0.29.1.

:func:`pair_folder` fills a folder with exactly that, once, through ``pip download`` from the
indexes pip is configured with (nothing else; nothing is committed), plus PyPI's torchvision
0.28.0 (which must NOT be offered with torch 2.13.0+cpu). The folder is kept across runs in the
temporary directory, keyed by the versions; a ``complete.json`` marker says it is whole and how
long the download took. ``python -m tests.pair_wheels`` fills it ahead of a test run.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TORCH = "2.14.1"
TORCHVISION = "0.29.1"
OTHER_TORCHVISION = "0.28.0"  # PyPI's, for torch 2.13: a CUDA build that never pairs with +cpu
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}-{sys.platform}"
KEY = f"torch-{TORCH}-torchvision-{TORCHVISION}-{OTHER_TORCHVISION}-{TAG}"


def cache_root() -> Path:
    mine = f"-{os.getuid()}" if hasattr(os, "getuid") else ""  # one per user: another user's folder is not ours
    return Path(os.environ.get("TORCH_SETUP_TEST_CACHE") or Path(tempfile.gettempdir()) / f"torch-setup-test-cache{mine}")


def pair_folder(timeout_s: float = 3600) -> tuple[Path, dict]:
    """(folder, what the marker says: versions, files, bytes, seconds the download took)."""
    folder = cache_root() / KEY
    marker = folder / "complete.json"
    if marker.is_file():
        return folder, json.loads(marker.read_text(encoding="utf-8"))
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    started = time.monotonic()
    pip = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
           "--only-binary=:all:", "--dest", str(partial)]
    try:
        subprocess.run([*pip, f"torch=={TORCH}", f"torchvision=={TORCHVISION}"], check=True, timeout=timeout_s,
                       stdin=subprocess.DEVNULL, capture_output=True)
        subprocess.run([*pip, "--no-deps", f"torchvision=={OTHER_TORCHVISION}"], check=True, timeout=timeout_s,
                       stdin=subprocess.DEVNULL, capture_output=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        out = getattr(exc, "stderr", b"") or b""
        raise RuntimeError(f"pip download of the pair failed: {out.decode(errors='replace')[-2000:]}") from exc
    files = sorted(p.name for p in partial.glob("*.whl"))
    info = {"torch": TORCH, "torchvision": TORCHVISION, "files": files,
            "bytes": sum(p.stat().st_size for p in partial.glob("*.whl")),
            "download_s": round(time.monotonic() - started, 1)}
    (partial / "complete.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    if folder.exists():  # another run finished first
        shutil.rmtree(partial, ignore_errors=True)
    else:
        partial.rename(folder)
    return folder, json.loads((folder / "complete.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    where, what = pair_folder()
    print(where, f"{what['bytes'] / 1e9:.2f} GB in {len(what['files'])} wheels, downloaded in {what['download_s']} s")
