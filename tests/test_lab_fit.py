"""Can a lock's build run on a machine (app.core.pylock.fit), and ``install --lock`` refusing one that
cannot, before anything is created: exit 2, the reason, the nearest working choice.

Machines are recorded reports (tests/fixtures/fleet) and, for this machine, fake ``nvidia-smi``
programs on PATH answering like the recorded ones (the GPU edge, as in tests/test_detect_cli.py).
The locks are small TOML files naming real wheel file names; nothing is downloaded.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.base.text import render
from app.core.detection.system import load_report
from app.core.pylock.fit import fit_lock
from app.core.pylock.lockfile import Lock, LockedFile, LockedPackage, lock_text
from tests.helpers import run_cli
from tests.test_detect_cli import FIXTURES, TWO_GPUS_CSV, fake_smi

FLEET = Path(__file__).resolve().parent / "fixtures" / "fleet"
TITAN_V_CSV = "0, NVIDIA TITAN V, 515.65.01, 7.0, 12288, 00000000:01:00.0, 0x1D8110DE\n"


def lock_for(torch: str, variant: str, plat: str = "manylinux_2_28_x86_64", python: str = "3.11") -> Lock:
    tag = f"cp{python.replace('.', '')}"
    name = f"torch-{torch}+{variant}-{tag}-{tag}-{plat}.whl"
    return Lock(python=python + ".7", platform="linux-x86_64", torch=f"{torch}+{variant}", variant=variant,
                packages=(LockedPackage("torch", f"{torch}+{variant}", (LockedFile(name, "c" * 64,
                          url=f"https://download.pytorch.org/whl/{variant}/{name}"),),
                          index=f"https://download.pytorch.org/whl/{variant}"),))


def write_lock(folder: Path, lock: Lock) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pylock.toml"
    path.write_text(lock_text(lock), encoding="utf-8")
    return path


def test_a_build_for_another_platform_is_refused_with_the_same_torch_for_this_one():
    fit = fit_lock(lock_for("2.13.0", "cpu", plat="win_amd64"), load_report(FLEET / "cpu-node-1.json"))
    assert not fit.ok and "win_amd64" in render(fit.problems[0]) and "Linux x86_64" in render(fit.problems[0])
    assert fit.nearest is not None and fit.nearest.torch == "2.13.0" and fit.nearest.variant == "cpu"


def test_a_gpu_generation_the_build_lacks_is_refused_with_the_build_that_has_it():
    fit = fit_lock(lock_for("2.13.0", "cu130"), load_report(FLEET / "old-p100-gtx1070-580.json"))
    why = render(fit.problems[0])
    assert not fit.ok and "no kernels" in why and "compute capability 6.0" in why
    assert fit.nearest is not None and (fit.nearest.torch, fit.nearest.variant) == ("2.13.0", "cu126")


def test_an_old_driver_is_refused_with_the_newest_build_it_runs():
    fit = fit_lock(lock_for("2.13.0", "cu126"), load_report(FLEET / "old-titanv-515.json"))
    why = render(fit.problems[0])
    assert not fit.ok and "525.60.13" in why and "515.65.01" in why
    assert fit.nearest is not None and fit.nearest.variant == "cu118"
    assert "cu118" in render(fit.refusal(lock_for("2.13.0", "cu126"), "old-titanv-515").hint.cli)


def test_a_lock_that_fits_brings_the_engines_view_of_its_build():
    fit = fit_lock(lock_for("2.13.0", "cu130"), load_report(FLEET / "lab-h100-590.json"))
    assert fit.ok and fit.recommendation is not None and fit.recommendation.variant == "cu130"
    assert str(fit.recommendation.backend) == "cuda"  # the verification then expects CUDA


def test_a_build_the_data_does_not_know_is_judged_by_its_tags_and_said_so():
    fit = fit_lock(lock_for("9.9.0", "cpu"), load_report(FLEET / "cpu-node-1.json"))
    assert fit.ok and "does not know torch 9.9.0+cpu" in render(fit.notes[0])


# ------------------------------------------------------------------ install --lock on this machine

def _refused(capsys, tmp_path: Path, lock: Lock) -> str:
    env = tmp_path / "env"
    rc, out, err = run_cli(capsys, "install", "--env", str(env), "--lock", str(write_lock(tmp_path / "l", lock)),
                           "--yes")
    assert rc == 2, out + err
    assert not env.exists()  # refused before anything was created
    return err


def test_install_lock_refuses_another_platform(tmp_path, capsys):
    err = _refused(capsys, tmp_path, lock_for("2.13.0", "cpu", plat="win_amd64"))
    assert "cannot run on this machine" in err and "built for win_amd64" in err
    assert "torch-setup install --env PATH --torch 2.13.0 --variant cpu" in err


@pytest.mark.parametrize(("csv", "plain", "lock", "reason", "nearest"), [
    (TWO_GPUS_CSV, "multi-gtx1050ti-gtx1060-535.183.01-debian12.txt", ("2.13.0", "cu130"), "no kernels",
     "--torch 2.13.0 --variant cu126"),
    (TITAN_V_CSV, "single-titan-v-515.65.01.txt", ("2.13.0", "cu126"), "needs NVIDIA driver 525.60.13",
     "--variant cu118"),
], ids=["gpu-generation", "old-driver"])
def test_install_lock_refuses_a_build_this_gpu_cannot_run(tmp_path, capsys, monkeypatch, csv, plain, lock, reason,
                                                          nearest):
    bindir = fake_smi(tmp_path, csv, (FIXTURES / "nvidia-smi" / plain).read_text(encoding="utf-8"))
    monkeypatch.setenv("PATH", f"{bindir}{__import__('os').pathsep}{__import__('os').environ['PATH']}")
    monkeypatch.setenv("TORCH_SETUP_NO_NVML", "1")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    err = _refused(capsys, tmp_path, lock_for(*lock))
    assert reason in err and nearest in err, err


def test_install_lock_names_the_bad_field_of_a_lock(tmp_path, capsys):
    bad = tmp_path / "pylock.toml"
    bad.write_text('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "torch"\nversion = "2.13.0"\n'
                   'wheels = [{ url = "https://x/torch-2.13.0-py3-none-any.whl" }]\n', encoding="utf-8")
    rc, out, _err = run_cli(capsys, "install", "--env", str(tmp_path / "env"), "--lock", str(bad), "--yes", "--json")
    assert rc == 2 and "packages[0].wheels[0].hashes" in json.loads(out)["message"]
    assert not (tmp_path / "env").exists()


def test_install_lock_refuses_options_that_name_another_build(tmp_path, capsys):
    lock = write_lock(tmp_path, lock_for("2.13.0", "cpu"))
    rc, _, err = run_cli(capsys, "install", "--env", str(tmp_path / "env"), "--lock", str(lock), "--torch", "2.14")
    assert rc == 2 and "--torch cannot be combined" in err


def test_an_answer_file_takes_a_lock_and_refuses_a_version_beside_it(tmp_path, capsys):
    lock = write_lock(tmp_path, lock_for("2.13.0", "cpu"))
    answers = tmp_path / "answers.toml"
    answers.write_text(f'version = 1\n[environment]\npath = "{tmp_path / "env"}"\n[torch]\nlock = "pylock.toml"\n'
                       'version = "2.14.0"\n', encoding="utf-8")
    rc, _, err = run_cli(capsys, "install", "--config", str(answers), "--yes")
    assert rc == 2 and "'torch.version'" in err and "the lock decides it" in err
    answers.write_text(f'version = 1\n[environment]\npath = "{tmp_path / "env"}"\n[torch]\nlock = "nope.toml"\n',
                       encoding="utf-8")
    rc, _, err = run_cli(capsys, "install", "--config", str(answers), "--yes")
    assert rc == 2 and "'torch.lock'" in err
    assert lock.exists() and not (tmp_path / "env").exists()
