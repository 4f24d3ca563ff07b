"""The installer only ever works on the environment's OWN interpreter.

uv is given ``--python <env>/bin/python`` and pip runs as ``<env>/bin/python -m pip``
(:meth:`~app.core.env.backends.EnvBackend.install_argv`). That path alone is not enough: a venv's
``bin/python`` is a link to its base interpreter, so once ``pyvenv.cfg`` is gone (another
program emptied the folder, a user deleted it) the same path runs the BASE Python and the
installer would change it. So before every installer command :func:`ensure_own_interpreter`
asks the interpreter where it lives (``sys.prefix``) and refuses unless that is the env.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.base.errors import UserError
from app.core.base.text import msg, render
from app.core.env import backends as envs
from app.core.proc import runner

__all__ = ["ensure_own_interpreter"]

_WHERE = "import sys, json; print(json.dumps([sys.prefix, sys.executable]))"


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _refuse(text: str, log_path: Path | None) -> UserError:
    return UserError(text, hint=render(msg("rollback.interpreter_hint", "Nothing else was changed. Make sure no other "
                                           "program is changing or deleting the environment, then try again.")),
                     log_path=log_path)


def ensure_own_interpreter(env_path: Path, *, log_path: Path | None = None) -> Path:
    """The env's interpreter, after checking that it runs as that env (else :class:`UserError`).

    Costs one interpreter start (~20 ms).
    """
    py = envs.env_python(env_path)
    if not envs.is_env(env_path):
        raise _refuse(render(msg("rollback.env_gone", "{env} is no longer a Python environment (its pyvenv.cfg or "
                                 "conda-meta is gone); the installer was not run, so no other Python is changed.",
                                 env=str(env_path))), log_path)
    if not (py.exists() or py.is_symlink()):
        raise _refuse(render(msg("rollback.python_gone", "The environment's Python {python} is missing; the installer "
                                 "was not run, so no other Python is changed.", python=str(py))), log_path)
    res = runner.run([str(py), "-I", "-c", _WHERE], timeout=60, log_path=log_path)
    prefix = ""
    if res.ok:
        try:
            prefix = str(json.loads(res.stdout.strip().splitlines()[-1])[0])
        except (ValueError, IndexError, TypeError):
            prefix = ""
    if not prefix:
        raise _refuse(render(msg("rollback.python_broken", "The environment's Python {python} does not run ({why}); "
                                 "the installer was not run.", python=str(py), why=res.describe())), log_path)
    if not _same(prefix, env_path):
        raise _refuse(render(msg("rollback.python_foreign", "{python} runs as {prefix}, not as the environment {env}; "
                                 "the installer was not run, so that other Python is not changed.", python=str(py),
                                 prefix=prefix, env=str(env_path))), log_path)
    return py
