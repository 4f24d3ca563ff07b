"""Probe failures become clear errors, never hangs: real interpreters with fake `torch`
packages (a segfault, an import error, a torch that cannot load, a hang), and cancel
leaves no process behind."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

from app.core.base.errors import BadInput, Cancelled
from app.core.measure.probe import ProbeFailed, resolve_python, run_probe
from app.core.measure.verify import run_verify
from app.core.proc.runner import CancelToken
from tests.helpers import CRASH, CRASH_SIGNAL, bare_venv, real_site_packages


def _fake_env(root: Path, torch_init: str | None) -> Path:
    """A throwaway venv (no pip) whose site-packages holds torch/__init__.py = ``torch_init``."""
    py = bare_venv(root)
    if torch_init is not None:
        site = real_site_packages(root)
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text(torch_init, encoding="utf-8")
    return py


@pytest.fixture
def fake_env(tmp_path):
    def make(torch_init: str | None, name: str = "env") -> Path:
        return _fake_env(tmp_path / name, torch_init)

    return make


def _alive(pid: int) -> bool:
    try:
        p = psutil.Process(pid)
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_segfault_while_importing_torch_is_a_clear_crash(fake_env):
    py = fake_env(CRASH)
    t0 = time.monotonic()
    with pytest.raises(ProbeFailed) as ei:
        run_verify(py, timeout_s=60)
    err = ei.value
    assert err.kind == "crash" and err.code == "torch-crashed"
    assert "crashed" in err.text() and CRASH_SIGNAL in err.text() and "torch_import" in err.text()
    assert "Reinstall" in str(err.hint)
    assert err.log_path is not None and Path(err.log_path).exists()
    # the interpreter facts printed before the import survive the crash (the doctor uses them)
    assert err.facts.get("executable") == str(py)
    assert time.monotonic() - t0 < 50  # not a hang


def test_torch_missing_and_torch_that_cannot_load(fake_env):
    with pytest.raises(ProbeFailed) as ei:
        run_verify(fake_env(None, "bare"), timeout_s=60)
    assert ei.value.code == "torch-missing" and "not installed" in ei.value.text()

    broken = fake_env("from torch._C import _initExtension  # the native part is missing\n", "broken")
    with pytest.raises(ProbeFailed) as ei:
        run_verify(broken, timeout_s=60)
    assert ei.value.code == "torch-import-failed"
    assert "cannot be loaded" in ei.value.text() and "torch._C" in ei.value.text()

    oserr = fake_env("raise OSError('libtorch_cpu.so: cannot open shared object file')\n", "oserr")
    with pytest.raises(ProbeFailed) as ei:
        run_verify(oserr, timeout_s=60)
    assert ei.value.code == "torch-import-failed" and "libtorch_cpu.so" in ei.value.text()


def test_exit_without_result_and_timeout(fake_env):
    py = fake_env("import os\nos._exit(0)\n", "quiet")
    with pytest.raises(ProbeFailed) as ei:
        run_verify(py, timeout_s=60)
    assert ei.value.kind == "no-result" and "without a result" in ei.value.text()

    hang = fake_env("import time\ntime.sleep(600)\n", "hang")
    t0 = time.monotonic()
    with pytest.raises(ProbeFailed) as ei:
        run_verify(hang, timeout_s=3)
    assert ei.value.kind == "timeout" and "did not finish within 3 s" in ei.value.text()
    assert time.monotonic() - t0 < 20


def test_cancel_kills_the_probe_and_its_children(fake_env, tmp_path):
    pidfile = tmp_path / "pids"
    init = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(600)\n"
    )
    py = fake_env(init, "slow")
    cancel = CancelToken()
    caught: list[BaseException] = []

    def work():
        try:
            run_verify(py, cancel=cancel, timeout_s=300)
        except BaseException as exc:
            caught.append(exc)

    th = threading.Thread(target=work)
    th.start()
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text(encoding="utf-8").strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(x) for x in pidfile.read_text(encoding="utf-8").split()]
    assert all(_alive(p) for p in pids)
    cancel.cancel()
    th.join(30)
    assert not th.is_alive()
    assert caught and isinstance(caught[0], Cancelled)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a process of the cancelled probe survived"


def test_resolve_python(tmp_path, fake_env):
    with pytest.raises(BadInput) as ei:
        resolve_python(tmp_path / "nope")
    assert ei.value.exit_code == 2 and "does not exist" in ei.value.text()
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput) as ei:
        resolve_python(tmp_path / "empty")
    assert "not a Python environment" in ei.value.text()
    py = fake_env(None, "ok")
    assert resolve_python(py.parent.parent) == py
    assert resolve_python(py) == py


def test_probe_step_events_stream(fake_env):
    """Steps arrive as StepEvents before the failure (the GUI shows them live)."""
    events = []
    with pytest.raises(ProbeFailed):
        run_probe("verify", fake_env(None, "bare2"), on_event=events.append, timeout_s=60)
    steps = [e for e in events if getattr(e, "kind", "") == "step"]
    assert [s.name for s in steps][:2] == ["python", "torch_import"]
    assert steps[0].data["executable"].endswith(("python", "python.exe")) and steps[0].data["title"]


def test_cli_verify_bad_env_exits_2(tmp_path, capsys):
    from app.cli import main

    assert main(["verify", "--env", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["verify", "--env", str(tmp_path), "--json"]) == 2
    assert '"exit_code": 2' in capsys.readouterr().out


def test_cli_verify_on_crashing_torch_exits_1(fake_env, capsys):
    from app.cli import main

    py = fake_env(CRASH, "crash-cli")
    assert main(["verify", "--env", str(py.parent.parent)]) == 1
    err = capsys.readouterr().err
    assert "crashed" in err and "Full log:" in err
