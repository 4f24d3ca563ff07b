"""Commands shown to the user, right for the shell they are meant for (app.core.base.shells).

The pure rules are checked on every OS; on Windows (the lane) the cmd forms are run for real
through ``cmd.exe`` from a folder like ``C:\\Users\\Tom Smith\\张伟\\torch env``. PowerShell is a
stub under Wine, so its strings are checked by the unit tests only.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.base import shells
from app.core.lifecycle.terminal import windows_activation, windows_terminal
from app.core.proc import runner
from app.core.remedies import Action, ActionKind
from app.core.remedies.commands import command_for
from app.gui.pages._commands import command_text
from tests.helpers import bare_venv

WIN_ENV = r"C:\Users\Tom Smith\张伟\torch env"
windows_only = pytest.mark.skipif(os.name != "nt", reason="runs cmd.exe (the Windows lane)")


# ------------------------------------------------------------------------------ the rules

def test_cmd_quotes_once_and_only_what_cmd_would_split():
    assert shells.cmd_quote(r"C:\Users\li\env") == r"C:\Users\li\env"
    assert shells.cmd_quote(WIN_ENV) == f'"{WIN_ENV}"'
    assert shells.cmd_quote(r"C:\R&D\env") == r'"C:\R&D\env"'
    assert shells.cmd_quote("") == '""'
    # the C runtime reads \" as a quote: a trailing backslash is doubled before the closing one
    assert shells.cmd_quote("C:\\a b\\") == '"C:\\a b\\\\"'
    # after an embedded quote cmd's quoting is off: the operators there are escaped with ^
    assert shells.cmd_quote('a"b&c') == '"a\\"b^&c"'


def test_powershell_single_quotes_and_the_call_operator():
    assert shells.ps_quote(r"C:\Users\张伟\env") == r"C:\Users\张伟\env"
    assert shells.ps_quote(WIN_ENV) == f"'{WIN_ENV}'"
    assert shells.ps_quote("it's $HOME") == "'it''s $HOME'"
    assert shells.ps_quote("O\u2019Brien x") == "'O\u2019\u2019Brien x'"  # a typographic quote ends a string too
    assert shells.ps_quote("--%") == "'--%'"
    assert shells.ps_quote("a,b") == "'a,b'"  # a bare comma makes an array
    python = WIN_ENV + r"\Scripts\python.exe"
    assert shells.join([python, "-m", "pip", "install", "ipykernel"], shells.POWERSHELL) == \
        f"& '{python}' -m pip install ipykernel"
    assert shells.join(["torch-setup", "verify"], shells.POWERSHELL) == "torch-setup verify"


def test_posix_is_shlex():
    assert shells.join(["source", "/home/a b/env/bin/activate"], shells.POSIX) == "source '/home/a b/env/bin/activate'"


def test_unsetting_a_variable_per_shell():
    unset = Action(ActionKind.UNSET_ENV, "CUDA_VISIBLE_DEVICES", path="")
    argv = ["verify", "--env", WIN_ENV]
    assert command_for(unset, argv, os_family="windows", shell="cmd") == \
        f'set "CUDA_VISIBLE_DEVICES=" & torch-setup verify --env "{WIN_ENV}"'
    assert command_for(unset, argv, os_family="windows", shell="powershell") == \
        f"Remove-Item Env:CUDA_VISIBLE_DEVICES -ErrorAction SilentlyContinue; torch-setup verify --env '{WIN_ENV}'"
    assert command_for(unset, ["verify", "--env", "/srv/a b"]) == \
        "env -u CUDA_VISIBLE_DEVICES torch-setup verify --env '/srv/a b'"


def test_activation_commands_on_windows_are_quoted_once():
    acts = {a.shell: a.command for a in windows_activation(WIN_ENV)}
    assert acts == {"powershell": "Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force; "
                                  f"& '{WIN_ENV}\\Scripts\\Activate.ps1'",
                    "cmd": f'"{WIN_ENV}\\Scripts\\activate.bat"'}
    conda = windows_activation(WIN_ENV, "conda")
    assert [(a.shell, a.command) for a in conda] == [("conda", f'conda activate "{WIN_ENV}"')]


def test_the_windows_terminal_command_holds_no_path():
    """The new window starts in the env's Scripts folder: nothing on its command line needs quoting."""
    argv, cwd = windows_terminal(WIN_ENV)
    assert cwd == WIN_ENV + r"\Scripts"
    assert argv == ["cmd.exe", "/c", "start", "", "cmd.exe", "/k", "activate.bat", "^&", "cd", r"..\.."]
    line = subprocess.list2cmdline(argv)  # what the runner hands to CreateProcess
    assert line == r'cmd.exe /c start "" cmd.exe /k activate.bat ^& cd ..\..'
    argv, cwd = windows_terminal(WIN_ENV, "conda")
    assert cwd == WIN_ENV and argv[6:] == ["conda", "activate", ".\\", "^&", "cd", ".."]


def test_gui_command_text_names_its_shell():
    python = WIN_ENV + r"\Scripts\python.exe"
    assert command_text([python, "-m", "pip", "install", "ipykernel"], shells.CMD) == \
        f'"{python}" -m pip install ipykernel'
    assert command_text([python, "-m", "pip"], shells.POWERSHELL) == f"& '{python}' -m pip"
    assert shells.shell_of_processes(["torch-setup.exe", "cmd.exe", "explorer.exe"]) == shells.CMD
    assert shells.shell_of_processes(["python.exe", "py.exe", "pwsh.exe"]) == shells.POWERSHELL
    assert shells.shell_of_processes(["explorer.exe"]) is None


# ------------------------------------------------------------------------------ for real, in cmd.exe

def _cmd_line(line: str, env: dict[str, str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """``line`` as typed at a cmd prompt (``cmd /s /c "line"`` keeps the line as it is)."""
    return subprocess.run(f'cmd.exe /d /s /c "{line}"', capture_output=True, timeout=60, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def cjk_env(tmp_path_factory) -> Path:
    """A real venv (uv) at ...\\Users\\Tom Smith\\张伟\\torch env."""
    env = tmp_path_factory.mktemp("win-shell") / "Users" / "Tom Smith" / "张伟" / "torch env"
    env.parent.mkdir(parents=True)
    bare_venv(env)
    bat = env / "Scripts" / "activate.bat"
    assert bat.is_file()
    # uv's activate.bat holds the path in UTF-8 and reads it after `chcp 65001`, which Wine's cmd does
    # not honour (张伟 comes out as mojibake): under Wine an ASCII stand-in that finds its folder at
    # run time (%~dp0) does what it does
    if os.environ.get("TSA_WINE_LANE"):
        bat.write_text('@set "VIRTUAL_ENV=%~dp0.."\r\n@set "PATH=%~dp0;%PATH%"\r\n', encoding="ascii")
    yield env
    shutil.rmtree(env.parent.parent.parent, ignore_errors=True)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(extra)
    return env


@windows_only
def test_cmd_unset_removes_the_variable_whole(cjk_env):
    python = str(cjk_env / "Scripts" / "python.exe")
    show = shells.join([python, "-c", "import os; print(repr(os.environ.get('TSA_GONE')))"], shells.CMD)
    res = _cmd_line(shells.unset_then("TSA_GONE", show, shells.CMD), env=_clean_env(TSA_GONE="1"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode().strip() == "None"
    res = _cmd_line(shells.unset_then("TSA_NEVER_SET", show, shells.CMD), env=_clean_env())
    assert res.returncode == 0 and res.stdout.decode().strip() == "None"  # runs although nothing was set


@windows_only
def test_cmd_runs_the_quoted_python_path(cjk_env):
    python = str(cjk_env / "Scripts" / "python.exe")
    res = _cmd_line(shells.join([python, "-c", "print(1)"], shells.CMD), env=_clean_env())
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode().strip() == "1"


@windows_only
def test_cmd_quoting_gives_the_program_each_word_back(cjk_env):
    python = str(cjk_env / "Scripts" / "python.exe")
    words = [WIN_ENV, r"C:\R&D (2)\x", "a|b", "<in>", "x^y", "", "trail\\", 'say "hi" & go', "tab\there"]
    line = shells.join([python, "-X", "utf8", "-c", "import sys, json; print(json.dumps(sys.argv[1:]))", *words],
                       shells.CMD)
    res = _cmd_line(line, env=_clean_env())
    assert res.returncode == 0, res.stderr
    import json

    assert json.loads(res.stdout.decode("utf-8")) == words


@windows_only
def test_cmd_activation_command_activates_the_env(cjk_env):
    act = {a.shell: a.command for a in windows_activation(str(cjk_env))}["cmd"]
    res = _cmd_line(f"{act} & python -X utf8 -c \"import sys; print(sys.prefix)\"", env=_clean_env())
    assert res.returncode == 0, res.stderr
    assert Path(res.stdout.decode("utf-8").strip().splitlines()[-1]) == cjk_env


@windows_only
def test_open_terminal_command_activates_the_env_in_its_parent_folder(cjk_env):
    """The command "Open a terminal" starts, made to wait in this console (``start /b /wait``,
    ``/c`` instead of ``/k``) so what the new cmd did can be read."""
    argv, cwd = windows_terminal(str(cjk_env))
    assert argv[2:4] == ["start", ""] and argv[5] == "/k"
    argv = [*argv[:4], "/b", "/wait", argv[4], "/c", *argv[6:],
            "^&", "python", "-X", "utf8", "-c", "import sys; print(sys.prefix)", "^&", "cd"]
    res = runner.run(argv, cwd=cwd, timeout=60, env=_clean_env())
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.strip().splitlines()
    assert Path(lines[-2]) == cjk_env  # the env's own python is first on PATH
    # cmd's `cd` writes in the console's code page (张伟 may come out as ??): the parent folder
    assert lines[-1].rstrip("\\").endswith(("张伟", "??")) and "torch env" not in lines[-1]
