"""Must-show 3: ``envs remove`` deletes an environment and nothing else.

Each refusal is exit 2 with a clear message, and the file-tree checksums of what was pointed at
are the same before and after: a symlink to a folder with files, the home folder, ``/``, a parent
of a user folder, a folder that is not an environment, an environment this app did not make
(without --force), an environment holding a mount point. A removal that goes ahead unlinks a
symlink inside the env as a link: the folder it points to keeps every file.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from app.cli import main
from app.core.env import registry
from app.core.env.backends import backend_for
from app.core.install import InstallPlan, InstallRequest
from app.core.lifecycle.common import Refused
from app.core.lifecycle.remove import delete_tree, plan_remove
from app.core.sources.settings import SourceSettings
from tests.factories import make_install_result
from tests.helpers import SCRIPTS, can_symlink, site_packages, symlink
from tests.tree import digest


def _env(path: Path, *, ours: bool = True) -> Path:
    """A small venv-shaped folder with files (no installer needed to show what removal does)."""
    (path / SCRIPTS).mkdir(parents=True)
    (site_packages(path) / "pkg").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.11.7\n", encoding="utf-8")
    (site_packages(path) / "pkg" / "__init__.py").write_text("x = 1\n", encoding="utf-8")
    if can_symlink():
        (path / SCRIPTS / "python").symlink_to("/usr/bin/python3")
    else:  # Windows without the privilege, Wine: a venv's python.exe is a copy there anyway
        (path / SCRIPTS / "python.exe").write_bytes(b"MZ")
    if ours:
        p = InstallPlan(request=InstallRequest(env_path=path), env_path=path, backend=backend_for("venv", "uv"),
                        python=None, python_request=None, packages=("torch",), index=SourceSettings(), new_env=True,
                        estimate_mb=1, estimate_why="test")
        registry.record_install(make_install_result(path), p, None)
    return path


def _data(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "models" / "weights.bin").write_bytes(os.urandom(4096))
    (path / "README.txt").write_text("precious\n", encoding="utf-8")
    return path


def _remove(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["envs", "remove", *argv])
    return rc, capsys.readouterr().err


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake home folder (HOME points there, so Path.home() and platformdirs use it)."""
    h = tmp_path / "home" / "me"
    for d in ("Desktop", "Documents", "Downloads"):
        (h / d).mkdir(parents=True)
    (h / "Documents" / "thesis.txt").write_text("do not lose\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("USERPROFILE", str(h))  # Path.home() on Windows
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return h


def test_a_symlink_to_a_folder_with_files_is_refused(tmp_path, capsys):
    target = _data(_env(tmp_path / "real-env"))  # even an env this app made
    link = tmp_path / "link"
    symlink(link, target, directory=True)
    before = digest(target)
    rc, err = _remove(capsys, str(link), "--force", "--yes")
    assert rc == 2
    assert f"{link} is a symbolic link: it is not followed and nothing is deleted" in err
    assert link.is_symlink() and digest(target) == before


def test_the_home_folder_is_refused_even_when_it_looks_like_an_env(home, capsys):
    _env(home)  # pyvenv.cfg in the home folder, and recorded as made here
    before = digest(home)
    rc, err = _remove(capsys, str(home), "--force", "--yes")
    assert rc == 2
    assert "must never be deleted" in err and str(home) in err
    assert digest(home) == before


def test_a_parent_of_a_user_folder_is_refused(home, capsys):
    parent = home.parent
    (parent / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    before = digest(parent)
    rc, err = _remove(capsys, str(parent), "--force", "--yes")
    assert rc == 2 and "holds, a folder that must never be deleted" in err
    assert digest(parent) == before
    rc, err = _remove(capsys, str(home / "Documents"), "--force", "--yes")
    assert rc == 2 and (home / "Documents" / "thesis.txt").exists()


def test_the_filesystem_root_is_refused(capsys):
    before = {p.name: p.lstat().st_mtime_ns for p in Path("/").iterdir()}
    rc, err = _remove(capsys, "/", "--force", "--yes")
    root = os.path.abspath(os.sep)  # "/", or the current drive's root on Windows ("C:\\")
    assert rc == 2 and f"{root} is the root of a filesystem: it is never deleted" in err
    assert {p.name: p.lstat().st_mtime_ns for p in Path("/").iterdir()} == before


def test_a_folder_that_is_not_an_env_is_refused(tmp_path, capsys):
    folder = _data(tmp_path / "projects")
    before = digest(folder)
    rc, err = _remove(capsys, str(folder), "--force", "--yes")
    assert rc == 2
    assert "is not a Python environment (it holds neither pyvenv.cfg nor conda-meta): nothing is deleted" in err
    assert digest(folder) == before


def test_an_env_this_app_did_not_make_needs_force(tmp_path, capsys):
    env = _env(tmp_path / "theirs", ours=False)
    before = digest(env)
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 2 and "is not in this assistant's list of the environments it made, so it is not deleted without --force" in err
    assert digest(env) == before
    registry.record_verification(env, registry.Verification(True, registry.now()))  # checked is not "made"
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 2 and digest(env) == before
    rc, err = _remove(capsys, str(env), "--yes", "--force")
    assert rc == 0 and not env.exists()
    assert registry.find(env) is None


def test_without_yes_and_without_a_terminal_nothing_is_deleted(tmp_path, capsys, monkeypatch):
    env = _env(tmp_path / "mine")
    before = digest(env)
    asked = False
    with open(os.devnull, encoding="utf-8") as devnull:
        monkeypatch.setattr("sys.stdin", devnull)
        try:
            rc, err = _remove(capsys, str(env))
        except EOFError:  # asked at a prompt nobody can answer (the traceback is dropped here, with what it holds)
            asked = True
    assert not asked, "envs remove asked 'Delete it?' with no terminal, and input() raised EOFError"
    assert rc == 2 and "Refusing without confirmation" in err
    assert digest(env) == before


def test_removal_shows_what_goes_and_unlinks_links_without_following_them(tmp_path, capsys):
    outside = _data(tmp_path / "shared-models")
    env = _env(tmp_path / "mine")
    symlink(env / "models", outside, directory=True)
    (site_packages(env) / "weights").symlink_to(outside / "models")
    before = digest(outside)
    p = plan_remove(env)
    assert p.size.files == 2 and p.links == 3 and "models" in p.top
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 0, err
    assert "This deletes:" in err and "2 files" in err and "3 links" in err
    assert not env.exists() and digest(outside) == before
    assert registry.find(env) is None


def test_delete_tree_refuses_a_link(tmp_path):
    target = _data(tmp_path / "t")
    link = tmp_path / "l"
    symlink(link, target)
    with pytest.raises(ValueError):
        delete_tree(link)
    assert (target / "README.txt").exists()


@pytest.fixture
def mounted(tmp_path):
    env = _env(tmp_path / "with-mount")
    point = env / "data"
    point.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "none", str(point)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    (point / "dataset.bin").write_bytes(b"x" * 100)
    yield env, point
    subprocess.run(["umount", str(point)], capture_output=True)


@pytest.mark.posix_only("mounts a tmpfs inside the env (Linux, as root)")
def test_an_env_holding_a_mount_point_is_refused(mounted, capsys):
    env, point = mounted
    before = digest(env)
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 2 and f"holds another filesystem mounted at {point}: nothing is deleted" in err
    assert digest(env) == before
    with pytest.raises(Refused):
        plan_remove(point, force=True)  # a mount point itself is a filesystem root


@pytest.fixture
def bind_mounted(tmp_path):
    """A folder of the user's files on the SAME disk, bind-mounted inside an env (same st_dev)."""
    theirs = _data(tmp_path / "my-data")
    env = _env(tmp_path / "with-bind")
    point = env / "data"
    point.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(theirs), str(point)],
                                           capture_output=True).returncode != 0:
        pytest.skip("a bind mount needs root")
    assert os.stat(point).st_dev == os.stat(env).st_dev  # the case a device check alone cannot see
    yield env, point, theirs
    subprocess.run(["umount", str(point)], capture_output=True)


@pytest.mark.posix_only("bind-mounts a folder inside the env (Linux, as root)")
def test_a_bind_mount_of_the_same_disk_is_never_entered(bind_mounted, capsys):
    env, point, theirs = bind_mounted
    before = digest(theirs)
    rc, err = _remove(capsys, str(env), "--yes", "--force")
    assert rc == 2 and f"holds another filesystem mounted at {point}: nothing is deleted" in err
    assert digest(theirs) == before
    problems = delete_tree(env)  # the deletion itself, asked directly, does not go through it either
    assert any("another filesystem, not entered" in p for p in problems), problems
    assert digest(theirs) == before


def test_a_kernel_row_naming_the_users_own_kernel_is_not_deleted(home, tmp_path, capsys):
    """The record says "its kernel is <the user's own kernel>": the kernel runs another Python, so
    it stays (the registry's word alone deletes nothing); the env itself goes."""
    from dataclasses import replace

    env = _env(tmp_path / "envs" / "k")
    own = tmp_path / "jupyter" / "kernels" / "my-research"
    own.mkdir(parents=True)
    (own / "kernel.json").write_text(json.dumps({"argv": ["/opt/conda/bin/python", "-m", "ipykernel_launcher"],
                                                 "display_name": "My research"}), encoding="utf-8")
    registry.update(env, lambda old: replace(old, kernel=registry.KernelRecord("my-research", "My research",
                                                                               str(own))))
    before = digest(own)
    plan = plan_remove(env)
    assert plan.kernel is None and any("does not run this environment's Python" in str(n) for n in plan.notes)
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 0, err
    assert not env.exists() and digest(own) == before


def test_a_relative_registry_row_is_never_taken_for_a_folder(home, tmp_path, monkeypatch, capsys):
    """A hand-edited row {"path": "myenv"} would name another folder in every working directory:
    it is never matched, so a user's venv there is not "made by this assistant"."""
    env = _env(tmp_path / "work" / "myenv", ours=False)
    reg = registry.registry_file()
    reg.parent.mkdir(parents=True, exist_ok=True)
    reg.write_text(json.dumps({"schema_version": registry.SCHEMA_VERSION, "environments": [
        {"path": "myenv", "kind": "venv", "origin": "created"}]}), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")
    assert registry.find(env) is None
    before = digest(env)
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 2 and "list of the environments it made" in err
    assert digest(env) == before


def test_an_env_a_running_python_uses_is_not_removed(home, tmp_path, capsys):
    """A real process started from the env's own bin/python (a notebook kernel, a training run):
    the removal is refused with its pid, and the env is left as it was."""
    from tests.netlab.clients import make_venv

    env = tmp_path / "envs" / "busy"
    py = make_venv(env)
    p = InstallPlan(request=InstallRequest(env_path=env), env_path=env, backend=backend_for("venv", "uv"),
                    python=None, python_request=None, packages=("torch",), index=SourceSettings(), new_env=True,
                    estimate_mb=1, estimate_why="test")
    registry.record_install(make_install_result(env), p, None)
    proc = subprocess.Popen([str(py), "-c", "import time; time.sleep(120)"])
    try:
        time.sleep(0.5)
        before = digest(env)
        rc, err = _remove(capsys, str(env), "--yes")
        assert rc == 2 and "in use by a running program" in err and f"pid {proc.pid}" in err, err
        assert digest(env) == before
    finally:
        proc.kill()
        proc.wait(10)
    rc, err = _remove(capsys, str(env), "--yes")  # once it has ended: removed
    assert rc == 0, err
    assert not env.exists()


def test_a_folder_made_again_at_the_path_of_one_this_app_made_is_not_deleted(tmp_path, capsys):
    """Issue 27: the registry's word alone deletes nothing. The app made an env; the user deleted it
    and made their own at the same path: the record names the folder it was made for (its identity),
    so theirs is not deleted without --force."""
    import shutil

    env = _env(tmp_path / "work")
    shutil.rmtree(env)
    _env(env, ours=False)
    _data(env / "my-data")
    before = digest(env)
    rc, err = _remove(capsys, str(env), "--yes")
    assert rc == 2 and "is not the folder this assistant made there" in err, err
    assert digest(env) == before
    rc, err = _remove(capsys, str(env), "--yes", "--force")
    assert rc == 0 and not env.exists()
