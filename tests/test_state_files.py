"""Issue 27, must show 4: every state file corrupted in every way, then the commands.

The assistant's own files (the list of environments, the detection cache, which holds the Python
probes' answers too, the cached ``compat status``, the record of downloaded compatibility data, an upgrade's
journal, the guard's record inside an env, a lock's holder record) and the tools' files it reads
(conda's environments.txt) are written here as Latin-1 text, JSON nested 100 000 deep, 60 MB of
one string, binary garbage, or JSON that is valid but not an object. Then the commands that read
them run as a user runs them (the real CLI, a subprocess): each answers without a traceback
(exit 0; exit 2 where it refuses, saying why), every damaged file of the assistant's own is kept
aside byte for byte (renamed beside it, never deleted; a lock's record, which its holder may be
writing, is left where it is), and an install still records its new environment.
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
    "not-an-object": b'[{"pid": 1}, "x"]',
}
#: the state files, and where each is (asked of the code itself, under the run's TORCH_SETUP_HOME)
WHERE = ("import json, sys; from pathlib import Path; from app.core.base import paths; from app.core.compat import freshness, data as compat; from app.core.env import registry, guard; "
         "from app.core.lifecycle import staging; "
         "from app.core.base.locks import holder_file_for, lock_file_for; env = Path(sys.argv[1]); "
         "print(json.dumps({'registry': str(registry.registry_file()), "
         "'detect': str(paths.cache_dir() / 'detect-cache.json'), 'status': str(freshness._cache_path()), "
         "'compat': str(compat.user_folder() / compat.MARKER), 'journal': str(staging.journal_file(env)), "
         "'guard': str(env / guard.STATE_FILE), 'lock': str(holder_file_for(lock_file_for(env)))}))")


def _cli(home: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TORCH_SETUP_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "app", *argv], cwd=REPO, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


def _files(home: Path, env: Path) -> dict[str, Path]:
    res = subprocess.run([sys.executable, "-c", WHERE, str(env)], cwd=REPO, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "TORCH_SETUP_HOME": str(home)})
    assert res.returncode == 0, res.stderr
    return {k: Path(v) for k, v in json.loads(res.stdout).items()}


def _damage(files: dict[str, Path], names: tuple[str, ...], data: bytes) -> None:
    for name in names:
        files[name].parent.mkdir(parents=True, exist_ok=True)
        files[name].write_bytes(data)


def _kept_aside(path: Path, data: bytes) -> bool:
    return any(p.name.startswith(path.name + ".") and p.read_bytes() == data for p in path.parent.iterdir()
               if p != path and p.is_file())


@pytest.mark.parametrize("kind", sorted(BAD))
def test_every_state_file_damaged_each_way_every_command_answers_and_nothing_is_lost(tmp_path, monkeypatch, kind,
                                                                                     tiny_wheels):
    home, env = tmp_path / "home", tmp_path / "new env"
    data = BAD[kind]
    files = _files(home, env)
    _damage(files, ("registry", "detect", "status", "compat"), data)

    def answers(res: subprocess.CompletedProcess[str], rc: int = 0) -> subprocess.CompletedProcess[str]:
        assert "Traceback" not in res.stderr and res.returncode == rc, (res.args, res.stdout[-800:], res.stderr[-2000:])
        return res

    # install reads the list of environments, the probe cache and the compat data; it records its env
    answers(_cli(home, "install", "--env", str(env), "--packages", "netlab-dep==0.5", "--find-links", str(tiny_wheels),
                 "--yes", "--no-verify", "--json"))
    doc = json.loads(answers(_cli(home, "envs", "list", "--json", "--no-size")).stdout)
    assert any(e["path"] == str(env) for e in doc["environments"]), doc
    # the install set the damaged list aside without a word; every list of the environments says where it is
    assert "A damaged list of environments was kept as" in doc["registry_problem"], doc["registry_problem"]
    for argv in (("detect", "--json"), ("recommend", "--json")):
        json.loads(answers(_cli(home, *argv)).stdout)  # the answer is whole
    # the guard's record in the env (unguard reads it); an upgrade's journal (every upgrade command reads it)
    _damage(files, ("guard", "journal"), data)
    answers(_cli(home, "envs", "unguard", str(env)))
    res = answers(_cli(home, "upgrade", "--env", str(env), "--confirm", "--yes"), rc=2)
    assert "journal" in res.stderr and "damaged" in res.stderr and "nothing was moved" in res.stderr, res.stderr
    for name in ("registry", "detect", "status", "compat", "guard", "journal"):
        assert _kept_aside(files[name], data), (name, sorted(p.name for p in files[name].parent.iterdir()))
    # a lock another run holds, its record damaged: the refusal still says the env is busy (exit 2)
    from app.core.base.locks import acquire

    monkeypatch.setenv("TORCH_SETUP_HOME", str(home))  # the lock file under this run's home
    held = acquire(env, "a test holding the lock")
    files["lock"].write_bytes(data)
    try:
        res = answers(_cli(home, "install", "--env", str(env), "--packages", "netlab-dep==0.5", "--find-links",
                           str(tiny_wheels), "--yes", "--no-verify"), rc=2)
        assert "is being changed by another run" in res.stderr, res.stderr
        assert files["lock"].read_bytes() == data  # its holder may be writing it: left where it is
    finally:
        held.release()


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
