"""Finding 11: a path that cannot be used is bad input (exit 2) naming the option, in every command.

A 300-character folder name is refused by the parser itself (every option whose metavar is
PATH / DIR / FILE gets :func:`app.cli.path_argument`); an ``OSError`` about a given path that
still escapes a command (permission denied on a parent ...) is turned into exit 2 naming the
option by the CLI entry; neither ever shows a traceback.
"""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import unprivileged

REPO = Path(__file__).resolve().parents[1]
LONG = "x" * 300
BAD = f"/tmp/{LONG}/y"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def nobody():
    """The CLI as uid 65534 with its own world-readable copy of the app (tests/unprivileged.py): the
    checkout itself may lie in a private folder; skipped, naming why, without root or setpriv."""
    yield from unprivileged.stage()


# Every path option of every command (the ten the review found, and the rest).
CASES = [
    ("detect", "--out", []), ("detect", "--target", []),
    ("recommend", "--from-report", []), ("recommend", "--compat", []),
    ("install", "--env", ["--packages", "six", "--yes"]),
    ("install", "--python", ["--env", "/tmp/e", "--packages", "six", "--yes"]),
    ("install", "--find-links", ["--env", "/tmp/e", "--packages", "six", "--yes"]),
    ("install", "--from-bundle", ["--env", "/tmp/e", "--yes"]),
    ("install", "--ca-bundle", ["--env", "/tmp/e", "--packages", "six", "--yes"]),
    ("install", "--config", ["--yes"]),
    ("install", "--vcredist", ["--env", "/tmp/e", "--packages", "six", "--yes"]),
    ("bundle", "--out", ["--packages", "six"]), ("bundle", "--check", []),
    ("bundle", "--from-report", ["--out", "/tmp/b"]), ("bundle", "--find-links", ["--out", "/tmp/b", "--packages", "six"]),
    ("verify", "--env", []), ("bench", "--env", []),
    ("doctor", "--env", []), ("doctor", "--from-report", ["--env", "/tmp/e"]),
    ("bundle", "--ca-bundle", ["--out", "/tmp/b", "--packages", "six"]),
    ("upgrade", "--from-report", ["--env", "/tmp/e"]), ("upgrade", "--find-links", ["--env", "/tmp/e"]),
    ("gui", "--screenshot-dir", []),
    ("install", "--lock", ["--env", "/tmp/e", "--yes"]),
    ("install", "--from-report", ["--env", "/tmp/e", "--packages", "six", "--dry-run"]),
    ("bundle", "--lock", ["--out", "/tmp/b"]),
    ("export", "--env", []), ("export", "--out", ["--env", "/tmp/e"]),
    ("export", "--lock", ["--env", "/tmp/e", "--format", "dockerfile"]), ("export", "--from-report", ["--env", "/tmp/e"]),
    ("export", "--find-links", ["--env", "/tmp/e"]), ("export", "--ca-bundle", ["--env", "/tmp/e"]),
]


@pytest.mark.parametrize("command, option, rest", CASES, ids=[f"{c} {o}" for c, o, _ in CASES])
def test_a_300_character_name_is_refused_naming_the_option(command, option, rest):
    r = cli(command, option, BAD, *rest)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"argument {option}" in r.stderr and "300 bytes long" in r.stderr, r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_path_options_all_carry_the_check():
    from app.cli import PATH_METAVARS, build_parser, path_argument
    from app.commands._args import python_spec  # --python: a version or a path, checked as a path when one

    parser = build_parser()
    checked = []
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        for a in p._actions:
            if a.metavar in PATH_METAVARS:
                assert a.type in (path_argument, python_spec), (name, a.option_strings)
                checked.append(f"{name} {a.option_strings[0]}")
    assert {f"{c} {o}" for c, o, _ in CASES} == set(checked)


def test_an_oserror_escaping_a_command_is_bad_input_naming_the_option(monkeypatch, capsys):
    import app.commands.recommend as rec
    from app import cli

    def denied(args):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(args.from_report, "..", "report.json"))

    monkeypatch.setattr(rec, "run", denied)
    code = cli.main(["recommend", "--from-report", "/locked/dir/report.json"])
    err = capsys.readouterr().err
    assert code == 2 and "--from-report: the path cannot be used: Permission denied" in err

    def enospc(args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rec, "run", enospc)
    assert cli.main(["recommend", "--from-report", "/r.json"]) == 1  # not about a path: a failure, no traceback
    assert "No space left on device" in capsys.readouterr().err


@pytest.mark.other_user
@pytest.mark.parametrize("args, named", [
    (["recommend", "--from-report", "{locked}/r.json"], "{locked}/r.json"),
    (["install", "--env", "{locked}/inner/env", "--packages", "six", "--yes"], "--env"),
    (["verify", "--env", "{locked}/inner/env"], "--env"),
    (["doctor", "--env", "{locked}/inner/env"], "--env"),
    (["bench", "--env", "{locked}/inner/env"], "--env"),
    (["detect", "--out", "{locked}/x.json"], "--out"),
    (["bundle", "--check", "{locked}/inner"], "{locked}/inner"),
    (["install", "--config", "{locked}/a.toml", "--yes"], "{locked}/a.toml"),
])
def test_permission_denied_on_a_parent_is_bad_input(nobody, args, named):
    work = nobody.scratch()  # 0755 parents all the way up: the one refusal is at locked/
    locked = work / "locked"
    (locked / "inner").mkdir(parents=True)
    locked.chmod(0o700)  # root's; the CLI runs as nobody below
    home = work / "home"
    home.mkdir()
    home.chmod(0o777)
    r = nobody.run(["-m", "app.cli", *[a.format(locked=locked) for a in args]], env=nobody.env(home))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Permission denied" in r.stderr and named.format(locked=locked) in r.stderr, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
