"""Rollback and removal delete what Windows makes hard to delete (app.core.base.deletion).

On Windows ``os.unlink`` refuses a read-only file (WinError 5), and a file another program has
open (an antivirus scan, the indexer, a python.exe still exiting) with a sharing violation
(WinError 32) until it lets go. The rollback of a new env (:class:`Rollback`) and ``envs remove``
(:func:`delete_tree`) must still leave nothing behind, retrying a busy file for a few seconds
and no longer. These run on both OSes (the Windows lane runs them under Wine, which has the
same sharing rules); the ``\\\\?\\`` long-path forms are pure string work, tested everywhere
(Wine has no MAX_PATH limit to show them against).
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.install.transaction import Rollback
from app.core.lifecycle.remove import delete_tree

WINDOWS = os.name == "nt"


@contextmanager
def _hold_open(path: Path, seconds: float) -> Iterator[subprocess.Popen[bytes]]:
    """Another process keeps ``path`` open (as Python opens files: no delete sharing on
    Windows) for ``seconds`` after it said so, then closes it and stays a moment longer."""
    flags = Path(tempfile.mkdtemp(prefix="hold-"))  # outside the tree being deleted
    ready = flags / "ready"
    code = textwrap.dedent(f"""
        import os, time
        fh = open({str(path)!r}, "rb")
        open({str(flags / "tmp")!r}, "w").close()
        os.replace({str(flags / "tmp")!r}, {str(ready)!r})  # seen only once closed
        time.sleep({seconds!r})
        fh.close()
        time.sleep(30)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the holder did not open the file"
            time.sleep(0.02)
        yield proc
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(flags, ignore_errors=True)


def _hard_files(folder: Path) -> tuple[Path, Path]:
    """A read-only file and a file to be held open, in a folder of ``folder``."""
    (folder / "pkg" / "data").mkdir(parents=True, exist_ok=True)
    ro = folder / "pkg" / "data" / "readonly.txt"
    ro.write_text("read only", encoding="utf-8")
    os.chmod(ro, stat.S_IREAD)
    held = folder / "pkg" / "held.pyd"
    held.write_bytes(b"\0" * 1024)
    return ro, held


def _new_env(env: Path) -> Rollback:
    """A new venv as the creator leaves it (the rollback's record taken before it existed)."""
    guard = Rollback(env)
    scripts, sp = (("Scripts", env / "Lib" / "site-packages") if WINDOWS else
                   ("bin", env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"))
    sp.mkdir(parents=True)
    (env / scripts).mkdir()
    (env / scripts / ("python.exe" if WINDOWS else "python")).write_bytes(b"")
    (env / "pyvenv.cfg").write_text("home = x\n", encoding="utf-8")
    guard.record_created()
    return guard


def _site_packages(env: Path) -> Path:
    return env / "Lib" / "site-packages" if WINDOWS else next((env / "lib").glob("python3*/site-packages"))


def test_rollback_removes_a_read_only_file_and_one_held_open_for_a_moment(tmp_path):
    env = tmp_path / "new parent" / "env"
    guard = _new_env(env)
    _ro, held = _hard_files(_site_packages(env))  # what the installer unpacked when it was cancelled
    with _hold_open(held, 0.5):
        problems = guard.run()
    assert problems == [], problems
    assert guard.kept == []
    assert not env.exists() and list(tmp_path.iterdir()) == []


def test_removal_removes_a_read_only_file_and_one_held_open_for_a_moment(tmp_path):
    env = tmp_path / "env"
    _new_env(env)  # a venv-shaped tree
    _ro, held = _hard_files(_site_packages(env))
    with _hold_open(held, 0.5):
        problems = delete_tree(env)
    assert problems == [], problems
    assert not env.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not WINDOWS, reason="POSIX deletes a file that is open; only Windows refuses")
def test_a_file_held_open_for_good_is_reported_after_a_few_tries_and_the_rest_goes(tmp_path):
    env = tmp_path / "env"
    _new_env(env)
    _ro, held = _hard_files(_site_packages(env))
    (env / "other.txt").write_text("x", encoding="utf-8")
    with _hold_open(held, 600):
        problems = delete_tree(env)
        assert len(problems) == 1 and problems[0].startswith(f"{held}:"), problems  # its folders: no noise
        assert held.exists() and not (env / "other.txt").exists() and not (held.parent / "data").exists()
    assert delete_tree(env) == [] and not env.exists()  # once it let go


@pytest.mark.skipif(not WINDOWS, reason="POSIX deletes a file that is open; only Windows refuses")
def test_a_rollback_that_cannot_remove_a_held_file_names_it_once_and_keeps_its_folders(tmp_path):
    env = tmp_path / "env"
    guard = _new_env(env)
    _ro, held = _hard_files(_site_packages(env))
    with _hold_open(held, 600):
        problems = guard.run()
        assert len(problems) == 1 and problems[0].startswith(f"{held}:"), problems
        assert held.exists() and not (held.parent / "data").exists() and not (env / "pyvenv.cfg").exists()


def test_a_tree_deeper_than_max_path_is_removed(tmp_path):
    env = tmp_path / "env"
    deep = env.joinpath(*(["a-rather-long-folder-name-" + "x" * 20] * 8))
    assert len(str(deep)) > 300
    try:
        deep.mkdir(parents=True)
    except OSError as exc:  # a Windows without LongPathsEnabled: make it the way the OS allows
        pytest.skip(f"cannot make the deep tree here: {exc}")
    (deep / "f.txt").write_text("x", encoding="utf-8")
    os.chmod(deep / "f.txt", stat.S_IREAD)
    assert delete_tree(env) == [] and not env.exists()


# ------------------------------------------------------------------ the \\?\ forms (pure, any OS)

@pytest.mark.parametrize(("given", "extended"), [
    ("C:\\envs\\torch", "\\\\?\\C:\\envs\\torch"),
    ("c:/envs/torch/../torch2/./lib", "\\\\?\\c:\\envs\\torch2\\lib"),  # that form resolves nothing itself
    ("\\\\server\\share\\envs\\torch", "\\\\?\\UNC\\server\\share\\envs\\torch"),
    ("//server/share/envs", "\\\\?\\UNC\\server\\share\\envs"),
    ("\\\\?\\C:\\already", "\\\\?\\C:\\already"),
    ("\\\\?\\UNC\\server\\share\\x", "\\\\?\\UNC\\server\\share\\x"),
    ("relative\\folder", "relative\\folder"),
    ("C:drive-relative", "C:drive-relative"),
])
def test_extended_path_forms(given, extended):
    from app.core.base.deletion import extended_path

    assert extended_path(given) == extended


@pytest.mark.parametrize("path", ["C:\\envs\\torch", "\\\\server\\share\\envs\\torch"])
def test_the_user_sees_the_path_without_the_prefix(path):
    from app.core.base.deletion import extended_path, shown_path

    assert shown_path(extended_path(path)) == path


def test_only_long_windows_paths_get_the_extended_form():
    from app.core.base.deletion import LONG_PATH, os_path

    short = "C:\\envs\\torch\\Lib\\site-packages\\torch\\__init__.py"
    deep = "C:\\envs\\" + "\\".join(["d" * 30] * 9) + "\\file.txt"
    assert len(deep) > 260 and len(short) < LONG_PATH
    assert os_path(short, windows=True) == short
    assert os_path(deep, windows=True) == "\\\\?\\" + deep
    assert os_path(deep, windows=False) == deep  # POSIX has no such form
    unc = "\\\\server\\share\\" + "\\".join(["d" * 30] * 9)
    assert os_path(unc, windows=True) == "\\\\?\\UNC\\server\\share\\" + "\\".join(["d" * 30] * 9)
    assert os_path(short, windows=True, min_length=0) == "\\\\?\\" + short  # a walk's top folder
