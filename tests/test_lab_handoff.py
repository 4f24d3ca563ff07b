"""The hand-off formats on small real parts: export and ``install --lock`` of an environment of small
generated wheels (a stand-in ``torch`` wheel from a folder, the rest from a loopback index that
wants credentials), container recipes, modulefiles loaded by the real Lmod, and a Jupyter kernel
for every user installed into a prefix that ``jupyter kernelspec list`` finds.

The real torch round trip is tests/test_lab_roundtrip.py (one module-scoped real environment).
"""
from __future__ import annotations

import http.server
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tomllib

from app.core.env import registry
from app.core.env.backends import env_python
from tests.helpers import bare_venv, run_cli
from tests.netlab import build_wheel
from tests.netlab.wheelhouse import local_indexes

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
TOKEN = "s3cr3t-t0ken-77"


def test_index_pages_sent_with_a_lower_case_content_type_are_read_as_json(tmp_path):
    """PyPI answers ``content-type: application/vnd.pypi.simple.v1+json``; the page was parsed as HTML and
    listed nothing (every PyPI package of an export came out "not locked")."""
    from app.core.net.client import Client as Net
    from app.core.sources.pages import read_page

    doc = json.dumps({"meta": {"api-version": "1.0"}, "name": "demo", "files": [
        {"filename": "demo-1.0-py3-none-any.whl", "url": "demo-1.0-py3-none-any.whl", "hashes": {"sha256": "d" * 64}}]})

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = doc.encode()
            self.send_response(200)
            self.send_header("content-type", "application/vnd.pypi.simple.v1+json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        links = read_page(Net(), f"http://127.0.0.1:{server.server_address[1]}/simple/demo/", "demo")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert [(lk.filename, lk.sha256) for lk in links] == [("demo-1.0-py3-none-any.whl", "d" * 64)]


@pytest.fixture
def small_env(tmp_path, index_server):
    """An environment ``install`` made: a stand-in torch wheel from a folder, netlab-demo and netlab-dep from
    a loopback index that wants credentials."""
    folder = tmp_path / "wheels"
    build_wheel(folder, "torch", "2.13.0+cpu")
    served = tmp_path / "served"
    build_wheel(served, "netlab-dep", "0.5")
    build_wheel(served, "netlab-demo", "1.1", requires=["netlab-dep"])
    index = index_server(list(served.glob("*.whl")), auth=("lab", TOKEN))
    env = tmp_path / "lab env"
    return env, folder, index


def _install(capsys, env: Path, *args: str) -> None:
    rc, out, err = run_cli(capsys, "install", "--env", str(env), "--yes", "--no-verify", *args)
    assert rc == 0, out + err
    assert TOKEN not in out + err


def _freeze(env: Path) -> list[str]:
    from uv import find_uv_bin

    res = subprocess.run([find_uv_bin(), "pip", "freeze", "--python", str(env_python(env))], capture_output=True,
                         text=True, encoding="utf-8", timeout=120)
    return sorted(res.stdout.split())


def test_export_and_install_lock_of_a_small_env(tmp_path, capsys, small_env):
    env, folder, index = small_env
    with_key = index.simple_url(auth=True)
    _install(capsys, env, "--packages", "torch==2.13.0+cpu", "netlab-demo==1.1", "--find-links", str(folder),
             "--default-index-url", with_key)
    lock = tmp_path / "out" / "pylock.toml"
    rc, out, err = run_cli(capsys, "export", "--env", str(env), "--out", str(lock), "--from-report",
                           str(Path(__file__).parent / "fixtures" / "fleet" / "cpu-node-1.json"))
    assert rc == 2 and "has not passed a verification" in err and "torch-setup envs check" in err
    assert not lock.exists()
    rc, out, err = run_cli(capsys, "export", "--env", str(env), "--out", str(lock), "--unverified", "--index-url",
                           with_key, "--from-report", str(Path(__file__).parent / "fixtures" / "fleet" /
                                                          "cpu-node-1.json"), "--json")
    # the env's pip came from its Python's ensurepip (the index has none): said, not dropped (exit 1)
    assert rc == 1, out + err
    assert [(n["name"], "ensurepip" in n["why"]) for n in json.loads(out)["not_locked"]] == [("pip", True)]
    assert any(n.startswith("pip ") and "is not in the lock" in n for n in json.loads(out)["notes"])
    text = lock.read_text(encoding="utf-8")
    assert TOKEN not in text + out + err and "lab:" not in text  # the credentials were used, never written
    data = tomllib.loads(text)
    pkgs = {p["name"]: p for p in data["packages"]}
    assert pkgs["torch"]["wheels"][0]["path"] == str(folder / "torch-2.13.0+cpu-py3-none-any.whl")
    assert pkgs["netlab-demo"]["index"] == index.simple_url() and pkgs["netlab-demo"]["wheels"][0]["url"].startswith(
        index.origin)
    tool = data["tool"]["torch-setup"]
    assert tool["credentials-removed"] is True and tool["torch-index"] == str(folder)
    assert data["tool"]["torch-setup"]["verified"]["ok"] is False  # said, not hidden
    # the second machine gives its own credentials; the lock gives the versions and the files
    env2 = tmp_path / "second env"
    _install(capsys, env2, "--lock", str(lock), "--default-index-url", with_key)
    assert _freeze(env2) == _freeze(env)
    changed = tmp_path / "pylock.toml"
    changed.write_text(text.replace(pkgs["netlab-dep"]["wheels"][0]["hashes"]["sha256"], "e" * 64), encoding="utf-8")
    rc, out, err = run_cli(capsys, "install", "--env", str(tmp_path / "third"), "--lock", str(changed), "--yes",
                           "--no-verify", "--default-index-url", with_key)
    assert rc == 1 and "hash" in (out + err).lower() and not (tmp_path / "third").exists()  # rolled back


def test_export_refuses_a_name_uv_would_not_read_and_an_existing_file(tmp_path, capsys, small_env):
    env, folder, _ = small_env
    _install(capsys, env, "--packages", "torch==2.13.0+cpu", "--find-links", str(folder))
    rc, _, err = run_cli(capsys, "export", "--env", str(env), "--out", str(tmp_path / "lock.toml"), "--unverified")
    assert rc == 2 and "--out" in err and "pylock.NAME.toml" in err
    (tmp_path / "pylock.toml").write_text("mine", encoding="utf-8")
    rc, _, err = run_cli(capsys, "export", "--env", str(env), "--out", str(tmp_path / "pylock.toml"), "--unverified")
    assert rc == 2 and "it is not replaced" in err
    assert (tmp_path / "pylock.toml").read_text(encoding="utf-8") == "mine"


def test_container_recipes_install_the_same_lock(tmp_path, capsys, small_env):
    env, folder, index = small_env
    _install(capsys, env, "--packages", "torch==2.13.0+cpu", "netlab-demo==1.1", "--find-links", str(folder),
             "--default-index-url", index.simple_url(auth=True))
    ctx = tmp_path / "image"
    rc, _out, err = run_cli(capsys, "export", "--env", str(env), "--format", "dockerfile", "--out",
                           str(ctx / "Dockerfile"), "--unverified", "--index-url", index.simple_url(auth=True))
    assert rc == 1 and "pip 23" in err  # written; the Python's own pip is said not to be in the lock
    docker = (ctx / "Dockerfile").read_text(encoding="utf-8")
    py = ".".join(sys.version.split(".")[:2])
    assert docker.splitlines()[3] == f"FROM python:{py}-slim"
    assert "COPY pylock.toml /opt/torch-setup/pylock.toml" in docker
    assert f"COPY wheels/torch-2.13.0+cpu-py3-none-any.whl {folder.as_posix()}/torch-2.13.0+cpu-py3-none-any.whl" \
        in docker
    assert "uv pip install --python /opt/torch-env/bin/python -r /opt/torch-setup/pylock.toml" in docker
    assert (ctx / "wheels" / "torch-2.13.0+cpu-py3-none-any.whl").is_file() and (ctx / "pylock.toml").is_file()
    rc, _out, err = run_cli(capsys, "export", "--env", str(env), "--format", "apptainer", "--out",
                           str(ctx / "torch.def"), "--lock", str(ctx / "pylock.toml"))
    assert rc == 1, err  # the same lock, with the same package said to be missing from it
    apptainer = (ctx / "torch.def").read_text(encoding="utf-8")
    assert "Bootstrap: docker" in apptainer and f"From: python:{py}-slim" in apptainer
    assert "%files" in apptainer and "    pylock.toml /opt/torch-setup/pylock.toml" in apptainer
    assert TOKEN not in docker + apptainer


def _lmod(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f"source {LMOD_INIT} && {script}"], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.posix_only("Lmod and Environment Modules are Unix tools")
def test_modulefiles_load_the_environment_with_lmod(tmp_path):
    if not LMOD_INIT.exists():
        pytest.skip("Lmod is not installed (apt-get install lmod; .ci/run installs it)")
    from app.core.lab.modules import write_modulefiles

    env = tmp_path / "lab env [gpu] $HOME"
    py = bare_venv(env)
    files = write_modulefiles(env, tmp_path / "mods", version="2.13.0+cpu", title="PyTorch - lab",
                              variables={"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "not a name": "x"})
    assert files.name == "lab-env-gpu-home" and files.version == "2.13.0-cpu"
    show = "python -c 'import os, sys; print(sys.prefix); print(os.environ[\"HSA_OVERRIDE_GFX_VERSION\"])'"
    res = _lmod(f"module use '{tmp_path / 'mods'}' && module load {files.name} && {show}")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [str(env), "11.0.0"] and py.exists()
    # the Environment Modules (Tcl) file alone, as a cluster without Lmod's .lua reads it
    tcl = tmp_path / "tcl" / files.name
    tcl.mkdir(parents=True)
    shutil.copy(files.tcl, tcl / files.version)
    res = _lmod(f"module use '{tmp_path / 'tcl'}' && module load {files.name} && {show}")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [str(env), "11.0.0"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_kernel_for_every_user_lands_in_the_prefix_and_jupyter_lists_it(tmp_path, capsys, monkeypatch):
    indexes = [u for u in local_indexes() if u.startswith("file://")]
    if not indexes:
        pytest.skip("no local package index (ipykernel comes from it)")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "own"))  # a kernel of one's own would land here
    env = tmp_path / "lab"
    bare_venv(env)
    from app.core.sources.settings import SourceSettings

    registry.update(env, lambda _r: registry.EnvRecord(
        path=str(env), origin="created", created=registry.now(), updated=registry.now(),
        sources=SourceSettings(default_index=indexes[0], extra_index_urls=tuple(indexes[1:])),
        verification=registry.Verification(True, registry.now(), devices=("NVIDIA GeForce RTX 4090",))))
    prefix = tmp_path / "hub"
    rc, out, err = run_cli(capsys, "envs", "kernel", str(env), "--system", "--prefix", str(prefix), "--json")
    assert rc == 0, err
    kr = json.loads(out)
    assert Path(kr["path"]).parent == prefix / "share" / "jupyter" / "kernels"
    assert kr["display_name"] == "Python — lab @ NVIDIA GeForce RTX 4090"
    assert not (tmp_path / "own").exists()
    jupyter = Path(sys.executable).parent / "jupyter"
    listed = subprocess.run([str(jupyter), "kernelspec", "list", "--json"], capture_output=True, text=True,
                            encoding="utf-8", timeout=120, env={**os.environ, "JUPYTER_PATH": str(prefix / "share" /
                                                                                                   "jupyter")})
    assert listed.returncode == 0, listed.stderr
    specs = json.loads(listed.stdout)["kernelspecs"]
    assert specs[kr["name"]]["spec"]["display_name"] == kr["display_name"]
    assert Path(specs[kr["name"]]["resource_dir"]) == Path(kr["path"])
    rc, _, err = run_cli(capsys, "envs", "kernel", str(env), "--prefix", str(prefix))
    assert rc == 2 and "--system" in err


def test_a_file_from_a_folder_that_is_not_here_is_named_before_anything_is_made(tmp_path, capsys, tiny_wheels):
    from app.core.pylock.lockfile import Lock, LockedFile, LockedPackage, lock_text
    from tests.netlab import file_sha256

    dep = tiny_wheels / "netlab_dep-0.5-py3-none-any.whl"
    dep = dep if dep.exists() else next(tiny_wheels.glob("netlab*dep-0.5-*.whl"))
    gone = tmp_path / "gone" / dep.name  # the first machine's folder, which this one does not have
    lock = tmp_path / "pylock.toml"
    lock.write_text(lock_text(Lock(python=platform.python_version(), platform="linux-x86_64", packages=(
        LockedPackage("netlab-dep", "0.5", (LockedFile(dep.name, file_sha256(dep), path=str(gone)),),
                      origin="folder", folder=str(gone.parent)),))), encoding="utf-8")
    env = tmp_path / "env"
    rc, _, err = run_cli(capsys, "install", "--env", str(env), "--lock", str(lock), "--dry-run")
    assert rc == 2 and f"The lock's {gone} came from a local folder, and it is not here" in err
    assert "--find-links DIR" in err and not env.exists()
    rc, out, err = run_cli(capsys, "install", "--env", str(env), "--lock", str(lock), "--find-links", str(tiny_wheels),
                           "--dry-run", "--json")
    assert rc == 0, out + err
    plan = json.loads(out)["plan"]
    assert plan["packages"] == [] and "--require-hashes" in plan["commands"][-1] and not env.exists()
