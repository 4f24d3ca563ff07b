"""The torch CPU wheel and its dependencies in one folder, gathered once and cached.

:func:`gather_wheelhouse` runs ``pip download --only-binary=:all:`` for the exact torch build
found in the local wheel folder, against the LOCAL sources only (the folder itself, plus the
``file://`` indexes of pip's configuration or ``TORCH_SETUP_TEST_INDEXES``; pip runs
``--isolated`` so nothing else it is configured with, and no network index, is used). The result
is kept in ``<cache>/wheelhouse-<sha256 of the torch wheel, 16 hex>/`` (cache:
``TORCH_SETUP_NETLAB_CACHE`` or ``<tmp>/torch-setup-netlab-<uid>``), so later sessions reuse it.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.netlab.files import file_sha256

MANIFEST = "netlab-wheelhouse.json"


@dataclass(frozen=True)
class Wheelhouse:
    folder: Path
    torch: Path  # the torch wheel inside ``folder``
    files: tuple[Path, ...]  # every wheel in ``folder`` (torch included)
    requirement: str  # "torch==2.13.0+cpu"
    gather_s: float  # seconds pip download took when the folder was made
    cached: bool  # True when this call found the folder already made


def cache_root() -> Path:
    """The cache folder: one per user (a folder another user made in the shared temporary folder
    cannot be written: a newcomer's run as themselves after a run as root failed 40 tests)."""
    env = os.environ.get("TORCH_SETUP_NETLAB_CACHE")
    return Path(env) if env else Path(tempfile.gettempdir()) / f"torch-setup-netlab{_user_suffix()}"


def _user_suffix() -> str:
    return f"-{os.getuid()}" if hasattr(os, "getuid") else ""  # Windows' temporary folder is the user's own


def local_indexes() -> list[str]:
    """The ``file://`` indexes pip is configured with (or ``TORCH_SETUP_TEST_INDEXES``, split on spaces)."""
    env = os.environ.get("TORCH_SETUP_TEST_INDEXES")
    if env is not None:
        return env.split()
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, encoding="utf-8",
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith(("index-url", "extra-index-url")):
            for url in value.strip().strip("'\"").split():
                if url.startswith("file://") and url not in found:
                    found.append(url)
    return found


def _torch_wheel(find_links: Sequence[Path]) -> Path:
    for folder in find_links:
        hits = sorted(Path(folder).glob("torch-*+cpu-*.whl")) or sorted(Path(folder).glob("torch-*.whl"))
        if hits:
            return hits[-1]
    raise FileNotFoundError(f"no torch wheel in {', '.join(map(str, find_links)) or 'no folder'}")


def _load(folder: Path, torch_name: str) -> Wheelhouse | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = tuple(folder / name for name in manifest["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(f.is_file() for f in files) or not (folder / torch_name).is_file():
        return None
    return Wheelhouse(folder, folder / torch_name, files, str(manifest["requirement"]),
                      float(manifest["gather_s"]), cached=True)


def _copy_closure(requirement: str, find_links: Sequence[Path], stage: Path) -> subprocess.CompletedProcess:
    """What ``pip download --no-index`` does, for a Python without pip: uv resolves ``requirement``
    from the folders alone, and the wheel of each pin that this interpreter can install is copied."""
    from packaging.tags import sys_tags
    from uv import find_uv_bin

    cmd = [find_uv_bin(), "pip", "compile", "-", "--quiet", "--no-index", "--no-header", "--no-annotate",
           "--python", sys.executable, *(a for f in find_links for a in ("--find-links", str(f)))]
    done = subprocess.run(cmd, input=requirement + "\n", capture_output=True, text=True, encoding="utf-8", timeout=300)
    if done.returncode != 0:
        return done
    supported = list(sys_tags())
    for line in done.stdout.splitlines():
        name, sep, version = line.strip().partition("==")
        if not sep:
            continue
        fits = [w for f in find_links for w in Path(f).glob("*.whl")
                if parse_wheel_filename(w.name)[0] == canonicalize_name(name)
                and str(parse_wheel_filename(w.name)[1]) == version.split(";")[0].strip()]
        fits.sort(key=lambda w: min((supported.index(t) for t in parse_wheel_filename(w.name)[3] if t in supported),
                                    default=len(supported)))
        if not fits:
            return subprocess.CompletedProcess(cmd, 1, "", f"no wheel of {line.strip()} in the folders")
        shutil.copyfile(fits[0], stage / fits[0].name)
    return done


def gather_wheelhouse(find_links: Sequence[Path], *, root: Path | None = None,
                      indexes: Sequence[str] | None = None) -> Wheelhouse:
    """The cached folder for the torch wheel in ``find_links``; made with pip download when missing."""
    torch = _torch_wheel(find_links)
    name, version, _, _ = parse_wheel_filename(torch.name)
    requirement = f"{name}=={version}"
    root = root or cache_root()
    final = root / f"wheelhouse-{file_sha256(torch)[:16]}"
    found = _load(final, torch.name)
    if found is not None:
        return found
    if final.exists():  # left incomplete (a temp cleaner took files): make it again
        shutil.rmtree(final, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix="stage-", dir=root))
    try:
        idx = list(local_indexes() if indexes is None else indexes)
        cmd = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "download", "--quiet",
               "--only-binary=:all:", "--dest", str(stage)]
        for folder in find_links:
            cmd += ["--find-links", str(folder)]
        if idx:
            cmd += ["--index-url", idx[0]]
            for url in idx[1:]:
                cmd += ["--extra-index-url", url]
        else:
            cmd.append("--no-index")
        cmd.append(requirement)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        began = time.monotonic()
        if importlib.util.find_spec("pip") is None and not idx:  # this Python has no pip (the Windows lane's)
            done = _copy_closure(requirement, find_links, stage)
        else:
            done = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=900, env=env)
        took = time.monotonic() - began
        if done.returncode != 0:
            raise RuntimeError(f"pip download {requirement} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        files = sorted(p.name for p in stage.glob("*.whl"))
        (stage / MANIFEST).write_text(json.dumps({"requirement": requirement, "files": files, "gather_s": took,
                                                  "sources": [str(f) for f in find_links] + idx}, indent=1),
                                      encoding="utf-8")
        try:
            os.rename(stage, final)
        except OSError:  # another process made it first: use theirs
            pass
        made = _load(final, torch.name)
        if made is None:
            raise RuntimeError(f"wheelhouse {final} is incomplete")
        return Wheelhouse(made.folder, made.torch, made.files, requirement, took, cached=False)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
