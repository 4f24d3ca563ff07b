"""The torch guard: after a verified install, later installs into the env keep the verified torch build.

Field problem (research field-2026-12 §1 item 7): a working CUDA torch is silently replaced by a
``+cpu`` or PyPI build when a later ``pip install -r requirements.txt`` pulls torch. The guard
pins the verified torch family (``torch``, ``torchvision``, ``torchaudio``, exact versions with
their local label) in a constraints file INSIDE the env, and points the env's own installer
configuration at it:

* **pip** reads ``<env>/pip.conf`` (``pip.ini`` on Windows) as its "site" configuration whenever
  it runs from that env (``<env>/bin/pip``, ``<env>/bin/python -m pip``, an activated env). The
  guard adds ``[global] constraint = <env>/torch-setup-constraints.txt`` there, so a package
  requiring another torch makes pip refuse ("ResolutionImpossible") instead of swapping it.
* **uv** has no per-environment configuration: ``uv pip`` reads ``uv.toml`` / ``pyproject.toml``
  from the current folder upwards and the user's and the system's ``uv.toml``, never a file in
  the target env (docs.astral.sh/uv/concepts/configuration-files). It does read
  ``UV_CONSTRAINT``. So the guard adds a few lines to the env's POSIX ``bin/activate`` that
  export ``UV_CONSTRAINT`` while the env is active (and put the previous value back on
  ``deactivate``). ``uv pip install --python <env>/bin/python ...`` from outside an activated
  env is NOT guarded: :func:`facts` and the doctor rule ``torch-guard-bypassed`` name what
  replaced the verified build afterwards.

Versions without a local label are pinned with ``===`` (PEP 440 arbitrary equality): ``==2.14.1``
would also accept ``2.14.1+cpu`` from another index. pip and uv both accept it.

Everything the guard changes is recorded in ``<env>/torch-setup-guard.json`` so :func:`lift`
takes away exactly what :func:`apply` added. The user's own files (pip.conf, bin/activate) are
edited only between the guard's marker lines and are otherwise left byte for byte as they are:
comments, multi-line values, their encoding (bytes that are not UTF-8 included), CRLF line ends,
and a symlinked pip.conf (written through the link, never replaced by a copy). The one line of the
user's own that the guard must change, a ``constraint`` option already in ``[global]`` (pip reads
one value per option), moves into the block with the guard's value added, and comes back on lift
exactly as it was. :func:`lift` on an env that was never guarded changes nothing.
"""
from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base.schema import read_state
from app.core.base.text import Text, msg
from app.core.env.backends import WINDOWS
from app.core.env.distinfo import TORCH_FAMILY, distributions

__all__ = [
    "CONSTRAINTS_FILE",
    "STATE_FILE",
    "GuardFacts",
    "GuardStatus",
    "apply",
    "carry_pip_conf",
    "facts",
    "lift",
    "parse_pins",
    "pin",
    "pins_for",
    "pip_config_file",
    "put_pip_conf",
    "status",
    "strip_hook",
    "user_pip_conf",
    "write_atomic",
]

CONSTRAINTS_FILE = "torch-setup-constraints.txt"
STATE_FILE = "torch-setup-guard.json"
BEGIN = "# >>> torch-setup guard >>>"
END = "# <<< torch-setup guard <<<"


def pip_config_file(env: Path) -> Path:
    """The env's own pip configuration file (pip's "site" configuration)."""
    return env / ("pip.ini" if WINDOWS else "pip.conf")


def pin(name: str, version: str) -> str:
    """``torch==2.13.0+cpu``; a version without a local label pins with ``===`` (exactly that string)."""
    return f"{name}=={version}" if "+" in version else f"{name}==={version}"


def pins_for(installed: Mapping[str, str]) -> tuple[str, ...]:
    """The pins for the torch family members in ``installed`` (name -> version)."""
    return tuple(pin(n, installed[n]) for n in TORCH_FAMILY if installed.get(n))


def _pinned(line: str) -> tuple[str, str] | None:
    """``torch==2.13.0+cpu`` / ``torch===2.14.1`` -> ("torch", version)."""
    for op in ("===", "=="):
        name, sep, ver = line.partition(op)
        if sep and name.strip() and ver.strip():
            return name.strip().lower(), ver.strip()
    return None


def parse_pins(pins: Sequence[str]) -> dict[str, str]:
    """``("torch==2.13.0+cpu",)`` -> ``{"torch": "2.13.0+cpu"}``."""
    out = {}
    for line in pins:
        got = _pinned(line)
        if got:
            out[got[0]] = got[1]
    return out


@dataclass(frozen=True)
class GuardStatus:
    """What of the guard is in place in one env."""

    env: str
    constraints: bool = False  # the constraints file exists
    pip_config: bool = False  # the env's pip.conf names it
    activate_hook: bool = False  # bin/activate exports UV_CONSTRAINT
    pins: tuple[str, ...] = ()
    notes: tuple[Text, ...] = ()

    @property
    def active(self) -> bool:
        return self.constraints and self.pip_config and bool(self.pins)

    @property
    def pinned(self) -> dict[str, str]:
        return parse_pins(self.pins)

    def to_dict(self) -> dict[str, object]:
        return {"env": self.env, "active": self.active, "constraints": self.constraints,
                "pip_config": self.pip_config, "activate_hook": self.activate_hook, "pins": list(self.pins),
                "notes": [str(n) for n in self.notes]}


def _read_user(path: Path) -> str | None:
    """A user's text file as it is: bytes that are not UTF-8 kept (surrogateescape), no newline
    translation; None when it does not exist."""
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step, keeping its permissions (0600 for a new file: what the
    guard writes can carry the user's index token from their own configuration). A symlink is
    written through (its target is replaced, the link stays); bytes read with :func:`_read_user`
    are written back as they were."""
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _constraint_value(path: Path) -> str:
    """How pip.conf names the file: the path, or a file: URL when it holds whitespace (pip splits
    the value of an option that may be given many times on whitespace)."""
    text = str(path)
    return path.as_uri() if any(c.isspace() for c in text) else text


def _read_state(env: Path) -> dict[str, object]:
    """The guard's record in the env ({}: none; a damaged one is kept aside beside it, and the
    guard then takes it as never applied: pip.conf is left as it is)."""
    return read_state(env / STATE_FILE, what="the guard's record").data or {}


_SECTION = re.compile(r"\s*\[(?P<name>[^\]]*)\]")
_OPTION = re.compile(r"(?P<key>[^\s=:#;\[][^=:]*?)\s*[=:](?P<value>.*)", re.DOTALL)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _global_section(lines: Sequence[str]) -> tuple[int, int] | None:
    """(the line of ``[global]``, the line after its last) in a pip.conf, or None."""
    start = None
    for i, line in enumerate(lines):
        m = _SECTION.match(line)
        if m is None or line[:1].isspace():
            continue
        if start is not None:
            return start, i
        if m.group("name").strip() == "global":
            start = i
    return (start, len(lines)) if start is not None else None


def _constraint_option(lines: Sequence[str], start: int, end: int) -> tuple[int, int, list[str]] | None:
    """The ``constraint`` option inside lines [start, end): (first line, line after it, its values),
    its continuation lines included (indented lines, as configparser reads them)."""
    for i in range(start + 1, end):
        m = _OPTION.match(lines[i])
        if m is None or m.group("key").strip().lower() != "constraint":
            continue
        j = i + 1
        while j < end and lines[j][:1] in (" ", "\t") and lines[j].strip():
            j += 1
        values = m.group("value").split()
        for line in lines[i + 1:j]:
            if not line.lstrip().startswith(("#", ";")):
                values += line.split()
        return i, j, values
    return None


def _with_block(text: str | None, value: str) -> tuple[str, list[str] | None, bool]:
    """The user's pip.conf ``text`` (None: there is none) with the guard's block; the user's own
    lines the block took in (their ``constraint`` option), or None; and whether a line end was
    added after the user's last line (it had none). Nothing else changes."""
    text = text or ""
    nl = _newline(text)
    lines = text.splitlines(keepends=True)
    where = _global_section(lines)
    if where is None:  # no [global]: the block brings its own, at the end
        added = bool(text) and not text.endswith(("\n", "\r"))
        return (text + (nl if added else "") + nl.join((BEGIN, "[global]", f"constraint = {value}", END)) + nl,
                None, added)
    start, end = where
    own = _constraint_option(lines, start, end)
    if own is None:  # [global] without a constraint: the block goes right under its header
        block = nl.join((BEGIN, f"constraint = {value}", END)) + nl
        head = lines[start] if lines[start].endswith(("\n", "\r")) else lines[start] + nl
        return "".join([*lines[:start], head, block, *lines[start + 1:]]), None, head != lines[start]
    i, j, values = own
    block = nl.join((BEGIN, "constraint = " + " ".join([*values, value] if value not in values else values), END))
    return "".join([*lines[:i], block + nl, *lines[j:]]), list(lines[i:j]), False


def _drop_added_newline(text: str) -> str:
    """``text`` without the one line end the guard added after the user's last line."""
    for nl in ("\r\n", "\n"):
        if text.endswith(nl):
            return text[: -len(nl)]
    return text


def _without_block(text: str, replaced: Sequence[str] | None) -> str:
    """``text`` with the guard's block taken out and the user's lines it took in (``replaced``) back
    in its place; ``text`` itself when it holds no block."""
    lines = text.splitlines(keepends=True)
    begin = next((i for i, line in enumerate(lines) if line.strip() == BEGIN), None)
    if begin is None:
        return text
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].strip() == END), None)
    if end is None:
        return text  # a block without its end: someone edited it; touch nothing
    return "".join([*lines[:begin], *(replaced or ()), *lines[end + 1:]])


def _legacy_without(text: str, value: str) -> str | None:
    """For a guard put in place by an earlier version (it rewrote pip.conf whole): ``text`` with
    ``value`` taken out of ``[global] constraint`` (None: nothing would be left)."""
    cp = configparser.RawConfigParser()
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string(text)
    except configparser.Error:
        return text
    if cp.has_option("global", "constraint"):
        rest = [v for v in cp.get("global", "constraint").split() if v != value]
        if rest:
            cp.set("global", "constraint", " ".join(rest))
        else:
            cp.remove_option("global", "constraint")
    if cp.has_section("global") and not cp.items("global", raw=True):
        cp.remove_section("global")
    if not cp.sections():
        return None
    lines = []
    for section in cp.sections():
        lines.append(f"[{section}]")
        lines += [f"{k} = {v}" for k, v in cp.items(section, raw=True)]
        lines.append("")
    return "\n".join(lines)


def put_pip_conf(env_path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (as :func:`user_pip_conf` gave it: bytes kept) as the env's pip configuration,
    in one step, through a symlink, mode 0600 when new. Raises OSError."""
    write_atomic(pip_config_file(Path(env_path)), text)


def carry_pip_conf(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """The user's pip configuration of env ``src`` into env ``dst`` (an upgrade's new env, which has
    none): their own part byte for byte, without the guard's block (the guard is put on the new
    build after this); a symlinked one as the same link, never a copy (and the guard's record with
    it, so what the block holds of theirs comes back on lift). Raises OSError."""
    conf = pip_config_file(Path(src))
    if conf.is_symlink():
        os.symlink(os.readlink(conf), pip_config_file(Path(dst)))
        if (Path(src) / STATE_FILE).is_file():
            shutil.copy2(Path(src) / STATE_FILE, Path(dst) / STATE_FILE)
        return
    mine = user_pip_conf(src)
    if mine is not None:
        put_pip_conf(dst, mine)  # exact, mode 0600 when new


def user_pip_conf(env_path: str | os.PathLike[str]) -> str | None:
    """The env's pip configuration as the user has it, without the guard's part (None: none)."""
    env = Path(os.path.abspath(env_path))
    state = _read_state(env)
    current = _read_user(pip_config_file(env))
    if "pip_conf_written" in state and "pip_conf_original" in state:  # an earlier version's guard
        original = state["pip_conf_original"]
        if current is None or current == state["pip_conf_written"]:
            return original if isinstance(original, str) else None
        return _legacy_without(current, str(state.get("constraint_value") or ""))
    if current is None:
        return None
    replaced = state.get("pip_conf_replaced")
    rest = _without_block(current, [str(x) for x in replaced] if isinstance(replaced, list) else None)
    if rest != current and state.get("pip_conf_newline_added"):
        rest = _drop_added_newline(rest)  # the user's last line had none (it is still the last one)
    return rest if rest or not state.get("pip_conf_created") else None


# --------------------------------------------------------------------------- activate (uv)

def _activate_script(env: Path) -> Path | None:
    """The POSIX (bash/zsh) activation script, when the env has one."""
    if WINDOWS:
        return None
    script = env / "bin" / "activate"
    return script if script.is_file() else None


_HOOK_ON = f"""{BEGIN}
# uv has no per-environment configuration: while this env is active, UV_CONSTRAINT points
# `uv pip` at the verified torch build (pip reads it from this env's pip.conf).
if [ -n "${{UV_CONSTRAINT+_}}" ] ; then _TORCH_SETUP_OLD_UV_CONSTRAINT="$UV_CONSTRAINT" ; fi
_TORCH_SETUP_GUARD=1
UV_CONSTRAINT="${{UV_CONSTRAINT:+$UV_CONSTRAINT }}$VIRTUAL_ENV/{CONSTRAINTS_FILE}"
export UV_CONSTRAINT
{END}
"""
_HOOK_OFF = f"""    {BEGIN}
    if [ -n "${{_TORCH_SETUP_GUARD:-}}" ] ; then
        if [ -n "${{_TORCH_SETUP_OLD_UV_CONSTRAINT+_}}" ] ; then
            UV_CONSTRAINT="$_TORCH_SETUP_OLD_UV_CONSTRAINT" ; export UV_CONSTRAINT
        else
            unset UV_CONSTRAINT
        fi
        unset _TORCH_SETUP_GUARD _TORCH_SETUP_OLD_UV_CONSTRAINT
    fi
    {END}
"""


def strip_hook(text: str) -> str:
    """An activation script's text without the guard's block (the rest byte for byte)."""
    return _strip_hook(text)


def _strip_hook(text: str) -> str:
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if line.strip() == BEGIN:
            skipping = True
            continue
        if skipping:
            if line.strip() == END:
                skipping = False
            continue
        out.append(line)
    return "".join(out)


def _add_hook(env: Path) -> tuple[bool, Text | None, bool]:
    """The hook in bin/activate: (added, why not, whether a line end was added after the user's last
    line, which had none: lift takes it away again)."""
    script = _activate_script(env)
    if script is None:
        return False, msg("envs.guard_no_activate", "this environment has no bin/activate script: `uv pip` is "
                          "not guarded while it is active (pip is)"), False
    if any(c.isspace() for c in str(env)):
        return False, msg("envs.guard_space_in_path", "the environment's path contains a space, which "
                          "UV_CONSTRAINT cannot hold: `uv pip` is not guarded while it is active (pip is)"), False
    text = _strip_hook(_read_user(script) or "")
    lines = text.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if ln.strip().startswith("deactivate ()")
               or ln.strip().startswith("deactivate()")), None)
    if at is None:
        return False, msg("envs.guard_unknown_activate", "bin/activate has an unknown layout: `uv pip` is not "
                          "guarded while the environment is active (pip is)"), False
    lines.insert(at + 1, _HOOK_OFF)
    new = "".join(lines)
    added = not new.endswith("\n")
    write_atomic(script, new + ("\n" if added else "") + _HOOK_ON)
    return True, None, added


def _remove_hook(env: Path, newline_added: bool = False) -> None:
    script = _activate_script(env)
    if script is None:
        return
    text = _read_user(script)
    if text is not None and BEGIN in text:
        rest = _strip_hook(text)
        write_atomic(script, rest[:-1] if newline_added and rest.endswith("\n") else rest)


def _has_hook(env: Path) -> bool:
    script = _activate_script(env)
    try:
        return script is not None and BEGIN in (_read_user(script) or "")
    except OSError:
        return False


# --------------------------------------------------------------------------- apply / lift / status

def apply(env_path: str | os.PathLike[str], pins: Sequence[str]) -> GuardStatus:
    """Pin ``pins`` (``torch==2.13.0+cpu`` ...) for later installs into the env. Idempotent.

    Raises OSError when the env's files cannot be written.
    """
    env = Path(os.path.abspath(env_path))
    if not pins:
        return status(env)
    state = _read_state(env)
    conf = pip_config_file(env)
    cons = env / CONSTRAINTS_FILE
    value = _constraint_value(cons)
    header = ("# Torch Setup Assistant: the PyTorch build verified in this environment.\n"
              "# pip reads it through this environment's pip.conf, `uv pip` through UV_CONSTRAINT while the\n"
              "# environment is active. Lift it with: torch-setup envs unguard <this folder>\n")
    write_atomic(cons, header + "".join(p + "\n" for p in pins))
    mine = user_pip_conf(env)  # the user's file as it is, without a block from before
    created = state.get("pip_conf_created", mine is None) if "pip_conf_block" in state else mine is None
    written, replaced, newline_added = _with_block(mine, value)
    write_atomic(conf, written)
    state_before = bool(state.get("activate_newline_added"))
    hooked, note, newline = _add_hook(env)
    for old in ("pip_conf_written", "pip_conf_original"):  # an earlier version's record: replaced below
        state.pop(old, None)
    state.update({"pins": list(pins), "constraint_value": value, "pip_conf_block": True,
                  "pip_conf_created": bool(created), "pip_conf_replaced": replaced,
                  "pip_conf_newline_added": newline_added,
                  "activate_hook": hooked, "activate_newline_added": newline or state_before,
                  "applied": time.strftime("%Y-%m-%dT%H:%M:%S")})
    write_atomic(env / STATE_FILE, json.dumps(state, indent=1))
    got = status(env)
    return GuardStatus(got.env, got.constraints, got.pip_config, got.activate_hook, got.pins,
                       (note,) if note is not None else ())


def lift(env_path: str | os.PathLike[str]) -> GuardStatus:
    """Take away exactly what :func:`apply` added. Idempotent; raises OSError when files cannot be written."""
    env = Path(os.path.abspath(env_path))
    state = _read_state(env)
    conf = pip_config_file(env)
    cons = env / CONSTRAINTS_FILE
    if not state:  # never guarded here (or its record is gone): nothing of the user's is touched
        if _has_hook(env):
            _remove_hook(env)
        return status(env)
    current = _read_user(conf)
    if current is not None:
        rest = user_pip_conf(env)
        if rest is None:
            conf.unlink()
        elif rest != current:
            write_atomic(conf, rest)
    _remove_hook(env, bool(state.get("activate_newline_added")))
    cons.unlink(missing_ok=True)
    (env / STATE_FILE).unlink(missing_ok=True)
    return status(env)


def status(env_path: str | os.PathLike[str]) -> GuardStatus:
    env = Path(os.path.abspath(env_path))
    cons = env / CONSTRAINTS_FILE
    pins: tuple[str, ...] = ()
    try:
        pins = tuple(ln.strip() for ln in cons.read_text(encoding="utf-8").splitlines()
                     if ln.strip() and not ln.lstrip().startswith("#"))
    except OSError:
        pass
    pip_ok = False
    try:
        cp = configparser.RawConfigParser()
        cp.read_string(_read_user(pip_config_file(env)) or "")
        values = cp.get("global", "constraint", fallback="").split()
        pip_ok = _constraint_value(cons) in values or str(cons) in values
    except (OSError, configparser.Error):
        pass
    return GuardStatus(str(env), cons.is_file(), pip_ok, _has_hook(env), pins)


# --------------------------------------------------------------------------- what the doctor reads

@dataclass(frozen=True)
class GuardFacts:
    """The verified torch family of an env (the registry's) against what its files say now."""

    env: str
    verified: Mapping[str, str]  # name -> version, as verified
    installed: Mapping[str, str] = field(default_factory=dict)  # name -> version now (torch family)
    guarded: bool = False  # the guard is in place now
    guard_recorded: bool = False  # the registry says the guard was put in place
    torch_installer: str | None = None  # who wrote the torch now installed ("pip", "uv")
    torch_installed_at: float = 0.0

    @property
    def changed(self) -> tuple[tuple[str, str, str | None], ...]:
        """``(name, verified version, version now or None when removed)`` for each that differs."""
        return tuple((n, v, self.installed.get(n)) for n, v in self.verified.items()
                     if self.installed.get(n) != v)

    def to_dict(self) -> dict[str, object]:
        return {"env": self.env, "verified": dict(self.verified), "installed": dict(self.installed),
                "guarded": self.guarded, "guard_recorded": self.guard_recorded,
                "torch_installer": self.torch_installer, "torch_installed_at": self.torch_installed_at,
                "changed": [list(c) for c in self.changed]}


def facts(env_path: str | os.PathLike[str], verified: Mapping[str, str] | None,
          guard_recorded: bool = False) -> GuardFacts | None:
    """What the doctor needs to tell "the verified build was replaced" (None: nothing was verified here)."""
    if not verified:
        return None
    env = Path(os.path.abspath(env_path))
    dists = distributions(env)
    installed = {n: dists[n].version for n in TORCH_FAMILY if n in dists}
    torch = dists.get("torch")
    return GuardFacts(str(env), dict(verified), installed, status(env).active, guard_recorded,
                      torch.installer if torch is not None else None, torch.mtime if torch is not None else 0.0)
