"""The lab round trip with the real torch wheel (one module-scoped pair of real environments).

``install`` makes and verifies an environment (torch from the local wheel folder, the rest from a
loopback index); ``export`` writes its pylock.toml; uv installs that lock on its own
(``uv pip install --dry-run -r pylock.toml``); ``install --lock`` reproduces it in a second
environment, where ``pip freeze`` and every file's sha256 are the same; ``envs module`` gives a
modulefile that the real Lmod loads and whose python imports that torch; ``bundle --lock`` makes
an offline bundle of exactly the lock's files.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

from app.core.env.backends import env_python
from app.core.env.backends import probe_python as probe
from tests.helpers import bare_venv, run_cli, scratch
from tests.netlab import IndexServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]
REPO = Path(__file__).resolve().parents[1]
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")


@dataclass
class Trip:
    root: Path
    env: Path
    lock: Path
    index: IndexServer
    export_out: dict


def _uv(*args: str) -> subprocess.CompletedProcess:
    from uv import find_uv_bin

    return subprocess.run([find_uv_bin(), *args], capture_output=True, text=True, encoding="utf-8", timeout=600,
                          stdin=subprocess.DEVNULL)


def _freeze(env: Path) -> list[str]:
    return sorted(_uv("pip", "freeze", "--python", str(env_python(env))).stdout.split())


def _hashes(lock: Path) -> dict[str, tuple[str, str]]:
    data = tomllib.loads(lock.read_text(encoding="utf-8"))
    return {p["name"]: (p["version"], p["wheels"][0]["hashes"]["sha256"]) for p in data["packages"]}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=REPO, capture_output=True, text=True,
                          encoding="utf-8", timeout=1200, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def trip(tmp_path_factory, local_wheels, torch_wheelhouse) -> Iterator[Trip]:
    """env 1, made by ``install`` (verified) from the torch wheel folder and a loopback index, and its lock."""
    info, _ = probe(sys.executable)
    assert info is not None and info.pip_wheels
    served = [f for f in torch_wheelhouse.files if not f.name.startswith("torch-")]
    served += sorted(Path(info.pip_wheels).glob("*.whl"))  # pip for the new env's seed, from the index too
    index = IndexServer(served)
    index.start()
    try:
        with scratch(tmp_path_factory, "lab-trip") as root:
            env = root / "verified env"
            done = _cli("install", "--env", str(env), "--packages", "torch==2.13.0", "--find-links", str(local_wheels),
                        "--default-index-url", index.simple_url(), "--yes")
            assert done.returncode == 0 and "Verification passed" in done.stdout, done.stdout + done.stderr
            lock = root / "lock" / "pylock.toml"
            done = _cli("export", "--env", str(env), "--out", str(lock), "--json")
            assert done.returncode == 0, done.stdout + done.stderr
            yield Trip(root, env, lock, index, json.loads(done.stdout))
    finally:
        index.stop()


def test_the_lock_names_every_file_its_origin_and_the_verified_machine(trip):
    data = tomllib.loads(trip.lock.read_text(encoding="utf-8"))
    pkgs = {p["name"]: p for p in data["packages"]}
    torch = pkgs["torch"]
    assert torch["version"] == "2.13.0+cpu" and torch["tool"]["torch-setup"]["origin"] == "folder"
    assert torch["wheels"][0]["path"].endswith("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl") or \
        torch["wheels"][0]["path"].endswith(".whl")
    others = [p for n, p in pkgs.items() if n != "torch"]
    assert others and all(p["index"] == trip.index.simple_url() and p["wheels"][0]["url"].startswith(trip.index.origin)
                          for p in others)
    tool = data["tool"]["torch-setup"]
    assert tool["variant"] == "cpu" and tool["python"].startswith("3.") and tool["not-locked"] == []
    assert tool["verified"]["ok"] is True and tool["verified"]["torch"] == "2.13.0+cpu"
    assert tool["machine"]["os"] and tool["compat-data-version"]
    assert trip.export_out["not_locked"] == [] and trip.export_out["verified"] is True


def test_uv_installs_the_lock_on_its_own(trip):
    py = bare_venv(trip.root / "uv-dry")
    res = _uv("pip", "install", "--dry-run", "--python", str(py), "-r", str(trip.lock))
    assert res.returncode == 0, res.stderr
    assert "torch==2.13.0+cpu" in res.stderr and f"Would install {len(_hashes(trip.lock))} packages" in res.stderr


def test_install_lock_reproduces_the_environment_file_for_file(trip, capsys):
    env2 = trip.root / "second env"
    rc, out, err = run_cli(capsys, "install", "--env", str(env2), "--lock", str(trip.lock), "--yes", "--no-verify")
    assert rc == 0, out + err
    assert "From the lock" in err and "packages pinned by sha256" in err
    assert _freeze(env2) == _freeze(trip.env)
    again = trip.root / "again" / "pylock.toml"
    rc, out, err = run_cli(capsys, "export", "--env", str(env2), "--out", str(again), "--unverified")
    assert rc == 0, out + err
    assert _hashes(again) == _hashes(trip.lock)  # the same version AND the same file, package by package


@pytest.mark.posix_only("Lmod is a Unix tool")
def test_lmod_loads_the_env_and_its_python_imports_that_torch(trip, capsys):
    if not LMOD_INIT.exists():
        pytest.skip("Lmod is not installed (apt-get install lmod; .ci/run installs it)")
    mods = trip.root / "modulefiles"
    rc, out, err = run_cli(capsys, "envs", "module", str(trip.env), "--out", str(mods), "--json")
    assert rc == 0, err
    name = json.loads(out)["name"]
    res = subprocess.run(["bash", "-c", f"source {LMOD_INIT} && module use '{mods}' && module load {name} && "
                                        "python -c 'import torch; print(torch.__version__); print(torch.__file__)'"],
                         capture_output=True, text=True, encoding="utf-8", timeout=600, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    version, where = res.stdout.splitlines()[-2:]
    assert version == "2.13.0+cpu" and Path(where).is_relative_to(trip.env)


def test_bundle_lock_holds_exactly_the_locks_files(trip, capsys):
    out_dir = trip.root / "bundle"
    rc, out, err = run_cli(capsys, "bundle", "--lock", str(trip.lock), "--out", str(out_dir), "--json")
    assert rc == 0, err
    manifest = json.loads(out)
    assert {f["package"]: f["sha256"] for f in manifest["files"]} == {n: h for n, (_, h) in _hashes(trip.lock).items()}
    rc, _, err = run_cli(capsys, "bundle", "--check", str(out_dir))
    assert rc == 0, err
