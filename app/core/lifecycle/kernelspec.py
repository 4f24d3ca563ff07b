"""A Jupyter kernel for an environment this assistant installed.

``register_kernel(env, ...)`` installs ``ipykernel`` into the env from the same sources the
install used (the approved plan's indexes and wheel folders; the torch index is left out, it
holds no ipykernel) through the runner, then the env's own Python runs ``python -m ipykernel
install --user --name <name> --display-name "PyTorch 2.13.0 (CPU) — <env>"``. The commands are
known before anything runs (:func:`kernel_commands`), so the Done page shows them next to its
button, and the result records what ran.

This is the one home of kernel registration: the Done page's button and ``torch-setup envs
kernel`` (:mod:`app.core.lifecycle.kernel`, which adds the env lock and the registry's sources)
both call it. The names: ``torch-<env name>-<6 hex of its path>`` and ``PyTorch <version>
(<build>) — <env name>``; a registration is recorded in the env's registry record.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.base.errors import UserError
from app.core.base.events import Event, LogEvent, StepEvent, ignore
from app.core.base.paths import new_log_path
from app.core.base.text import Text, msg
from app.core.env.backends import (
    backend_for,
    env_kind,
    env_python,
    installed_distributions,
    pip_version_in,
)
from app.core.env.distinfo import torch_build
from app.core.install.request import CommandRun, masked
from app.core.proc import runner
from app.core.sources.settings import SourceSettings

__all__ = ["KernelFailed", "KernelResult", "display_name", "kernel_commands", "kernel_name", "register_kernel",
           "system_display_name"]

_INSTALLED = re.compile(r"Installed kernelspec (\S+) in (.+?)\s*$")


class KernelFailed(UserError):
    """A step of the registration failed; ``text`` says which, in words presenters render."""

    def __init__(self, text: Text, lines: list[str] | None = None, log_path: Path | None = None) -> None:
        super().__init__(text, lines=list(lines or ()), log_path=log_path)


@dataclass(frozen=True)
class KernelResult:
    name: str
    display_name: str
    path: str  # the kernelspec folder ipykernel wrote
    commands_run: tuple[CommandRun, ...]


def kernel_name(env: Path) -> str:
    """``torch-<env name>-<6 hex of its path>``: unique per env, valid as a kernelspec name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", env.name).strip("-").lower() or "env"
    digest = hashlib.sha256(os.path.normcase(str(env)).encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"torch-{slug}-{digest}"


def display_name(env: Path) -> str:
    """``PyTorch 2.13.0 (CPU) — torch-env``, ``PyTorch 2.14.1 (CUDA 13.0) — sd``."""
    info = torch_build(env)
    if info is None:
        return f"Python — {env.name}"
    build = f"CUDA {info.cuda}" if info.cuda else f"ROCm {info.hip}" if info.hip else str(info.backend).upper()
    return f"PyTorch {info.version.split('+', 1)[0]} ({build}) — {env.name}"


def system_display_name(env: Path) -> str:
    """The name every user of a shared server sees: ``PyTorch 2.13.0 (CUDA 12.6) — lab-env @ NVIDIA A100``,
    with the device(s) the environment was last verified on (``@ CPU`` for a CPU-only verification)."""
    from app.core.env import registry  # start-up: only a kernel for all users needs it

    try:
        rec = registry.find(env)
    except OSError:
        rec = None
    v = rec.verification if rec is not None else None
    if v is None or not v.ok:
        return display_name(env)
    return f"{display_name(env)} @ {', '.join(v.devices) or 'CPU'}"


def kernel_commands(env: str | os.PathLike[str], *, installer: str = "uv", index: SourceSettings | None = None,
                    system: bool = False, prefix: str | None = None) -> list[tuple[str, list[str]]]:
    """(step, argv) that register ``env`` as a kernel: ipykernel (when missing), then the kernelspec.

    ``system``: for every user of the machine (Jupyter's system folder; ``prefix``: ``PREFIX/share/jupyter``
    instead, as a JupyterHub with its own prefix has), named with the device it was verified on."""
    path = Path(os.path.abspath(os.fspath(env)))
    steps: list[tuple[str, list[str]]] = []
    if "ipykernel" not in installed_distributions(path):
        backend = backend_for(env_kind(path) or "venv", installer)
        idx = replace(index or SourceSettings(), torch_index=None, require_hashes=False)
        steps.append(("ipykernel", backend.install_argv(path, ["ipykernel"], idx, pip_version=pip_version_in(path))))
    where = ["--prefix", prefix] if prefix else [] if system else ["--user"]
    shown = system_display_name(path) if system or prefix else display_name(path)
    steps.append(("register", [str(env_python(path)), "-m", "ipykernel", "install", *where, "--name",
                               kernel_name(path), "--display-name", shown]))
    return steps


def register_kernel(env: str | os.PathLike[str], *, installer: str = "uv", index: SourceSettings | None = None,
                    on_event: Callable[[Event], None] | None = None,
                    cancel: runner.CancelToken | None = None, system: bool = False,
                    prefix: str | None = None) -> KernelResult:
    """Install ipykernel (from the same sources) and register the env's kernel for this user (or for
    every user: ``system`` / ``prefix``, see :func:`kernel_commands`).
    Raises UserError with the installer's lines and the log when a step fails."""
    emit = on_event or ignore
    path = Path(os.path.abspath(os.fspath(env)))
    log = new_log_path("kernel")
    idx = replace(index or SourceSettings(), torch_index=None, require_hashes=False)
    child = backend_for(env_kind(path) or "venv", installer).child_env(idx)
    ran: list[CommandRun] = []
    where = ""
    for step, argv in kernel_commands(path, installer=installer, index=index, system=system, prefix=prefix):
        emit(StepEvent(step, "running", " ".join(masked(argv[:4]))))
        started = time.monotonic()
        res = runner.run(argv, env=child, log_path=log, cancel=cancel, timeout=900,
                         on_line=lambda s, ln: emit(LogEvent(ln, s)))
        ran.append(CommandRun(step, masked(argv), res.returncode, round(time.monotonic() - started, 3)))
        if not res.ok:
            what = (msg("kernel.ipykernel_failed", "ipykernel could not be installed into {path} ({why})",
                        path=str(path), why=res.describe()) if step == "ipykernel" else
                    msg("kernel.register_failed", "The Jupyter kernel could not be registered ({why})",
                        why=res.describe()))
            raise KernelFailed(what, lines=runner.relevant_lines(res.tail, 10), log_path=log)
        found = next((m for m in (_INSTALLED.search(ln) for ln in res.tail) if m), None)
        if found is not None:
            where = found.group(2)
        emit(StepEvent(step, "passed"))
    result = KernelResult(kernel_name(path), ran_display_name(ran) or display_name(path), where, tuple(ran))
    if where:
        _record(path, result)
    return result


def ran_display_name(ran: list[CommandRun]) -> str:
    """The display name the registration ran with (the argument after ``--display-name``)."""
    argv = next((c.argv for c in ran if c.step == "register"), ())
    return argv[argv.index("--display-name") + 1] if "--display-name" in argv[:-1] else ""


def _record(env: Path, result: KernelResult) -> None:
    """The kernel goes into the env's registry record (``torch-setup envs kernel --remove`` takes it
    away again); the registry's own problems never fail a registration that worked."""
    from app.core.env import registry  # start-up: only a registration needs it

    kr = registry.KernelRecord(result.name, result.display_name, result.path)
    try:
        registry.update(env, lambda r: replace(r or registry.EnvRecord(path=str(env), origin="checked",
                                                                        kind=env_kind(env) or "venv",
                                                                        created=registry.now()),
                                               kernel=kr, updated=registry.now()))
    except (OSError, UserError):
        pass
