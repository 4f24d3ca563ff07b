"""The fleet playbook against localhost (``-c local``) with the real ansible-core.

ansible-core comes from PyPI into its own venv (``$TORCH_SETUP_ANSIBLE_VENV`` to reuse one;
ansible-core 2.20+ needs Python >= 3.12, so 3.11 gets ``ansible-core<2.20``). The interpreter
is given explicitly: discovery may pick a python3.X shim that does not work (pyenv).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from tests.helpers import scratch

REPO = Path(__file__).resolve().parents[1]
PLAYBOOK_DIR = REPO / "installer" / "ansible"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ansible_venv(tmp_path_factory) -> Iterator[Path]:
    given = os.environ.get("TORCH_SETUP_ANSIBLE_VENV")
    if given:
        yield Path(given)
        return
    with scratch(tmp_path_factory, "ansible") as folder:
        yield _ansible_into(folder / "venv")


def _ansible_into(venv: Path) -> Path:
    if not (venv / "bin" / "ansible-playbook").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        spec = "ansible-core<2.20" if sys.version_info < (3, 12) else "ansible-core"
        res = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", spec], capture_output=True, text=True, encoding="utf-8", timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
    return venv


@pytest.fixture(scope="module")
def project_wheel(tmp_path_factory) -> Iterator[Path]:
    with scratch(tmp_path_factory, "wheel") as out:
        res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                             capture_output=True, text=True, encoding="utf-8", timeout=300)
        assert res.returncode == 0, res.stderr
        yield next(out.glob("torch_setup_assistant-*.whl"))


@pytest.fixture(scope="module")
def cpu_bundle(tmp_path_factory, local_wheels) -> Iterator[Path]:
    with scratch(tmp_path_factory, "bundle") as folder:
        out = folder / "torch-bundle"
        res = subprocess.run([sys.executable, "-m", "app", "bundle", "--out", str(out), "--packages",
                              "torch==2.13.0", "--find-links", str(local_wheels)],
                             cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=900)
        assert res.returncode == 0, res.stdout + res.stderr
        yield out


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Iterator[Path]:
    with scratch(tmp_path_factory, "fleet") as folder:
        yield folder


def playbook(venv: Path, fleet: Path, *extra: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(ANSIBLE_CONFIG=str(PLAYBOOK_DIR / "ansible.cfg"), ANSIBLE_HOME=str(fleet / "ansible-home"),
               ANSIBLE_LOCAL_TEMP=str(fleet / "ansible-tmp"), ANSIBLE_NOCOLOR="1")
    argv = [str(venv / "bin" / "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", f"ansible_python_interpreter={venv / 'bin' / 'python'}",
            "-e", f"torch_setup_home={fleet / 'host-home'}",
            "-e", f"torch_setup_reports_dir={fleet / 'reports'}",
            *extra, str(PLAYBOOK_DIR / "playbook.yml")]
    return subprocess.run(argv, cwd=PLAYBOOK_DIR, capture_output=True, text=True, encoding="utf-8", timeout=timeout, env=env)


def test_playbook_installs_from_a_bundle_and_brings_the_report_back(ansible_venv, project_wheel, cpu_bundle, fleet):
    vars_ = {
        "torch_setup_source": "wheel",
        "torch_setup_wheel": str(project_wheel),
        "torch_setup_python": sys.executable,
        "torch_setup_bundle": str(cpu_bundle),
        "torch_setup_env_path": str(fleet / "envs" / "torch env"),
        "torch_setup_bench_sizes": [256, 512],
        "torch_setup_bench_dtypes": ["fp32"],
        "torch_setup_bench_budget_s": 20,
        "torch_setup_report_formats": ["json", "html"],
    }
    res = playbook(ansible_venv, fleet, "-e", json.dumps(vars_))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    # The answer file the role rendered is one the assistant accepts, and it says what we asked.
    answers = tomllib.loads((fleet / "host-home" / "answers.toml").read_text(encoding="utf-8"))
    assert answers["sources"]["bundle"] == str(fleet / "host-home" / "torch-bundle")
    assert answers["report"]["name"] == "localhost"
    # The report came back to the control machine, named after the inventory host.
    report = json.loads((fleet / "reports" / "localhost.json").read_text(encoding="utf-8"))
    assert report["status"] == "ok" and report["source"] == "unattended"
    assert report["install"]["torch_version"].startswith("2.13.0")
    assert report["verify"]["ok"] is True and report["bench"]["results"]
    # ... and the summary table has its row.
    summary = (fleet / "reports" / "summary.md").read_text(encoding="utf-8")
    assert "| localhost | ok | cpu/cpu | 2.13.0+cpu |" in summary
    assert "1 of 1 hosts ok" in out
    env_py = fleet / "envs" / "torch env" / "bin" / "python"
    assert env_py.exists()


def test_playbook_reports_a_host_whose_answer_file_is_malformed(ansible_venv, project_wheel, fleet, tmp_path):
    bad = tmp_path / "answers.toml"
    bad.write_text('version = 1\n[environment]\npath = "/tmp/never"\n[torch]\nbackend = "quantum"\n', encoding="utf-8")
    res = playbook(ansible_venv, fleet, "-e", json.dumps({
        "torch_setup_source": "wheel", "torch_setup_wheel": str(project_wheel),
        "torch_setup_python": sys.executable, "torch_setup_answers_file": str(bad)}))
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]  # the host failed ...
    report = json.loads((fleet / "reports" / "localhost.json").read_text(encoding="utf-8"))
    assert report["status"] == "bad-input" and report["exit_code"] == 2  # ... said why ...
    assert "'torch.backend'" in report["error"]["message"]
    assert "0 of 1 hosts ok" in out  # ... and the summary still ran
    assert not Path("/tmp/never").exists()


def test_playbook_with_the_frozen_offline_edition(ansible_venv, cpu_bundle, tmp_path):
    """The PyInstaller app as an offline edition (app + bundle in one archive): the role
    unpacks it and the answer file says bundle = "auto". Needs the built app
    ($TORCH_SETUP_FROZEN_APP, set by installer/ci_packaging.sh after the build)."""
    app = os.environ.get("TORCH_SETUP_FROZEN_APP")
    if not app:
        pytest.skip("set TORCH_SETUP_FROZEN_APP to the PyInstaller onedir (installer/ci_packaging.sh does)")
    sys.path.insert(0, str(REPO / "installer"))
    import offline_edition

    archive = offline_edition.make_edition(Path(app), cpu_bundle, tmp_path / "edition")
    fleet = tmp_path / "fleet"
    res = playbook(ansible_venv, fleet, "-e", json.dumps({
        "torch_setup_source": "frozen", "torch_setup_app_archive": str(archive),
        "torch_setup_bundle_auto": True, "torch_setup_env_path": str(fleet / "env"),
        "torch_setup_bench_sizes": [256], "torch_setup_bench_dtypes": ["fp32"],
        "torch_setup_bench_budget_s": 10}))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    report = json.loads((fleet / "reports" / "localhost.json").read_text(encoding="utf-8"))
    assert report["status"] == "ok" and report["install"]["torch_version"].startswith("2.13.0")
    answers = tomllib.loads((fleet / "host-home" / "answers.toml").read_text(encoding="utf-8"))
    assert answers["sources"]["bundle"] == "auto"
    assert (fleet / "host-home" / "app" / "torch-setup" / "torch-bundle" / "manifest.json").is_file()
    assert "1 of 1 hosts ok" in out


def test_playbook_runs_a_fleet_plan_host_by_host(ansible_venv, project_wheel, fleet, tmp_path, torch_wheelhouse):
    """``torch_setup_plan``: each host gets its group's answer file from ``fleet plan`` (here a dry run);
    a host the plan has no build for stops with the plan's reason."""
    reports = tmp_path / "reports"
    reports.mkdir()
    here = subprocess.run([sys.executable, "-m", "app", "detect", "--json"], cwd=REPO, capture_output=True, text=True,
                          encoding="utf-8", timeout=300)
    assert here.returncode == 0, here.stderr
    (reports / "localhost.json").write_text(here.stdout, encoding="utf-8")
    plan = tmp_path / "plan"
    made = subprocess.run([sys.executable, "-m", "app", "fleet", "plan", str(reports), "--out", str(plan),
                           "--find-links", str(torch_wheelhouse.folder), "--env-path", str(fleet / "plan-env")],
                          cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    base = {"torch_setup_source": "wheel", "torch_setup_wheel": str(project_wheel),
            "torch_setup_python": sys.executable, "torch_setup_plan": str(plan)}
    res = playbook(ansible_venv, fleet, "-e", json.dumps({**base, "torch_setup_dry_run": True}))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    assert "approved for this machine; nothing was created" in out and "torch==2.13.0+cpu" in out
    assert (fleet / "host-home" / "answers" / "g1.toml").is_file() and not (fleet / "plan-env").exists()
    # a plan without this host: the host stops, with the plan's word for it
    (reports / "localhost.json").rename(reports / "elsewhere.json")
    other = tmp_path / "other-plan"
    subprocess.run([sys.executable, "-m", "app", "fleet", "plan", str(reports), "--out", str(other)], cwd=REPO,
                   capture_output=True, text=True, encoding="utf-8", timeout=300)
    res = playbook(ansible_venv, fleet, "-e", json.dumps({**base, "torch_setup_plan": str(other),
                                                          "torch_setup_dry_run": True}))
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "has no build for localhost" in out and "not in the plan" in out, out[-3000:]
