"""Offline bundles: build one here (torch from the local wheel folder, the rest from the
index), install it inside a network namespace with no network, refuse damaged / foreign
bundles before touching anything (the error names the wheel)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.install import bundle as core
from tests.helpers import scratch

REPO = Path(__file__).resolve().parents[1]
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def cli(*args, prefix=(), timeout=900, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)


def _no_pip_config() -> dict[str, str]:
    """This process's environment without pip's configuration (its find-links hold the real torch)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, local_wheels) -> Iterator[Path]:
    with scratch(tmp_path_factory, "bundles") as folder:
        out = folder / "torch bundle ü"
        r = cli("bundle", "--out", out, "--python", PY, "--packages", "torch==2.13.0",
                "--find-links", local_wheels)
        assert r.returncode == 0, r.stdout + r.stderr
        yield out


def _copy(bundle: Path, dest: Path) -> Path:
    """A cheap copy (hard links) of ``bundle``."""
    shutil.copytree(bundle, dest, copy_function=os.link)
    return dest


def _no_network_prefix() -> list[str]:
    r = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("unshare -n is not available (needs root or user namespaces)")
    return ["unshare", "-n"]


@pytest.mark.slow
def test_bundle_has_a_manifest_hashes_and_pinned_requirements(bundle):
    m = core.check_bundle(bundle)
    names = {f.package: f for f in m.files}
    assert names["torch"].version == "2.13.0+cpu"
    assert {"filelock", "sympy", "jinja2", "typing-extensions"} <= set(names)
    assert m.python_version == PY and m.abi == f"cp{PY.replace('.', '')}"
    assert m.platforms[0] == core.this_platform()
    for f in m.files:
        assert core.sha256_of(bundle / "wheels" / f.name) == f.sha256
    req = (bundle / "requirements.txt").read_text(encoding="utf-8").splitlines()[1:]
    assert len(req) == len(m.files)
    assert f"torch==2.13.0+cpu --hash=sha256:{names['torch'].sha256}" in req
    data = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert data["format"] == "torch-setup-bundle" and data["created"] and data["assistant_version"]
    r = cli("bundle", "--check", bundle)
    assert r.returncode == 0 and "all hashes match" in r.stdout


@pytest.mark.slow
@pytest.mark.netns
def test_bundle_installs_with_no_network_at_all(bundle, tmp_path):
    installer = "uv"
    prefix = _no_network_prefix()
    probe = subprocess.run([*prefix, sys.executable, "-c",
                            "import socket; socket.create_connection(('pypi.org', 443), 3)"],
                           capture_output=True, text=True, encoding="utf-8")
    assert probe.returncode != 0  # really no network in there
    env = tmp_path / "offline env ü (1)"
    r = cli("install", "--env", env, "--installer", installer, "--from-bundle", bundle, "--yes",
            "--no-verify", "--json", prefix=prefix)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["install"]["torch_version"] == "2.13.0+cpu"
    install_cmd = data["plan"]["commands"][-1]
    assert "--require-hashes" in install_cmd and "--no-index" in install_cmd
    out = subprocess.run([*prefix, str(env / "bin" / "python"), "-c",
                          "import torch; print(torch.__version__, torch.ones(2).sum().item())"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert out.stdout.split() == ["2.13.0+cpu", "2.0"], out.stderr


@pytest.mark.slow
def test_a_corrupted_wheel_is_refused_before_anything_is_installed(bundle, tmp_path):
    bad = _copy(bundle, tmp_path / "bad bundle")
    victim = next((bad / "wheels").glob("sympy-*.whl"))
    data = bytearray(victim.read_bytes())
    victim.unlink()  # break the hard link: the module's bundle stays intact
    data[len(data) // 2] ^= 0xFF  # same size, one byte flipped
    victim.write_bytes(bytes(data))
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--from-bundle", bad, "--yes", "--no-verify")
    assert r.returncode == 2, r.stderr
    assert victim.name in r.stderr and "does not match its SHA-256" in r.stderr
    assert "Nothing was installed" in r.stderr
    assert not env.exists()
    # a truncated wheel: named as well
    victim.write_bytes(bytes(data[:1000]))
    r = cli("install", "--env", env, "--from-bundle", bad, "--yes", "--no-verify")
    assert r.returncode == 2 and victim.name in r.stderr and not env.exists()


@pytest.mark.slow
def test_edited_requirements_or_missing_wheel_is_refused(bundle, tmp_path):
    bad = _copy(bundle, tmp_path / "b1")
    req = bad / "requirements.txt"
    text = req.read_text(encoding="utf-8")
    req.unlink()
    req.write_text(text.replace("sha256:", "sha256:0", 1), encoding="utf-8")
    with pytest.raises(BadInput, match="does not list exactly"):
        core.check_bundle(bad)
    bad2 = _copy(bundle, tmp_path / "b2")
    gone = next((bad2 / "wheels").glob("filelock-*.whl"))
    gone.unlink()
    with pytest.raises(BadInput, match=gone.name):
        core.check_bundle(bad2)


def _fake_bundle(folder: Path, wheel_name: str, python: str = PY) -> Path:
    (folder / "wheels").mkdir(parents=True)
    whl = folder / "wheels" / wheel_name
    whl.write_bytes(b"not really a wheel")
    from packaging.utils import parse_wheel_filename

    name, version, _, tags = parse_wheel_filename(wheel_name)
    f = core.BundleFile(wheel_name, whl.stat().st_size, core.sha256_of(whl), str(name),
                        str(version), tuple(sorted(str(t) for t in tags)))
    m = core.Manifest(python_version=python, implementation="cp", abi="cp311",
                      platforms=["win_amd64"], packages=[str(name)], files=[f],
                      created="2026-11-30T00:00:00Z", assistant_version="0")
    (folder / "manifest.json").write_text(json.dumps(m.to_dict()), encoding="utf-8")
    (folder / "requirements.txt").write_text(f"{name}=={version} --hash=sha256:{f.sha256}\n", encoding="utf-8")
    return folder


def test_a_bundle_for_another_platform_is_refused_naming_the_wheel(tmp_path):
    b = _fake_bundle(tmp_path / "win", "foo-1.0-cp311-cp311-win_amd64.whl")
    with pytest.raises(BadInput) as err:
        core.check_bundle(b)
    assert "foo-1.0-cp311-cp311-win_amd64.whl" in err.value.text()
    assert "win_amd64" in err.value.text() and core.this_platform() in str(err.value.hint)


def test_bundle_input_errors(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        core.check_bundle(tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(BadInput, match=r"no manifest\.json"):
        core.check_bundle(tmp_path / "plain")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x", encoding="utf-8")
    with pytest.raises(BadInput, match="not an empty folder"):
        core.build_bundle(full, packages=["six"], python_version=PY)
    with pytest.raises(BadInput, match="not a Python version"):
        core.build_bundle(tmp_path / "new", packages=["six"], python_version="three")
    assert not (tmp_path / "new").exists()


def test_expand_platform():
    tags = core.expand_platform("manylinux_2_28_x86_64")
    assert tags[0] == "manylinux_2_28_x86_64" and "manylinux_2_17_x86_64" in tags
    assert "manylinux2014_x86_64" in tags and "manylinux_2_29_x86_64" not in tags
    assert core.expand_platform("win_amd64") == ["win_amd64"]


def test_find_bundle_by_default_takes_only_torch_bundle_next_to_the_app(tmp_path, monkeypatch):
    import app.core.base.paths as paths

    checkout = tmp_path / "apps" / "torch-setup-assistant"
    checkout.mkdir(parents=True)
    monkeypatch.setattr(paths, "app_root", lambda: checkout)
    # a bundle someone left in a neighbouring folder is not the assistant's
    _fake_bundle(tmp_path / "apps" / "someone-elses-bundle", "six-1.17.0-py2.py3-none-any.whl")
    assert core.find_bundle() is None
    mine = _fake_bundle(tmp_path / "apps" / "torch-bundle", "six-1.17.0-py2.py3-none-any.whl")
    assert core.find_bundle() == mine
    inside = _fake_bundle(checkout / "torch-bundle", "six-1.17.0-py2.py3-none-any.whl")
    assert core.find_bundle() == inside  # in the checkout wins over beside it


def test_find_bundle(tmp_path):
    assert core.find_bundle(tmp_path) is None
    b = _fake_bundle(tmp_path / "offline" / "torch-bundle", "six-1.17.0-py2.py3-none-any.whl")
    assert core.find_bundle(tmp_path / "offline") == b
    assert core.find_bundle(b) == b


@pytest.mark.slow
def test_build_a_bundle_for_another_platform(tmp_path):
    """Windows wheels, downloaded on Linux: the target need not be this machine."""
    out = tmp_path / "win bundle"
    m = core.build_bundle(out, packages=["markupsafe==3.0.3"], python_version="3.12",
                          platform="win_amd64")
    (f,) = m.files
    assert f.name.endswith("-cp312-cp312-win_amd64.whl") and f.package == "markupsafe"
    with pytest.raises(BadInput, match="win_amd64"):
        core.check_bundle(out)


@pytest.mark.netns
def test_pip_installs_a_bundle_offline_with_hashes_required(tmp_path):
    """The pip path of an offline install (a small bundle: pip takes ~60 s for torch)."""
    prefix = _no_network_prefix()
    small = tmp_path / "small bundle"
    core.build_bundle(small, packages=["six==1.17.0", "filelock==3.16.1"], python_version=PY)
    env = tmp_path / "pip offline ü"
    r = cli("install", "--env", env, "--installer", "pip", "--from-bundle", small, "--yes",
            "--no-verify", "--json", prefix=prefix)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    cmd = data["plan"]["commands"][-1]
    assert {"--isolated", "--no-index", "--require-hashes"} <= set(cmd)
    assert data["install"]["packages"]["six"] == "1.17.0"
    # a wheel swapped and its manifest entry edited to match is still refused: the hashed
    # requirements file (what pip enforces with --require-hashes) keeps the original hash
    m = json.loads((small / "manifest.json").read_text(encoding="utf-8"))
    six = next(f for f in m["files"] if f["package"] == "six")
    path = small / "wheels" / six["name"]
    data_bytes = bytearray(path.read_bytes())
    data_bytes[-30] ^= 0x01
    path.write_bytes(bytes(data_bytes))
    six["sha256"] = core.sha256_of(path)
    (small / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(BadInput, match="does not list exactly"):
        core.check_bundle(small)


def test_bundle_from_an_unreachable_index_is_refused_at_once(tmp_path):
    out = tmp_path / "b"
    with pytest.raises(BadInput, match="cannot be reached"):
        core.build_bundle(out, packages=["torch"], python_version=PY,
                          index_url="http://127.0.0.1:9/whl/cpu")
    assert not out.exists()


def _loopback_only() -> list[str]:
    """A network namespace with nothing but the loopback interface, up."""
    _no_network_prefix()
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


@pytest.mark.netns
def test_a_bundle_from_a_wheel_folder_alone_when_no_index_can_be_reached(tmp_path):
    """Issue 29, item 6: ``bundle --find-links DIR`` (the recommendation's index unreachable) is
    built from the folder, as ``install --find-links`` is, and says so; the folder holds the wheels
    for the target platform the docs name (not this machine's, so the closure check alone did not
    decide it). The bundle installs with no network. Before: "The index … cannot be reached"."""
    prefix = _loopback_only()
    tag = f"cp{PY.replace('.', '')}"
    folder = tmp_path / "wheels ü"
    from tests.netlab import build_wheel

    torch = build_wheel(folder, "torch", "2.13.0+cpu", tag=f"{tag}-{tag}-manylinux_2_28_x86_64",
                        payload={"lib.bin": os.urandom(64 * 1024)})
    out = tmp_path / "bundle"
    r = cli("bundle", "--out", out, "--python", PY, "--platform", "manylinux_2_28_x86_64", "--backend", "cpu",
            "--find-links", folder, prefix=prefix, timeout=300, env=_no_pip_config())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "built from your wheel folder(s) alone" in r.stderr and "cannot be reached" in r.stderr
    assert f"Every wheel came from your folder(s) {folder}" in r.stdout
    m = core.check_bundle(out)
    assert [(f.name, f.sha256) for f in m.files] == [(torch.name, core.sha256_of(torch))]
    assert m.from_folders and m.find_links == (str(folder),) and m.torch_index is None
    env = tmp_path / "env"
    r = cli("install", "--env", env, "--from-bundle", out, "--yes", "--no-verify", "--json", prefix=prefix)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["install"]["torch_version"] == "2.13.0+cpu"


@pytest.mark.netns
def test_no_index_and_a_folder_that_lacks_a_dependency_is_refused_naming_both(tmp_path):
    prefix = _loopback_only()
    tag = f"cp{PY.replace('.', '')}"
    folder = tmp_path / "wheels"
    from tests.netlab import build_wheel

    build_wheel(folder, "torch", "2.13.0+cpu", tag=f"{tag}-{tag}-manylinux_2_28_x86_64", requires=["filelock"])
    out = tmp_path / "bundle"
    r = cli("bundle", "--out", out, "--python", PY, "--platform", "manylinux_2_28_x86_64", "--backend", "cpu",
            "--find-links", folder, prefix=prefix, timeout=300, env=_no_pip_config())
    assert r.returncode == 2, r.stdout + r.stderr
    assert "cannot be reached" in r.stderr and f"folder(s) {folder} do not hold everything" in r.stderr
    assert "filelock" in r.stderr and not out.exists()
