"""The exact command (issue 13): what is shown before the install is what runs, and the report
records what ran, step by step; uv environments get their own pip; the Jupyter kernel is
registered from the same sources.

Real installs of the local torch wheel (the tier CI runs with TORCH_SETUP_REQUIRE_WHEELS).
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.detection.system import PythonInfo
from app.core.env import backends as envs
from app.core.env.backends import UvVenv, uv_system_certs_flag
from app.core.install import InstallRequest, plan
from app.core.install.request import CommandRun, InstallResult, masked
from app.core.pipeline.report import SessionReport
from app.core.pipeline.session import Session
from app.core.sources.settings import SourceSettings
from tests.factories import make_install_result, make_recommendation


def _run_session(env: Path, installer: str, wheels: Path) -> tuple[list[tuple[str, ...]], Session]:
    """Plan, show, approve and install through the session, as the wizard and the CLI do."""
    session = Session(source="test")
    planned = session.check_plan(InstallRequest(env, installer=installer, packages=["torch==2.13.0"],
                                                sources=SourceSettings(find_links=[str(wheels)])))
    shown = planned.plan.shown_commands()  # what the Environment page shows before "Install"
    session.approve(planned)
    session.install()
    session.conclude()
    return shown, session


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_command_shown_before_the_install_is_the_one_in_the_report(tmp_path, local_wheels, installer):
    env = tmp_path / f"env {installer}"
    shown, session = _run_session(env, installer, local_wheels)
    result = session.install_result
    assert result is not None and result.torch_version == "2.13.0+cpu"
    ran = [c.argv for c in result.commands_run]
    assert ran == shown, "the report records exactly the commands shown before the install"
    assert [c.step for c in result.commands_run][-1] == "install"
    assert all(c.exit_code == 0 for c in result.commands_run)
    report = session.report()
    data = json.loads(report.to_json())
    assert [c["argv"] for c in data["install"]["commands_run"]] == [list(c) for c in shown]
    back = SessionReport.from_dict(data)
    assert back.install is not None and [c.argv for c in back.install.commands_run] == shown
    md = report.to_markdown()
    assert "## Commands that ran" in md and "torch==2.13.0" in md and str(local_wheels) in md


@pytest.mark.slow
def test_a_uv_environment_has_its_own_pip(tmp_path, local_wheels):
    env = tmp_path / "uv env"
    _shown, session = _run_session(env, "uv", local_wheels)
    result = session.install_result
    assert result is not None
    create = result.commands_run[0].argv
    assert create[1] == "venv" and "--seed" in create
    pip = env / ("Scripts/pip.exe" if sys.platform.startswith("win") else "bin/pip")
    out = subprocess.run([str(pip), "--version"], capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0, out.stderr
    assert str(env) in out.stdout, f"`pip` in the activated env is the env's own: {out.stdout}"


def test_seeding_takes_pip_from_the_same_sources_and_offline_from_ensurepip(tmp_path):
    backend = UvVenv(kind="venv", installer="uv", tool="uv", uv="uv")
    py = PythonInfo(executable=sys.executable, version="3.11.7", can_venv=True)
    idx = SourceSettings(torch_index="https://download.pytorch.org/whl/cpu", default_index="https://mirror.example/simple",
                       find_links=("/w",))
    (argv,) = backend.create_argv(tmp_path / "e", py, None, idx=idx)
    assert argv[argv.index("--seed"):] == ["--seed", "--index-url", "https://mirror.example/simple",
                                           "--find-links", "/w", uv_system_certs_flag("uv")]
    assert "https://download.pytorch.org/whl/cpu" not in argv  # the torch index holds no pip
    assert backend.seed_argv(tmp_path / "e", py, idx) is None
    offline = SourceSettings(find_links=("/w",), offline=True)
    (argv,) = backend.create_argv(tmp_path / "e", py, None, idx=offline)
    assert "--seed" not in argv
    assert backend.seed_argv(tmp_path / "e", py, offline)[1:] == ["-m", "ensurepip", "--default-pip"]
    no_ensurepip = PythonInfo(executable=sys.executable, version="3.11.7", can_venv=False)
    assert backend.seed_argv(tmp_path / "e", no_ensurepip, offline) is None


def test_commands_are_shown_and_saved_with_credentials_masked(tmp_path):
    p = plan(InstallRequest(tmp_path / "env", packages=["torch==2.13.0"], python=sys.executable,
                            sources=SourceSettings(default_index="https://alice:s3cret@mirror.example/simple",
                                                   torch_index="https://pkgs.example/whl/cpu?token=abc123")))
    shown = " ".join(" ".join(c) for c in p.shown_commands())
    assert "s3cret" not in shown and "abc123" not in shown and "***@mirror.example" in shown
    assert "s3cret" not in json.dumps(p.to_dict())
    assert masked(["x", "https://u:p@h/"]) == ("x", "https://***@h/")


def test_a_plan_made_from_a_wheel_folder_installs_from_it_alone(tmp_path):
    rec = make_recommendation(index_url="", find_links=(str(tmp_path),), no_index=True,
                              packages=("torch==2.13.0+cpu",), pythons=("3.11",))
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable))
    assert p.index.offline and p.index.find_links == (str(tmp_path),) and p.index.torch_index is None
    install = p.commands()[-1]
    assert "--no-index" in install and "--find-links" in install and "--index-url" not in install
    from app.core.install.checks import index_targets

    assert index_targets(p) == [("find-links", str(tmp_path))]


def test_the_preflight_refuses_a_python_the_build_does_not_support(tmp_path):
    from app.core.install.checks import check_python

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    rec = make_recommendation(pythons=("3.8",), python_range=("3.8", "3.8"), torch_release="2.4")
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable))
    check = check_python(p)
    assert not check.ok and check.blocking and check.code == "preflight.python_unfit"
    assert f"Python {here}" in check.message.render() and "supports Python 3.8–3.8" in check.message.render()
    assert "中" not in check.hint.render() and "Python 3.8" in check.hint.render("zh_CN")
    fits = make_recommendation(pythons=(here,), python_range=(here, here))
    assert check_python(plan(InstallRequest(tmp_path / "env", recommendation=fits, python=sys.executable))).ok


def test_install_result_round_trips_the_commands_that_ran():
    r = make_install_result(commands_run=(CommandRun("create-env", ("uv", "venv", "/e"), 0, 0.4),
                                          CommandRun("install", ("uv", "pip", "install", "torch"), 2, 9.1)))
    back = InstallResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.commands_run == r.commands_run
    section = [s for s in SessionReport(install=r).sections() if s.title == "Commands that ran"]
    assert section and section[0].table[1] == ("create-env", "uv venv /e", "0", "0.4 s")


@pytest.mark.slow
def test_the_jupyter_kernel_is_registered_from_the_same_sources(tmp_path, monkeypatch):
    """ipykernel through the runner, then ``python -m ipykernel install --user`` into a per-test
    Jupyter data folder; the commands known before are the ones that ran."""
    from app.core.lifecycle.kernelspec import kernel_commands, kernel_name, register_kernel
    from app.core.proc.runner import run

    env = tmp_path / "kernel env"
    uv = envs.uv_bin()
    assert uv
    run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], timeout=120).raise_for_status("uv venv")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    before = kernel_commands(env, installer="uv")
    assert [s for s, _ in before] == ["ipykernel", "register"]
    assert before[1][1][1:] == ["-m", "ipykernel", "install", "--user", "--name", kernel_name(env),
                                "--display-name", f"Python — {env.name}"]
    result = register_kernel(env, installer="uv")
    assert [c.argv for c in result.commands_run] == [tuple(a) for _, a in before]
    spec = json.loads((Path(result.path) / "kernel.json").read_text(encoding="utf-8"))
    assert Path(spec["argv"][0]) == envs.env_python(env) and spec["display_name"] == f"Python — {env.name}"
    assert Path(result.path).parent == tmp_path / "jupyter" / "kernels"
    assert [s for s, _ in kernel_commands(env, installer="uv")] == ["register"]  # ipykernel is there now


@pytest.mark.slow
def test_an_index_without_pip_still_gives_the_env_its_own_pip(tmp_path, index_server, tiny_wheels):
    """uv venv --seed takes pip from the install's own index; one that holds only the user's packages
    makes the env's Python install its own pip (ensurepip): the install never fails for want of pip."""
    from app.core.install import install

    index = index_server([*tiny_wheels.glob("*.whl")])
    env = tmp_path / "env"
    p = plan(InstallRequest(env, python=sys.executable, packages=["netlab-demo==1.1"],
                            sources=SourceSettings(torch_index=index.simple_url(), default_index=index.simple_url())))
    result = install(p)
    steps = [(c.step, c.exit_code) for c in result.commands_run]
    assert steps[0] == ("create-env", 2) and ("seed-pip", 0) in steps and steps[-1] == ("install", 0), steps
    pip = env / ("Scripts/pip.exe" if sys.platform.startswith("win") else "bin/pip")
    out = subprocess.run([str(pip), "--version"], capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0 and str(env) in out.stdout, out.stdout + out.stderr


def test_offline_seeding_installs_ensurepips_own_pip_with_uv(tmp_path):
    """Offline (a bundle, a wheel folder alone) the env's pip is the one ensurepip bundles, put in by uv
    from that folder (a fraction of a second; ``python -m ensurepip`` takes seconds)."""
    from app.core.env.backends import probe_python

    if importlib.util.find_spec("ensurepip") is None:
        pytest.skip("this Python has no ensurepip (the embeddable Windows build of the lane)")
    backend = UvVenv(kind="venv", installer="uv", tool="uv", uv="uv")
    py, _ = probe_python(sys.executable, use_cache=False)
    assert py is not None and py.pip_wheels and Path(py.pip_wheels, f"pip-{py.pip}-py3-none-any.whl").is_file()
    argv = backend.seed_argv(tmp_path / "e", py, SourceSettings(find_links=("/w",), offline=True))
    assert argv is not None and argv[:3] == ["uv", "pip", "install"] and "--offline" in argv
    assert argv[argv.index("--find-links") + 1] == py.pip_wheels and argv[-1] == "pip"


TLS_FLAGS = {"--system-certs", "--native-tls"}


def test_uv_trusts_what_the_preflight_checked(monkeypatch):
    """The pre-flight checks an index's certificate against this computer's trust store (Python's
    ssl); uv gets the same store (--system-certs, or --native-tls on a uv without it) unless a CA file
    is given (SSL_CERT_FILE, for both).
    Before, uv used its built-in roots: an index signed by a company's own CA passed the
    pre-flight and was then refused by uv."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # this machine's own setting aside
    backend = UvVenv(kind="venv", installer="uv", tool="uv", uv="uv")
    for ca, native in ((None, True), ("system", True), ("/etc/my-ca.pem", False)):
        idx = SourceSettings(torch_index="https://download.pytorch.org/whl/cpu", ca_bundle=ca)
        argv = backend.install_argv(Path("/e"), ["torch"], idx)
        assert bool(TLS_FLAGS & set(argv)) is native, (ca, argv)
        assert backend.child_env(idx).get("SSL_CERT_FILE") == (None if native else ca)
    offline = backend.install_argv(Path("/e"), ["torch"], SourceSettings(find_links=("/w",), offline=True))
    assert not TLS_FLAGS & set(offline)  # no network at all
    # the uv this project installs has --system-certs, and --native-tls is deprecated there (a warning
    # on every run): the flag is asked of the real uv
    from app.core.env.backends import uv_bin

    real = uv_bin()
    assert real is not None
    res = subprocess.run([real, "pip", "install", "--help"], capture_output=True, text=True, timeout=60)
    assert uv_system_certs_flag(real) == ("--system-certs" if "--system-certs" in res.stdout else "--native-tls")
