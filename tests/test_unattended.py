"""Unattended installs (``torch-setup install --config FILE --yes``) through the real CLI.

Fast tests: a malformed answer file (and the other bad requests) is refused with exit code
2, naming the key, before anything happens: no environment, no report folder, no report.
Slow test: an offline bundle built with ``torch-setup bundle`` installs the torch 2.13.0 CPU
wheel with no network (inside ``unshare -n`` when available), verification and a small
speed test run, and the report lands in the report folder named after the host.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import scratch

REPO = Path(__file__).resolve().parents[1]


def cli(*args, cwd=None, timeout=900, netns=False):
    argv = [sys.executable, "-m", "app", *map(str, args)]
    if netns:  # a network namespace with only loopback (up: gloo's all_reduce needs it)
        argv = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(argv, cwd=cwd or REPO, capture_output=True, text=True, encoding="utf-8", timeout=timeout, env=env)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _nothing_happened(tmp_path: Path) -> None:
    assert not (tmp_path / "env").exists(), "the environment was created"
    assert not (tmp_path / "reports").exists(), "a report folder was created"


@pytest.mark.parametrize("body,key,line", [
    ('[environment]\npath = "env"\ninstaler = "uv"\n[report]\nfolder = "reports"\n',
     "environment.instaler", 3),
    ('[environment]\npath = "env"\n[report]\nfolder = "reports"\n[torch]\nbackend = "gpu"\n',
     "torch.backend", 6),
    ('[environment]\npath = "env"\n[bench]\nbudget_s = "fast"\n[report]\nfolder = "reports"\n',
     "bench.budget_s", 4),
    ('[environment]\npath = "env"\n[sources]\nbundle = "no-such-bundle"\n[report]\nfolder = "reports"\n',
     "sources.bundle", 4),
])
def test_malformed_answer_file_is_refused_before_anything_happens(tmp_path, body, key, line):
    f = write(tmp_path / "answers.toml", body)
    res = cli("install", "--config", f, "--yes")
    assert res.returncode == 2, res.stderr
    assert f"'{key}'" in res.stderr and f"line {line}" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    _nothing_happened(tmp_path)


def test_json_error_names_the_key(tmp_path):
    f = write(tmp_path / "answers.toml", '[environment]\npath = "env"\nkind = "docker"\n')
    res = cli("install", "--config", f, "--yes", "--json")
    assert res.returncode == 2
    err = json.loads(res.stdout)
    assert err["error"] == "BadInput" and "'environment.kind'" in err["message"]
    _nothing_happened(tmp_path)


def test_command_line_options_do_not_mix_with_an_answer_file(tmp_path):
    f = write(tmp_path / "answers.toml", '[environment]\npath = "env"\n[report]\nfolder = "reports"\n')
    res = cli("install", "--config", f, "--yes", "--env", tmp_path / "other")
    assert res.returncode == 2 and "--env cannot be combined with --config" in res.stderr
    _nothing_happened(tmp_path)
    assert not (tmp_path / "other").exists()


def test_unwritable_report_folder_is_bad_input(tmp_path):
    write(tmp_path / "blocker", "a file where the report folder should go")
    f = write(tmp_path / "answers.toml", '[environment]\npath = "env"\n[report]\nfolder = "blocker/reports"\n')
    res = cli("install", "--config", f, "--yes")
    assert res.returncode == 2 and "report folder" in res.stderr, res.stderr
    assert not (tmp_path / "env").exists()


def test_bundle_auto_without_a_bundle_next_to_the_app(tmp_path):
    f = write(tmp_path / "answers.toml",
              '[environment]\npath = "env"\n[sources]\nbundle = "auto"\n[report]\nfolder = "reports"\n')
    res = cli("install", "--config", f, "--yes")
    assert res.returncode == 2 and 'bundle = "auto"' in res.stderr, res.stderr
    assert not (tmp_path / "env").exists()


def test_without_yes_and_without_a_terminal_nothing_happens(tmp_path):
    f = write(tmp_path / "answers.toml", '[environment]\npath = "env"\n[report]\nfolder = "reports"\n')
    res = cli("install", "--config", f)
    assert res.returncode == 2 and "--yes" in res.stderr
    assert not (tmp_path / "env").exists()


# ----------------------------------------------------------------------------- slow

@pytest.fixture(scope="module")
def cpu_bundle(tmp_path_factory, local_wheels):
    """An offline bundle of torch 2.13.0 (CPU) for this machine, made with `torch-setup bundle`."""
    with scratch(tmp_path_factory, "bundle") as folder:
        out = folder / "torch-bundle"
        res = cli("bundle", "--out", out, "--packages", "torch==2.13.0", "--find-links", local_wheels)
        assert res.returncode == 0, res.stdout + res.stderr
        assert (out / "manifest.json").is_file()
        yield out


def _can_unshare() -> bool:
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    return subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                          capture_output=True).returncode == 0


@pytest.mark.slow
def test_unattended_offline_install_from_a_bundle_writes_the_report(tmp_path, cpu_bundle):
    env = tmp_path / "envs" / "torch env ü"
    f = write(tmp_path / "answers.toml", f"""
version = 1
[environment]
path = "envs/torch env ü"
installer = "uv"
[sources]
bundle = {json.dumps(str(cpu_bundle))}
[bench]
sizes = [256, 512]
dtypes = ["fp32"]
budget_s = 20
[report]
folder = "reports"
formats = ["json", "md", "html"]
""")
    res = cli("install", "--config", f, "--yes", netns=_can_unshare(), timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    host = platform.node()
    stem = __import__("app.core.pipeline.report", fromlist=["safe_stem"]).safe_stem(host)
    report = tmp_path / "reports" / f"{stem}.json"
    assert report.is_file(), sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert (tmp_path / "reports" / f"{stem}.html").is_file()
    assert (tmp_path / "reports" / f"{stem}.md").is_file()
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["status"] == "ok" and data["exit_code"] == 0 and data["source"] == "unattended"
    assert data["hostname"] == host
    assert data["system"]["os"]["family"] == "linux"
    assert data["install"]["torch_version"].startswith("2.13.0")
    assert data["verify"]["ok"] is True
    assert any(c["status"] == "passed" for c in data["verify"]["checks"])
    assert data["bench"]["results"], data["bench"]
    assert data["summary"]["variant"] == "cpu" and data["summary"]["best_gflops"] > 0
    # The environment is real: its Python imports the torch it reported.
    py = env / "bin" / "python"
    out = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert out.stdout.strip() == data["install"]["torch_version"]


@pytest.mark.slow
def test_damaged_bundle_is_refused_and_reported(tmp_path, cpu_bundle):
    bundle = tmp_path / "bundle"
    shutil.copytree(cpu_bundle, bundle)
    wheel = next((bundle / "wheels").glob("filelock-*.whl"))
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0xFF
    wheel.write_bytes(bytes(data))
    f = write(tmp_path / "answers.toml",
              '[environment]\npath = "env"\n[sources]\nbundle = "bundle"\n[report]\nfolder = "reports"\nname = "pc-01"\n')
    res = cli("install", "--config", f, "--yes")
    assert res.returncode == 2, res.stderr
    assert wheel.name in res.stderr
    assert not (tmp_path / "env").exists()
    rep = json.loads((tmp_path / "reports" / "pc-01.json").read_text(encoding="utf-8"))
    assert rep["status"] == "bad-input" and wheel.name in rep["error"]["message"]
