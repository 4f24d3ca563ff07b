"""Must-show 2: a staged torch upgrade verifies in staging and swaps; a failed one changes nothing.

Real envs, real uv, real verify probe: torch 2.13.0+cpu (the local wheel folder) is upgraded to
PyPI's torch 2.14.1 (a CUDA 13 build from the local index; it runs on the CPU). The failed case
stages a torch whose ``nvidia-cudnn-cu13`` wheel is empty, so importing it fails with
"libcudnn.so.9: cannot open shared object file" -- the original env's file tree checksums are
the same before and after.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base.text import render
from app.core.env import guard, registry
from app.core.env.distinfo import Dist, distributions
from app.core.install import InstallRequest, install, plan
from app.core.lifecycle import staging
from app.core.lifecycle.common import Refused
from app.core.lifecycle.companions import check_companions
from app.core.lifecycle.upgrade import keep_requirements, plan_upgrade, staging_plan
from app.core.sources.settings import SourceSettings
from tests.helpers import SCRIPTS, site_packages, venv_python
from tests.helpers import run_cli as _cli
from tests.helpers import torch_in as _torch
from tests.second_torch import (  # noqa: F401 - fixtures
    SecondTorch,
    broken_index,
    module_uv_cache,
    own_uv_cache,
    second_torch,
)
from tests.tree import digest


def _make_env(env: Path, wheels: Path, default_index: str, *extra: str) -> Path:
    p = plan(InstallRequest(env_path=env, packages=("torch==2.13.0+cpu", "six", *extra), sources=SourceSettings(find_links=(str(wheels),),
                                                                                                                default_index=default_index)
                            ))
    result = install(p)
    registry.record_install(result, p, None)
    return env




def _upgrade_args(env: Path, second: SecondTorch, torch_index: str | None = None) -> list[str]:
    idx, *rest = second.indexes
    args = ["upgrade", "--env", str(env), "--packages", f"torch=={second.version}", "--index-url", torch_index or idx,
            "--find-links", str(second.links), "--default-index-url", rest[0] if rest else idx]
    if torch_index:
        args += ["--extra-index-url", idx]
    return [*args, "--yes", "--json"]


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_upgrade_verifies_in_staging_swaps_and_undoes(tmp_path, capsys, local_wheels, second_torch,  # noqa: F811
                                                      own_uv_cache):  # noqa: F811
    default_index = second_torch.indexes[1] if len(second_torch.indexes) > 1 else second_torch.indexes[0]
    env = _make_env(tmp_path / "work env", local_wheels, default_index)  # a space in the path, on purpose
    (env / "notes.txt").write_text("my notes, kept in the env folder\n", encoding="utf-8")
    before = digest(env)
    # a folder of the user's at the staging path: refused, and left as it was (the cleanup deleted it)
    squatter = env.parent / f".{env.name}.torch-setup-staging"
    (squatter / "data").mkdir(parents=True)
    (squatter / "data" / "mine.csv").write_text("x,y\n", encoding="utf-8")
    kept = digest(squatter)
    rc, out, err = _cli(capsys, *_upgrade_args(env, second_torch))
    assert rc == 2 and "holds no mark of this assistant" in out + err, out + err
    assert digest(squatter) == kept and digest(env) == before
    shutil.rmtree(squatter)

    rc, out, err = _cli(capsys, *_upgrade_args(env, second_torch))
    assert rc == 0, out + err
    res = json.loads(out)
    with capsys.disabled():
        print("\nupgrade timings:", res["timings"], "total", res["duration_s"], "s")
    assert _torch(env) == "2.14.1" and "six" in distributions(env)  # the user's package came along
    assert res["verify"]["ok"]
    old = Path(res["old_copy"])
    assert old.parent == env.parent and _torch(old) == "2.13.0+cpu"
    assert (env / "notes.txt").read_text(encoding="utf-8").startswith("my notes")  # the user's file moved along
    staging_name = f".{env.name}.torch-setup-staging"
    assert not (env.parent / staging_name).exists()
    # the swapped env works at its final path: interpreter, console scripts, activation, pyvenv.cfg
    probe = subprocess.run([str(env / "bin" / "python"), "-c", "import sys, torch, six; print(sys.prefix); "
                            "print(torch.__version__)"], capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines()[0] == str(env)
    assert subprocess.run([str(env / "bin" / "torchrun"), "--help"], capture_output=True, timeout=300).returncode == 0
    shell = subprocess.run(["bash", "-c", f'source "{env}/bin/activate" && echo "$VIRTUAL_ENV" && command -v python'],
                           capture_output=True, text=True, encoding="utf-8", timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"})
    assert shell.stdout.splitlines() == [str(env), str(env / "bin" / "python")]
    for f in [env / "pyvenv.cfg", *(p for p in (env / "bin").iterdir() if p.is_file() and not p.is_symlink())]:
        assert staging_name not in f.read_bytes().decode("utf-8", "replace"), f
    # the new build is guarded; the registry waits for --confirm / --undo
    assert guard.status(env).pins == ("torch===2.14.1",)
    rec = registry.find(env)
    assert rec is not None and rec.pending_upgrade is not None and rec.pending_upgrade.old_torch == "2.13.0+cpu"
    rc, out, _ = _cli(capsys, "envs", "list", "--json", "--no-size")
    row = next(e for e in json.loads(out)["environments"] if e["path"] == str(env))
    assert row["status"] == "pending"
    rc, out, _ = _cli(capsys, *_upgrade_args(env, second_torch))
    assert rc == 2 and "waits to be confirmed or undone" in json.loads(out)["message"]

    # undo: the env from before the upgrade, byte for byte; the new stack is gone; a folder of the
    # user's at the name the undo sets the new stack aside under is never touched
    theirs = env.parent / f".{env.name}.torch-setup-undone"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("mine\n", encoding="utf-8")
    rc, out, err = _cli(capsys, "upgrade", "--env", str(env), "--undo", "--yes", "--json")
    assert rc == 0, err
    assert (theirs / "keep.txt").read_text(encoding="utf-8") == "mine\n"
    shutil.rmtree(theirs)
    assert digest(env) == before
    assert not old.exists()
    assert registry.find(env).pending_upgrade is None

    # again, and keep it: the old copy is deleted
    rc, out, err = _cli(capsys, *_upgrade_args(env, second_torch))
    assert rc == 0, out + err
    old = Path(json.loads(out)["old_copy"])
    rc, out, err = _cli(capsys, "upgrade", "--env", str(env), "--confirm", "--yes", "--json")
    assert rc == 0, err
    assert not old.exists() and _torch(env) == "2.14.1"
    assert registry.find(env).pending_upgrade is None


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_failed_verification_leaves_the_env_byte_for_byte_unchanged(tmp_path, capsys, local_wheels,
                                                                       second_torch, own_uv_cache):  # noqa: F811
    default_index = second_torch.indexes[1] if len(second_torch.indexes) > 1 else second_torch.indexes[0]
    env = _make_env(tmp_path / "env", local_wheels, default_index)
    guard.apply(env, ("torch==2.13.0+cpu",))
    before = digest(env)
    broken = broken_index(tmp_path / "sources", second_torch)
    siblings = sorted(p.name for p in env.parent.iterdir())

    rc, out, _ = _cli(capsys, *_upgrade_args(env, second_torch, torch_index=broken))
    assert rc == 1, out
    failure = json.loads(out)  # --json: the error as JSON on stdout
    assert "does not work in the staging environment" in failure["message"]
    assert "libcudnn.so.9" in failure["message"] + " ".join(failure["lines"])
    assert failure["hint"] == "Your environment was not changed."
    assert digest(env) == before
    assert sorted(p.name for p in env.parent.iterdir()) == siblings  # no staging env, no old copy left
    rec = registry.find(env)
    assert rec is not None and rec.pending_upgrade is None and rec.torch == "2.13.0+cpu"


# --------------------------------------------------------------------------- fast: planning, companions, swap

BASE_HOME = os.path.dirname(getattr(sys, "_base_executable", sys.executable))  # a home that exists (/usr/bin)


def _fake_env(root: Path, torch: str = "2.13.0+cpu", extra: dict[str, list[str]] | None = None) -> Path:
    sp = site_packages(root)
    sp.mkdir(parents=True)
    (root / SCRIPTS).mkdir()
    (root / "pyvenv.cfg").write_text(f"home = {BASE_HOME}\nversion_info = 3.11.7\n", encoding="utf-8")
    for name, version, reqs in [("torch", torch, ["filelock", "sympy>=1.13.3"]), ("filelock", "3.0", []),
                                ("sympy", "1.13.3", ["mpmath"]), ("mpmath", "1.3.0", []), ("six", "1.17.0", []),
                                *((n, "1.0", r) for n, r in (extra or {}).items())]:
        d = sp / f"{name.replace('-', '_')}-{version}.dist-info"
        d.mkdir()
        (d / "METADATA").write_text("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
                                    + "".join(f"Requires-Dist: {r}\n" for r in reqs), encoding="utf-8")
    (sp / "torch").mkdir()
    (sp / "torch" / "version.py").write_text("__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\n",
                                             encoding="utf-8")
    return root


def test_kept_packages_leave_out_torch_and_its_dependencies(tmp_path):
    env = _fake_env(tmp_path / "e")
    assert keep_requirements(distributions(env), "3.11.7") == ("six==1.17.0",)


def test_companions_requires_dist_and_family_and_extensions(tmp_path):
    env = _fake_env(tmp_path / "e", extra={"needs-old": ["torch<2.13"], "xformers": ["torch"],
                                           "fine": ["torch>=2.0; python_version >= '3.8'"],
                                           "py2only": ["torch<1.0; python_version < '3.0'"]})
    dists: dict[str, Dist] = distributions(env)
    rep = check_companions(dists, "2.14.1", None, python="3.11.7")
    assert [c.package for c in rep.conflicts] == ["needs-old"]
    assert render(rep.conflicts[0].text) == "needs-old 1.0 requires torch<2.13, which torch 2.14.1 does not satisfy"
    assert rep.extensions == ("xformers",)
    assert "不满足" in render(rep.conflicts[0].text, "zh_CN")
    # torchvision with no release for the new torch (compat data: "")
    from app.core.compat.data import load_compat

    build_dist = site_packages(env) / "torchvision-0.28.0.dist-info"
    build_dist.mkdir()
    (build_dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.28.0\n"
                                         "Requires-Dist: torch==2.13.0\n", encoding="utf-8")
    rep = check_companions(distributions(env), "2.15.0", load_compat(), python="3.11.7")
    assert any(c.package == "torchvision" and c.requirement == "" for c in rep.conflicts)
    rep = check_companions(distributions(env), "2.14.1", load_compat(), python="3.11.7")
    assert rep.family["torchvision"] == "0.29.1"  # the compat data's companion for 2.14


def test_plan_refusals(tmp_path):
    env = _fake_env(tmp_path / "e", extra={"needs-old": ["torch<2.13"]})
    with pytest.raises(Refused, match=r"do not fit torch 2\.14\.1"):
        plan_upgrade(env, packages=["torch==2.14.1"])
    with pytest.raises(Refused, match="already installed"):
        plan_upgrade(env, packages=["torch==2.13.0+cpu"])
    with pytest.raises(Refused, match="exact version"):
        plan_upgrade(env, packages=["torch>=2.14"])
    conda = tmp_path / "c"
    (conda / "conda-meta").mkdir(parents=True)
    with pytest.raises(Refused, match="conda environment"):
        plan_upgrade(conda, packages=["torch==2.14.1"])
    with pytest.raises(Refused, match="not a Python environment"):
        plan_upgrade(tmp_path, packages=["torch==2.14.1"])


def test_the_staging_env_is_planned_for_the_install_runner(tmp_path):
    """Issue 26: the upgrade builds its staging env through the install runner: a relocatable uv venv
    on the env's own base interpreter, the new stack and the kept packages in one install command."""
    env = _fake_env(tmp_path / "e")
    up = plan_upgrade(env, packages=["torch==2.14.1"], find_links=[str(tmp_path / "wheels")])
    reqs = tmp_path / "keep.txt"
    staged = staging_plan(up, reqs)
    (step, create), *_ = staged.create_steps()
    assert step == "create-env" and create[1:3] == ["venv", str(up.staging)]
    assert "--relocatable" in create and create[create.index("--python") + 1] == str(up.base_python)
    argv = staged.install_argv()
    assert "torch==2.14.1" in argv and argv[argv.index("-r") + 1] == str(reqs)
    assert staged.new_env and staged.env_path == up.staging


@pytest.mark.parametrize("atomic", [True, False])
def test_swap_and_recover(tmp_path, monkeypatch, atomic):
    if not atomic:
        monkeypatch.setattr(staging, "exchange", lambda a, b: False)
    env, new, old = tmp_path / "env", tmp_path / ".env.staging", tmp_path / ".env.old"
    env.mkdir()
    (env / "which").write_text("old", encoding="utf-8")
    new.mkdir()
    (new / "which").write_text("new", encoding="utf-8")
    staging.swap(env, new, old)
    assert (env / "which").read_text(encoding="utf-8") == "new" and (old / "which").read_text(encoding="utf-8") == "old" and not new.exists()
    # an interrupted swap (env missing, old copy there) is put back
    os.rename(env, tmp_path / "gone")
    staging.write_journal(env, state="swapping", old_copy=str(old))
    assert staging.recover(env) is not None
    assert (env / "which").read_text(encoding="utf-8") == "old"


def test_fix_paths_rewrites_scripts_and_pyvenv_cfg(tmp_path):
    env = tmp_path / ".e.torch-setup-staging"
    (env / SCRIPTS).mkdir(parents=True)
    (env / "pyvenv.cfg").write_text(f"home = /usr/bin\ncommand = /usr/bin/python3 -m venv {env}\n", encoding="utf-8")
    script = env / SCRIPTS / "tool"
    script.write_text(f"#!{venv_python(env)}\nprint(1)\n", encoding="utf-8")
    script.chmod(0o755)
    (env / SCRIPTS / "blob").write_bytes(b"\0\0" + str(env).encode())  # binaries are left alone
    final = tmp_path / "e"
    changed = staging.fix_paths(env, str(env), str(final))
    assert sorted(changed) == [os.path.join(SCRIPTS, "tool"), "pyvenv.cfg"]
    assert script.read_text(encoding="utf-8").startswith(f"#!{venv_python(final)}") and os.access(script, os.X_OK)
    assert str(env).encode() in (env / SCRIPTS / "blob").read_bytes()


def test_foreign_entries_are_the_users_files(tmp_path):
    env = _fake_env(tmp_path / "e")
    (env / "notebook.ipynb").write_text("{}", encoding="utf-8")
    (env / guard.CONSTRAINTS_FILE).write_text("torch==1\n", encoding="utf-8")
    (env / "pip.conf").write_text("[global]\n", encoding="utf-8")
    assert staging.foreign_entries(env) == ["notebook.ipynb"]



@pytest.mark.posix_only("a 1 MB tmpfs mounted as root (Linux)")
def test_a_full_disk_during_the_upgrade_is_said_in_words_and_leaves_nothing(tmp_path):
    """Issue 27: with the assistant's own folders on a disk that is full, an upgrade said a bare
    "No space left on device" and left its staging env beside the env (the log's last write failed
    after ``uv venv`` had made it, before the run knew it was its own). Now: what stopped it and
    where, the env unchanged, the staging env gone. A real 1 MB tmpfs, filled; real uv."""
    home = tmp_path / "home"
    home.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(home)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        env = _fake_env(tmp_path / "E")  # six is kept: its requirements file goes to the full disk
        before = digest(env)
        for sub in ("logs", "cache", "data", "state", "config"):
            (home / sub).mkdir()
        with open(home / "filler", "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError:  # full
                pass
        res = subprocess.run([sys.executable, "-m", "app", "upgrade", "--env", str(env), "--packages",
                              "torch==2.14.1", "--find-links", str(tmp_path), "--yes"],
                             cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "TORCH_SETUP_HOME": str(home)}, stdin=subprocess.DEVNULL)
    finally:
        subprocess.run(["umount", "-l", str(home)], capture_output=True)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert f"The upgrade stopped before the swap: the disk is full ({home}" in res.stderr, res.stderr[-2000:]
    assert "the staging environment" in res.stderr and "was removed" in res.stderr
    assert digest(env) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["E", "home"]  # no staging env left beside it
