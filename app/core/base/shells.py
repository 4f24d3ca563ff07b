"""Commands as a person pastes them into a shell: the one home of the quoting rules.

Three shells, three sets of rules:

* **posix** (bash, zsh, sh, Git Bash): :func:`shlex.quote`.
* **cmd** (``cmd.exe``): a word that holds a space or one of cmd's operators (``& | < > ^ ( )``)
  is put in double quotes, written so that the program's C runtime reads it back whole
  (backslashes before a quote are doubled, see :func:`ms_quote`); cmd's operators are inert
  inside the quotes. ``%NAME%`` inside a word is still expanded by cmd (cmd has no escape for it
  inside quotes); Windows paths never hold ``"``.
* **powershell** (Windows PowerShell 5.1 and PowerShell 7): a word with anything but letters,
  digits and ``_ - . / : \\ = +`` goes in single quotes (``'`` doubled, and PowerShell's other
  single quotes ``‘ ’ ‚ ‛`` too), where nothing expands; a quoted program needs the call
  operator (``& 'C:\\…\\python.exe' -m pip``); commands are joined with ``;`` (5.1 has no ``&&``).

The user's shell on Windows is guessed from the processes above this one
(:func:`current_shell`); where it cannot be told, PowerShell, the shell a Windows 10/11
terminal opens by default.
"""
from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Iterable, Sequence

__all__ = ["CMD", "FISH", "POSIX", "POWERSHELL", "SHELLS", "cmd_quote", "current_shell", "fish_quote", "join",
           "ms_quote", "native", "posix_quote", "ps_quote", "quote", "shell_for_os", "unquotable", "unset_then"]

POSIX = "posix"
CMD = "cmd"
POWERSHELL = "powershell"
FISH = "fish"
SHELLS = (POSIX, CMD, POWERSHELL, FISH)

_CMD_PLAIN = re.compile(r'[^\s"&|<>^()]+')
_CMD_OPERATORS = frozenset('&|<>^()')
_PS_PLAIN = re.compile(r"[\w\-.:/\\=+]+")
_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def posix_quote(word: str) -> str:
    """``word`` for bash / zsh / sh."""
    return shlex.quote(word)


def fish_quote(word: str) -> str:
    """``word`` for fish: single quotes, inside which fish (unlike bash) reads ``\\`` and ``\\'`` as
    escapes, so both are escaped; nothing else expands there (no ``$``, no command substitution)."""
    if word and re.fullmatch(r"[\w\-.,:/=+@%]+", word):
        return word
    return "'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"


def unquotable(word: str, shell: str) -> str | None:
    """The character of ``word`` that no quoting makes safe on a command line for ``shell``, or None.

    Control characters (a newline, ESC ...) in any shell: a pasted newline ends the command and a
    terminal acts on escape sequences; for cmd also ``%`` (expanded even inside quotes) and ``"``."""
    for ch in word:
        if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            return ch
        if shell == CMD and ch in '%"':
            return ch
    return None


def ms_quote(word: str) -> str:
    """``word`` in double quotes as the Microsoft C runtime splits a command line: a run of
    backslashes is doubled where a quote follows it (an embedded one or the closing one), an
    embedded ``"`` becomes ``\\"``. ``ms_quote(r'C:\\a b\\')`` is ``"C:\\a b\\\\"``."""
    out = ['"']
    backslashes = 0
    for ch in word:
        if ch == "\\":
            backslashes += 1
            continue
        if ch == '"':
            out.append("\\" * (2 * backslashes + 1) + '"')
        else:
            out.append("\\" * backslashes + ch)
        backslashes = 0
    out.append("\\" * (2 * backslashes) + '"')
    return "".join(out)


def cmd_quote(word: str) -> str:
    """``word`` for a command line typed into ``cmd.exe``: bare when it holds no space, quote or
    operator, else in double quotes (:func:`ms_quote`). cmd turns its quote state on and off at
    every ``"`` and ignores backslashes, so after an embedded ``\\"`` the operators that follow are
    outside cmd's quotes: they get cmd's escape ``^``."""
    if word and _CMD_PLAIN.fullmatch(word):
        return word
    quoted = ms_quote(word)
    out: list[str] = []
    inside = False
    for ch in quoted:
        if ch == '"':
            inside = not inside
        elif not inside and ch in _CMD_OPERATORS:
            out.append("^")
        out.append(ch)
    return "".join(out)


def ps_quote(word: str) -> str:
    """``word`` for PowerShell: bare when it is plain (letters, digits, ``_ - . : / \\ = +``, and
    not the stop-parsing token ``--%``), else a single-quoted string (no expansion inside)."""
    if word and word != "--%" and _PS_PLAIN.fullmatch(word):
        return word
    out = ["'"]
    for ch in word:
        out.append(ch * 2 if ch in _PS_SINGLE_QUOTES else ch)
    out.append("'")
    return "".join(out)


def quote(word: str, shell: str) -> str:
    """One word for ``shell`` (``posix``, ``cmd``, ``powershell`` or ``fish``)."""
    if shell == CMD:
        return cmd_quote(word)
    if shell == POWERSHELL:
        return ps_quote(word)
    if shell == FISH:
        return fish_quote(word)
    return posix_quote(word)


def join(argv: Iterable[str | os.PathLike[str]], shell: str | None = None) -> str:
    """The argument list as one command line for ``shell`` (this machine's by default,
    :func:`native`). PowerShell runs a quoted program only through the call operator ``&``."""
    sh = shell or native()
    words = [quote(os.fspath(a), sh) for a in argv]
    if sh == POWERSHELL and words and words[0][:1] == "'":
        words.insert(0, "&")
    return " ".join(words)


def unset_then(name: str, command: str, shell: str) -> str:
    """``command`` run with the environment variable ``name`` removed first.

    cmd: ``set "NAME="`` (the quotes keep a trailing space out of the value; ``set NAME= &&``
    would set it to a space) and ``&``, which runs the command whether or not the variable was
    set; PowerShell: ``Remove-Item Env:NAME``; POSIX: ``env -u NAME``."""
    if shell == CMD:
        return f'set "{name}=" & {command}'
    if shell == POWERSHELL:
        item = f"Env:{name}" if _ENV_NAME.fullmatch(name) else f"-LiteralPath {ps_quote('Env:' + name)}"
        return f"Remove-Item {item} -ErrorAction SilentlyContinue; {command}"
    return f"env -u {posix_quote(name)} {command}"


def shell_for_os(os_family: str | None) -> str:
    """The shell a command for ``os_family`` (``windows``, ``linux``, ``macos``) is written for
    when nothing else is known: PowerShell on Windows, POSIX elsewhere."""
    return POWERSHELL if os_family == "windows" else POSIX


def native() -> str:
    """The shell the commands of this machine are written for when nothing else is known."""
    return shell_for_os("windows" if os.name == "nt" else "linux")


_SHELL_PROGRAMS = {"cmd.exe": CMD, "powershell.exe": POWERSHELL, "pwsh.exe": POWERSHELL, "pwsh": POWERSHELL,
                   "bash.exe": POSIX, "sh.exe": POSIX, "zsh.exe": POSIX, "dash.exe": POSIX, "fish.exe": POSIX}


def shell_of_processes(names: Sequence[str]) -> str | None:
    """The shell among process names, nearest first (``["python.exe", "cmd.exe"]`` -> cmd), or None."""
    for name in names:
        found = _SHELL_PROGRAMS.get(name.lower())
        if found:
            return found
    return None


@functools.cache
def current_shell(max_depth: int = 4) -> str:
    """The shell the user typed this command into: on Windows the nearest cmd, PowerShell or
    POSIX shell among this process's ancestors (a console-script launcher or ``py`` may sit in
    between), else :func:`native`; POSIX elsewhere. Looked up once per process."""
    if os.name != "nt":
        return POSIX
    names: list[str] = []
    try:
        import psutil

        proc = psutil.Process().parent()
        while proc is not None and len(names) < max_depth:
            names.append(proc.name())
            proc = proc.parent()
    except Exception:  # psutil missing, a parent that went away or is not ours to look at
        pass
    return shell_of_processes(names) or native()
