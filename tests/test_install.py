"""Real installs of the torch wheel: uv and pip into paths with spaces, non-ASCII and shell
metacharacters; cancel (SIGINT to the CLI, and the token in-process); add to an existing
env with a freeze snapshot that is restored when the install fails."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from app.core import install as core
from app.core.base.errors import Cancelled, UserError
from app.core.base.events import LogEvent, PhaseEvent
from app.core.env import backends as envs
from app.core.proc.runner import CancelToken
from app.core.sources.settings import SourceSettings
from tests.helpers import leftover_processes

REPO = Path(__file__).resolve().parents[1]
WEIRD = "my envs ü 路径"


def cli(*args, timeout=900, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


def imports_torch(env: Path) -> str:
    out = subprocess.run([str(envs.env_python(env)), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()



@pytest.mark.slow
def test_uv_install_into_a_path_with_spaces_unicode_and_metacharacters(tmp_path, local_wheels):
    env = tmp_path / WEIRD / "env (1) $HOME;`x` 'q'"
    r = cli("install", "--env", env, "--packages", "torch==2.13.0", "--find-links", local_wheels,
            "--yes", "--no-verify", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["install"]["env_path"] == str(env)
    assert data["install"]["torch_version"] == "2.13.0+cpu"
    assert data["plan"]["installer"] == "uv"
    assert imports_torch(env) == "2.13.0+cpu"
    assert Path(data["install"]["log_path"]).is_file()


@pytest.mark.slow
def test_pip_install_into_a_path_with_spaces_and_unicode(tmp_path, local_wheels):
    env = tmp_path / WEIRD / "pip env (2) &|<>"
    r = cli("install", "--env", env, "--installer", "pip", "--packages", "torch==2.13.0",
            "--find-links", local_wheels, "--yes", "--no-verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Installed torch 2.13.0+cpu" in r.stdout
    assert "Successfully installed" in r.stderr  # plain progress lines when not on a TTY
    assert imports_torch(env) == "2.13.0+cpu"
    assert (env / "bin" / "pip").exists()


@pytest.mark.slow
def test_sigint_to_the_cli_cancels_rolls_back_and_exits_130(tmp_path, local_wheels):
    parent = tmp_path / WEIRD
    env = parent / "cancelled env"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "install", "--env", str(env),
                             "--installer", "pip", "--packages", "torch==2.13.0",
                             "--find-links", str(local_wheels), "--yes", "--no-verify"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            stdin=subprocess.DEVNULL)
    seen = []

    def read():
        for line in proc.stderr:
            seen.append(line)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    with proc:  # closes the pipes at the end
        _interrupt_mid_install(proc, seen, env, t)
    err = "".join(seen)
    assert proc.returncode == 130, err
    assert "Cancelled" in err and "removed" in err
    assert not env.exists() and not parent.exists()  # we created both; both are gone
    assert leftover_processes(str(env)) == []


def _interrupt_mid_install(proc, seen, env, reader) -> None:
    deadline = time.monotonic() + 240
    while not any("==> Installing" in s for s in seen) and time.monotonic() < deadline:
        assert proc.poll() is None, "".join(seen)
        time.sleep(0.1)
    time.sleep(1.5)  # pip is now working inside the new env
    assert env.exists() and leftover_processes(str(env)), "the install should be running"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    reader.join(10)  # the reader thread owns stderr: it gets every last line


@pytest.mark.slow
def test_cancel_token_in_process_removes_everything(tmp_path, local_wheels, monkeypatch):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "cold uv cache"))  # a slow, cold install
    env = tmp_path / WEIRD / "token env"
    p = core.plan(core.InstallRequest(env, packages=["torch==2.13.0"],
                                      sources=SourceSettings(find_links=[str(local_wheels)])))
    cancel = CancelToken()
    events = []
    in_install = threading.Event()

    def on_event(e):
        events.append(e)
        if isinstance(e, PhaseEvent) and e.name == "install" and e.state == "start":
            in_install.set()

    def canceller():
        in_install.wait(120)
        time.sleep(0.5)
        assert leftover_processes(str(env)), "uv should be running"
        cancel.cancel()

    t = threading.Thread(target=canceller)
    t.start()
    with pytest.raises(Cancelled) as err:
        core.install(p, on_event=on_event, cancel=cancel)
    t.join()
    assert err.value.exit_code == 130
    assert not env.exists() and not env.parent.exists()
    assert leftover_processes(str(env)) == []
    assert any(isinstance(e, PhaseEvent) and e.name == "rollback" and e.state == "end"
               for e in events)


def _breaking_wheel(folder: Path) -> Path:
    """A wheel that depends on six==1.17.0 and whose own install fails (a file outside the
    target): pip installs six first, then fails; a real half-changed environment."""
    folder.mkdir(parents=True, exist_ok=True)
    whl = folder / "zzbreaker-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("zzbreaker/__init__.py", "")
        z.writestr("../../../zz-escape.txt", "outside")
        z.writestr("zzbreaker-1.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: zzbreaker\nVersion: 1.0\n"
                   "Requires-Dist: six==1.17.0\n")
        z.writestr("zzbreaker-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("zzbreaker-1.0.dist-info/RECORD", "")
    return whl


@pytest.mark.slow
def test_existing_env_is_restored_from_its_snapshot_when_the_install_fails(tmp_path):
    env = tmp_path / "existing env ü"
    uv = envs.uv_bin()
    subprocess.run([uv, "venv", str(env), "--seed", "--python", sys.executable, "-q"], check=True)
    subprocess.run([str(envs.env_python(env)), "-m", "pip", "install", "-q", "six==1.16.0"],
                   check=True)
    before = envs.installed_distributions(env)
    assert before["six"] == "1.16.0"
    wheels = tmp_path / "wheels"
    _breaking_wheel(wheels)
    p = core.plan(core.InstallRequest(env, installer="pip", existing=True,
                                      packages=["zzbreaker==1.0"], sources=SourceSettings(find_links=[str(wheels)])))
    assert not p.new_env
    events = []
    with pytest.raises(UserError) as err:
        core.install(p, on_event=events.append)
    assert "restored to its earlier state" in err.value.text(), err.value.render()
    after = envs.installed_distributions(env)
    assert after == before  # six back at 1.16.0, zzbreaker gone
    assert any(isinstance(e, PhaseEvent) and e.name == "restore" and e.state == "end"
               for e in events)
    # the six upgrade really happened before the failure (the snapshot did real work)
    assert any(isinstance(e, LogEvent) and "six" in e.text and "1.16.0" in e.text
               for e in events)
    assert env.exists() and envs.env_python(env).exists()


@pytest.mark.slow
def test_cli_ends_with_the_verification_summary(tmp_path, local_wheels):
    env = tmp_path / "verified env"
    r = cli("install", "--env", env, "--packages", "torch==2.13.0", "numpy",
            "--find-links", local_wheels, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Verification passed" in r.stdout
    assert "[passed]" in r.stdout and "skipped" in r.stdout  # no GPU here: skipped, said so


def test_recommended_install_uses_the_recommendations_torch_index(tmp_path):
    """No --packages: detect + recommend; the torch index is the recommendation's unless
    --index-url overrides it (here an unreachable one, so nothing is installed)."""
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--backend", "cpu", "--index-url",
            "http://127.0.0.1:9/whl/cpu", "--yes", "--json")
    assert r.returncode == 2, r.stdout + r.stderr
    err = json.loads(r.stdout)
    assert "torch index http://127.0.0.1:9/whl/cpu cannot be reached" in err["message"]
    assert not env.exists()
    from app.core.detection.detect import detect
    from app.core.recommend import Choices, recommend

    rec = recommend(detect(), None, Choices(backend="cpu"))
    p = core.plan(core.InstallRequest(env, recommendation=rec))
    argv = p.commands()[-1]
    assert argv[argv.index("--extra-index-url") + 1] == rec.index_url
    assert argv[-len(rec.packages):] == list(rec.packages)


@pytest.mark.slow
def test_adding_to_an_existing_env_with_uv_keeps_it_and_restores_on_failure(tmp_path):
    env = tmp_path / "uv existing ü"
    uv = envs.uv_bin()
    subprocess.run([uv, "venv", str(env), "--python", sys.executable, "-q"], check=True)
    subprocess.run([uv, "pip", "install", "-q", "--python", str(envs.env_python(env)),
                    "six==1.16.0"], check=True)
    events = []
    ok = core.install(core.plan(core.InstallRequest(env, existing=True,
                                                    packages=["packaging==24.2"])),
                      on_event=events.append)
    assert ok.created is False and ok.packages["six"] == "1.16.0"
    assert ok.packages["packaging"] == "24.2"
    assert any(isinstance(e, PhaseEvent) and e.name == "snapshot" for e in events)
    before = envs.installed_distributions(env)
    with pytest.raises(UserError) as err:
        core.install(core.plan(core.InstallRequest(
            env, existing=True, packages=["six==1.17.0", "zz-no-such-package-xq==1.0"])))
    assert "restored to its earlier state" in err.value.text()
    assert envs.installed_distributions(env) == before


def _make_wheel(folder: Path, name: str, version: str) -> Path:
    """A real, minimal pure-Python wheel (with a correct RECORD)."""
    import base64
    import hashlib

    folder.mkdir(parents=True, exist_ok=True)
    mod = name.replace("-", "_")
    dist = f"{mod}-{version}.dist-info"
    files = {
        f"{mod}/__init__.py": f"__version__ = {version!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    whl = folder / f"{mod}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return whl


def test_torch_packages_from_two_builds_are_refused_and_rolled_back(tmp_path):
    wheels = tmp_path / "wheels"
    _make_wheel(wheels, "torchvision", "0.99.0+cu126")
    _make_wheel(wheels, "torchaudio", "0.99.0+cpu")
    env = tmp_path / "mixed env"
    p = core.plan(core.InstallRequest(env, packages=["torchvision==0.99.0+cu126",
                                                     "torchaudio==0.99.0+cpu"],
                                      sources=SourceSettings(find_links=[str(wheels)])))
    with pytest.raises(UserError) as err:
        core.install(p)
    assert "different builds" in err.value.text() and "torchvision 0.99.0+cu126" in err.value.text()
    assert "Nothing was left behind" in err.value.text()
    assert not env.exists()


@pytest.mark.slow
def test_pip_reports_real_download_bytes(tmp_path, monkeypatch):
    """pip >= 24.1 runs with --progress-bar raw: ProgressEvents carry the bytes as they
    arrive (a real download from the index, pip's cache off)."""
    from app.core.base.events import ProgressEvent

    env = tmp_path / "pip raw env"
    subprocess.run([envs.uv_bin(), "venv", str(env), "--seed", "--python", sys.executable, "-q"],
                   check=True)
    if envs.pip_version_in(env) < (24, 1):
        pytest.skip("the seeded pip is older than 24.1")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no local file index: a real download
    p = core.plan(core.InstallRequest(env, installer="pip", existing=True,
                                      packages=["numpy==2.4.6"]))
    events = []
    res = core.install(p, on_event=events.append)
    assert res.packages["numpy"] == "2.4.6"
    assert "--progress-bar" in p.backend.install_argv(env, p.packages, p.index,
                                                      pip_version=envs.pip_version_in(env))
    prog = [e for e in events if isinstance(e, ProgressEvent) and e.package == "numpy"
            and e.unit == "bytes"]
    assert prog and prog[-1].done_bytes == prog[-1].total_bytes > 10_000_000
    assert any(0 < e.done_bytes < e.total_bytes for e in prog), "no intermediate progress"
