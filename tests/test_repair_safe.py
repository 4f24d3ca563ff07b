"""Issue 27: a repair never takes torch out before it has the replacement.

A real env with the real torch CPU wheel (installed by the CLI from the local wheel folder and
verified), then ``envs repair`` with every source unreachable (an index on a loopback port where
nothing listens, an empty wheel folder): the repair fails, and the env still has its torch, still
imports it, and its record still says it was verified. Before, the torch family was uninstalled
first and the restore could not fetch it back either.
"""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from app.cli import main
from app.core.env import registry
from app.core.env.backends import env_python
from app.core.env.distinfo import distributions

pytestmark = pytest.mark.slow


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _dead_index() -> str:
    with socket.socket() as s:  # a free port on the loopback interface; closed again: nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple/"


@pytest.mark.timeout(900)
def test_a_repair_with_unreachable_sources_keeps_torch(tmp_path, capsys, local_wheels):
    env = tmp_path / "env"
    rc, out, err = _cli(capsys, "install", "--env", str(env), "--packages", "torch==2.13.0", "--find-links",
                        str(local_wheels), "--yes", "--json")
    assert rc == 0, err[-3000:]
    assert distributions(env)["torch"].version == "2.13.0+cpu"
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    dead = _dead_index()
    rc, out, err = _cli(capsys, "envs", "repair", str(env), "--find-links", str(empty), "--index-url", dead,
                        "--default-index-url", dead, "--yes")
    assert rc != 0, err
    assert "Traceback" not in err
    dists = distributions(env)
    assert "torch" in dists and dists["torch"].version == "2.13.0+cpu", (sorted(dists), err[-2000:])
    res = subprocess.run([str(env_python(env)), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "2.13.0+cpu", res.stderr[-1500:]
    rec = registry.find(env)
    assert rec is not None and rec.torch == "2.13.0+cpu" and rec.verification is not None and rec.verification.ok
    rc, out, _ = _cli(capsys, "envs", "check", str(env), "--json")
    assert rc == 0 and json.loads(out)["ok"], out[-2000:]
