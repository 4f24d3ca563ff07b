"""Issue 27, secrets: every file the assistant writes that can hold what a user typed is mode 0600
and masked, written through one pair of helpers (app.core.base.secrets: write_private, open_private).

The helpers are tested on real files under a permissive umask (022: what a new file gets on most
machines), and then the real writers that use them: the runner's log, the registry, a session
report, the detection report of ``detect --out``.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base import secrets
from app.core.base.secrets import PRIVATE_MODE, append_private, open_private, write_private

REPO = Path(__file__).resolve().parents[1]
TOKEN = "Priv4te-T0ken-xyz"
URL = f"https://user:{TOKEN}@127.0.0.1:9/simple/"

posix = pytest.mark.posix_only("file modes are POSIX; a Windows profile's files are the user's")


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def remembered():
    secrets.remember_url(URL)
    try:
        yield
    finally:
        secrets.forget_all()


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@posix
def test_write_private_is_0600_masked_and_replaces_in_one_step(tmp_path, loose_umask, remembered):
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o644)
    write_private(target, f"index = {URL}\n")
    assert _mode(target) == PRIVATE_MODE
    text = target.read_text(encoding="utf-8")
    assert TOKEN not in text and "***" in text
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary file left
    write_private(target, f"exact {URL}", masked=False)  # a machine's record: kept exact, still private
    assert target.read_text(encoding="utf-8") == f"exact {URL}" and _mode(target) == PRIVATE_MODE


@posix
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, loose_umask):
    target = tmp_path / "registry.json"
    target.write_text("kept", encoding="utf-8")
    with pytest.raises(TypeError):
        write_private(target, 12345)  # type: ignore[arg-type]  # fails inside the write
    assert target.read_text(encoding="utf-8") == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["registry.json"]


@posix
def test_open_private_makes_an_existing_log_private_and_appends(tmp_path, loose_umask, remembered):
    log = tmp_path / "install.log"
    log.write_text("first\n", encoding="utf-8")
    log.chmod(0o664)
    with open_private(log) as fh:
        fh.write("second\n")
    append_private(log, f"uv --index-url {URL}\n")
    assert _mode(log) == PRIVATE_MODE
    assert log.read_text(encoding="utf-8").splitlines() == ["first", "second",
                                                            "uv --index-url https://***@127.0.0.1:9/simple/"]


@posix
def test_the_real_writers_leave_private_files(tmp_path, loose_umask, remembered, monkeypatch):
    """The runner's log, the registry and a session report, each as the product writes them."""
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    from app.core.env import registry
    from app.core.pipeline.report import SessionReport
    from app.core.proc import runner

    log = tmp_path / "logs" / "run.log"
    res = runner.run([sys.executable, "-c", f"print('{URL}')"], log_path=log, timeout=60)
    assert res.returncode == 0
    assert _mode(log) == PRIVATE_MODE and TOKEN not in log.read_text(encoding="utf-8")

    env = tmp_path / "env"
    env.mkdir()
    registry.record_verification(env, registry.Verification(ok=True, when=registry.now()), python="3.11")
    reg = registry.registry_file()
    assert reg.exists() and _mode(reg) == PRIVATE_MODE

    written = SessionReport(hostname="h", notes=(f"mirror {URL}",)).save(tmp_path / "reports", stem="r")
    assert written
    for p in written:
        assert _mode(p) == PRIVATE_MODE, p
        assert TOKEN not in p.read_text(encoding="utf-8"), p


@posix
def test_detect_out_is_private(tmp_path):
    out = tmp_path / "report.json"
    env = {**os.environ, "TORCH_SETUP_HOME": str(tmp_path / "home"), "PIP_INDEX_URL": URL}
    res = subprocess.run([sys.executable, "-m", "app", "detect", "--out", str(out)], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr[-2000:]
    assert _mode(out) == PRIVATE_MODE
    text = out.read_text(encoding="utf-8")
    json.loads(text)
    assert TOKEN not in text and TOKEN not in res.stdout + res.stderr


def test_a_token_in_the_users_pip_conf_appears_nowhere(tmp_path, tiny_wheels):
    """The pip.conf input of must-show 3: the user's own pip configuration names an index with a
    token (user:password and a query token). An install with pip plans from it and its pre-flight
    checks it (refused: nothing listens there); the token is in no output and no file of the
    assistant's, and the log is 0600."""
    home = tmp_path / "user"
    conf = home / (".config/pip/pip.conf" if os.name != "nt" else "AppData/Roaming/pip/pip.ini")
    conf.parent.mkdir(parents=True)
    conf.write_text("[global]\nindex-url = http://me:PipConf-T0ken@127.0.0.1:9/simple/?token=PipConf-Q7\n",
                    encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(HOME=str(home), APPDATA=str(home / "AppData" / "Roaming"), TORCH_SETUP_HOME=str(tmp_path / "state"),
               PYTHONIOENCODING="utf-8")
    res = subprocess.run([sys.executable, "-m", "app", "install", "--env", str(tmp_path / "env"), "--installer", "pip",
                          "--packages", "netlab-dep==0.5", "six", "--find-links", str(tiny_wheels), "--yes",
                          "--no-verify", "--json"], cwd=REPO, env=env, capture_output=True, text=True,
                         encoding="utf-8", timeout=300, stdin=subprocess.DEVNULL)
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    assert "127.0.0.1:9" in out  # the index from pip.conf was used (and shown) ...
    for secret in ("PipConf-T0ken", "PipConf-Q7"):  # ... without its token
        assert secret not in out
        for p in (tmp_path / "state").rglob("*"):
            if p.is_file():
                assert secret.encode() not in p.read_bytes(), p
    logs = list((tmp_path / "state").rglob("*.log"))
    assert logs and all(os.name == "nt" or _mode(p) == PRIVATE_MODE for p in logs)
