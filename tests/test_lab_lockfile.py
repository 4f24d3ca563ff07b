"""The PEP 751 lock (app.core.pylock.lockfile): written, read back, refused naming the field, read by uv.

uv reads what the writer writes (``uv pip install --dry-run -r pylock.toml`` over small generated
wheels in a folder); every bad field of a lock is bad input (exit 2) that names it.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.pylock.lockfile import (
    GpuFact,
    Lock,
    LockedFile,
    LockedPackage,
    Machine,
    NotLocked,
    Verified,
    lock_name_problem,
    lock_text,
    parse_lock,
    requirements_text,
)
from tests.helpers import bare_venv
from tests.netlab import build_wheel, file_sha256

SHA = "a" * 64


def _lock(**kw) -> Lock:
    base = dict(python="3.11.7", platform="linux-x86_64", torch="2.13.0+cpu", variant="cpu", backend="cpu",
                packages=(LockedPackage("torch", "2.13.0+cpu", (LockedFile("torch-2.13.0+cpu-cp311-cp311-"
                                                                           "manylinux_2_28_x86_64.whl", SHA,
                                                                           path="/opt/wheels/t.whl", size=9),),
                                        folder="/opt/wheels", origin="folder"),
                          LockedPackage("filelock", "4.3.2", (LockedFile("filelock-4.3.2-py3-none-any.whl", "b" * 64,
                                                                         url="https://pypi.org/f.whl"),),
                                        index="https://pypi.org/simple")))
    base.update(kw)
    return Lock(**base)


def test_a_lock_round_trips_and_is_standard_toml():
    weird = 'lab "A" \\ 路径 \x7f\ttab'
    lock = _lock(env_name=weird, machine=Machine(hostname="gpu-01", os="linux", arch="x86_64", glibc="2.36",
                                                 gpus=(GpuFact("nvidia", "NVIDIA GeForce RTX 4090", "580.95.05",
                                                               "8.9"),)),
                 verified=Verified(True, "2026-12-06T10:00:00+00:00", "2.13.0+cpu", None, 6, 10,
                                   ("NVIDIA GeForce RTX 4090",)),
                 not_locked=(NotLocked("mystery", "1.0", "no source of the environment lists this file"),),
                 env_vars={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    text = lock_text(lock)
    data = tomllib.loads(text)  # the standard reader takes it
    assert data["lock-version"] == "1.0" and data["created-by"] == "torch-setup"
    assert data["requires-python"] == "==3.11.*"
    assert data["environments"] == ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
    torch = next(p for p in data["packages"] if p["name"] == "torch")
    assert "index" not in torch  # a folder is not an index URL (uv refuses a path there)
    assert torch["tool"]["torch-setup"] == {"origin": "folder", "folder": "/opt/wheels"}
    back = parse_lock(text)
    assert back.env_name == weird and back.machine == lock.machine and back.verified == lock.verified
    assert back.not_locked == lock.not_locked and dict(back.env_vars) == dict(lock.env_vars)
    assert {p.name: p for p in back.packages} == {p.name: p for p in lock.packages}
    assert back.sources.torch_index is None and lock.machine is not None
    assert lock.machine.describe() == "NVIDIA GeForce RTX 4090 (driver 580.95.05)"


def test_requirements_pin_every_file_by_its_hash():
    text = requirements_text(_lock().packages)
    assert f"torch==2.13.0+cpu --hash=sha256:{SHA}" in text
    assert "filelock==4.3.2 --hash=sha256:" + "b" * 64 in text


BAD = [
    ('lock-version = "2.0"\ncreated-by = "x"\n[[packages]]\nname = "a"\nversion = "1"\n', "lock-version"),
    ('lock-version = "1.0"\ncreated-by = "x"\n', "packages"),
    ('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "a"\nversion = "1"\n'
     'wheels = [{ url = "https://x/a-1-py3-none-any.whl" }]\n', "packages[0].wheels[0].hashes"),
    ('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "a"\nversion = "1"\n'
     'wheels = [{ url = "https://x/a-1-py3-none-any.whl", hashes = { sha256 = "zz" } }]\n',
     "packages[0].wheels[0].hashes.sha256"),
    ('lock-version = "1.0"\ncreated-by = "x"\nrequires-python = "==3.11.*"\n[[packages]]\nname = "a"\nversion = "1"\n'
     f'wheels = [{{ url = "https://x/a-1-py3-none-any.whl", hashes = {{ sha256 = "{SHA}" }} }}]\n'
     '[[packages]]\nname = "A"\nversion = "2"\n'
     f'wheels = [{{ url = "https://x/a-2-py3-none-any.whl", hashes = {{ sha256 = "{SHA}" }} }}]\n',
     "packages[1].name"),
    ("lock-version = \n", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "field"), BAD, ids=[b[1] for b in BAD])
def test_a_bad_lock_is_refused_naming_the_field(text, field):
    with pytest.raises(BadInput) as got:
        parse_lock(text, source=Path("pylock.toml"))
    assert field in render(got.value.message) and "pylock.toml" in render(got.value.message)


def test_only_the_standard_names_are_lock_files():
    assert lock_name_problem("out/pylock.toml") is None and lock_name_problem("pylock.lab.toml") is None
    assert "pylock.toml" in (lock_name_problem("lock.toml") or "")
    assert lock_name_problem("pylock.a.b.toml") is not None


def test_uv_reads_the_lock_it_is_given(tmp_path):
    """The writer's file is one uv installs from: small real wheels named by path and hash."""
    wheels = tmp_path / "wheels"
    dep = build_wheel(wheels, "netlab-dep", "0.5")
    demo = build_wheel(wheels, "netlab-demo", "1.1", requires=["netlab-dep"])
    lock = _lock(torch=None, variant=None, backend=None, packages=tuple(
        LockedPackage(name, version, (LockedFile(w.name, file_sha256(w), path=str(w), size=w.stat().st_size),),
                      origin="folder", folder=str(wheels))
        for name, version, w in (("netlab-dep", "0.5", dep), ("netlab-demo", "1.1", demo))))
    out = tmp_path / "pylock.toml"
    out.write_text(lock_text(lock), encoding="utf-8")
    py = bare_venv(tmp_path / "env")
    from uv import find_uv_bin

    res = subprocess.run([find_uv_bin(), "pip", "install", "--dry-run", "--python", str(py), "-r", str(out)],
                         capture_output=True, text=True, encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    assert "netlab-demo==1.1" in res.stderr and "netlab-dep==0.5" in res.stderr
    # a wrong hash is refused by uv too: the lock pins the files, not only the versions
    out.write_text(lock_text(Lock(**{**lock.__dict__, "packages": (
        LockedPackage("netlab-dep", "0.5", (LockedFile(dep.name, SHA, path=str(dep)),), origin="folder"),)})),
        encoding="utf-8")
    res = subprocess.run([find_uv_bin(), "pip", "install", "--python", str(py), "-r", str(out)],
                         capture_output=True, text=True, encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL)
    assert res.returncode != 0 and "hash" in res.stderr.lower()
    assert sys.executable  # nothing of the assistant's own interpreter was touched
