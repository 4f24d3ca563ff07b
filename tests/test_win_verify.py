"""Verification's two-process (gloo) check, as PyTorch's Windows wheels can run it.

* Loopback only: the rendezvous store listens on 127.0.0.1 and nowhere else (a TCPStore that
  opens its own socket listens on every address, which on Windows brings up the firewall's
  "allow access" prompt), and gloo's device is bound to 127.0.0.1, so neither
  ``GLOO_SOCKET_IFNAME`` nor the host name has to be right.
* No libuv on Windows (its wheels have none; torch 2.4+ asks for it by default).
* A warning a rank prints on stderr is no failure: torch prints "Failed to initialize NumPy" in
  an environment without numpy (what the assistant installs), and every Windows and macOS
  verification used to fail on it.
* Under Wine, gloo's transport connects but never receives (a gap of Wine's networking): the
  check says so, skipped, in seconds instead of failing after 90 s. Only under Wine.

These run on Linux and, in the Windows lane, under the Windows CPython with torch's Windows CPU
wheel (one environment for the module: torch's first import under Wine takes 20-45 s).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import psutil
import pytest

from app.core.base.paths import probes_dir
from app.core.measure.probe import run_probe
from app.core.measure.verify import VerifyReport
from app.core.proc.runner import clean_env, run
from tests.helpers import scratch

pytestmark = [pytest.mark.slow, pytest.mark.lane, pytest.mark.timeout(900)]

PROBE = probes_dir() / "verify.py"
LOOPBACK = {"127.0.0.1", "::1"}


def _under_wine() -> bool:
    if os.name != "nt":
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


@pytest.fixture(scope="module")
def torch_python(tmp_path_factory, local_wheels):
    """The Python of a uv venv holding torch's CPU wheel and nothing more (no numpy, as an
    environment the assistant makes), from the local wheel folder only."""
    from uv import find_uv_bin

    with scratch(tmp_path_factory, "win-verify") as root:
        env = root / "env"
        uv = find_uv_bin()
        run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], timeout=300).raise_for_status(
            "uv venv failed")
        py = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        offline = ["--no-index"] if os.name == "nt" else []  # the lane's folder holds torch's dependencies too
        run([uv, "pip", "install", "--quiet", "--python", str(py), *offline, "--find-links", str(local_wheels),
             "torch==2.13.0"], timeout=900).raise_for_status("installing the torch CPU wheel failed")
        yield py


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MODES = ["auto"] if os.name == "nt" else ["auto", "spawn"]  # (auto is spawn on Windows)


@pytest.mark.parametrize("mode", MODES)
def test_the_two_process_check_passes_over_loopback(torch_python, mode):
    env = clean_env()
    env["GLOO_SOCKET_IFNAME"] = "no-such-interface0"  # a stale setting from another tutorial: not used
    args = [] if mode == "auto" else ["--dist-mode", mode]
    out = run_probe("verify", torch_python, args, env=env, timeout_s=800)
    report = VerifyReport.from_dict({**out.result, "python": str(torch_python)})
    gloo = report.check("gloo_all_reduce")
    assert gloo is not None
    if _under_wine():
        assert (gloo.status, gloo.code) == ("skipped", "all_reduce_wine"), (gloo.status, str(gloo.detail))
        assert "Wine" in str(gloo.detail) and "on Windows itself the check runs" in str(gloo.detail)
    else:
        assert (gloo.status, gloo.code) == ("passed", "all_reduce_ok"), (gloo.status, str(gloo.detail))
        assert "over 127.0.0.1" in str(gloo.detail) and "correct result" in str(gloo.detail)
    assert not report.failed, [(c.name, str(c.detail)) for c in report.failed]


def _listening(pid: int) -> set[tuple[str, int]]:
    try:
        proc = psutil.Process(pid)
        conns = proc.net_connections(kind="inet") if hasattr(proc, "net_connections") else proc.connections("inet")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return set()
    return {(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN}


def test_rank_zero_listens_on_loopback_only(torch_python, tmp_path):
    """The first rank of a spawned group, alone: it serves the store and waits for the second.
    Every socket it listens on is on the loopback address (no firewall prompt on Windows)."""
    port = _free_port()
    rank0 = subprocess.Popen([str(torch_python), "-I", str(PROBE), "--dist-worker", "0", "2", str(port), "gloo"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                             env=clean_env(), cwd=tmp_path)
    seen: set[tuple[str, int]] = set()
    try:
        deadline = time.monotonic() + 600  # (torch's first import under Wine is slow)
        while time.monotonic() < deadline and rank0.poll() is None and port not in {p for _, p in seen}:
            seen |= _listening(rank0.pid)
            time.sleep(0.2)
        time.sleep(1.0)  # whatever else it opens once the store is up
        seen |= _listening(rank0.pid)
    finally:
        rank0.kill()
        rank0.wait(60)
    assert port in {p for _, p in seen}, f"the store never listened on {port}: {sorted(seen)}"
    wide = sorted((ip, p) for ip, p in seen if ip not in LOOPBACK)
    assert not wide, f"listening beyond the loopback address: {wide}"


def test_under_wine_is_false_here_unless_this_is_wine():
    """The probe's Wine test (it decides whether a gloo failure is Wine's) matches the lane's."""
    res = subprocess.run([sys.executable, "-I", "-c",
                          "import runpy, sys; sys.argv = ['verify.py']; "
                          f"m = runpy.run_path({str(PROBE)!r}, run_name='probe'); print(m['under_wine']())"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(_under_wine())
    if os.environ.get("TSA_WINE_LANE") == "1":
        assert res.stdout.strip() == "True"
    if os.name != "nt":
        assert res.stdout.strip() == "False"

