"""Must-show 1: a guarded env keeps its verified torch against later pip and uv installs.

A real env is made by ``torch-setup install`` (torch 2.13.0+cpu from the local wheel folder, plus
pip), verified, recorded and guarded by the install's success path. A tiny local wheel that
Requires-Dist ``torch==2.14.1`` (a real second build in the local index) is then installed the
ways users do it:

* ``<env>/bin/pip install`` (pip reads the env's pip.conf): refused, torch unchanged;
* ``uv pip install`` in the activated env (UV_CONSTRAINT from bin/activate): refused;
* ``uv pip install --python <env>/bin/python`` from outside: NOT guarded (uv has no per-env
  configuration) -- it replaces torch, and ``torch-setup doctor`` names what happened;
* ``envs repair`` refuses while a package requires the other torch, then puts the verified build
  back (and the guard);
* after ``envs unguard`` pip resolves the package with torch 2.14.1 (a dry run: pip's real install of
  the 2.8 GB CUDA stack takes ~100 s here) and uv in the activated env installs it; the doctor says
  torch changed since it was verified, and ``envs guard`` refuses to pin an unverified build.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest

from app.core.env import guard, registry
from app.core.env.distinfo import distributions
from tests.helpers import run_cli as _cli
from tests.helpers import torch_in as _torch
from tests.netlab.clients import clean_env, uv_bin
from tests.netlab.files import build_wheel
from tests.second_torch import SecondTorch, module_uv_cache, own_uv_cache, second_torch  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]




def _run(argv: list[str], **kw) -> subprocess.CompletedProcess[str]:
    env = clean_env()  # no PIP_* / UV_* of this machine; this test's own uv cache
    if os.environ.get("UV_CACHE_DIR"):
        env["UV_CACHE_DIR"] = os.environ["UV_CACHE_DIR"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env, **kw)


def test_guard_against_pip_and_uv(tmp_path, capsys, local_wheels, second_torch: SecondTorch,  # noqa: F811
                                  own_uv_cache):  # noqa: F811
    env = tmp_path / "guarded"
    default_index = second_torch.indexes[1] if len(second_torch.indexes) > 1 else second_torch.indexes[0]
    rc, _, err = _cli(capsys, "install", "--env", str(env), "--packages", "torch==2.13.0+cpu", "pip", "--find-links",
                 str(local_wheels), "--default-index-url", default_index, "--yes", "--json")
    assert rc == 0
    rec = registry.find(env)
    assert rec is not None and rec.made_by_app and rec.verification is not None and rec.verification.ok
    assert rec.guard is not None and rec.guard.enabled and rec.guard.pins == ("torch==2.13.0+cpu",)
    assert guard.status(env).active
    build_wheel(second_torch.links, "needs-new-torch", "1.0", requires=["torch==2.14.1"])
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
           *second_torch.pip_args()]
    uv_cmd = shlex.join([uv_bin(), "pip", "install", *second_torch.uv_args()])

    # 1. pip from the env: refused by the env's pip.conf constraint
    res = _run([*pip, "needs-new-torch"])
    assert res.returncode != 0, res.stdout + res.stderr
    assert "ResolutionImpossible" in res.stdout + res.stderr
    assert _torch(env) == "2.13.0+cpu" and "needs-new-torch" not in distributions(env)

    # 2. uv in the activated env: refused by UV_CONSTRAINT
    res = _run(["bash", "-c", f'source "{env}/bin/activate" && {uv_cmd} needs-new-torch'])
    assert res.returncode != 0, res.stdout + res.stderr
    assert "torch==2.13.0+cpu" in res.stderr
    assert _torch(env) == "2.13.0+cpu"

    # 3. uv from outside, --python: not guarded; the doctor names the change and who made it
    res = _run([uv_bin(), "pip", "install", "--python", str(env / "bin" / "python"), *second_torch.uv_args(),
                "needs-new-torch"])
    assert res.returncode == 0, res.stderr
    assert _torch(env) == "2.14.1"
    rc, out, _ = _cli(capsys, "doctor", "--env", str(env), "--json")
    found = {f["code"]: f for f in json.loads(out)["findings"]}
    assert "torch-guard-bypassed" in found, found.keys()
    bypass = found["torch-guard-bypassed"]
    assert "torch 2.13.0+cpu -> 2.14.1" in bypass["title"]
    assert "written by uv" in bypass["explanation"]
    assert f"torch-setup envs repair {env}" in bypass["fix"]
    rc, out, _ = _cli(capsys, "envs", "list", "--json", "--no-size")
    row = next(e for e in json.loads(out)["environments"] if e["path"] == str(env))
    assert row["status"] == "changed" and row["guarded"]

    # 4. repair: refused while a package needs the other torch; then back to the verified build
    rc, _, err = _cli(capsys, "envs", "repair", str(env), "--find-links", str(local_wheels), "--index-url",
                 default_index, "--yes")
    assert rc == 2
    assert "needs-new-torch 1.0 requires torch==2.14.1, which torch 2.13.0+cpu does not satisfy" in err
    assert _torch(env) == "2.14.1"  # nothing was changed
    assert _run([uv_bin(), "pip", "uninstall", "--python", str(env / "bin" / "python"),
                 "needs-new-torch"]).returncode == 0
    rc, _, err = _cli(capsys, "envs", "repair", str(env), "--find-links", str(local_wheels), "--index-url",
                 default_index, "--yes")
    assert rc == 0, err
    assert _torch(env) == "2.13.0+cpu"
    assert guard.status(env).active

    # 5. unguard: pip and uv proceed; the doctor says torch changed since it was verified
    rc, _, err = _cli(capsys, "envs", "unguard", str(env))
    assert rc == 0 and not guard.status(env).constraints and not guard.pip_config_file(env).exists()
    res = _run([*pip, "--dry-run", "needs-new-torch"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Would install" in res.stdout and "torch-2.14.1" in res.stdout
    res = _run(["bash", "-c", f'source "{env}/bin/activate" && {uv_cmd} needs-new-torch'])
    assert res.returncode == 0, res.stderr
    assert _torch(env) == "2.14.1" and "needs-new-torch" in distributions(env)
    rc, out, _ = _cli(capsys, "doctor", "--env", str(env), "--json")
    codes = {f["code"]: f for f in json.loads(out)["findings"]}
    assert "torch-changed-since-verified" in codes and "replaced by uv" in codes[
        "torch-changed-since-verified"]["explanation"]
    rc, _, err = _cli(capsys, "envs", "guard", str(env))
    assert rc == 2  # 2.14.1 was never verified here: not pinned
    assert not guard.status(env).constraints
    assert os.path.isdir(env)
