"""Failures that must end with a clear message and nothing left behind: a full disk (before
and during the install), a read-only target, a non-empty non-env folder, an unreachable index,
a Python that cannot run or cannot create a venv."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import fake_program

REPO = Path(__file__).resolve().parents[1]


def cli(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          stdin=subprocess.DEVNULL)


def snapshot_tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def tmpfs(tmp_path):
    """A 20 MB tmpfs (root only); unmounted afterwards."""
    mnt = tmp_path / "small disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mnt)],
                       capture_output=True, text=True, encoding="utf-8")
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.posix_only("a 20 MB tmpfs mounted as root (Linux)")
def test_full_disk_is_refused_before_anything_is_written(tmpfs, local_wheels):
    env = tmpfs / "env ü"
    r = cli("install", "--env", env, "--packages", "torch==2.13.0", "--find-links", local_wheels,
            "--yes", "--no-verify")
    assert r.returncode == 2, r.stderr
    assert "Not enough disk space" in r.stderr and "Nothing was changed" in r.stderr
    assert "What to do:" in r.stderr
    assert list(tmpfs.iterdir()) == []


@pytest.mark.slow
@pytest.mark.posix_only("a 20 MB tmpfs mounted as root (Linux)")
def test_disk_filling_up_during_the_install_rolls_back(tmpfs):
    # numpy is estimated small (10 MB) but takes ~60 MB installed: the pre-flight passes and
    # uv runs out of space while copying files in (the uv cache is on another file system).
    env = tmpfs / "sub dir" / "env"
    r = cli("install", "--env", env, "--packages", "numpy", "--yes", "--no-verify", "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    err = json.loads(r.stdout)
    # what happened and what to do: the remedy catalogue's explanation and actions (free N GB there)
    remedy = err["remedies"][0]
    assert remedy["code"] == "disk-full" and "is full" in remedy["explanation"], err
    free = next(a for a in err["actions"] if a["kind"] == "free_space")
    assert free["gb"] > 0 and free["path"] == str(env)
    assert "Nothing was left behind" in err["message"]
    assert list(tmpfs.iterdir()) == []  # the env and the "sub dir" we created are gone
    assert Path(err["log_path"]).is_file()


@pytest.mark.posix_only("a 20 MB tmpfs mounted as root (Linux)")
def test_read_only_target_is_refused(tmpfs):
    target = tmpfs / "env"
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    r = cli("install", "--env", target, "--packages", "six", "--yes", "--no-verify")
    assert r.returncode == 2, r.stderr
    assert "read-only file system" in r.stderr
    assert "Choose a folder you can write to" in r.stderr
    assert not target.exists()


@pytest.mark.posix_only("chattr +i, Linux's immutable flag")
def test_immutable_target_folder_is_refused(tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir()
    made = subprocess.run(["chattr", "+i", str(parent)], capture_output=True, text=True, encoding="utf-8")
    if made.returncode != 0:  # needs root (CAP_LINUX_IMMUTABLE) and a filesystem with the flag (not tmpfs)
        pytest.skip(f"chattr +i refused (needs root and a filesystem with the immutable flag): {made.stderr.strip()}")
    try:
        r = cli("install", "--env", parent / "env", "--packages", "six", "--yes", "--no-verify")
        assert r.returncode == 2, r.stderr
        assert "not writable" in r.stderr
        assert list(parent.iterdir()) == []
    finally:
        subprocess.run(["chattr", "-i", str(parent)])


def test_non_empty_non_env_folder_is_refused_and_untouched(tmp_path):
    folder = tmp_path / "my thesis"
    folder.mkdir()
    (folder / "chapter1.tex").write_text("precious", encoding="utf-8")
    (folder / "data").mkdir()
    before = snapshot_tree(folder)
    r = cli("install", "--env", folder, "--packages", "six", "--yes", "--no-verify")
    assert r.returncode == 2, r.stderr
    assert "with files in it, and not a Python environment" in r.stderr
    assert snapshot_tree(folder) == before
    assert (folder / "chapter1.tex").read_text(encoding="utf-8") == "precious"


def test_unreachable_index_is_refused(tmp_path):
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--packages", "torch==2.13.0", "--index-url",
            "http://127.0.0.1:9/simple", "--yes", "--no-verify", "--json")
    assert r.returncode == 2, r.stderr
    err = json.loads(r.stdout)
    assert "torch index http://127.0.0.1:9/simple cannot be reached" in err["message"]
    assert "mirror" in err["hint"] and "offline bundle" in err["hint"]
    assert not env.exists()
    log = Path(err["log_path"]).read_text(encoding="utf-8")
    assert "reach:torch index: FAILED" in log and "nothing was changed" in log


def _fake_python(tmp_path: Path, source: str) -> Path:
    """A "python3.11" that runs ``source`` (Python, with this interpreter)."""
    return fake_program(tmp_path / "fake python", "python3.11", "import os, subprocess, sys\n" + source)


def test_python_that_does_not_run_is_refused(tmp_path):
    fake = _fake_python(tmp_path, "sys.stderr.write('python3.11: error while loading shared libraries\\n')\n"
                                  "sys.exit(127)\n")
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--installer", "pip", "--python", fake, "--packages", "six",
            "--yes", "--no-verify")
    assert r.returncode == 2, r.stderr
    assert "No usable Python" in r.stderr and "shared libraries" in r.stderr
    assert not env.exists()


NEEDS_VENV = pytest.mark.skipif(not (importlib.util.find_spec("venv") and importlib.util.find_spec("ensurepip")),
                                reason="the fake wraps this Python, which has no venv (the embeddable Windows build)")


@NEEDS_VENV
def test_python_that_cannot_create_a_venv_fails_and_leaves_nothing(tmp_path):
    # Like Debian without python3-venv: the interpreter works, `-m venv` makes a half
    # environment and fails.
    fake = _fake_python(tmp_path, f"""
if sys.argv[1:3] == ["-m", "venv"]:
    os.makedirs(os.path.join(sys.argv[3], "bin"), exist_ok=True)
    open(os.path.join(sys.argv[3], "pyvenv.cfg"), "w").close()
    sys.stderr.write("The virtual environment was not created successfully because ensurepip is not\\n"
                     "available.  On Debian/Ubuntu systems, you need to install the python3-venv\\n"
                     "package using the following command.\\n")
    sys.exit(1)
sys.exit(subprocess.run([{sys.executable!r}, *sys.argv[1:]]).returncode)
""")
    env = tmp_path / "new dir" / "env"
    r = cli("install", "--env", env, "--installer", "pip", "--python", fake, "--packages", "six",
            "--yes", "--no-verify")
    assert r.returncode == 1, r.stderr
    assert "Could not create the environment" in r.stderr
    assert "ensurepip is not" in r.stderr  # the relevant lines are shown
    assert "python3-venv" in r.stderr and "--installer uv" in r.stderr  # the hint
    assert not env.exists() and not env.parent.exists()


def test_no_confirmation_without_a_terminal_exits_2(tmp_path):
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--packages", "six", "--no-verify")
    assert r.returncode == 2
    assert "--yes" in r.stderr
    assert not env.exists()


@pytest.mark.netns
def test_missing_python_and_no_network_for_a_uv_download_is_explained(tmp_path):
    from app.core.env.backends import find_python

    if find_python("3.14")[0] is not None:
        pytest.skip("this machine has a Python 3.14")
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is not available (needs root or user namespaces)")
    env = tmp_path / "env"
    script = f"""
import sys
from app.core import install as core
from app.core.base.errors import UserError
p = core.plan(core.InstallRequest({str(env)!r}, python="3.14", packages=["six"]))
checks = core.preflight(p)
py = [c for c in checks if c.name == "python"][0]
print("CHECK", py.ok, py.severity, py.message)
try:
    core.install(p, checks=[c for c in checks if c.name != "reach:package index"])
except UserError as e:
    print("ERROR", e.message)
    print("HINT", e.hint)
"""
    r = subprocess.run(["unshare", "-n", sys.executable, "-c", script], cwd=REPO,
                       capture_output=True, text=True, encoding="utf-8", timeout=120,
                       env={**os.environ, "UV_PYTHON_INSTALL_DIR": str(tmp_path / "uv pythons")})
    assert "CHECK True warning No Python 3.14 was found" in r.stdout, r.stdout + r.stderr
    assert "uv will try to download" in r.stdout
    # refused before uv is started: the pre-flight asks the Python builds' download host first
    assert "ERROR No Python 3.14 is on this computer, and uv cannot download one" in r.stdout, r.stdout + r.stderr
    assert "cannot be reached" in r.stdout
    assert "HINT Choose a Python that is on this computer, or install Python 3.14" in r.stdout
    assert not env.exists()


@NEEDS_VENV
def test_a_pre_existing_empty_folder_is_kept_and_emptied_on_failure(tmp_path):
    fake = _fake_python(tmp_path, f"""
if sys.argv[1:3] == ["-m", "venv"]:
    for sub in ("bin", "lib"):
        os.makedirs(os.path.join(sys.argv[3], sub), exist_ok=True)
    open(os.path.join(sys.argv[3], "pyvenv.cfg"), "w").close()
    sys.stderr.write("Error: boom\\n")
    sys.exit(1)
sys.exit(subprocess.run([{sys.executable!r}, *sys.argv[1:]]).returncode)
""")
    target = tmp_path / "chosen empty folder"
    target.mkdir()
    r = cli("install", "--env", target, "--installer", "pip", "--python", fake, "--packages",
            "six", "--yes", "--no-verify")
    assert r.returncode == 1, r.stderr
    assert target.is_dir() and list(target.iterdir()) == []
