"""An action as the command line applies it: the exact ``torch-setup`` command (the one that
failed, with the option changed), or for an answer-file run the key to set.

``argv`` is the failing command's arguments (without the program name). Values only the user
knows (another folder, the proxy, an index) appear as an upper-case placeholder to fill in.
"""
from __future__ import annotations

from collections.abc import Sequence

from app.core.base import shells
from app.core.base.text import Msg, msg
from app.core.remedies.types import Action, ActionKind

__all__ = ["PLACEHOLDERS", "answer_line", "cli_text", "command_for", "replace_option"]

A = ActionKind
PROG = "torch-setup"

#: What the user fills in where the action cannot know the value.
PLACEHOLDERS: dict[ActionKind, str] = {
    A.CHOOSE_OTHER_LOCATION: "NEW_FOLDER", A.SET_PROXY: "http://USER:PASSWORD@HOST:PORT",
    A.SWITCH_SOURCE: "URL", A.CHOOSE_PYTHON: "X.Y", A.SET_CA_BUNDLE: "FILE", A.RUN_VCREDIST: "VC_REDIST.X64.EXE",
}
_PLACEHOLDER_OPTION: dict[ActionKind, str] = {
    A.CHOOSE_OTHER_LOCATION: "--env", A.SET_PROXY: "--proxy", A.SWITCH_SOURCE: "--index-url",
    A.CHOOSE_PYTHON: "--python", A.SET_CA_BUNDLE: "--ca-bundle", A.RUN_VCREDIST: "--vcredist",
}


def replace_option(argv: Sequence[str], option: str, value: str | None) -> list[str]:
    """``argv`` without ``option`` (``--opt V`` or ``--opt=V``), then ``option value`` appended
    (nothing appended for None)."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == option:
            skip = True
            continue
        if word.startswith(option + "="):
            continue
        out.append(word)
    if value is not None:
        out += [option, value]
    return out


def command_for(action: Action, argv: Sequence[str], *, os_family: str = "linux", shell: str | None = None) -> str:
    """The command that applies ``action`` (the same command when no option applies it), for
    ``shell`` (:mod:`app.core.base.shells`; by default the usual one of ``os_family``)."""
    sh = shell or shells.shell_for_os(os_family)
    words = [PROG, *argv]
    opt = action.cli_option()
    if opt is not None:
        words = [PROG, *replace_option(argv, opt[0], opt[1])]
    elif action.kind in _PLACEHOLDER_OPTION:
        words = [PROG, *replace_option(argv, _PLACEHOLDER_OPTION[action.kind], PLACEHOLDERS[action.kind])]
    cmd = shells.join(words, sh)
    if action.kind is A.UNSET_ENV and action.value:
        return shells.unset_then(action.value, cmd, sh)
    return cmd


def answer_line(action: Action) -> str | None:
    """The answer-file line that applies ``action`` (``[torch] version = "2.14.1"``), a removal
    note (``[torch] version: remove``), or None when no key does."""
    found = action.answer_key()
    if found is None:
        return None
    section, key, value = found
    if value is None:
        return f"[{section}] {key}: remove"
    shown = value or PLACEHOLDERS.get(action.kind, "...")
    return f'[{section}] {key} = "{shown}"'


# long: one sentence per kind, each a literal the catalogue test can read
def cli_text(action: Action, argv: Sequence[str], *, os_family: str = "linux", answers: bool = False,
             shell: str | None = None) -> Msg:
    """What the command line prints for ``action``: the exact command for ``shell`` (or, for an
    answer-file run, the key to set), with the step outside the assistant said in words."""
    line = answer_line(action) if answers else None
    if line is not None:
        return msg("remedy.cli_answer", "In the answer file: {line}", line=line)
    cmd = command_for(action, argv, os_family=os_family, shell=shell)
    k = action.kind
    if k is A.FREE_SPACE:
        if action.gb is not None:
            return msg("remedy.cli_free_gb", "Free {gb:.1f} GiB on the disk of {path}, then run: {command}",
                       gb=action.gb, path=action.path or ".", command=cmd)
        return msg("remedy.cli_free", "Free some space on the disk of {path}, then run: {command}",
                   path=action.path or ".", command=cmd)
    if k is A.INSTALL_VCREDIST:
        return msg("remedy.cli_vcredist", "Install the Microsoft Visual C++ Redistributable (x64) from {url}, "
                   "then run: {command}", url=action.url, command=cmd)
    if k is A.UPDATE_DRIVER:
        if action.value:
            return msg("remedy.cli_driver_min", "Install NVIDIA driver {version} or newer ({url}), then run: "
                       "{command}", version=action.value, url=action.url, command=cmd)
        return msg("remedy.cli_driver", "Install a newer NVIDIA driver ({url}), then run: {command}",
                   url=action.url, command=cmd)
    if k is A.ENABLE_LONG_PATHS:
        return msg("remedy.cli_long_paths", "Allow long paths in Windows ({url}), then run: {command}",
                   url=action.url, command=cmd)
    if k is A.OPEN_LOG:
        return msg("remedy.cli_log", "The full log: {path}", path=action.path)
    if k is A.RETRY:
        return msg("remedy.cli_retry", "Run it again: {command}", command=cmd)
    if k in PLACEHOLDERS and (action.cli_option() is None):
        return msg("remedy.cli_fill", "Run, with {placeholder} filled in: {command}",
                   placeholder=PLACEHOLDERS[k], command=cmd)
    return msg("remedy.cli_run", "Run: {command}", command=cmd)
