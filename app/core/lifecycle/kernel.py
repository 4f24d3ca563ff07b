"""A Jupyter kernel for an env, and taking it away again.

Registering: ``ipykernel`` is installed into the env from the sources the env was installed from
(the registry's; credentials are never stored, netrc / keyring supply them), then the env's own
Python runs ``python -m ipykernel install --user --name <name> --display-name "PyTorch 2.13.0
(CPU) — <env>"`` through the runner. The kernelspec folder it reports is recorded in the
registry. Removing deletes exactly that folder (after checking it is a kernelspec whose
``kernel.json`` runs this env's Python), never anything else.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.core.base.events import Event
from app.core.base.locks import env_lock
from app.core.base.text import msg
from app.core.env import registry
from app.core.env.registry import KernelRecord
from app.core.lifecycle.common import Failed, Refused, env_root
from app.core.lifecycle.kernelspec import KernelFailed, display_name, kernel_name, register_kernel
from app.core.lifecycle.remove import delete_tree
from app.core.lifecycle.remove import kernel_runs as _kernel_runs
from app.core.proc import runner

__all__ = ["display_name", "install_kernel", "kernel_name", "remove_kernel"]


def install_kernel(target: str | os.PathLike[str], *, on_event: Callable[[Event], None] | None = None,
                   cancel: runner.CancelToken | None = None, system: bool = False,
                   prefix: str | None = None) -> KernelRecord:
    """Install ipykernel (if missing, from the sources the env was installed from) and register the
    env's kernel for this user, or for every user (``system``, ``prefix``:
    :func:`app.core.lifecycle.kernelspec.register_kernel`). Raises Failed / Refused."""
    env = env_root(target)
    rec = registry.find(env)
    installer = rec.installer if rec is not None else "uv"
    idx = rec.sources if rec is not None else None  # without credentials: netrc / keyring supply them
    with env_lock(env, "kernel"):
        try:
            result = register_kernel(env, installer=installer, index=idx, on_event=on_event, cancel=cancel,
                                     system=system, prefix=prefix)
        except KernelFailed as err:
            raise Failed(err.message, lines=err.lines, log_path=err.log_path) from None
    if not result.path:
        raise Failed(msg("envs.kernel_where_unknown", "ipykernel did not say where it put the kernel"))
    return KernelRecord(result.name, result.display_name, result.path)


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
