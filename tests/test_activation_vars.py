"""A machine where the chosen build serves one GPU and not another: the recommendation sets
CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES (issue 25), the install writes it into the env's activation
(bash, fish, PowerShell, cmd; a conda env's activate.d), the probes run with it, and the verification
names the device its checks ran on."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from app.core.base.text import render
from app.core.env import activate_vars
from app.core.env.backends import backend_for
from app.core.install import InstallPlan, InstallRequest
from app.core.lifecycle import protect
from app.core.measure.verify import detail_text
from app.core.proc.runner import run
from app.core.recommend import recommend
from app.core.sources.settings import SourceSettings
from tests.factories import make_install_result

SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    return tmp_path


def _uv_venv(path: Path) -> Path:
    from uv import find_uv_bin

    run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(path)], timeout=60).raise_for_status(
        "uv venv failed")
    return path


def _scenario_rec(name: str):
    with open(SCENARIOS / name, "rb") as fh:
        return recommend(tomllib.load(fh)["report"])


def _plan(env: Path, rec) -> InstallPlan:
    return InstallPlan(request=InstallRequest(env_path=env, recommendation=rec), env_path=env,
                       backend=backend_for("venv", "uv"), python=None, python_request="3.12",
                       packages=("torch==2.15.0+cu132",), index=SourceSettings(), new_env=True, estimate_mb=500,
                       estimate_why="test")


def _scripts(env: Path) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin")


@pytest.mark.posix_only("sources the env's bash activation script")
def test_a_mixed_nvidia_machine_sees_only_the_served_gpu_once_the_env_is_active(home):
    """K80 + RTX 5090: the CUDA 13 build has no Kepler kernels; the recommendation sets
    CUDA_VISIBLE_DEVICES=1 (nvidia-smi's order), the install writes it into the activation, and
    deactivate puts back what the shell had."""
    rec = _scenario_rec("k80-plus-rtx5090.toml")
    assert rec.env_vars == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"}
    assert any("CUDA_VISIBLE_DEVICES=1" in r and "cuda:0 is your RTX 5090" in r for r in rec.texts().reasons)
    env = _uv_venv(home / "env")
    protect.record_install(make_install_result(env), _plan(env, rec), None)
    script = _scripts(env) / "activate"
    shell = (f'export CUDA_VISIBLE_DEVICES=0,1; . "{script}"; echo "on $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER"; '
             f'. "{script}"; echo "again $CUDA_VISIBLE_DEVICES"; deactivate; '
             'echo "off ${CUDA_VISIBLE_DEVICES-unset} ${CUDA_DEVICE_ORDER-unset}"')
    out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=30).stdout.split("\n")
    assert out[:3] == ["on 1 PCI_BUS_ID", "again 1", "off 0,1 unset"]
    assert activate_vars.recorded(env) == rec.env_vars


def test_every_shells_activation_gets_the_variables_and_loses_them_without_a_trace(home):
    env = _uv_venv(home / "env")
    before = home / "before"
    shutil.copytree(env, before, symlinks=True)
    written = activate_vars.apply(env, {"HIP_VISIBLE_DEVICES": "0"})
    s = _scripts(env)
    shells = {"activate", "activate.fish", "activate.ps1", "activate.bat", "deactivate.bat"}
    assert {Path(w).name.lower() for w in written} == shells & {n.lower() for n in os.listdir(s)}
    assert {"activate", "activate.ps1", "activate.bat", "deactivate.bat"} <= {Path(w).name.lower() for w in written}
    text = {n.lower(): (s / n).read_text(encoding="utf-8") for n in os.listdir(s) if n.lower().startswith(
        ("activate", "deactivate"))}
    assert "HIP_VISIBLE_DEVICES=0 ; export HIP_VISIBLE_DEVICES" in text["activate"]
    assert "set -gx HIP_VISIBLE_DEVICES 0" in text.get("activate.fish", "set -gx HIP_VISIBLE_DEVICES 0")
    assert "$env:HIP_VISIBLE_DEVICES = '0'" in text["activate.ps1"]
    assert '@set "HIP_VISIBLE_DEVICES=0"' in text["activate.bat"]
    assert 'set "HIP_VISIBLE_DEVICES=%_TORCH_SETUP_OLD_HIP_VISIBLE_DEVICES%"' in text["deactivate.bat"]
    for name in {"activate", "activate.fish", "activate.ps1"} & set(text):  # deactivate undoes it, in its function
        head = text[name].partition(activate_vars.BEGIN)[0]
        assert "deactivate" in head.splitlines()[-1] or "deactivate" in head.splitlines()[-2], name
    activate_vars.apply(env, {"HIP_VISIBLE_DEVICES": "1"})  # again: one block, the new value
    assert (s / "activate").read_text(encoding="utf-8").count(activate_vars.BEGIN) == 2  # on + off, once each
    activate_vars.lift(env)
    for name in os.listdir(before / s.name):
        assert (s / name).read_bytes() == (before / s.name / name).read_bytes(), name
    assert not (env / activate_vars.STATE_FILE).exists()


def test_a_conda_env_gets_files_of_its_own(tmp_path):
    env = tmp_path / "conda-env"
    (env / "conda-meta").mkdir(parents=True)
    activate_vars.apply(env, {"CUDA_VISIBLE_DEVICES": "0"})
    files = sorted(p.relative_to(env).as_posix() for p in (env / "etc" / "conda").rglob("*") if p.is_file())
    assert files == [f"etc/conda/{d}/torch-setup-vars.{e}" for d in ("activate.d", "deactivate.d")
                     for e in ("bat", "fish", "ps1", "sh")]
    assert "CUDA_VISIBLE_DEVICES=0 ; export" in (env / "etc/conda/activate.d/torch-setup-vars.sh").read_text(
        encoding="utf-8")
    activate_vars.lift(env)
    assert not any(p.is_file() for p in (env / "etc").rglob("*"))


@pytest.mark.parametrize("bad", [{"CUDA_VISIBLE_DEVICES": "0; rm -rf ~"}, {"lower": "0"}, {"X": "$(id)"}])
def test_only_plain_tokens_are_written(tmp_path, bad):
    with pytest.raises(ValueError):
        activate_vars.apply(tmp_path, bad)


def _probe():
    import importlib.util

    from app.core.base.paths import probes_dir

    spec = importlib.util.spec_from_file_location("verify_probe_25", probes_dir() / "verify.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_verification_names_the_device_its_checks_ran_on(monkeypatch):
    probe = _probe()
    devices = [{"index": 0, "backend": "cuda", "name": "NVIDIA GeForce RTX 5090"}]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    code, params = probe._ran_on("cuda", "cuda", "NVIDIA GeForce RTX 5090", devices)
    assert code == "accelerator_ran_on_visible"
    en = render(detail_text(code, params, ""))
    assert en == ("cuda: NVIDIA GeForce RTX 5090; the device checks ran on cuda:0 (NVIDIA GeForce RTX 5090), "
                  "chosen by CUDA_VISIBLE_DEVICES=1")
    assert "cuda:0" in render(detail_text(code, params, ""), "zh_CN") and "设备检查" in render(
        detail_text(code, params, ""), "zh_CN")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    code, params = probe._ran_on("rocm", "cuda", "AMD Radeon RX 7900 XTX", [
        {"index": 0, "backend": "rocm", "name": "AMD Radeon RX 7900 XTX"}])
    assert (code, params["device"], params["name"]) == ("accelerator_ran_on", "cuda:0", "AMD Radeon RX 7900 XTX")


def test_an_upgrade_takes_the_new_recommendations_variables():
    """A staged upgrade builds a new env: it gets the variables of the recommendation it installs (its
    verification runs with them), and keeps the env's own when packages are given by name."""
    from app.core.detection.system import SystemReport
    from app.core.lifecycle.upgrade import _target

    with open(SCENARIOS / "k80-plus-rtx5090.toml", "rb") as fh:
        report = SystemReport.from_dict(tomllib.load(fh)["report"])
    tgt = _target(None, {}, torch=None, packages=None, variant=None, backend=None, report=report, data=None)
    assert dict(tgt.env_vars or ()) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"}
    assert _target(None, {}, torch=None, packages=["torch==2.15.0"], variant=None, backend=None, report=report,
                   data=None).env_vars is None
