"""Variables an environment sets while it is active: the recommendation's ``env_vars``
(``CUDA_VISIBLE_DEVICES`` + ``CUDA_DEVICE_ORDER`` on a machine where the build serves only some
NVIDIA GPUs, ``HIP_VISIBLE_DEVICES`` on such an AMD machine, ``HSA_OVERRIDE_GFX_VERSION``), so that
PyTorch's ``cuda:0`` is a GPU the build has kernels for in every shell the user activates it in.

* A **venv** (venv, virtualenv, uv) gets a marked block in each activation script it has: bash/zsh
  ``activate``, ``activate.fish``, PowerShell ``Activate.ps1`` (before its signature block), and cmd's
  ``activate.bat`` / ``deactivate.bat``. Activating saves a value the variable had and sets it;
  ``deactivate`` puts the old value back (or unsets it). The user's lines stay byte for byte.
* A **conda env** gets files of its own in ``etc/conda/activate.d`` and ``deactivate.d``
  (``torch-setup-vars.sh``, ``.bat``, ``.ps1``, ``.fish``), which conda runs on (de)activation.

What was set is recorded in ``<env>/torch-setup-vars.json``; :func:`recorded` reads it back, so the
verification and the speed test run with the same variables (:func:`probe_env`), and :func:`lift`
takes away exactly what :func:`apply` added. Values are plain tokens (``0,2``, ``PCI_BUS_ID``,
``11.0.0``): anything else is refused, so no script ever quotes user text.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.base.serial import read_json_object
from app.core.env.backends import env_kind, is_env

__all__ = ["STATE_FILE", "apply", "env_of_python", "lift", "probe_env", "recorded"]

STATE_FILE = "torch-setup-vars.json"
BEGIN = ">>> torch-setup variables >>>"
END = "<<< torch-setup variables <<<"
_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")
_VALUE = re.compile(r"^[A-Za-z0-9_.,:-]{1,200}$")
_CONDA_STEM = "torch-setup-vars"


def _check(env_vars: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for k, v in env_vars.items():
        if not _NAME.match(k) or not _VALUE.match(str(v)):
            raise ValueError(f"not an environment variable this app sets: {k}={v!r}")
        out[k] = str(v)
    return out


def _old(k: str) -> str:
    return f"_TORCH_SETUP_OLD_{k}"


# ------------------------------------------------------------------ the blocks, per shell

@dataclass(frozen=True)
class _Shell:
    """How one shell writes the blocks: activation saves a value the variable had and sets it;
    deactivation (inside the script's deactivate) puts the saved value back or unsets it.
    Placeholders: ``{k}`` the variable, ``{old}`` where its old value is kept, ``{v}`` the value."""

    rem: str  # a comment line's start
    on_open: str  # lines around the saving of old values (only when not already active)
    save: str
    on_close: str
    put: str
    mark: str
    off_open: str
    restore: str  # may hold several lines
    off_close: str
    nl: str = "\n"


_SHELLS = {
    "bash": _Shell("#", 'if [ -z "${_TORCH_SETUP_VARS:-}" ] ; then',
                   '    if [ -n "${{{k}+_}}" ] ; then {old}="${k}" ; export {old} ; fi', "fi",
                   "{k}={v} ; export {k}", "_TORCH_SETUP_VARS=1 ; export _TORCH_SETUP_VARS",
                   '    if [ -n "${_TORCH_SETUP_VARS:-}" ] ; then',
                   '        if [ -n "${{{old}+_}}" ] ; then {k}="${old}" ; export {k} ; unset {old} ; '
                   'else unset {k} ; fi',
                   "        unset _TORCH_SETUP_VARS\n    fi"),
    "fish": _Shell("#", "if not set -q _TORCH_SETUP_VARS", "    if set -q {k}; set -gx {old} ${k}; end", "end",
                   "set -gx {k} {v}", "set -gx _TORCH_SETUP_VARS 1", "    if set -q _TORCH_SETUP_VARS",
                   "        if set -q {old}; set -gx {k} ${old}; set -e {old}; else; set -e {k}; end",
                   "        set -e _TORCH_SETUP_VARS\n    end"),
    "powershell": _Shell("#", "if (-not (Test-Path -Path Env:_TORCH_SETUP_VARS)) {",
                         "    if (Test-Path -Path Env:{k}) {{ $env:{old} = $env:{k} }}", "}", "$env:{k} = '{v}'",
                         "$env:_TORCH_SETUP_VARS = '1'", "    if (Test-Path -Path Env:_TORCH_SETUP_VARS) {",
                         "        if (Test-Path -Path Env:{old}) {{ $env:{k} = $env:{old}; "
                         "Remove-Item -Path Env:{old} }} else {{ Remove-Item -Path Env:{k} "
                         "-ErrorAction SilentlyContinue }}",
                         "        Remove-Item -Path Env:_TORCH_SETUP_VARS\n    }"),
    # cmd: every line with @ (uv's activate.bat runs with echo on); an undefined variable expands to
    # nothing in a script, so set "X=%old%" unsets X when there was no old value
    "cmd": _Shell("@rem", "", '@if not defined _TORCH_SETUP_VARS if defined {k} set "{old}=%{k}%"', "",
                  '@set "{k}={v}"', '@set "_TORCH_SETUP_VARS=1"', "@if defined _TORCH_SETUP_VARS (",
                  '    set "{k}=%{old}%"\n    set "{old}="', '    set "_TORCH_SETUP_VARS="\n)', nl="\r\n"),
}


def _blocks(shell: str, env_vars: Mapping[str, str]) -> tuple[str, str]:
    """(the activation block, the deactivation block) of ``shell`` for ``env_vars``."""
    sh = _SHELLS[shell]
    ind = "" if shell == "cmd" else "    "  # the deactivation block sits inside a function
    saves = [sh.save.format(k=k, old=_old(k)) for k in env_vars]
    on = [f"{sh.rem} {BEGIN}", *([sh.on_open] if sh.on_open else []), *saves, *([sh.on_close] if sh.on_close else []),
          *(sh.put.format(k=k, v=v) for k, v in env_vars.items()), sh.mark, f"{sh.rem} {END}", ""]
    off = [f"{ind}{sh.rem} {BEGIN}", sh.off_open, *(sh.restore.format(k=k, old=_old(k)) for k in env_vars),
           sh.off_close, f"{ind}{sh.rem} {END}", ""]
    return sh.nl.join(on), sh.nl.join("\n".join(off).split("\n"))


# ------------------------------------------------------------------ editing a script

def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return None


def _write(path: Path, text: str) -> None:
    from app.core.env.guard import write_atomic  # the guard's writer: through links, permissions kept

    write_atomic(path, text)


def strip(text: str) -> str:
    """A script's text without this module's blocks (the rest byte for byte)."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if line.strip().endswith(BEGIN) and line.strip().startswith(("#", "@rem ")):
            skipping = True
            continue
        if skipping:
            if line.strip().endswith(END):
                skipping = False
            continue
        out.append(line)
    return "".join(out)


def _nl(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _insert_after(text: str, opening: re.Pattern[str], block: str) -> str | None:
    """``text`` with ``block`` after the first line ``opening`` matches (a deactivate function's head)."""
    lines = text.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if opening.match(ln.strip())), None)
    if at is None:
        return None
    lines.insert(at + 1, block.replace("\n", _nl(text)) if "\r" not in block else block)
    return "".join(lines)


def _append(text: str, block: str, before: str | None = None) -> str:
    """``text`` with ``block`` at its end (before the line starting with ``before``, when there is one)."""
    nl = _nl(text)
    block = block.replace("\r\n", "\n").replace("\n", nl)
    if not text.endswith(("\n", "\r")):
        text += nl
    if before and before in text:
        i = text.index(before)
        return text[:i] + block + text[i:]
    return text + block


_DEACTIVATE = {"activate": re.compile(r"^deactivate\s*\(\)\s*\{?"),
               "activate.fish": re.compile(r"^function deactivate\b"),
               "activate.ps1": re.compile(r"^function global:deactivate\b.*\{$")}


def _scripts(env: Path) -> tuple[str, dict[str, str]]:
    """(the scripts folder, lower-case name -> the file's name): venv writes ``Activate.ps1``, uv
    ``activate.ps1``."""
    folder = "Scripts" if (env / "Scripts").is_dir() and not (env / "bin").is_dir() else "bin"
    try:
        names = os.listdir(env / folder)
    except OSError:
        names = []
    return folder, {n.lower(): n for n in names}


def _venv_scripts(env: Path, env_vars: Mapping[str, str]) -> list[str]:
    """Write the blocks into the venv's activation scripts; the ones written (relative paths)."""
    folder, names = _scripts(env)
    makers = {"activate": "bash", "activate.fish": "fish", "activate.ps1": "powershell"}
    done: list[str] = []
    for key, make in makers.items():
        if key not in names:
            continue
        path = env / folder / names[key]
        text = _read(path)
        if text is None:
            continue
        on, off = _blocks(make, env_vars)
        with_off = _insert_after(strip(text), _DEACTIVATE[key], off)
        if with_off is None:
            continue  # an unknown layout: left alone
        _write(path, _append(with_off, on, before="# SIG # Begin signature block" if key == "activate.ps1" else None))
        done.append(f"{folder}/{names[key]}")
    on, off = _blocks("cmd", env_vars)
    for key, block in (("activate.bat", on), ("deactivate.bat", off)):
        text = _read(env / folder / names[key]) if key in names else None
        if text is not None:
            _write(env / folder / names[key], _append(strip(text), block))
            done.append(f"{folder}/{names[key]}")
    return done


def _conda_scripts(env: Path, env_vars: Mapping[str, str]) -> list[str]:
    """The conda env's activate.d / deactivate.d files of ours, for each shell conda runs them in."""
    done: list[str] = []
    for ext, shell in ((".sh", "bash"), (".fish", "fish"), (".ps1", "powershell"), (".bat", "cmd")):
        on, off = _blocks(shell, env_vars)
        for sub, body in (("activate.d", on), ("deactivate.d", off)):
            folder = env / "etc" / "conda" / sub
            folder.mkdir(parents=True, exist_ok=True)
            text = body if ext != ".bat" else "@echo off\r\n" + body
            _write(folder / f"{_CONDA_STEM}{ext}", text)
            done.append(f"etc/conda/{sub}/{_CONDA_STEM}{ext}")
    return done


# ------------------------------------------------------------------ apply / lift / read

def apply(env_path: str | os.PathLike[str], env_vars: Mapping[str, str]) -> list[str]:
    """Make the environment set ``env_vars`` while it is active (an empty mapping takes away what an
    earlier call set). Returns the scripts written. Raises ValueError for a variable this module
    does not write, OSError when the env's files cannot be written."""
    env = Path(os.path.abspath(env_path))
    wanted = _check(env_vars)
    lift(env)
    if not wanted:
        return []
    done = _conda_scripts(env, wanted) if env_kind(env) == "conda" else _venv_scripts(env, wanted)
    _write(env / STATE_FILE, json.dumps({"vars": wanted, "scripts": done}, indent=1))
    return done


def lift(env_path: str | os.PathLike[str]) -> None:
    """Take away what :func:`apply` added (nothing of the user's). Raises OSError."""
    env = Path(os.path.abspath(env_path))
    state = env / STATE_FILE
    if not state.is_file():
        return
    scripts = _state(env).get("scripts")
    for rel in scripts if isinstance(scripts, list) else []:
        path = env / str(rel)
        if str(rel).startswith("etc/conda/"):
            path.unlink(missing_ok=True)
            continue
        text = _read(path)
        if text is not None and BEGIN in text:
            _write(path, strip(text))
    state.unlink(missing_ok=True)


def _state(env: Path) -> dict[str, object]:
    return read_json_object(env / STATE_FILE)


def recorded(env_path: str | os.PathLike[str]) -> dict[str, str]:
    """The variables the env sets while active ({} when none, or the record is unreadable)."""
    got = _state(Path(env_path)).get("vars")
    if not isinstance(got, dict):
        return {}
    try:
        return _check({str(k): str(v) for k, v in got.items()})
    except ValueError:
        return {}


def env_of_python(python: str | os.PathLike[str]) -> Path | None:
    """The environment an interpreter belongs to (``<env>/bin/python``, ``<env>\\Scripts\\python.exe``,
    a conda env's ``<env>\\python.exe``), or None."""
    p = Path(python)
    for cand in (p.parent.parent, p.parent):
        if is_env(cand):
            return cand
    return None


def probe_env(python: str | os.PathLike[str]) -> dict[str, str] | None:
    """The environment for a probe run by ``python``: the cleaned one with the variables its env sets
    while active (as if activated); None (the runner's default) when it sets none."""
    env = env_of_python(python)
    wanted = recorded(env) if env is not None else {}
    if not wanted:
        return None
    from app.core.proc.runner import clean_env

    return clean_env(wanted)

