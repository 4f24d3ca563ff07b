"""The environments list: where it looks, what it reads from each env's files, sizes, statuses."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main
from app.core.base.text import render
from app.core.detection.system import PythonInfo, SystemReport
from app.core.env import registry
from app.core.env.distinfo import torch_build
from app.core.env.registry import Verification
from app.core.lifecycle.discover import candidate_paths, discover
from app.core.lifecycle.sizes import tree_size
from tests.helpers import WINDOWS, can_symlink, fake_program, site_packages, venv_python


def _venv(root: Path, torch: str | None = "2.13.0+cpu", cuda: str | None = None, conda: bool = False,
          python: str = "3.11.7") -> Path:
    sp = site_packages(root, python.rsplit('.', 1)[0])
    sp.mkdir(parents=True)
    py = root / "python.exe" if conda and WINDOWS else venv_python(root)  # conda: python.exe in the root there
    py.parent.mkdir(exist_ok=True)
    py.write_text("", encoding="utf-8")
    if conda:
        (root / "conda-meta").mkdir()
        (root / "conda-meta" / f"python-{python}-h123_0.json").write_text("{}", encoding="utf-8")
    else:
        (root / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {python}\n", encoding="utf-8")
    if torch:
        d = sp / f"torch-{torch}.dist-info"
        d.mkdir()
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n", encoding="utf-8")
        (d / "INSTALLER").write_text("uv\n", encoding="utf-8")
        (sp / "torch").mkdir()
        (sp / "torch" / "version.py").write_text(
            f"from typing import Optional\n__version__ = '{torch}'\ndebug = False\n"
            f"cuda: Optional[str] = {cuda!r}\nhip: Optional[str] = None\n", encoding="utf-8")
        (sp / "torch" / "_C.so").write_bytes(b"\0" * 10_000)
    return root


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "me"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("USERPROFILE", str(h))  # the home folder on Windows
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "assistant"))  # a registry of this test's own
    monkeypatch.delenv("CONDA_EXE", raising=False)
    monkeypatch.delenv("MAMBA_EXE", raising=False)
    return h


def test_torch_build_is_read_from_files_without_running_python(tmp_path):
    env = _venv(tmp_path / "e", "2.14.1", cuda="13.0")
    info = torch_build(env)
    assert info is not None and info.version == "2.14.1" and info.cuda == "13.0"
    assert info.variant == "cu130" and str(info.backend) == "cuda" and info.installer == "uv"
    assert info.describe() == "2.14.1 (CUDA 13.0)"
    assert torch_build(_venv(tmp_path / "c", "2.13.0+cpu")).describe() == "2.13.0+cpu (CPU)"
    assert torch_build(_venv(tmp_path / "n", None)) is None


def test_discovery_finds_the_usual_places(home, tmp_path, monkeypatch):
    cwd = tmp_path / "project"
    cwd.mkdir()
    a = _venv(home / ".venvs" / "a", "2.14.1", cuda="12.6")
    b = _venv(home / "miniforge3" / "envs" / "b", "2.13.0+cpu", conda=True, python="3.12.1")
    listed = _venv(tmp_path / "elsewhere" / "c", "2.13.0+cpu", conda=True)
    (home / ".conda").mkdir()
    (home / ".conda" / "environments.txt").write_text(f"{listed}\n", encoding="utf-8")
    dot = _venv(cwd / ".venv", "2.13.0+cpu")
    no_torch = _venv(home / ".virtualenvs" / "plain", None)
    via_interp = _venv(tmp_path / "interp-env", "2.13.0+cpu")
    pyenv = _venv(home / ".pyenv" / "versions" / "3.11.7" / "envs" / "p", "2.13.0+cpu")
    if can_symlink():
        (home / ".venvs" / "link").symlink_to(a)  # a link to an env is not listed twice
    report = SystemReport(interpreters=[PythonInfo(version="3.11.7", executable=str(venv_python(via_interp)))])
    # conda itself: a stand-in executable printing what `conda env list --json` prints
    from_conda = _venv(tmp_path / "conda-only", "2.13.0+cpu", conda=True)
    fake_conda = fake_program(tmp_path / "conda-bin", "conda", f"print({json.dumps({'envs': [str(from_conda)]})!r})\n")
    monkeypatch.setenv("CONDA_EXE", str(fake_conda))
    found = {Path(e.path): e for e in discover(report, home=home, cwd=cwd)}
    for env in (a, b, listed, dot, via_interp, pyenv, from_conda):
        assert env in found, env
    assert no_torch not in found and (home / ".venvs" / "link") not in found
    assert found[b].kind == "conda" and found[b].python == "3.12.1"
    assert found[a].torch is not None and str(found[a].torch.backend) == "cuda"
    assert found[a].size is not None and found[a].size.bytes >= 10_000 and found[a].size.complete
    assert found[a].status == "unchecked" and found[a].last_check is None
    assert "conda" in found[from_conda].found_by and "interpreter" in found[via_interp].found_by
    everything = {Path(e.path) for e in discover(report, home=home, cwd=cwd, only_torch=False, with_size=False)}
    assert no_torch in everything
    assert set(candidate_paths(None, home=home, cwd=cwd, run_conda=False)) >= {a, b, listed, dot, pyenv}


def test_statuses_follow_the_registry(home, tmp_path):
    env = _venv(tmp_path / "e", "2.13.0+cpu")
    registry.record_verification(env, Verification(True, "2026-12-01T10:15:02+01:00", "2.13.0+cpu", passed=6),
                                 {"torch": "2.13.0+cpu"})
    e = discover(home=home, cwd=tmp_path, run_conda=False)[0]
    assert e.status == "ok" and render(e.status_text) == "verified 2026-12-01 10:15"
    assert render(e.status_text, "zh_CN") == "已于 2026-12-01 10:15 验证"
    # torch replaced after the check
    sp = site_packages(env)
    (sp / "torch-2.13.0+cpu.dist-info").rename(sp / "torch-2.14.1.dist-info")
    e = discover(home=home, cwd=tmp_path, run_conda=False)[0]
    assert e.status == "changed" and "torch 2.13.0+cpu -> 2.14.1" in render(e.status_text)
    venv_python(env).unlink()
    assert discover(home=home, cwd=tmp_path, run_conda=False)[0].status == "broken"
    registry.record_verification(tmp_path / "gone", Verification(False, registry.now(), error="x"))
    gone = next(x for x in discover(home=home, cwd=tmp_path, run_conda=False) if x.path.endswith("gone"))
    assert gone.status == "missing" and gone.kind == "venv"


def test_tree_size_counts_hard_links_once_and_stops_at_its_bound(tmp_path):
    d = tmp_path / "t"
    d.mkdir()
    (d / "a").write_bytes(b"x" * 5000)
    os.link(d / "a", d / "b")
    if can_symlink():
        (d / "c").symlink_to(d.anchor)  # never followed
    s = tree_size(d)
    assert s.bytes == 5000 and s.files == 2 and s.shared_bytes == 5000 and s.complete
    for i in range(50):
        (d / f"f{i}").write_bytes(b"y")
    assert not tree_size(d, max_entries=10).complete
    assert tree_size(d / "c").bytes == 0  # a link (or, where none can be made, nothing there)


def test_envs_list_cli(home, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = _venv(home / ".venvs" / "sd", "2.14.1", cuda="13.0")
    assert main(["envs", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = next(r for r in data["environments"] if r["path"] == str(env))
    assert row["torch"]["variant"] == "cu130" and row["backend"] == "cuda" and row["status"] == "unchecked"
    assert main(["envs", "list"]) == 0
    out = capsys.readouterr().out
    assert "2.14.1 (CUDA 13.0)" in out and str(env) in out and "never" in out


def test_a_corrupt_registry_is_reported_by_envs_list(home, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    registry.registry_file().write_text("{broken", encoding="utf-8")
    assert main(["envs", "list"]) == 0
    assert "was set aside as" in capsys.readouterr().err
