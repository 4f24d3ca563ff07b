"""A Jupyter kernel for an env, and taking it away again.

Registering: ``ipykernel`` is installed into the env from the sources the env was installed from
(the registry's; credentials are never stored, netrc / keyring supply them), then the env's own
Python runs ``python -m ipykernel install --user --name <name> --display-name "PyTorch 2.13.0
(CPU) — <env>"`` through the runner. The kernelspec folder it reports is recorded in the
registry. Removing deletes exactly that folder (after checking it is a kernelspec whose
``kernel.json`` runs this env's Python), never anything else.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.core import registry, runner
from app.core.distinfo import distributions, torch_build
from app.core.envs import backend_for, env_kind, env_python
from app.core.events import Event, LogEvent, StepEvent, ignore
from app.core.lifecycle.common import Failed, Refused, env_root
from app.core.lifecycle.remove import delete_tree
from app.core.locks import env_lock
from app.core.paths import new_log_path
from app.core.registry import KernelRecord
from app.core.text import msg

__all__ = ["display_name", "install_kernel", "kernel_name", "remove_kernel"]

_INSTALLED = re.compile(r"Installed kernelspec (\S+) in (.+?)\s*$")


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


def _kernel_runs(path: Path, env: Path) -> bool:
    """The kernelspec at ``path`` starts this env's Python (or the env is gone: then any is ours to drop)."""
    try:
        spec = json.loads((path / "kernel.json").read_text(encoding="utf-8"))
        argv0 = Path(str(spec["argv"][0]))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return False
    if not env.exists():
        return True
    return argv0 == env_python(env) or env in argv0.parents


def install_kernel(target: str | os.PathLike[str], *, on_event: Callable[[Event], None] | None = None,
                   cancel: runner.CancelToken | None = None) -> KernelRecord:
    """Install ipykernel (if missing) and register the env's kernel for this user. Raises Failed / Refused."""
    emit = on_event or ignore
    env = env_root(target)
    py = env_python(env)
    rec = registry.find(env)
    log = new_log_path("kernel")
    name, shown = kernel_name(env), display_name(env)
    with env_lock(env, "kernel"):
        if "ipykernel" not in distributions(env):
            installer = rec.installer if rec is not None else "uv"
            backend = backend_for(env_kind(env) or "venv", installer)
            idx = rec.sources.index_options() if rec is not None else registry.Sources().index_options()
            argv = backend.install_argv(env, ["ipykernel"], idx)
            emit(StepEvent("ipykernel", "running", " ".join(argv[:4])))
            res = runner.run(argv, env=backend.child_env(idx), log_path=log, cancel=cancel, timeout=900,
                             on_line=lambda s, ln: emit(LogEvent(ln, s)))
            if not res.ok:
                raise Failed(msg("envs.kernel_install_failed", "ipykernel could not be installed into {path} ({why})",
                                 path=str(env), why=res.describe()),
                             lines=runner.relevant_lines(res.tail, 10), log_path=log)
            emit(StepEvent("ipykernel", "passed"))
        res = runner.run([str(py), "-m", "ipykernel", "install", "--user", "--name", name, "--display-name", shown],
                         log_path=log, cancel=cancel, timeout=120)
        if not res.ok:
            raise Failed(msg("envs.kernel_register_failed", "The Jupyter kernel could not be registered ({why})",
                             why=res.describe()), lines=runner.relevant_lines(res.tail, 10), log_path=log)
        found = next((m for m in (_INSTALLED.search(ln) for ln in res.tail) if m), None)
        if found is None:
            raise Failed(msg("envs.kernel_where_unknown", "ipykernel did not say where it put the kernel"),
                         lines=res.tail[-5:], log_path=log)
        kr = KernelRecord(name, shown, found.group(2))
        emit(StepEvent("kernel", "passed", kr.path))
        registry.update(env, lambda r: replace(r or registry.EnvRecord(path=str(env), origin="checked",
                                                                         kind=env_kind(env) or "venv",
                                                                         created=registry.now()),
                                               kernel=kr, updated=registry.now()))
    return kr


def remove_kernel(target: str | os.PathLike[str]) -> str:
    """Delete the kernelspec this app registered for the env; returns its folder. Raises Refused."""
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(target))))
    rec = registry.find(path)
    kr = rec.kernel if rec is not None else None
    if kr is None:
        raise Refused(msg("envs.kernel_none", "No Jupyter kernel was registered for {path} by this assistant",
                          path=str(path)),
                      msg("envs.kernel_none_hint", "Kernels registered some other way: `jupyter kernelspec list` "
                          "and `jupyter kernelspec remove NAME`."))
    folder = Path(kr.path)
    if folder.exists():
        if folder.is_symlink() or folder.name != kr.name or not _kernel_runs(folder, path):
            raise Refused(msg("envs.kernel_not_ours", "{folder} is not the kernel this assistant registered; it is "
                              "not deleted", folder=str(folder)))
        problems = delete_tree(folder)
        if problems:
            raise Failed(msg("envs.kernel_remove_failed", "The kernel folder could not be fully removed: {what}",
                             what="; ".join(problems[:3])))
    registry.update(path, lambda r: replace(r, kernel=None, updated=registry.now()) if r else None)
    return str(folder)
