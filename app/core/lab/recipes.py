"""Container recipes that install a lock: an Apptainer definition file and a Dockerfile.

Both start from the official ``python:X.Y-slim`` image of the lock's Python (a CUDA or ROCm
wheel carries its own runtime; the host's driver comes in at run time: ``apptainer run --nv`` /
``--rocm``, ``docker run --gpus all``), install uv (0.6.15 or newer reads ``pylock.toml``), make a
virtual environment at ``/opt/torch-env`` and install the lock into it with
``uv pip install -r pylock.toml``: the same files, checked against the same sha256. The
environment's programs come first on ``PATH``, and the variables the verified build needs are
set (the lock's ``env-vars``).

A file the lock names only by a local path (a wheel from a folder) is copied into the image at
that same path, from ``wheels/`` beside the recipe (:func:`write_recipe` links or copies it
there), so the lock needs no change inside the image.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.core.base.schema import Record, spec
from app.core.pylock.lockfile import Lock
from app.core.sources.download import link_or_copy

__all__ = ["FORMATS", "Recipe", "apptainer", "dockerfile", "local_files", "write_recipe"]

FORMATS = ("apptainer", "dockerfile")
ENV = "/opt/torch-env"
LOCK_IN_IMAGE = "/opt/torch-setup/pylock.toml"
UV_FLOOR = "0.6.15"  # the first uv that installs a pylock.toml (its 0.6.15 release notes)


@dataclass(frozen=True)
class Recipe(Record):
    path: Path = field(metadata=spec(key="recipe"))
    lock: Path
    wheels: tuple[Path, ...]  # local files copied beside it (into the image at their locked path)


def local_files(lock: Lock) -> list[tuple[str, str]]:
    """``(file name, path in the lock)`` of every file the lock names only by a local path."""
    return [(f.name, f.path) for p in lock.hashed for f in p.files if f.path and not f.url]


def _env_lines(variables: Mapping[str, str]) -> list[tuple[str, str]]:
    return [("PATH", f"{ENV}/bin:$PATH"), ("VIRTUAL_ENV", ENV), *sorted(variables.items())]


def _posix(path: str) -> str:
    return str(PurePosixPath(path.replace("\\", "/")))


def _header(lock: Lock, kind: str, how: str) -> list[str]:
    machine = lock.machine.describe() if lock.machine else "?"
    return [f"# Written by torch-setup export --format {kind}: installs the verified lock, file by file.",
            f"# torch {lock.torch or '?'} ({lock.variant or '?'}), verified on {machine}", f"# {how}"]


def _steps(lock: Lock, lock_name: str) -> tuple[list[tuple[str, str]], list[str]]:
    """What goes into the image (from, to) and the commands that install the lock there."""
    files = [(lock_name, LOCK_IN_IMAGE), *((f"wheels/{name}", _posix(path)) for name, path in local_files(lock))]
    return files, [f"python -m pip install --no-cache-dir 'uv>={UV_FLOOR}'",
                   f"uv venv {ENV} --python /usr/local/bin/python{lock.python_minor}",
                   f"uv pip install --python {ENV}/bin/python -r {LOCK_IN_IMAGE}"]


def apptainer(lock: Lock, variables: Mapping[str, str], lock_name: str = "pylock.toml") -> str:
    files, steps = _steps(lock, lock_name)
    return "\n".join([
        *_header(lock, "apptainer", "Build: apptainer build torch.sif THIS_FILE   Run on a GPU: apptainer run --nv "
                                    "torch.sif"),
        "Bootstrap: docker", f"From: python:{lock.python_minor}-slim", "", "%files",
        *(f"    {src} {dest}" for src, dest in files), "", "%post", *(f"    {c}" for c in steps), "", "%environment",
        *(f"    export {k}={json.dumps(v)}" for k, v in _env_lines(variables)), "", "%runscript",
        '    exec python "$@"', ""])


def dockerfile(lock: Lock, variables: Mapping[str, str], lock_name: str = "pylock.toml") -> str:
    files, steps = _steps(lock, lock_name)
    return "\n".join([
        *_header(lock, "dockerfile", "Build: docker build -t torch-env .   Run on a GPU: docker run --gpus all "
                                     "torch-env"),
        f"FROM python:{lock.python_minor}-slim", *(f"COPY {src} {dest}" for src, dest in files),
        "RUN " + " \\\n    && ".join(steps), *(f"ENV {k}={json.dumps(v)}" for k, v in _env_lines(variables)),
        'ENTRYPOINT ["python"]', ""])


def write_recipe(kind: str, lock: Lock, lock_file: Path, out: Path, variables: Mapping[str, str]) -> Recipe:
    """Write the recipe ``out`` (in the folder of ``lock_file``, the build's context) and put the lock's
    local files into ``wheels/`` there."""
    folder = out.parent
    wheels: list[Path] = []
    for name, path in local_files(lock):
        dest = folder / "wheels" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        link_or_copy(Path(path), dest)
        wheels.append(dest)
    text = apptainer(lock, variables, lock_file.name) if kind == "apptainer" else \
        dockerfile(lock, variables, lock_file.name)
    out.write_text(text, encoding="utf-8")
    return Recipe(out, lock_file, tuple(wheels))
