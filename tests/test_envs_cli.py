"""``torch-setup envs check / terminal / forget / kernel`` and ``torch-setup cache`` on real envs and caches."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.core.env import registry
from app.core.lifecycle.terminal import activation, terminal_argv
from tests.netlab.clients import make_venv
from tests.netlab.wheelhouse import local_indexes


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


@pytest.mark.slow
def test_check_runs_verify_and_doctor_and_records_it(torch_env, capsys):
    env, _py = torch_env
    rc, out, _ = _cli(capsys, "envs", "check", str(env), "--no-dist", "--json")
    assert rc == 0, out
    data = json.loads(out)
    assert data["ok"] and data["verify"]["ok"] and data["diagnosis"]["ok"]
    rec = registry.find(env)
    assert rec is not None and rec.origin == "checked" and rec.verification is not None and rec.verification.ok
    assert rec.family.get("torch") == "2.13.0+cpu" and rec.python
    rc, out, _ = _cli(capsys, "envs", "list", "--json", "--no-size")
    row = next(e for e in json.loads(out)["environments"] if e["path"] == str(env))
    assert row["status"] == "ok" and row["last_check"] == rec.verification.when
    rc, out, _ = _cli(capsys, "envs", "check", str(env), "--no-dist")
    assert rc == 0 and "All checks passed" in out and "Torch guard: " in out


def test_check_refuses_a_folder_that_is_not_an_env(tmp_path, capsys):
    rc, _, err = _cli(capsys, "envs", "check", str(tmp_path))
    assert rc == 2 and "is not a Python environment" in err


@pytest.mark.posix_only("bash's activation, run by bash; tests/test_win_shell.py has Windows's cmd and PowerShell")
def test_terminal_prints_the_activation_command(tmp_path, capsys):
    env = tmp_path / "my env"
    make_venv(env)
    rc, out, _ = _cli(capsys, "envs", "terminal", str(env))
    assert rc == 0 and f"source '{env}/bin/activate'" in out
    acts = activation(env)
    assert acts[0].shell == "bash"
    argv = terminal_argv(env)  # None on a machine without a terminal program (this CI)
    if argv is not None:
        rc_file = Path(argv[argv.index("--rcfile") + 1]) if "--rcfile" in argv else None
        if rc_file is not None:
            assert acts[0].command in rc_file.read_text(encoding="utf-8")
            rc_file.unlink()
    # the command really activates it
    res = subprocess.run(["bash", "-c", f"{acts[0].command} && echo $VIRTUAL_ENV"], capture_output=True, text=True, encoding="utf-8",
                         timeout=30, env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"})
    assert res.stdout.strip() == str(env)


def test_forget_drops_the_record_and_deletes_nothing(tmp_path, capsys):
    env = tmp_path / "e"
    make_venv(env)
    registry.record_verification(env, registry.Verification(True, registry.now()))
    rc, _, _ = _cli(capsys, "envs", "forget", str(env))
    assert rc == 0 and registry.find(env) is None and (env / "pyvenv.cfg").exists()
    rc, _, _ = _cli(capsys, "envs", "forget", str(env))
    assert rc == 2


def test_cache_report_and_prune(tmp_path, capsys, monkeypatch):
    uv_cache, pip_cache = tmp_path / "uv-cache", tmp_path / "pip-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(uv_cache))
    monkeypatch.setenv("PIP_CACHE_DIR", str(pip_cache))
    (pip_cache / "wheels" / "ab").mkdir(parents=True)
    (pip_cache / "wheels" / "ab" / "old-1.0-py3-none-any.whl").write_bytes(b"w" * 20_000)
    (uv_cache / "archive-v0" / "x").mkdir(parents=True)
    (uv_cache / "archive-v0" / "x" / "unused.py").write_bytes(b"u" * 30_000)  # nothing refers to it
    rc, out, _ = _cli(capsys, "cache", "--json")
    assert rc == 0
    caches = {c["tool"]: c for c in json.loads(out)["caches"]}
    assert caches["uv"]["path"] == str(uv_cache) and caches["uv"]["size"]["bytes"] >= 30_000
    assert caches["pip"]["path"] == str(pip_cache) and caches["pip"]["size"]["bytes"] >= 20_000
    rc, out, _ = _cli(capsys, "cache", "prune", "--yes", "--json")
    pruned = {r["tool"]: r for r in json.loads(out)["pruned"]}
    assert pruned["uv"]["ok"] and pruned["uv"]["freed_bytes"] >= 30_000
    if importlib.util.find_spec("pip") is None:  # a Python without pip (the Windows lane's uv venv)
        assert rc == 1 and not pruned["pip"]["ok"] and "pip is not available" in pruned["pip"]["detail"]
        assert pruned["pip"]["after_bytes"] == 20_000  # said so, and deleted nothing of pip's on its own
    else:
        assert rc == 0, out
        assert pruned["pip"]["ok"] and pruned["pip"]["freed_bytes"] >= 20_000


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_cache_prune_never_touches_a_folder_that_is_not_the_tools_cache(tmp_path, capsys, monkeypatch, tool):
    """UV_CACHE_DIR / PIP_CACHE_DIR naming a folder of the user's files: it is named, left byte for
    byte as it was, and the command says why (exit 2); the other tool's real cache is still pruned."""
    theirs = tmp_path / "my-documents"
    (theirs / "thesis").mkdir(parents=True)
    (theirs / "thesis" / "chapter1.tex").write_text("\\section{Intro}\n", encoding="utf-8")
    (theirs / "wheels").mkdir()  # a name the tool also uses does not make the folder its cache
    (theirs / "wheels" / "notes.txt").write_bytes(b"mine" * 5000)
    real = tmp_path / "real-cache"
    if tool == "uv":
        (real / "wheels").mkdir(parents=True)
        (real / "wheels" / "old-1.0-py3-none-any.whl").write_bytes(b"w" * 20_000)
        monkeypatch.setenv("UV_CACHE_DIR", str(theirs))
        monkeypatch.setenv("PIP_CACHE_DIR", str(real))
    else:
        (real / "archive-v0" / "x").mkdir(parents=True)
        (real / "archive-v0" / "x" / "unused.py").write_bytes(b"u" * 30_000)
        monkeypatch.setenv("UV_CACHE_DIR", str(real))
        monkeypatch.setenv("PIP_CACHE_DIR", str(theirs))
    before = {p: p.read_bytes() for p in theirs.rglob("*") if p.is_file()}
    rc, out, err = _cli(capsys, "cache", "prune", "--yes", "--json")
    pruned = {r["tool"]: r for r in json.loads(out)["pruned"]}
    assert {p: p.read_bytes() for p in theirs.rglob("*") if p.is_file()} == before  # nothing of theirs went
    assert pruned[tool]["refused"] and not pruned[tool]["ok"] and pruned[tool]["freed_bytes"] == 0
    assert "thesis" in pruned[tool]["detail"] and f"{tool.upper()}_CACHE_DIR names it" in pruned[tool]["detail"]
    assert "NOT pruned" in err and str(theirs) in err  # said before anything was done
    other = "pip" if tool == "uv" else "uv"
    if importlib.util.find_spec("pip") is not None or other == "uv":
        assert pruned[other]["ok"] and pruned[other]["freed_bytes"] > 0
        assert rc == 2
    caches = {c["tool"]: c for c in json.loads(_cli(capsys, "cache", "--json")[1])["caches"]}
    assert "thesis" in caches[tool]["foreign"] and caches[other]["foreign"] == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_jupyter_kernel_registration_and_removal(tmp_path, capsys, monkeypatch):
    indexes = [u for u in local_indexes() if u.startswith("file://")]
    if not indexes:
        pytest.skip("no local package index (ipykernel comes from it)")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # independent of the shared cache's state
    env = tmp_path / "lab"
    make_venv(env)
    # the env as the registry knows it: its sources (ipykernel comes from the same place)
    from app.core.sources.settings import SourceSettings

    registry.update(env, lambda _r: registry.EnvRecord(path=str(env), origin="created", created=registry.now(),
                                                       updated=registry.now(),
                                                       sources=SourceSettings(
                                                           default_index=indexes[0],
                                                           extra_index_urls=tuple(indexes[1:]))))
    rc, out, err = _cli(capsys, "envs", "kernel", str(env), "--json")
    assert rc == 0, err
    kr = json.loads(out)
    folder = Path(kr["path"])
    assert folder.parent == tmp_path / "jupyter" / "kernels" and folder.name == kr["name"]
    spec = json.loads((folder / "kernel.json").read_text(encoding="utf-8"))
    assert spec["argv"][0] == str(env / "bin" / "python") and spec["display_name"] == "Python — lab"
    assert registry.find(env).kernel is not None
    other = tmp_path / "jupyter" / "kernels" / "someone-elses"
    other.mkdir()
    (other / "kernel.json").write_text('{"argv": ["/usr/bin/python3"]}', encoding="utf-8")
    rc, out, _ = _cli(capsys, "envs", "kernel", str(env), "--remove")
    assert rc == 0 and not folder.exists() and other.exists()
    assert registry.find(env).kernel is None
    rc, _, err = _cli(capsys, "envs", "kernel", str(env), "--remove")
    assert rc == 2 and "No Jupyter kernel was registered" in err
    assert sys.executable  # the assistant's own interpreter was never touched


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux terminal programs")
def test_open_terminal_starts_a_terminal_with_the_env_active(tmp_path, monkeypatch):
    import time

    from app.core.lifecycle.terminal import open_terminal

    env = tmp_path / "e"
    make_venv(env)
    seen = tmp_path / "seen.txt"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "xterm"  # a stand-in terminal: runs what it is given (the rc file) and notes its args
    fake.write_text(f'#!/bin/sh\necho "$@" > "{seen}"\n', encoding="utf-8")
    fake.chmod(0o755)
    setsid = subprocess.run(["sh", "-c", "command -v setsid"], capture_output=True, text=True, encoding="utf-8").stdout.strip()
    if not setsid:
        pytest.skip("no setsid here")
    monkeypatch.setenv("PATH", f"{bindir}:{Path(setsid).parent}")
    assert open_terminal(env)
    deadline = time.monotonic() + 10
    while not seen.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    args = seen.read_text(encoding="utf-8").split()
    assert args[:2] == ["-e", "bash"] and "--rcfile" in args
    rc = Path(args[args.index("--rcfile") + 1])
    assert f"source {env}/bin/activate" in rc.read_text(encoding="utf-8")
    rc.unlink()
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert not open_terminal(env)
