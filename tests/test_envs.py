"""Fast tests: backends' commands, Python discovery, progress parsing, plan and pre-flight
decisions (no installs here; those are in test_install*.py)."""
from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

from app.core import install as core
from app.core.base.errors import BadInput
from app.core.base.events import ProgressEvent
from app.core.base.progress import ProgressParser
from app.core.env import backends as envs
from app.core.recommend import Recommendation
from app.core.sources.settings import SourceSettings
from tests.helpers import SCRIPTS, WINDOWS, fake_program, site_packages, venv_python

FIX = Path(__file__).parent / "fixtures"


def _events(installer: str, text: str) -> list[ProgressEvent]:
    out: list = []
    p = ProgressParser(installer, out.append)
    for line in text.splitlines():
        p.feed(line)
    p.close()
    return out


# --------------------------------------------------------------------------- progress

def test_uv_progress_counts_packages_and_reports_download_bytes():
    ev = _events("uv", (FIX / "uv" / "install-cold-numpy-six-0.13.9.txt").read_text(encoding="utf-8"))
    numpy = [e for e in ev if e.package == "numpy" and e.unit == "bytes"]
    assert [(e.done_bytes, e.total_bytes) for e in numpy] == [(0, int(16.1 * 1024**2)),
                                                               (int(16.1 * 1024**2),
                                                                int(16.1 * 1024**2))]
    pk = [e for e in ev if e.unit == "packages"]
    assert pk[0].total_bytes == 2 and pk[-1].done_bytes == 2 and pk[-1].package == "six"


def test_uv_progress_warm_install_has_no_bytes_only_packages():
    ev = _events("uv", (FIX / "uv" / "install-warm-torch-0.13.9.txt").read_text(encoding="utf-8"))
    assert all(e.unit == "packages" for e in ev)
    assert ev[-1].done_bytes == ev[-1].total_bytes == 10
    assert "torch" in [e.package for e in ev]


def test_pip_progress_from_download_lines_and_rich_bar():
    ev = _events("pip", (FIX / "pip" / "download-bundle-23.2.1.txt").read_text(encoding="utf-8"))
    fl = [e for e in ev if e.package == "filelock"]
    assert fl[0].done_bytes == 0 and fl[0].total_bytes == 244_000
    assert fl[-1].done_bytes == fl[-1].total_bytes == 244_600  # the bar's exact figure
    ms = [e for e in ev if e.package == "markupsafe"]
    assert ms[-1].done_bytes == ms[-1].total_bytes == 22_000  # finished when pip moved on


def test_pip_progress_raw_mode_and_package_count():
    lines = ["Collecting torch", "  Downloading torch-2.13.0-cp311-cp311-win_amd64.whl (191.8 MB)",
             "Progress 1000 of 191800000", "Progress 191800000 of 191800000",
             "Installing collected packages: mpmath, torch",
             "Successfully installed mpmath-1.3.0 torch-2.13.0"]
    ev = _events("pip", "\n".join(lines))
    t = [e for e in ev if e.package == "torch"]
    assert (t[1].done_bytes, t[1].total_bytes) == (1000, 191800000)
    assert [e for e in ev if e.unit == "packages"][-1].done_bytes == 2
    ev2 = _events("pip", (FIX / "pip" / "install-bundle-offline-23.2.1.txt").read_text(encoding="utf-8"))
    assert [e for e in ev2 if e.unit == "packages"][-1].done_bytes == 11


# --------------------------------------------------------------------------- env layout

def test_env_python_and_is_env(tmp_path):
    v = tmp_path / "v"
    (v / SCRIPTS).mkdir(parents=True)
    assert not envs.is_env(v)
    (v / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    assert envs.is_env(v) and envs.env_kind(v) == "venv"
    assert envs.env_python(v) == venv_python(v)
    c = tmp_path / "c"
    (c / "conda-meta").mkdir(parents=True)
    assert envs.env_kind(c) == "conda"


def test_installed_distributions_reads_dist_info(tmp_path):
    sp = site_packages(tmp_path)
    (sp / "torch-2.13.0+cpu.dist-info").mkdir(parents=True)
    (sp / "typing_extensions-4.16.0.dist-info").mkdir()
    assert envs.installed_distributions(tmp_path) == {"torch": "2.13.0+cpu",
                                                     "typing-extensions": "4.16.0"}
    assert core.mixed_variants({"torch": "2.13.0+cpu", "torchvision": "0.28.0+cu126"})
    assert not core.mixed_variants({"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"})


# --------------------------------------------------------------------------- pythons

def test_find_python_by_version_and_path():
    mm = f"{sys.version_info[0]}.{sys.version_info[1]}"
    info, _ = envs.find_python(mm)
    # python -m venv works here unless this Python lacks venv (the embeddable Windows build does)
    can_venv = bool(importlib.util.find_spec("venv") and importlib.util.find_spec("ensurepip"))
    assert info is not None and info.minor == mm and info.can_venv == can_venv
    again, _ = envs.find_python(str(info.executable))
    assert again == info
    with pytest.raises(BadInput):
        envs.find_python("/no/such/python")
    none, _notes = envs.find_python("2.1")
    assert none is None


def test_a_python_that_does_not_run_fails_preflight(tmp_path):
    fake = fake_program(tmp_path / "fake bin", "python3", "import sys\nsys.stderr.write('Segmentation fault\\n')\n"
                        "sys.exit(139)\n")
    p = core.plan(core.InstallRequest(tmp_path / "env", installer="pip", python=str(fake),
                                      packages=["torch"], sources=SourceSettings(find_links=[str(tmp_path)])))
    checks = {c.name: c for c in core.preflight(p)}
    assert not checks["python"].ok and "No usable Python" in str(checks["python"].message)
    assert not (tmp_path / "env").exists()


# --------------------------------------------------------------------------- plans

def test_uv_plan_puts_the_torch_index_first_and_never_mixes(tmp_path):
    rec = Recommendation(backend="cuda", variant="cu126", torch_version="2.13.0", python_ok=True, env_python=None,
                         index_url="https://download.pytorch.org/whl/cu126",
                         packages=["torch==2.13.0+cu126", "torchvision==0.28.0+cu126"], command=[], reasons=[],
                         warnings=[], alternatives=[], compat_data_version="test")
    p = core.plan(core.InstallRequest(tmp_path / "e", recommendation=rec,
                                      sources=SourceSettings(extra_index_urls=["https://example.org/simple"])))
    argv = p.commands()[-1]
    i = argv.index("--extra-index-url")
    assert argv[i + 1] == rec.index_url  # ranked before the user's extra index
    assert argv[argv.index("--index-strategy") + 1] == "first-index"
    assert argv[-2:] == list(rec.packages)
    assert p.estimate_mb >= core.INSTALLED_MB["cuda"]
    pp = core.plan(core.InstallRequest(tmp_path / "e", installer="pip", recommendation=rec,
                                       sources=SourceSettings(default_index="https://mirror.example/simple",
                                                              ca_bundle="/etc/ssl/ca.pem")))
    argv = pp.commands()[-1]
    assert argv[argv.index("--index-url") + 1] == "https://mirror.example/simple"
    assert argv[argv.index("--extra-index-url") + 1] == rec.index_url
    assert argv[argv.index("--cert") + 1] == "/etc/ssl/ca.pem"
    assert pp.commands()[0][1:3] == ["-m", "venv"]


def test_conda_plan_creates_with_python_then_pip(tmp_path, monkeypatch):
    monkeypatch.setenv("CONDA_EXE", sys.executable)  # any existing file stands for conda here
    p = core.plan(core.InstallRequest(tmp_path / "c", kind="conda", installer="pip",
                                      packages=["torch==2.13.0"]))
    create, inst = p.commands()
    assert create[1:3] == ["create", "--yes"] and any(a.startswith("python=3.") for a in create)
    assert "conda-forge" in create
    assert inst[1:4] == ["-m", "pip", "install"]
    assert inst[0] == str(tmp_path / "c" / ("python.exe" if WINDOWS else "bin/python"))  # conda's layout


def test_plan_refuses_an_existing_env_unless_asked_and_non_env_when_asked(tmp_path):
    env = tmp_path / "env"
    env.mkdir()
    (env / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    with pytest.raises(BadInput, match="already is a Python environment"):
        core.plan(core.InstallRequest(env, packages=["torch"]))
    with pytest.raises(BadInput, match="not a Python environment"):
        core.plan(core.InstallRequest(tmp_path / "plain", packages=["torch"], existing=True))
    with pytest.raises(BadInput, match="not a valid package requirement"):
        core.plan(core.InstallRequest(tmp_path / "x", packages=["torch=!2"]))
    with pytest.raises(BadInput, match="Nothing to install"):
        core.plan(core.InstallRequest(tmp_path / "x"))


def test_check_url():
    assert core.check_url("http://127.0.0.1:9/simple") is not None
    assert "does not exist" in str(core.check_url("/no/such/wheels"))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    try:
        assert core.check_url(f"http://127.0.0.1:{srv.getsockname()[1]}/simple") is None
    finally:
        srv.close()


def test_preflight_target_rules(tmp_path):
    full = tmp_path / "stuff"
    full.mkdir()
    (full / "thesis.tex").write_text("mine", encoding="utf-8")
    p = core.plan(core.InstallRequest(full, packages=["six"]))
    c = {c.name: c for c in core.preflight(p)}
    assert not c["target"].ok and "with files in it" in str(c["target"].message)
    empty = tmp_path / "empty"
    empty.mkdir()
    c = {c.name: c for c in core.preflight(core.plan(core.InstallRequest(empty, packages=["six"])))}
    assert c["target"].ok
    f = tmp_path / "afile"
    f.write_text("x", encoding="utf-8")
    c = {c.name: c for c in core.preflight(core.plan(core.InstallRequest(f, packages=["six"])))}
    assert not c["target"].ok and "not a folder" in str(c["target"].message)


def test_proxies_and_ca_bundle_reach_the_children_and_the_reachability_check(tmp_path, monkeypatch):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    proxy = f"http://127.0.0.1:{srv.getsockname()[1]}"
    try:
        # the index host does not even resolve: only the proxy is contacted
        assert core.check_url("https://index.invalid/simple", proxy=proxy) is None
        monkeypatch.setenv("HTTPS_PROXY", proxy)
        assert core.check_url("https://index.invalid/simple") is None
    finally:
        srv.close()
    assert "cannot connect" in str(core.check_url("https://index.invalid/simple", proxy=proxy))
    monkeypatch.delenv("HTTPS_PROXY")
    p = core.plan(core.InstallRequest(tmp_path / "e", packages=["six"],
                                      sources=SourceSettings(proxy=proxy, ca_bundle="/etc/ssl/corp-ca.pem")))
    env = p.backend.child_env(p.index, p.request.sources.proxy)
    assert env["HTTPS_PROXY"] == proxy and env["SSL_CERT_FILE"] == "/etc/ssl/corp-ca.pem"
    assert "PYTHONPATH" not in env


def test_existing_env_without_pip_needs_uv(tmp_path):
    env = tmp_path / "nopip"
    site_packages(env).mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    with pytest.raises(BadInput, match="has no pip"):
        core.plan(core.InstallRequest(env, installer="pip", existing=True, packages=["six"]))


def test_cli_renderer_draws_a_bar_on_a_tty_and_plain_lines_otherwise():
    import io

    from app.commands._render import Renderer
    from app.core.base.events import LogEvent, PhaseEvent

    class Tty(io.StringIO):
        def isatty(self):
            return True

    events = [PhaseEvent("install", "start", "torch"), LogEvent("Resolved 2 packages in 1ms"),
              ProgressEvent("numpy", 0, 16_000_000), ProgressEvent("numpy", 8_000_000, 16_000_000),
              LogEvent(" + numpy==2.4.6"), ProgressEvent("numpy", 1, 2, unit="packages")]
    tty = Tty()
    r = Renderer(tty)
    for e in events:
        r(e)
    r.close()
    out = tty.getvalue()
    assert "==> Installing… torch" in out
    assert "\r\033[K[" in out and " 50% " in out and "8.0/16.0 MB numpy" in out
    assert "    Resolved" not in out  # on a TTY the bar replaces the chatter
    plain = io.StringIO()
    r = Renderer(plain)
    for e in events:
        r(e)
    text = plain.getvalue()
    assert "\r" not in text and "    Resolved 2 packages in 1ms" in text and " + numpy" in text


def test_conda_preflight_checks_the_channel_and_the_tool(tmp_path, monkeypatch):
    monkeypatch.delenv("CONDA_EXE", raising=False)
    monkeypatch.delenv("MAMBA_EXE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no conda, mamba or micromamba anywhere
    p = core.plan(core.InstallRequest(tmp_path / "c", kind="conda", installer="pip",
                                      packages=["six"], python=sys.executable))
    checks = {c.name: c for c in core.preflight(p)}
    assert not checks["backend"].ok and "Miniforge" in str(checks["backend"].message)
    assert "reach:conda channel" in checks


def test_named_indexes_get_a_real_http_request(tmp_path):
    import http.server
    import threading

    class H(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(404 if "typo" in self.path else 200)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        assert core.probe_index(base + "/simple") == (None, None)
        err, warn = core.probe_index(base + "/typo/simple")
        assert err is None and "HTTP 404" in str(warn)
        p = core.plan(core.InstallRequest(tmp_path / "e", packages=["six"],
                                          sources=SourceSettings(torch_index=base + "/typo/whl/cpu")))
        c = {c.name: c for c in core.preflight(p)}["reach:torch index"]
        assert not c.ok and c.severity == "warning" and not c.blocking
    finally:
        srv.shutdown()
        srv.server_close()
    err, _ = core.probe_index("http://127.0.0.1:9/simple")
    assert err and "refused" in str(err).lower()


def test_leading_numbers_reads_the_numeric_release_of_a_version():
    leading_numbers = envs.leading_numbers
    assert leading_numbers("24.1.2") == (24, 1, 2)
    assert leading_numbers("24.1rc1") == (24, 1)
    assert leading_numbers("24.dev0.3") == (24,)
    assert leading_numbers("dev") == ()
