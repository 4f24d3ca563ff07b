"""Modulefiles for an environment: ``module load NAME`` on a shared server or a cluster.

:func:`write_modulefiles` writes, under ``DIR/NAME/``, one Lmod modulefile (``VERSION.lua``) and
one Environment Modules (Tcl) modulefile (``VERSION``, starting with the ``#%Module1.0`` cookie
that tool looks for; Lmod reads both and prefers the ``.lua``). Either puts the environment's
programs first on ``PATH``, sets ``VIRTUAL_ENV`` as activating it would, and sets the variables
the verified build needs on that machine (``HSA_OVERRIDE_GFX_VERSION`` for a Radeon that ROCm
runs as a listed sibling: the recommendation's ``env_vars``). ``module use DIR`` then
``module load NAME`` gives every user the verified torch.

Values are quoted for each language (a Lua long string, a Tcl braced or escaped word), so a path
with spaces or brackets stays one value.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.env.backends import env_python

if TYPE_CHECKING:  # start-up: only the type
    from app.core.detection.system import SystemReport

__all__ = ["ModuleFiles", "env_modulefiles", "lua_modulefile", "module_name", "tcl_modulefile", "write_modulefiles"]

_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True)
class ModuleFiles:
    name: str  # what ``module load`` takes
    version: str
    lua: Path
    tcl: Path

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "lua": str(self.lua), "tcl": str(self.tcl),
                "load": f"{self.name}/{self.version}"}


def module_name(env: Path) -> str:
    """A modulefile name from the environment's folder name (``torch env`` -> ``torch-env``)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", env.name).strip("-.").lower() or "torch-env"


def _lua(value: str) -> str:
    """A Lua long string whose level no ``]==]`` in ``value`` can close early."""
    level = 0
    while f"]{'=' * level}]" in value or value.endswith("]" + "=" * level):
        level += 1
    eq = "=" * level
    return f"[{eq}[{value}]{eq}]"


def _tcl(value: str) -> str:
    """A Tcl word: every character Tcl would act on escaped with a backslash (an empty value: ``{}``)."""
    if not value:
        return "{}"
    return "".join("\\n" if ch == "\n" else ("\\" + ch if ch in '\\${}[]"; \t#' else ch) for ch in value)


def _checked(variables: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(variables.items()) if _VAR.fullmatch(k)}


def lua_modulefile(env: Path, title: str, variables: Mapping[str, str]) -> str:
    bindir = str(env_python(env).parent)
    lines = ["-- -*- lua -*-", "-- Written by torch-setup (envs module): the verified environment " + _lua(str(env)),
             f"help({_lua(title)})", f"whatis({_lua('Description: ' + title)})",
             f'setenv("VIRTUAL_ENV", {_lua(str(env))})', f'prepend_path("PATH", {_lua(bindir)})',
             'unsetenv("PYTHONHOME")']
    lines += [f'setenv("{k}", {_lua(v)})' for k, v in _checked(variables).items()]
    return "\n".join(lines) + "\n"


def tcl_modulefile(env: Path, title: str, variables: Mapping[str, str]) -> str:
    bindir = str(env_python(env).parent)
    lines = ["#%Module1.0", "## Written by torch-setup (envs module): the verified environment",
             "proc ModulesHelp { } {", f"    puts stderr {_tcl(title)}", "}",
             f"module-whatis {_tcl(title)}", f"setenv VIRTUAL_ENV {_tcl(str(env))}",
             f"prepend-path PATH {_tcl(bindir)}", "unsetenv PYTHONHOME"]
    lines += [f"setenv {k} {_tcl(v)}" for k, v in _checked(variables).items()]
    return "\n".join(lines) + "\n"


def write_modulefiles(env: Path, out: Path, *, version: str, title: str, variables: Mapping[str, str],
                      name: str | None = None) -> ModuleFiles:
    """Write ``out/NAME/VERSION.lua`` and ``out/NAME/VERSION``; returns where they are."""
    name = name or module_name(env)
    version = re.sub(r"[^A-Za-z0-9._-]+", "-", version).strip("-") or "1"
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    lua, tcl = folder / f"{version}.lua", folder / version
    lua.write_text(lua_modulefile(env, title, variables), encoding="utf-8")
    tcl.write_text(tcl_modulefile(env, title, variables), encoding="utf-8")
    return ModuleFiles(name, version, lua, tcl)


def env_modulefiles(env: Path, out: Path, report: SystemReport, *, name: str | None = None) -> ModuleFiles:
    """The modulefiles of ``env`` on the machine ``report`` describes: its torch build in the title and
    version, the variables that build needs there (the engine's), the device it was verified on."""
    from app.core.base.errors import BadInput
    from app.core.base.text import msg
    from app.core.compat.data import load_compat
    from app.core.env import registry
    from app.core.env.distinfo import torch_build
    from app.core.lab.export import build_env_vars

    info = torch_build(env)
    if info is None:
        raise BadInput(msg("lab.no_torch", "{env} holds no PyTorch: there is nothing to hand on.", env=str(env)),
                       hint=msg("lab.no_torch_hint", "Install PyTorch into it first (torch-setup install)."))
    rec = registry.find(env)
    v = rec.verification if rec is not None else None
    where = f" @ {', '.join(v.devices) or 'CPU'}" if v is not None and v.ok else ""  # the device it was verified on
    title = f"PyTorch {info.describe()} - {env}{where}"  # ASCII: Tcl tools read files in their own encoding
    variables = build_env_vars(report, load_compat(), info.version, info.variant)
    return write_modulefiles(env, out, version=info.version.replace("+", "-"), title=title, variables=variables,
                             name=name)
