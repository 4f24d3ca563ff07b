"""Issue 26, item 1: one meaning of ``--ca-bundle system``. An HTTPS index on 127.0.0.1 whose
certificate authority is only in a test trust store (the operating system's store as OpenSSL,
truststore and uv's ``--system-certs`` read it on Linux: ``SSL_CERT_FILE``): the pre-flight, the
downloader, ``compat status`` and uv all accept it; with the store holding another authority the
pre-flight and the client refuse it alike."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.env.backends import EnvBackend, env_python, uv_bin
from app.core.net.client import Client, NetError
from app.core.net.indexes import probe_index
from app.core.proc import runner
from app.core.proc.runner import CancelToken
from app.core.sources.download import Downloader, Wanted, file_sha256
from app.core.sources.settings import Source, SourceSettings
from tests.netlab.clients import clean_env
from tests.netlab.files import FakeRelease
from tests.netlab.tls import TestCA

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the test trust store is "
                                "SSL_CERT_FILE, which the system stores of Windows and macOS do not read")

REPO = Path(__file__).resolve().parents[1]
DEMO = "netlab_demo-1.0-py3-none-any.whl"


@pytest.fixture
def store(tmp_path, test_ca, monkeypatch):
    """The test trust store: the netlab CA only (no other root), as this process's system store."""
    monkeypatch.setenv("SSL_CERT_FILE", str(test_ca.bundle))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-certs-here"))
    for var in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)
    return test_ca.bundle


def test_preflight_downloader_compat_status_and_uv_agree_on_the_system_store(store, index_server, tiny_wheels,
                                                                              tmp_path):
    server = index_server(sorted(tiny_wheels.glob("*.whl")), tls=True, fake=[FakeRelease("torch", "2.16.0",
                                                                                        ("cpu",))])
    assert server.origin.startswith("https://")
    # the pre-flight
    assert probe_index(server.simple_url(), ca_bundle="system") == (None, None)
    # the downloader
    wanted = Wanted(DEMO, file_sha256(tiny_wheels / DEMO),
                    ((Source("s0", "test index", "mirror", server.origin), server.file_url(DEMO)),), "netlab-demo")
    path, served = Downloader(Client(ca_bundle="system"), tmp_path / "dl", lambda e: None, CancelToken()).fetch(wanted)
    assert path.read_bytes() == (tiny_wheels / DEMO).read_bytes() and served.source_id == "s0"
    # compat status, a separate process with the same store
    env = clean_env(TORCH_SETUP_HOME=str(tmp_path / "home"), TORCH_SETUP_COMPAT="bundled",
                    SSL_CERT_FILE=str(store), SSL_CERT_DIR=str(tmp_path / "no-certs-here"))
    done = subprocess.run([sys.executable, "-m", "app", "compat", "status", "--index-url", server.origin + "/simple",
                           "--ca-bundle", "system", "--json"], capture_output=True, text=True, encoding="utf-8",
                          timeout=120, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert [r["latest"] for r in json.loads(done.stdout)["new_releases"]] == ["2.16.0"]
    # uv, with the option the assistant gives it for the system store
    venv = tmp_path / "venv"
    assert runner.run([uv_bin() or "uv", "venv", "--no-config", str(venv)], timeout=120).ok
    backend = EnvBackend(installer="uv", uv=uv_bin())
    idx = SourceSettings(default_index=server.simple_url(), ca_bundle="system")
    argv = backend.install_argv(venv, ["netlab-demo==1.0"], idx)
    assert "--system-certs" in argv or "--native-tls" in argv
    res = runner.run([*argv, "--no-config"], env=backend.child_env(idx), timeout=300)
    assert res.ok, res.stdout + res.stderr
    assert runner.run([str(env_python(venv, "venv")), "-c", "import importlib.metadata as m; "
                       "print(m.version('netlab-demo'))"], timeout=60).stdout.strip() == "1.0"


def test_a_store_without_the_authority_is_refused_by_the_preflight_and_the_client(tmp_path, index_server,
                                                                                 tiny_wheels, monkeypatch):
    other = TestCA(tmp_path / "other-ca")  # a store that trusts another authority only
    monkeypatch.setenv("SSL_CERT_FILE", str(other.bundle))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-certs-here"))
    server = index_server(sorted(tiny_wheels.glob("*.whl")), tls=True)
    err, warn = probe_index(server.simple_url(), ca_bundle="system")
    assert err is not None and "certificate could not be verified" in str(err) and warn is None
    with pytest.raises(NetError) as refused, Client(ca_bundle="system").get(server.simple_url()):
        pass
    assert refused.value.failure.kind == "tls_verify"
