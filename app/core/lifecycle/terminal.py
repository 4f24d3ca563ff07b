""""Open a terminal here": the command that activates an env, and a terminal program that runs it.

:func:`open_terminal` starts a terminal window through the runner; the command returns at once
(``setsid -f`` on Linux, ``open -a Terminal`` on macOS, ``cmd /c start`` on Windows), so the window
lives on its own. The CLI prints the activation command for the user to paste instead.

The commands are quoted by :mod:`app.core.base.shells`. On Windows the new window's command line holds
no path at all: it starts in the env's own folder and runs ``activate.bat`` from there, so a path
with spaces, Chinese characters, ``&`` or parentheses needs no quoting through the two cmd.exe
that read it (the runner writes an argument list as the C runtime reads it, which is not how
cmd.exe reads quotes).
"""
from __future__ import annotations

import ntpath
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.core.base.errors import BadInput
from app.core.base.shells import CMD, FISH, POSIX, POWERSHELL, join, quote, unquotable
from app.core.base.text import Text, msg, render
from app.core.env.backends import WINDOWS, env_kind
from app.core.proc import runner

__all__ = ["PS_BYPASS", "PS_NOTE", "Activation", "activation", "open_terminal", "terminal_argv", "terminal_cwd",
           "windows_activation", "windows_terminal"]


@dataclass(frozen=True)
class Activation:
    shell: str  # bash | zsh | fish | cmd | powershell | conda
    command: str
    note: Text = ""  # why the command looks the way it does (PowerShell's execution policy)

    def to_dict(self) -> dict[str, str]:
        d = {"shell": self.shell, "command": self.command}
        if self.note:
            d["note"] = render(self.note)
        return d


#: PowerShell's default execution policy on Windows clients is Restricted, which refuses every
#: script, Activate.ps1 too ("running scripts is disabled on this system"; Microsoft,
#: about_Execution_Policies); the policy is lifted for this PowerShell process only, never for
#: the machine or the user (Comfy-Org/desktop sets it the same way for its session).
PS_BYPASS = ("Set-ExecutionPolicy", "-Scope", "Process", "-ExecutionPolicy", "Bypass", "-Force")
PS_NOTE = msg("envs.powershell_policy_note", "PowerShell's default execution policy (Restricted) blocks scripts such "
              "as Activate.ps1, so this line first allows scripts for this PowerShell window only (-Scope "
              "Process; nothing changes for other windows or the computer). Or use the cmd line.")


def activation(env: Path) -> list[Activation]:
    """How to activate ``env`` in the shells of this platform (the first is the usual one)."""
    if WINDOWS:
        return windows_activation(str(env), env_kind(env))
    if env_kind(env) == "conda":
        return [Activation("conda", f"conda activate {_quote(str(env))}")]
    out = [Activation("bash", f"source {_quote(str(env / 'bin' / 'activate'))}")]
    if (env / "bin" / "activate.fish").exists():  # fish reads \\ and \' inside single quotes: its own quoting
        out.append(Activation("fish", f"source {quote(str(env / 'bin' / 'activate.fish'), FISH)}"))
    return out


def windows_activation(env: str, kind: str | None = "venv") -> list[Activation]:
    """The Windows activation commands of the env at ``env`` (a Windows path): PowerShell's
    ``Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force; & '…\\Scripts\\Activate.ps1'``
    (:data:`PS_BYPASS`: the default policy blocks the script) and cmd's
    ``"…\\Scripts\\activate.bat"``; a conda env's ``conda activate "…"`` (conda's prompt is a cmd)."""
    if kind == "conda":
        return [Activation("conda", f"conda activate {quote(env, CMD)}")]
    scripts = ntpath.join(env, "Scripts")
    script = quote(ntpath.join(scripts, "Activate.ps1"), POWERSHELL)
    return [Activation("powershell", f"{join(PS_BYPASS, POWERSHELL)}; & {script}", PS_NOTE),
            Activation("cmd", quote(ntpath.join(scripts, "activate.bat"), CMD))]


def windows_terminal(env: str, kind: str | None = "venv") -> tuple[list[str], str]:
    """(the command, the folder to start it in) that opens a cmd window with the env at ``env``
    active, in the env's parent folder. ``start ""`` gives the window an empty title (start takes
    a first quoted word as the title); ``^&`` reaches the new cmd as ``&``."""
    if kind == "conda":
        inner, cwd, up = ["conda", "activate", ".\\"], env, ".."
    else:
        inner, cwd, up = ["activate.bat"], ntpath.join(env, "Scripts"), "..\\.."
    return ["cmd.exe", "/c", "start", "", "cmd.exe", "/k", *inner, "^&", "cd", up], cwd


def _quote(text: str) -> str:
    return shlex.quote(text)


def refuse_unquotable(env: Path | str, shell: str = POSIX) -> None:
    """Raise :class:`BadInput` when the env's path holds a character no quoting makes safe in a
    command a shell reads (a newline, an escape sequence; for cmd ``%``): such a folder is never
    written into an rc file or a terminal's command line."""
    bad = unquotable(str(env), shell)
    if bad is not None:
        raise BadInput(msg("envs.terminal_unsafe_path", "The folder {path} holds a character ({char}) that a shell "
                           "cannot be given safely, so no terminal is opened for it.", path=ascii(str(env)),
                           char=ascii(bad)),
                       hint=msg("envs.terminal_unsafe_path_hint", "Rename the folder (letters, digits, spaces and "
                                "- _ . are safe) and open the terminal again."))


def _activate_lines(env: Path) -> str:
    """The lines of a bash script that activate ``env``, go to its parent folder and say so: every
    piece that comes from the folder's name is quoted (:func:`shlex.quote`), never written bare.

    The env's own ``activate`` would put the name into ``PS1``, and bash expands ``$( )`` and
    backticks in ``PS1`` at every prompt: its prompt change is turned off and the prompt names the
    env through a variable instead (the value of an expansion is not expanded again)."""
    refuse_unquotable(env)
    said = f"PyTorch environment {env.name} is active (deactivate to leave it)."
    return (f"VIRTUAL_ENV_DISABLE_PROMPT=1\n{activation(env)[0].command}\nunset VIRTUAL_ENV_DISABLE_PROMPT\n"
            f"TORCH_SETUP_ENV={_quote(env.name)}\nPS1='(${{TORCH_SETUP_ENV}}) '\"${{PS1-}}\"\n"
            f"cd {_quote(str(env.parent))}\necho {_quote(said)}\n")


def _rc_file(env: Path) -> Path:
    """A bash rc file that reads the user's ~/.bashrc and then activates ``env``."""
    lines = _activate_lines(env)  # refused before anything is written
    fd, name = tempfile.mkstemp(prefix="torch-setup-", suffix=".bashrc")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write('[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n')
        fh.write(lines)
    return Path(name)


_LINUX_TERMINALS = ("x-terminal-emulator", "gnome-terminal", "konsole", "xfce4-terminal", "mate-terminal",
                    "tilix", "alacritty", "kitty", "xterm")


def terminal_argv(env: Path) -> list[str] | None:
    """A command that opens a terminal window with ``env`` activated, or None when no terminal is
    known. On Windows it must start in :func:`terminal_cwd` (:func:`windows_terminal`)."""
    if WINDOWS:  # the command line holds no path (it starts in the env's folder): nothing to quote
        return windows_terminal(str(env), env_kind(env))[0]
    if sys.platform == "darwin":
        lines = _activate_lines(env)
        fd, name = tempfile.mkstemp(prefix="torch-setup-", suffix=".command")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"#!/bin/bash\n{lines}" 'exec "${SHELL:-/bin/bash}" -i\n')
        script = Path(name)
        script.chmod(0o755)
        return ["open", "-a", "Terminal", str(script)]
    term = next((t for t in _LINUX_TERMINALS if runner.which(t)), None)
    if term is None:
        return None
    rc = _rc_file(env)
    inner = ["bash", "--rcfile", str(rc), "-i"]
    if term == "gnome-terminal":
        return [term, "--", *inner]
    if term in ("konsole", "xterm", "x-terminal-emulator", "mate-terminal", "xfce4-terminal", "tilix"):
        return [term, "-e", " ".join(shlex.quote(a) for a in inner)] if term in ("xfce4-terminal", "mate-terminal",
                                                                                 "tilix") else [term, "-e", *inner]
    return [term, "-e", *inner]


def terminal_cwd(env: Path) -> str | None:
    """The folder :func:`terminal_argv`'s command starts in (None: anywhere)."""
    return windows_terminal(str(env), env_kind(env))[1] if WINDOWS else None


def open_terminal(env: Path) -> bool:
    """Open a terminal window with ``env`` activated; False when no terminal program could be started."""
    argv = terminal_argv(env)
    if argv is None:
        return False
    if sys.platform.startswith("linux"):
        setsid = runner.which("setsid")
        if setsid is None and argv[0] != "gnome-terminal":  # gnome-terminal hands the window to its server
            return False
        if setsid is not None:
            argv = [setsid, "-f", *argv]  # returns at once; the terminal is not our child
    # the window is meant to stay: it is not ended with the run (on Windows it is in the run's job)
    res = runner.run(argv, timeout=20, capture=True, cwd=terminal_cwd(env), leave_running=True)
    return res.ok
