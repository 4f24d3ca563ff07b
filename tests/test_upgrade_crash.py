"""Issue 27, must show 1: upgrade, undo and confirm killed (SIGKILL) at every step boundary of the
swap, on a filesystem with atomic exchange (renameat2) and without it, then the next command.

Each case runs the real lifecycle code in a child process (the upgrade: everything ``upgrade()``
does once the staging env passed verification: the swap, the guard, the record, the journal
cleared) whose step boundaries (every rename, the atomic exchange, every journal write and the
journal cleared, the registry write) are counted; at boundary K the child
kills itself with SIGKILL before the step runs. The next command (``recover``, as every upgrade,
undo and confirm starts with it; or the undo run again) then runs in this process. For every K,
until a run gets through without being killed:

Boundaries: every rename, the exchange, every journal write, the registry write, and each file and
folder a deletion of a set-aside env removes.

* the env works: its path holds a whole env (pyvenv.cfg and its ``which`` file), the old one or
  the new one, and the registry says which;
* the user's files (``notes.ipynb`` at the env's top, ``bin/train.sh`` inside its layout, carried
  from env to env) are in the env, byte for byte;
* nothing the user made is deleted: a folder of theirs beside the env stays as it was, and no
  folder but the assistant's own staging / set-aside envs ever goes.

The steps and the outcome of each are printed (pytest -s shows them).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tree import digest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.posix_only("SIGKILL, and renameat2 on Linux")

NOTES = b'{"cells": ["my work"]}\n'
SCRIPT = b"#!/bin/sh\npython train.py --epochs 3\n"  # the user's own script inside the env's layout (bin/)

CHILD = textwrap.dedent(r'''
    import json, os, signal, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    op, root, kill_at, atomic, steps_file = sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6]
    from app.core.env import registry
    from app.core.lifecycle import staging as st
    from app.core.lifecycle import upgrade as up
    count = [0]

    def boundary(name):
        count[0] += 1
        with open(steps_file, "a", encoding="utf-8") as fh:
            fh.write(name + "\n")
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    real_rename, real_exchange, real_journal, real_update = os.rename, st.exchange, st.write_journal, registry.update
    real_unlink, real_rmdir = os.unlink, os.rmdir

    def unlink(p, *k, **kw):
        if "torch-setup-" in str(p) and not str(p).endswith(".tmp"):  # the deletions of a set-aside env
            boundary(f"delete {Path(p).name} in {Path(p).parent.name}")
        elif Path(p).parent.name == "upgrades":  # the journal cleared: the operation is committed
            boundary("journal cleared")
        return real_unlink(p, *k, **kw)

    def rmdir(p, *k, **kw):
        boundary(f"rmdir {Path(p).name}")
        return real_rmdir(p, *k, **kw)

    def rename(a, b, *k, **kw):
        boundary(f"rename {Path(a).name} -> {Path(b).name}")
        return real_rename(a, b, *k, **kw)

    def exchange(a, b):
        boundary(f"exchange {Path(a).name} <-> {Path(b).name}")
        return real_exchange(a, b) if atomic else False

    def journal(env, **fields):
        boundary("journal " + ", ".join(f"{k}={v}" for k, v in fields.items() if k in ("op", "state", "carried")))
        return real_journal(env, **fields)

    def update(path, change):
        boundary("registry")
        return real_update(path, change)

    os.rename, st.exchange, st.write_journal, registry.update = rename, exchange, journal, update
    os.unlink, os.rmdir = unlink, rmdir
    env = root / "env"
    if op == "upgrade":  # what upgrade() does once the staging env passed verification: swap, guard, record
        from app.core.env.distinfo import TorchBuildInfo
        from app.core.sources.settings import SourceSettings
        from app.core.lifecycle.companions import CompanionReport
        from app.core.proc.runner import CancelToken
        from app.core.measure.verify import VerifyReport
        staging = root / ".env.torch-setup-staging"
        plan = up.UpgradePlan(env=env, staging=staging, old_copy=root / ".env.torch-setup-old-1",
                              base_python=Path(sys.executable), python_version=None,
                              current=TorchBuildInfo("2.13.0+cpu"), packages=("torch==2.14.1+cpu",), keep=(),
                              index=SourceSettings(), companions=CompanionReport({}), new_torch="2.14.1+cpu")
        run = up._Run(plan, lambda _e: None, CancelToken())
        run.staging_id = st.ident(staging)
        run.commit(VerifyReport(python=sys.executable, torch_version="2.14.1+cpu"))
    elif op == "undo":
        up.undo(env)
    else:
        up.confirm(env)
    print("COMPLETED")
''')


def _venv(path: Path, which: str) -> None:
    (path / "bin").mkdir(parents=True)
    (path / "lib").mkdir()
    # which build: a line of pyvenv.cfg (the env's own file, never carried; a file in lib/ would be the user's)
    (path / "pyvenv.cfg").write_text(f"home = /usr/bin\nwhich = {which}\n", encoding="utf-8")


def _which(path: Path) -> str | None:
    try:
        lines = (path / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
        return next((ln.split("=", 1)[1].strip() for ln in lines if ln.startswith("which")), None)
    except OSError:
        return None


def _world(root: Path, op: str) -> None:
    """The folders as each operation finds them; the registry as the upgrade left it."""
    from app.core.env import registry

    env = root / "env"
    mine = root / "my-project"
    (mine / "data").mkdir(parents=True)
    (mine / "data" / "train.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    if op == "upgrade":
        _venv(env, "old")
        _with_dist(env, "torch", {"torch/__init__.py": b"old = 1\n"}, "2.13.0+cpu")
        (env / "notes.ipynb").write_bytes(NOTES)
        (env / "bin" / "train.sh").write_bytes(SCRIPT)
        _venv(root / ".env.torch-setup-staging", "new")
        _with_dist(root / ".env.torch-setup-staging", "torch", {"torch/__init__.py": b"new = 1\n"}, "2.14.1+cpu")
        (root / ".env.torch-setup-staging" / ".torch-setup-staging").write_text(f"{env}\n", encoding="utf-8")
        return
    _venv(env, "new")  # after an upgrade: the new stack with the user's files carried in
    (env / "notes.ipynb").write_bytes(NOTES)
    (env / "bin" / "train.sh").write_bytes(SCRIPT)
    old = root / ".env.torch-setup-old-1"
    _venv(old, "old")
    old_record = registry.EnvRecord(path=str(env), torch="2.13.0+cpu", origin="created").to_dict()
    registry.update(env, lambda _r: registry.EnvRecord(
        path=str(env), torch="2.14.1+cpu", origin="created",
        pending_upgrade=registry.PendingUpgrade(str(old), "2.13.0+cpu", "2.14.1+cpu", registry.now(), old_record)))


def _next_command(op: str, env: Path) -> str:
    from app.core.base.text import render
    from app.core.lifecycle import upgrade as up
    from app.core.lifecycle.common import Refused

    if op == "upgrade":
        said = up.recover(env)
        return f"recover: {render(said) if said is not None else None}"
    try:  # the user runs the same command again
        out = up.undo(env) if op == "undo" else up.confirm(env)
    except Refused as err:
        return f"{op} again: {render(err.message)}"
    return f"{op} again: done" + (f" (it said: {out['recovered']})" if out.get("recovered") else "")


@pytest.mark.parametrize("atomic", [True, False], ids=["exchange", "two-renames"])
@pytest.mark.parametrize("op", ["upgrade", "undo", "confirm"])
def test_a_kill_at_any_step_loses_nothing(tmp_path, monkeypatch, op, atomic):
    from app.core.env import registry

    if atomic and not sys.platform.startswith("linux"):
        pytest.skip("renameat2 is Linux's")
    outcomes = []
    for k in range(1, 40):
        root = tmp_path / f"k{k}"
        root.mkdir()
        monkeypatch.setenv("TORCH_SETUP_HOME", str(root / "home"))
        _world(root, op)
        mine_before = digest(root / "my-project")
        steps = root / "steps.txt"
        res = subprocess.run([sys.executable, "-c", CHILD, str(REPO), op, str(root), str(k), "1" if atomic else "0",
                              str(steps)], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "TORCH_SETUP_HOME": str(root / "home")})
        killed = res.returncode == -signal.SIGKILL
        assert killed or res.returncode == 0, res.stderr[-3000:]
        ran = steps.read_text(encoding="utf-8").splitlines() if steps.exists() else []
        env = root / "env"
        after = _next_command(op, env) if killed else "-"
        which = _which(env)
        rec = registry.find(env)
        # the env works, and the registry says which build it holds
        assert which in ("old", "new"), (k, ran, after, sorted(p.name for p in root.iterdir()))
        if rec is not None and rec.torch:
            assert rec.torch == {"old": "2.13.0+cpu", "new": "2.14.1+cpu"}[which], (k, rec.torch, which)
        # the user's file is in the env, byte for byte; their folder beside it as it was
        assert (env / "notes.ipynb").read_bytes() == NOTES, (k, ran, after)
        assert (env / "bin" / "train.sh").read_bytes() == SCRIPT, (k, ran, after)
        assert digest(root / "my-project") == mine_before
        # only the assistant's own folders are ever gone; nothing half-made is left beside the env
        left = sorted(p.name for p in root.iterdir() if p.name not in ("home", "my-project", "env", "steps.txt"))
        if op == "upgrade":
            # recorded (the registry holds it, waiting for --confirm / --undo): the new build, the old one
            # beside it; not recorded yet: rolled back, nothing beside the env (killed before the journal's
            # first line: the staging env is left, still marked as ours; the next upgrade deletes it)
            recorded = rec is not None and rec.pending_upgrade is not None
            assert which == ("new" if recorded else "old"), (k, which, after)
            marked = (root / ".env.torch-setup-staging" / ".torch-setup-staging").is_file()
            expected = [".env.torch-setup-old-1"] if recorded else ([".env.torch-setup-staging"] if k == 1 else [])
            assert left == expected and (left != [".env.torch-setup-staging"] or marked), (k, left, after)
            assert not killed or not recorded or "journal cleared" in ran[-1] or after == "recover: None", (k, ran)
        elif op == "undo":
            if (killed and "again: done" in after) or not killed:
                assert which == "old" and (rec is None or rec.pending_upgrade is None), (k, after)
            assert [n for n in left if "undone" in n] == [] or which == "new", (k, left)
        else:
            assert which == "new"
        outcomes.append(f"{k:2}: {'killed before ' + ran[-1] if killed else 'completed':<60} -> {after} -> "
                        f"env holds the {which} build")
        if not killed:
            break
    else:
        pytest.fail("the operation never completed")
    print(f"\n{op} ({'atomic exchange' if atomic else 'two renames'}):\n  " + "\n  ".join(outcomes))
    assert len(outcomes) >= 3  # there were step boundaries to kill at


def _sp(env: Path) -> Path:
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _with_dist(env: Path, name: str, files: dict[str, bytes], version: str = "1.0") -> None:
    """A distribution in the env's site-packages: its files, its METADATA and its RECORD."""
    sp = _sp(env)
    info = sp / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    rows = []
    for rel, data in files.items():
        (sp / rel).parent.mkdir(parents=True, exist_ok=True)
        (sp / rel).write_bytes(data)
        rows.append(f"{rel},,")
    (info / "RECORD").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_the_users_files_inside_the_env_are_carried_byte_for_byte(tmp_path, monkeypatch):
    """Issue 27: --confirm dropped the user's own files inside the env. Their script in bin/, an edit
    to activate, a loose module and a .pth file in site-packages, a file in etc/: the upgrade carries
    each into the new env byte for byte (and a package's own files are the new ones); --confirm
    deletes the old env only when nothing of theirs would go with it."""
    from app.core.env import registry
    from app.core.lifecycle import upgrade as up
    from app.core.lifecycle.common import Refused

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    env, staging_env, old = tmp_path / "env", tmp_path / ".env.torch-setup-staging", tmp_path / ".env.torch-setup-old-1"
    _venv(env, "old")
    _venv(staging_env, "new")
    _with_dist(env, "torch", {"torch/__init__.py": b"old = 1\n"})
    _with_dist(staging_env, "torch", {"torch/__init__.py": b"new = 1\n"})
    mine = {
        "bin/train.sh": b"#!/bin/sh\npython train.py\n",
        f"{_sp(env).relative_to(env)}/my_helpers.py": b"def f():\n    return 42\n",
        f"{_sp(env).relative_to(env)}/my-paths.pth": b"/home/me/src\n",
        "etc/jupyter/jupyter_server_config.json": b'{"ServerApp": {"port": 9999}}\n',
        "notes.ipynb": NOTES,
    }
    for rel, data in mine.items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_bytes(data)
    activate_mine = b"# my activate\nexport MY_DATA=/data\nVIRTUAL_ENV=/somewhere\n"
    (env / "bin" / "activate").write_bytes(activate_mine)
    (staging_env / "bin" / "activate").write_bytes(b"# uv's activate\nVIRTUAL_ENV=/somewhere\n")
    moved = up.swap_in(env, staging_env, old, print)
    assert _which(env) == "new" and (_sp(env) / "torch" / "__init__.py").read_bytes() == b"new = 1\n"
    for rel, data in mine.items():
        assert (env / rel).read_bytes() == data, rel
    assert set(mine) <= set(moved)
    assert (env / "bin" / "activate").read_bytes() == activate_mine  # their edit kept
    # --confirm: nothing of theirs is left only in the old env: it goes
    registry.update(env, lambda _r: registry.EnvRecord(path=str(env), torch="2.14.1+cpu", pending_upgrade=(
        registry.PendingUpgrade(str(old), "2.13.0+cpu", "2.14.1+cpu", registry.now(), {}))))
    (old / "bin" / "late.sh").write_bytes(b"echo written after the upgrade\n")  # theirs, only in the old env
    with pytest.raises(Refused) as err:
        up.confirm(env)
    assert "bin/late.sh" in str(err.value.message) and old.exists()
    assert (old / "bin" / "late.sh").read_bytes() == b"echo written after the upgrade\n"
    (old / "bin" / "late.sh").unlink()
    assert up.confirm(env)["deleted"] == str(old) and not old.exists()
    for rel, data in mine.items():
        assert (env / rel).read_bytes() == data, rel


def _upgraded(tmp_path: Path, mine: dict[str, bytes]) -> tuple[Path, Path]:
    """An env upgraded by the real swap (its user files carried in) and recorded as waiting."""
    from app.core.env import registry
    from app.core.lifecycle import upgrade as up

    env, staging_env, old = tmp_path / "env", tmp_path / ".env.torch-setup-staging", tmp_path / ".env.torch-setup-old-1"
    _venv(env, "old")
    _venv(staging_env, "new")
    _with_dist(env, "torch", {"torch/__init__.py": b"old = 1\n"})
    _with_dist(staging_env, "torch", {"torch/__init__.py": b"new = 1\n"})
    for rel, data in mine.items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_bytes(data)
    up.swap_in(env, staging_env, old, print)
    registry.update(env, lambda _r: registry.EnvRecord(path=str(env), torch="2.14.1+cpu", pending_upgrade=(
        registry.PendingUpgrade(str(old), "2.13.0+cpu", "2.14.1+cpu", registry.now(), {}))))
    up.st.clear_journal(env)  # committed, as upgrade() does once the record is written
    return env, old


def test_undo_brings_the_users_files_inside_the_env_back_byte_for_byte(tmp_path, monkeypatch):
    """Issue 27: --undo deleted the new stack together with the user's files inside its layout (the
    scripts in bin/, loose modules the upgrade had carried over, and anything written since): they
    go back into the old env, byte for byte. A file the old env holds differently stops the undo
    before anything moves, naming it."""
    from app.core.lifecycle import upgrade as up
    from app.core.lifecycle.common import Refused

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    mine = {"bin/train.sh": b"#!/bin/sh\npython train.py\n",
            f"{_sp(tmp_path / 'env').relative_to(tmp_path / 'env')}/my_helpers.py": b"def f():\n    return 42\n",
            "notes.ipynb": NOTES}
    env, old = _upgraded(tmp_path, mine)
    later = {"bin/after.sh": b"echo written after the upgrade\n", "etc/mine.conf": b"x = 1\n"}
    for rel, data in later.items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_bytes(data)
    (old / "etc").mkdir()
    (old / "etc" / "mine.conf").write_bytes(b"x = 0\n")  # the old env holds it differently
    with pytest.raises(Refused) as err:
        up.undo(env)
    assert "etc/mine.conf" in str(err.value.message) and _which(env) == "new" and old.is_dir()
    (old / "etc" / "mine.conf").unlink()
    done = up.undo(env)
    assert _which(env) == "old" and not old.exists()
    for rel, data in {**mine, **later}.items():
        assert (env / rel).read_bytes() == data, rel
    assert set(later) | {"bin/train.sh"} <= set(done["moved_back"])


def test_no_upgrade_waiting_names_the_old_copy_beside_the_env(tmp_path, monkeypatch):
    """Issue 27: "No upgrade waiting" was all --confirm and --undo said beside an old copy that no
    record names (the list of environments was damaged and set aside after the upgrade): the
    refusal names the copy and how to go back to it; nothing is moved or deleted."""
    from app.core.base.text import render
    from app.core.env import registry
    from app.core.lifecycle import upgrade as up
    from app.core.lifecycle.common import Refused

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    env, old = _upgraded(tmp_path, {"notes.ipynb": NOTES})
    registry.registry_file().write_bytes(b"\xff not the list any more")
    before = (digest(env), digest(old))
    for command in (up.confirm, up.undo):
        with pytest.raises(Refused) as err:
            command(env)
        said = render(err.value.message) + " " + render(err.value.hint)
        assert "No upgrade of" in said and old.name in said and "rename the copy" in said, said
        assert (digest(env), digest(old)) == before


def _ready(tmp_path: Path) -> tuple[Path, Path, Path, object]:
    """An env (the old build), a verified staging env beside it (the new one) and the run that swaps
    it in: what ``upgrade()`` has after its staging, install and verify steps."""
    from app.core.compat.data import load_compat
    from app.core.env.distinfo import distributions, torch_build
    from app.core.lifecycle import upgrade as up
    from app.core.lifecycle.companions import check_companions
    from app.core.proc.runner import CancelToken
    from app.core.sources.settings import SourceSettings

    env, staging_env, old = tmp_path / "env", tmp_path / ".env.torch-setup-staging", tmp_path / ".env.torch-setup-old-1"
    _venv(env, "old")
    _venv(staging_env, "new")
    _with_dist(env, "torch", {"torch/__init__.py": b"old = 1\n", "torch/version.py": b"__version__ = '2.13.0+cpu'\n"})
    _with_dist(staging_env, "torch", {"torch/__init__.py": b"new = 1\n"})
    dists = distributions(env)
    current = torch_build(env, dists)
    assert current is not None
    plan = up.UpgradePlan(env=env, staging=staging_env, old_copy=old, base_python=Path(sys.executable),
                          python_version=None, current=current, packages=("torch==2.14.1",), keep=(),
                          index=SourceSettings(), companions=check_companions(dists, "2.14.1", load_compat()),
                          new_torch="2.14.1")
    run = up._Run(plan, lambda _e: None, CancelToken())
    run.staging_id = up.st.ident(staging_env)
    return env, staging_env, old, run


def test_an_upgrade_that_cannot_be_recorded_is_rolled_back(tmp_path, monkeypatch):
    """Issue 27: when the list of environments could not be written after the swap (a full disk, a
    list written by a newer version), the upgrade said it was done, then --confirm and --undo said
    "No upgrade waiting" beside an old copy nobody recorded. Now the swap is rolled back: the env
    is the one from before with the user's files in it, the new stack and the staging env are gone."""
    from app.core.base.text import render
    from app.core.env import registry
    from app.core.lifecycle.common import Failed
    from tests.factories import make_verify_report

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    env, _staging_env, _old, run = _ready(tmp_path)
    (env / "bin" / "train.sh").write_bytes(b"mine\n")
    (env / "notes.ipynb").write_bytes(NOTES)
    before = digest(env)
    reg = registry.registry_file()
    reg.write_text('{"schema_version": 99, "environments": []}', encoding="utf-8")  # a newer version's list
    with pytest.raises(Failed) as err:
        run.commit(make_verify_report())
    assert "could not be recorded" in render(err.value.message) and "put back" in render(err.value.hint)
    assert _which(env) == "old" and digest(env) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env", "home"]  # no old copy, no staging env left
    assert reg.read_text(encoding="utf-8").startswith('{"schema_version": 99')  # the newer list, untouched


MY_PIP_CONF = (b"# my settings\n[global]\n; the mirror\nindex-url = https://m.example/simple\nconstraint =\n"
               b"    /home/me/a.txt\n    /home/me/b.txt\nextra-index-url =\n    https://a.example/simple\n"
               b"[install]\nno-compile = yes")


@pytest.mark.parametrize("how", ["file", pytest.param("link", marks=pytest.mark.posix_only("symlinks"))])
def test_the_users_pip_conf_comes_through_upgrade_and_undo_byte_for_byte(tmp_path, monkeypatch, how):
    """Issue 27, must show 2: the env's pip.conf with comments, multi-line values and a constraint of
    the user's own, guarded, as a file or as a link to a file shared by their envs. The upgrade
    carries their part (a link stays the same link: it was written as a copy), the guard goes on the
    new build, and lifting it gives their bytes back; after --undo the old env's file (or the shared
    target) gives their bytes back too."""
    from app.core.env import guard
    from app.core.lifecycle import upgrade as up
    from tests.factories import make_verify_report

    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    env, _staging_env, old, run = _ready(tmp_path)
    conf = guard.pip_config_file(env)
    target = tmp_path / "shared-pip.conf"
    if how == "link":
        target.write_bytes(MY_PIP_CONF)
        conf.symlink_to(target)
    else:
        conf.write_bytes(MY_PIP_CONF)
    guard.apply(env, ("torch==2.13.0+cpu",))  # the verified old build was guarded
    run.commit(make_verify_report())
    assert _which(env) == "new" and guard.status(env).active
    assert conf.is_symlink() == (how == "link") and (how == "file" or os.readlink(conf) == str(target))
    assert guard.user_pip_conf(env) == MY_PIP_CONF.decode()
    guard.lift(env)
    assert (target if how == "link" else conf).read_bytes() == MY_PIP_CONF
    up.undo(env)
    assert _which(env) == "old" and not old.exists()
    guard.lift(env)  # the old env's own guard
    assert conf.is_symlink() == (how == "link") and (target if how == "link" else conf).read_bytes() == MY_PIP_CONF
