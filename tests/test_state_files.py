"""Issue 27, must show 4: every state file corrupted in every way, then the commands.

The assistant's own files (the list of environments, the Python probe cache, the detection cache,
an upgrade's journal) and the tools' files it reads (conda's environments.txt) are written here as
Latin-1 text, JSON nested 100 000 deep, 60 MB of one string, or binary garbage. Each command then
runs as a user runs it (the real CLI, a subprocess): it answers without a traceback, the file it
could not use is kept aside byte for byte (renamed beside it, never deleted) when it is the
assistant's own record, and an install still records its new environment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BAD = {
    "latin1": b'{"schema_version": 1, "environments": [{"path": "/caf\xe9"}]}',
    "nested": b"[" * 100_000 + b"]" * 100_000,
    "huge": b'{"a": "' + b"x" * 60_000_000 + b'"}',
    "garbage": b"\x00\x01\x02 not json \xff",
}


def _cli(home: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TORCH_SETUP_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "app", *argv], cwd=REPO, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


def _files(home: Path) -> dict[str, Path]:
    # (one cache since issue 26: the interpreter probe's answers are kept in detection's cache)
    code = ("import json; from app.core.base import paths; from app.core.env import registry; "
            "print(json.dumps({'registry': str(registry.registry_file()), "
            "'probes': str(paths.cache_dir() / 'detect-cache.json'), "
            "'detect': str(paths.cache_dir() / 'detect-cache.json')}))")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "TORCH_SETUP_HOME": str(home)})
    return {k: Path(v) for k, v in json.loads(res.stdout).items()}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("which", ["registry", "probes", "detect"])
def test_a_damaged_state_file_never_breaks_a_command(tmp_path, which, kind):
    home = tmp_path / "home"
    target = _files(home)[which]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(BAD[kind])
    for argv in (("envs", "list", "--json", "--no-size"), ("detect", "--json")):
        res = _cli(home, *argv)
        assert "Traceback" not in res.stderr, (argv, res.stderr[-2000:])
        assert res.returncode == 0, (argv, res.stdout[-500:], res.stderr[-1500:])
        json.loads(res.stdout)  # the answer is whole
    if which == "registry":  # the assistant's own record: kept aside, byte for byte, and said so
        aside = [p for p in target.parent.iterdir() if ".corrupt-" in p.name]
        assert len(aside) == 1 and aside[0].read_bytes() == BAD[kind], sorted(target.parent.iterdir())
        res = _cli(home, "envs", "list")
        assert "Traceback" not in res.stderr


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_damaged_upgrade_journal_is_kept_and_nothing_moves(tmp_path, kind):
    home = tmp_path / "home"
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    code = (f"import sys; from pathlib import Path; from app.core.lifecycle import staging as st, upgrade as up; "
            f"j = st.journal_file(Path({str(env)!r})); j.write_bytes(sys.stdin.buffer.read()); "
            f"print(up.recover(Path({str(env)!r}))); print([p.name for p in j.parent.iterdir()])")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, input=BAD[kind], capture_output=True, timeout=120,
                         env={**os.environ, "TORCH_SETUP_HOME": str(home)})
    out, err = res.stdout.decode(), res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in err, err[-2000:]
    assert "was damaged; it was kept as" in out and "nothing was moved" in out
    assert ".damaged-" in out and (env / "pyvenv.cfg").is_file()


def test_an_install_still_records_its_env_when_the_list_was_damaged(tmp_path, tiny_wheels):
    home = tmp_path / "home"
    reg = _files(home)["registry"]
    reg.parent.mkdir(parents=True, exist_ok=True)
    reg.write_bytes(BAD["nested"])
    env = tmp_path / "new-env"
    res = _cli(home, "install", "--env", str(env), "--packages", "netlab-dep==0.5", "--find-links", str(tiny_wheels),
               "--yes", "--no-verify", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    listed = json.loads(_cli(home, "envs", "list", "--json", "--no-size").stdout)["environments"]
    assert any(e["path"] == str(env) for e in listed), listed
    assert any(".corrupt-" in p.name for p in reg.parent.iterdir())


@pytest.mark.posix_only("a folder name that is not UTF-8 is a POSIX matter (bytes)")
def test_latin1_conda_list_and_a_non_utf8_env_path(tmp_path):
    home = tmp_path / "home"
    fake_home = tmp_path / "user"
    odd = os.fsencode(str(tmp_path)) + b"/caf\xe9-env"
    os.makedirs(odd + b"/conda-meta")
    (fake_home / ".conda").mkdir(parents=True)
    (fake_home / ".conda" / "environments.txt").write_bytes(odd + b"\n")
    env = {**os.environ, "TORCH_SETUP_HOME": str(home), "HOME": str(fake_home), "PYTHONIOENCODING": "utf-8"}
    res = subprocess.run([sys.executable, "-m", "app", "envs", "list", "--json", "--no-size", "--all"], cwd=REPO, env=env,
                         capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == 0 and "Traceback" not in err, err[-2000:]
    paths = [e["path"] for e in json.loads(res.stdout.decode("utf-8"))["environments"]]
    assert os.fsdecode(odd) in paths, paths  # the folder, as the OS names it (its byte shown escaped)
    res = subprocess.run([sys.executable, "-m", "app", "envs", "list", "--all"], cwd=REPO, env=env, capture_output=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert res.returncode == 0 and b"Traceback" not in res.stderr and b"caf\\udce9-env" in res.stdout
