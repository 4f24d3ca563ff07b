"""netlab: each server proven with real clients (uv, pip, urllib) on 127.0.0.1 only.

The fast tests use small generated wheels (``tiny_wheels``); the ``slow`` ones install the real
torch 2.13.0+cpu wheel and its dependencies (``torch_wheelhouse``) with uv and pip through the
plain, HTTPS, proxied and authenticated index, and prove from the server's request log that
every file came from it.
"""
from __future__ import annotations

import gc
import hashlib
import http.client
import json
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import pytest

from tests.netlab import (
    FORBIDDEN,
    JSON_TYPE,
    NOT_FOUND,
    Drop,
    FakeRelease,
    IndexServer,
    ProxyServer,
    Redirect,
    Slow,
    Unreachable,
    WrongHash,
    build_wheel,
    file_sha256,
    gather_wheelhouse,
)
from tests.netlab.base import assert_loopback, basic_credentials
from tests.netlab.behaviours import parse_behaviour
from tests.netlab.clients import clean_env, make_venv, pip_install, uv_install

TORCH_DEPS = {"filelock", "sympy", "networkx", "jinja2", "fsspec", "typing-extensions", "mpmath", "markupsafe",
              "setuptools"}
SECRET = "s3cr/et@tok"  # a password with the characters URL maskers miss


# ------------------------------------------------------------------------------ helpers
def _get(url: str, *, headers: dict[str, str] | None = None, context: ssl.SSLContext | None = None,
         timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, dict(e.headers), e.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def _links(page: bytes) -> list[tuple[str, dict[str, str]]]:
    """(href, attributes) of every <a> on a page."""
    out = []
    for attrs in re.findall(rb"<a ([^>]*)>", page):
        found = {k.decode(): v.decode() for k, v in re.findall(rb'([\w-]+)="([^"]*)"', attrs)}
        out.append((found.pop("href"), found))
    return out


def _raw_status(origin: str, path: str, *, proxy_auth: str | None = None, method: str = "GET",
                target: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request over a raw http.client connection (for proxies: absolute-form or CONNECT)."""
    host, port = origin.split("://", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        headers = {"Proxy-Authorization": proxy_auth} if proxy_auth else {}
        conn.request(method, target or path, headers=headers)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def _basic(user: str, password: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def tiny(tiny_wheels: Path) -> list[Path]:
    return sorted(tiny_wheels.glob("*.whl"))


# ------------------------------------------------------------------------- loopback + cleanup
@pytest.mark.posix_only("stop() wakes handlers blocked reading a held connection with shutdown(); on Windows "
                        "(under Wine here) that does not wake them, so stop() waits out their read timeout")
def test_every_server_binds_loopback_and_leaves_nothing_behind(tiny, test_ca):
    gc.collect()
    before = set(threading.enumerate())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        servers = [IndexServer(tiny).start(), IndexServer(tiny, tls=test_ca.server_context()).start(),
                   ProxyServer(auth=("u", "p")).start()]
        for s in servers:
            assert s.address[0] == "127.0.0.1"
            assert s._server.socket.getsockname()[0] == "127.0.0.1"
        # keep a connection open on each (keep-alive), then stop: stop() must still return
        status, _, _ = _get(servers[0].simple_url())
        assert status == 200
        held = socket.create_connection(servers[0].address)
        tls_held = test_ca.client_context().wrap_socket(socket.create_connection(servers[1].address),
                                                         server_hostname="127.0.0.1")
        silent = socket.create_connection(servers[1].address)  # never starts its TLS handshake
        time.sleep(0.1)
        began = time.monotonic()
        for s in servers:
            s.stop()
        assert time.monotonic() - began < 5
        held.close()
        tls_held.close()
        silent.close()
        with Unreachable():
            pass
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]
    assert set(threading.enumerate()) <= before
    assert all(s.open_connections == 0 for s in servers)
    with pytest.raises(AssertionError):
        assert_loopback(("0.0.0.0", 80))
    with pytest.raises(AssertionError):
        assert_loopback(("10.0.0.1", 80))


def test_fixture_factories_stop_their_servers(index_server, proxy_server, tiny):
    a = index_server(tiny)
    b = proxy_server()
    assert a.running and b.running
    assert a.origin.startswith("http://127.0.0.1:") and b.url().startswith("http://127.0.0.1:")


# ------------------------------------------------------------------------------- pages
def test_pep503_pages_in_both_layouts(index_server, tiny):
    srv = index_server(tiny, fake=[FakeRelease("torch", "2.16.0", ("cpu", "cu132", "cu134"))])
    status, _, root = _get(srv.simple_url())
    assert status == 200
    assert {h for h, _ in _links(root)} == {"netlab-demo/", "netlab-dep/", "torch/"}
    status, headers, page = _get(srv.simple_url() + "netlab-demo/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    links = _links(page)
    assert len(links) == 2
    for href, attrs in links:
        path, _, digest = href.partition("#sha256=")
        name = path.rsplit("/", 1)[-1]
        assert digest == file_sha256(next(p for p in tiny if p.name == name))
        assert attrs["data-requires-python"] == "&gt;=3.8"
        status, _, body = _get(srv.origin + path)
        assert status == 200 and hashlib.sha256(body).hexdigest() == digest
        meta = attrs["data-core-metadata"].removeprefix("sha256=")
        status, _, md = _get(srv.origin + path + ".metadata")
        assert status == 200 and hashlib.sha256(md).hexdigest() == meta and b"Name: netlab-demo" in md
    # a name as users type it reaches the canonical page; a slash-less URL is redirected
    assert _get(srv.simple_url() + "Netlab_Demo/")[0] == 200
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as moved:
        opener.open(srv.simple_url() + "netlab-demo", timeout=10)
    assert moved.value.code == 301 and moved.value.headers["Location"] == "/simple/netlab-demo/"
    moved.value.close()
    # the torch layout: unlabelled files in every variant, +variant files only in their own
    assert srv.variants == ("cpu", "cu132", "cu134")
    _, _, cu132 = _get(srv.whl_url("cu132") + "torch/")
    names = [h.split("#")[0].rsplit("/", 1)[-1] for h, _ in _links(cu132)]
    assert names and all("%2Bcu132" in n for n in names)
    assert {h for h, _ in _links(_get(srv.whl_url("cu134"))[2])} == {"netlab-demo/", "netlab-dep/", "torch/"}
    assert _get(srv.whl_url("cu999"))[0] == 404
    assert _get(srv.simple_url() + "nothing-here/")[0] == 404


def test_pep691_json_when_asked_and_html_when_switched_off(index_server, tiny):
    srv = index_server(tiny)
    status, headers, body = _get(srv.simple_url() + "netlab-demo/", headers={"Accept": JSON_TYPE})
    assert status == 200 and headers["Content-Type"] == JSON_TYPE
    doc = json.loads(body)
    assert doc["meta"]["api-version"] == "1.0" and doc["name"] == "netlab-demo"
    by_name = {f["filename"]: f for f in doc["files"]}
    for p in tiny:
        if p.name.startswith("netlab_demo"):
            assert by_name[p.name]["hashes"]["sha256"] == file_sha256(p)
            assert by_name[p.name]["requires-python"] == ">=3.8"
            assert _get(srv.origin + by_name[p.name]["url"])[0] == 200
    root = json.loads(_get(srv.simple_url(), headers={"Accept": JSON_TYPE})[2])
    assert {p["name"] for p in root["projects"]} == {"netlab-demo", "netlab-dep"}
    # q=0 means "not this": HTML
    assert _get(srv.simple_url(), headers={"Accept": f"{JSON_TYPE};q=0, text/html"})[1]["Content-Type"].startswith(
        "text/html")
    plain = index_server(tiny, pep691=False)
    assert _get(plain.simple_url(), headers={"Accept": JSON_TYPE})[1]["Content-Type"].startswith("text/html")


def test_flat_find_links_pages(index_server, tiny):
    srv = index_server(tiny, fake=[FakeRelease("torch", "2.16.0", ("cpu", "cu132"))])
    _, _, stable = _get(srv.flat_url())
    hrefs = [h for h, _ in _links(stable)]
    assert len(hrefs) == len(tiny) + 8 and all(h.startswith("/files/") for h in hrefs)
    _, _, flat = _get(srv.flat_url("cpu"))
    rel = [h for h, _ in _links(flat)]
    assert all("/" not in h.split("#")[0] for h in rel)  # relative names, like a directory listing
    assert not any("cu132" in h for h in rel)
    demo = next(h for h in rel if h.startswith("netlab_demo-1.0"))
    status, _, body = _get(srv.flat_url("cpu") + demo.split("#")[0])
    assert status == 200 and hashlib.sha256(body).hexdigest() == demo.split("#sha256=")[1]


def test_fake_release_is_listed_but_its_files_answer_404(index_server, tiny):
    srv = index_server(tiny, fake=[FakeRelease("torch", "2.16.0", ("cpu", "cu132", "cu134"))])
    for variant in ("cpu", "cu132", "cu134"):
        _, _, page = _get(srv.whl_url(variant) + "torch/")
        hrefs = [h for h, _ in _links(page)]
        assert any(f"torch-2.16.0%2B{variant}-cp311-cp311-manylinux_2_28_x86_64.whl" in h for h in hrefs)
        assert _get(srv.origin + hrefs[0].split("#")[0])[0] == 404


def test_range_and_head(index_server, tiny):
    srv = index_server(tiny)
    path = tiny[0]
    data = path.read_bytes()
    url = srv.file_url(path.name)
    status, headers, body = _get(url, headers={"Range": "bytes=100-1099"})
    assert status == 206 and body == data[100:1100]
    assert headers["Content-Range"] == f"bytes 100-1099/{len(data)}"
    status, _, body = _get(url, headers={"Range": "bytes=-500"})
    assert status == 206 and body == data[-500:]
    status, _, body = _get(url, headers={"Range": f"bytes={len(data) - 10}-"})
    assert status == 206 and body == data[-10:]
    assert _get(url, headers={"Range": f"bytes={len(data)}-"})[0] == 416
    head = urllib.request.Request(url, method="HEAD")
    with urllib.request.urlopen(head, timeout=10) as r:
        assert r.status == 200 and int(r.headers["Content-Length"]) == len(data) and r.read() == b""
        assert r.headers["Accept-Ranges"] == "bytes"
    assert [(e.method, e.status) for e in srv.log.all()][-1] == ("HEAD", 200)


# ------------------------------------------------------------------------------ behaviours
def test_forbidden_and_not_found_for_single_files(index_server, tiny):
    srv = index_server(tiny, behaviours={"netlab_demo-1.1-*.whl": FORBIDDEN, "netlab_dep-*": NOT_FOUND})
    assert _get(srv.file_url("netlab_demo-1.1-py3-none-any.whl"))[0] == 403
    assert _get(srv.file_url("netlab_dep-0.5-py3-none-any.whl"))[0] == 404
    assert _get(srv.file_url("netlab_demo-1.0-py3-none-any.whl"))[0] == 200
    # the page still lists the forbidden file, and its metadata is still served (a file pattern
    # does not reach .metadata unless it says so)
    assert "netlab_demo-1.1" in _get(srv.simple_url() + "netlab-demo/")[2].decode()
    assert _get(srv.file_url("netlab_demo-1.1-py3-none-any.whl") + ".metadata")[0] == 200
    paths = index_server(tiny, behaviours={"/whl/cpu/*": FORBIDDEN})
    assert _get(paths.whl_url("cpu"))[0] == 403 and _get(paths.simple_url())[0] == 200


def test_redirect_to_an_unreachable_origin_and_to_another_server(index_server, tiny):
    srv = index_server(tiny, behaviours={"netlab_demo-*": Redirect()})
    url = srv.file_url("netlab_demo-1.0-py3-none-any.whl")
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as seen:
        opener.open(url, timeout=10)
    location = seen.value.headers["Location"]
    seen.value.close()
    assert seen.value.code == 302 and location.startswith("http://127.0.0.1:")
    assert location.endswith("/files/netlab_demo-1.0-py3-none-any.whl") and not location.startswith(srv.origin)
    with pytest.raises(urllib.error.URLError) as failed:
        urllib.request.urlopen(url, timeout=10)
    assert isinstance(failed.value.reason, ConnectionRefusedError)
    origin = index_server(tiny)
    mirror = index_server(tiny, behaviours={"*.whl": Redirect(origin.origin)})
    status, _, body = _get(mirror.file_url("netlab_dep-0.5-py3-none-any.whl"))
    assert status == 200 and body == next(p for p in tiny if p.name.startswith("netlab_dep")).read_bytes()
    assert origin.files_served() == ["netlab_dep-0.5-py3-none-any.whl"] and mirror.files_served() == []
    assert mirror.log.all()[-1].note.startswith("redirect to " + origin.origin)


def test_wrong_hash_is_detected_by_a_client_that_checks(index_server, tiny, tmp_path):
    def page_digest(srv: IndexServer, name: str) -> str:
        page = _get(srv.simple_url() + "netlab-demo/")[2]
        return next(h.split("#sha256=")[1] for h, _ in _links(page) if name in h)

    name = "netlab_demo-1.0-py3-none-any.whl"
    for behaviour in (WrongHash(), WrongHash("page")):
        srv = index_server(tiny, behaviours={name: behaviour})
        status, _, body = _get(srv.file_url(name))
        assert status == 200 and len(body) == (tiny_path := next(p for p in tiny if p.name == name)).stat().st_size
        assert hashlib.sha256(body).hexdigest() != page_digest(srv, name), behaviour
        if behaviour.where == "file":
            assert page_digest(srv, name) == file_sha256(tiny_path) and body != tiny_path.read_bytes()
    other = build_wheel(tmp_path, "netlab-demo", "1.0", payload={"other.txt": b"another build"})
    srv = index_server(tiny, behaviours={name: WrongHash(replacement=other)})
    body = _get(srv.file_url(name))[2]
    assert body == other.read_bytes() and hashlib.sha256(body).hexdigest() != page_digest(srv, name)


def test_drop_half_way_once_then_always(index_server, tiny):
    name = "netlab_demo-1.0-py3-none-any.whl"
    size = next(p for p in tiny if p.name == name).stat().st_size
    srv = index_server(tiny, behaviours={name: Drop(after=100_000)})
    with urllib.request.urlopen(urllib.request.Request(srv.file_url(name), method="HEAD"), timeout=10) as r:
        assert r.status == 200  # a HEAD does not use up the drop
    with urllib.request.urlopen(srv.file_url(name), timeout=10) as r:
        assert int(r.headers["Content-Length"]) == size
        with pytest.raises(http.client.IncompleteRead) as cut:
            r.read()
    assert len(cut.value.partial) == 100_000
    assert len(_get(srv.file_url(name))[2]) == size  # only once
    always = index_server(tiny, behaviours={name: Drop(after=50_000, times=None)})
    for _ in range(2):
        with urllib.request.urlopen(always.file_url(name), timeout=10) as r, pytest.raises(http.client.IncompleteRead):
            r.read()
    # resuming past the cut gets the headers and nothing: the file can never be completed here
    with urllib.request.urlopen(urllib.request.Request(always.file_url(name), headers={"Range": "bytes=60000-"}),
                                timeout=10) as r:
        assert r.status == 206
        with pytest.raises(http.client.IncompleteRead) as cut:
            r.read()
    assert cut.value.partial == b""
    assert [e.note for e in always.log.all()] == ["dropped after 50000 bytes"] * 2 + ["dropped after 0 bytes"]


def test_slow_server_is_slower_than_a_fast_one(index_server, tiny):
    name = "netlab_demo-1.0-py3-none-any.whl"
    size = next(p for p in tiny if p.name == name).stat().st_size
    slow = index_server(tiny, behaviours={"*.whl": Slow(bytes_per_s=size * 2, delay_s=0.2)})
    fast = index_server(tiny)
    times: dict[str, float] = {}

    def fetch(label: str, srv: IndexServer) -> None:
        began = time.monotonic()
        _get(srv.file_url(name))
        times[label] = time.monotonic() - began

    racers = [threading.Thread(target=fetch, args=(k, s)) for k, s in (("slow", slow), ("fast", fast))]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    assert times["slow"] >= 0.6  # 0.2 s delay + size at 2×size per second
    assert times["fast"] < times["slow"]


def test_basic_auth_index(index_server, tiny):
    srv = index_server(tiny, auth=("alice", SECRET))
    status, headers, _ = _get(srv.simple_url())
    assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
    assert _get(srv.simple_url(), headers={"Authorization": _basic("alice", "wrong")})[0] == 401
    status, _, _ = _get(srv.simple_url(), headers={"Authorization": _basic("alice", SECRET)})
    assert status == 200
    assert [e.note for e in srv.log.all()][:2] == ["no credentials", "bad credentials"]
    assert srv.log.all()[-1].user == "alice"
    assert SECRET not in repr(srv.log.all())
    assert "s3cr%2Fet%40tok@127.0.0.1" in srv.simple_url(auth=True)
    assert basic_credentials(_basic("alice", SECRET)) == ("alice", SECRET)


def test_https_index_with_the_test_ca(index_server, tiny, test_ca):
    srv = index_server(tiny, tls=True)
    assert srv.origin.startswith("https://127.0.0.1:")
    status, _, _ = _get(srv.simple_url(), context=test_ca.client_context())
    assert status == 200
    with pytest.raises(urllib.error.URLError) as refused:
        _get(srv.simple_url(), context=ssl.create_default_context())
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused.value)
    assert test_ca.bundle.read_text(encoding="utf-8").startswith("-----BEGIN CERTIFICATE-----")


def test_proxy_auth_forwarding_and_loopback_guard(index_server, proxy_server, tiny):
    srv = index_server(tiny)
    proxy = proxy_server(auth=("bob", SECRET))
    target = srv.simple_url()
    status, headers, _ = _raw_status(proxy.origin, "", target=target)
    assert status == 407 and headers["Proxy-Authenticate"].startswith("Basic")
    assert _raw_status(proxy.origin, "", target=target, proxy_auth=_basic("bob", "nope"))[0] == 407
    status, _, body = _raw_status(proxy.origin, "", target=target, proxy_auth=_basic("bob", SECRET))
    assert status == 200 and b"netlab-demo/" in body
    # urllib through the proxy, credentials in the proxy URL
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url(auth=True)}))
    with opener.open(srv.file_url("netlab_dep-0.5-py3-none-any.whl"), timeout=10) as r:
        assert r.read() == next(p for p in tiny if p.name.startswith("netlab_dep")).read_bytes()
    # never anywhere but 127.0.0.1: refused without a connection attempt
    for bad in ("http://192.0.2.1:80/simple/", "http://example.invalid/simple/"):
        assert _raw_status(proxy.origin, "", target=bad, proxy_auth=_basic("bob", SECRET))[0] == 403
    assert _raw_status(proxy.origin, "", method="CONNECT", target="192.0.2.1:443",
                       proxy_auth=_basic("bob", SECRET))[0] == 403
    assert proxy.refused == ["192.0.2.1:80", "example.invalid:80", "192.0.2.1:443"]
    assert set(proxy.hosts_reached) == {f"127.0.0.1:{srv.port}"}
    assert SECRET not in repr(proxy.log.all()) and SECRET not in repr(srv.log.all())
    assert proxy.log.all()[2].user == "bob"


def test_proxy_tunnels_https(index_server, proxy_server, tiny, test_ca):
    srv = index_server(tiny, tls=True)
    proxy = proxy_server(auth=("bob", SECRET))
    conn = http.client.HTTPSConnection("127.0.0.1", proxy.port, timeout=10, context=test_ca.client_context())
    conn.set_tunnel("127.0.0.1", srv.port, headers={"Proxy-Authorization": _basic("bob", SECRET)})
    conn.request("GET", "/simple/netlab-dep/")
    r = conn.getresponse()
    assert r.status == 200 and b"netlab_dep-0.5" in r.read()
    conn.close()
    assert proxy.hosts_reached == [f"127.0.0.1:{srv.port}"]
    conn = http.client.HTTPSConnection("127.0.0.1", proxy.port, timeout=10, context=test_ca.client_context())
    conn.set_tunnel("127.0.0.1", srv.port)
    with pytest.raises(OSError, match="407"):
        conn.request("GET", "/simple/")
    conn.close()


def test_unreachable_ports(unreachable):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", unreachable.refused_port), timeout=2).close()
    began = time.monotonic()
    with pytest.raises((TimeoutError, socket.timeout)):
        urllib.request.urlopen(unreachable.silent_url, timeout=0.5)
    assert 0.4 < time.monotonic() - began < 5
    assert unreachable.refused_url.startswith("http://127.0.0.1:")


def test_behaviour_specs_for_the_cli():
    assert parse_behaviour("torch-*=403") == ("torch-*", FORBIDDEN)
    assert parse_behaviour("*=drop:1000:always") == ("*", Drop(1000, None))
    assert parse_behaviour("*=drop:1000") == ("*", Drop(1000, 1))
    assert parse_behaviour("*.whl=slow:5000:0.5") == ("*.whl", Slow(5000, 0.5))
    assert parse_behaviour("x=redirect:http://127.0.0.1:1") == ("x", Redirect("http://127.0.0.1:1"))
    assert parse_behaviour("x=wronghash:page") == ("x", WrongHash("page"))
    for bad in ("nope", "x=", "x=teleport"):
        with pytest.raises(ValueError):
            parse_behaviour(bad)


# the serve command ends cleanly on SIGTERM, saying what it served; on Windows terminate() kills it
SIGTERM_STOPS = pytest.mark.posix_only("stops `python -m tests.netlab serve` with SIGTERM, which it handles")


@SIGTERM_STOPS
def test_cli_serves_https_with_its_own_ca(tiny_wheels, tmp_path):
    ready, ca = tmp_path / "ready.json", tmp_path / "ca.pem"
    proc = subprocess.Popen([sys.executable, "-m", "tests.netlab", "serve", "--root", str(tiny_wheels), "--tls",
                             "--ca-out", str(ca), "--behave", "netlab_dep-*=403", "--ready-file", str(ready)],
                            cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        info = json.loads(ready.read_text(encoding="utf-8"))
        assert info["origin"].startswith("https://127.0.0.1:") and info["ca_bundle"] == str(ca)
        ctx = ssl.create_default_context(cafile=str(ca))
        assert _get(info["origin"] + "/simple/netlab-demo/", context=ctx)[0] == 200
        assert _get(info["origin"] + "/files/netlab_dep-0.5-py3-none-any.whl", context=ctx)[0] == 403
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out


@SIGTERM_STOPS
def test_cli_serves_a_folder_until_stopped(tiny_wheels, tmp_path):
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen([sys.executable, "-m", "tests.netlab", "serve", "--root", str(tiny_wheels),
                             "--auth", f"carol:{SECRET}", "--ready-file", str(ready),
                             "--fake", "torch==2.16.0:cpu,cu132"],
                            cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        origin = json.loads(ready.read_text(encoding="utf-8"))["origin"]
        assert origin.startswith("http://127.0.0.1:")
        assert _get(origin + "/simple/")[0] == 401
        status, _, body = _get(origin + "/whl/cu132/torch/", headers={"Authorization": _basic("carol", SECRET)})
        assert status == 200 and b"2.16.0%2Bcu132" in body
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "carol" in out and SECRET not in out and "/whl/cu132/" in out


# ------------------------------------------------------------------------- real installers
@pytest.fixture
def wheelhouse(torch_wheelhouse):
    return torch_wheelhouse


def _installed(python: Path) -> dict[str, str]:
    out = subprocess.run([python, "-c", "import importlib.metadata as m, json; "
                          "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"],
                         capture_output=True, text=True, encoding="utf-8", env=clean_env(), timeout=60, check=True).stdout
    return json.loads(out)


def _assert_all_from(srv: IndexServer, wheelhouse, python: Path) -> None:
    """Every wheel of the wheelhouse was downloaded from ``srv`` (and only from it) and is installed."""
    assert sorted(set(srv.files_served())) == sorted(p.name for p in wheelhouse.files)
    have = _installed(python)
    assert have["torch"] == "2.13.0+cpu"
    assert {k.replace("_", "-") for k in have} >= TORCH_DEPS


def test_wheelhouse_holds_torch_and_its_dependencies_and_is_cached(wheelhouse, local_wheels):
    names = {p.name.split("-")[0].lower().replace("_", "-") for p in wheelhouse.files}
    assert names == TORCH_DEPS | {"torch"}
    assert wheelhouse.torch.name.startswith(("torch-2.13.0+cpu-", "torch-2.13.0-"))  # the CPU build (Windows: no label)
    assert file_sha256(wheelhouse.torch) == file_sha256(next(local_wheels.glob(wheelhouse.torch.name)))
    again = gather_wheelhouse([local_wheels])
    assert again.cached and again.folder == wheelhouse.folder  # says it came from the cache, not a wall time


@pytest.mark.slow
def test_uv_installs_torch_from_the_plain_index_only(index_server, wheelhouse, tmp_path):
    srv = index_server()
    py = make_venv(tmp_path / "env")
    done = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"])
    assert done.returncode == 0, done.stderr
    _assert_all_from(srv, wheelhouse, py)
    probe = subprocess.run([py, "-c", "import torch; print(torch.__version__, torch.ones(2).sum().item())"],
                           capture_output=True, text=True, encoding="utf-8", env=clean_env(), timeout=120)
    assert probe.stdout.split() == ["2.13.0+cpu", "2.0"], probe.stderr


@pytest.mark.slow
def test_pip_installs_torch_from_the_pypi_layout_only(index_server, wheelhouse, tmp_path):
    srv = index_server()
    py = make_venv(tmp_path / "env")
    done = pip_install(py, srv.simple_url(), ["torch==2.13.0+cpu"])
    assert done.returncode == 0, done.stderr
    _assert_all_from(srv, wheelhouse, py)
    assert "/files/" in done.stdout and srv.origin in done.stdout  # pip says where each came from


@pytest.mark.slow
def test_uv_over_https_with_the_test_ca(index_server, wheelhouse, test_ca, tmp_path):
    srv = index_server(tls=True)
    py = make_venv(tmp_path / "env")
    refused = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"], env=clean_env(UV_HTTP_RETRIES="0"))
    assert refused.returncode != 0 and "UnknownIssuer" in refused.stderr
    done = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"], env=clean_env(SSL_CERT_FILE=str(test_ca.bundle)))
    assert done.returncode == 0, done.stderr
    _assert_all_from(srv, wheelhouse, py)


@pytest.mark.slow
def test_pip_over_https_with_the_test_ca(index_server, test_ca, tmp_path):
    srv = index_server(tls=True)
    py = make_venv(tmp_path / "env")
    refused = pip_install(py, srv.simple_url(), ["jinja2"])
    assert refused.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in refused.stdout + refused.stderr
    done = pip_install(py, srv.simple_url(), ["jinja2"], extra_args=["--cert", str(test_ca.bundle)])
    assert done.returncode == 0, done.stderr
    assert sorted(n.split("-")[0].lower() for n in set(srv.files_served())) == ["jinja2", "markupsafe"]
    assert {"jinja2", "markupsafe"} <= set(_installed(py))


@pytest.mark.slow
def test_uv_through_the_proxy_to_the_https_index(index_server, proxy_server, wheelhouse, test_ca, tmp_path):
    srv = index_server(tls=True)
    proxy = proxy_server(auth=("bob", SECRET))
    py = make_venv(tmp_path / "env")
    base = {"SSL_CERT_FILE": str(test_ca.bundle), "UV_HTTP_RETRIES": "0"}
    refused = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"], env=clean_env(HTTPS_PROXY=proxy.url(), **base))
    assert refused.returncode != 0 and "proxy authorization required" in refused.stderr
    assert srv.log.all() == []  # nothing got past the proxy
    done = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"],
                      env=clean_env(HTTPS_PROXY=proxy.url(auth=True), **base))
    assert done.returncode == 0, done.stderr
    _assert_all_from(srv, wheelhouse, py)
    assert set(proxy.hosts_reached) == {f"127.0.0.1:{srv.port}"}
    assert {e.user for e in proxy.log.all() if e.status == 200} == {"bob"}
    assert SECRET not in done.stdout + done.stderr + refused.stderr


@pytest.mark.slow
def test_pip_through_the_proxy_to_the_plain_index(index_server, proxy_server, tmp_path):
    srv = index_server()
    proxy = proxy_server(auth=("bob", SECRET))
    py = make_venv(tmp_path / "env")
    refused = pip_install(py, srv.simple_url(), ["jinja2"], extra_args=["--proxy", proxy.url()])
    assert refused.returncode != 0  # pip says only "No matching distribution": the proxy log says why
    assert {e.status for e in proxy.log.all()} == {407} and srv.log.all() == []
    done = pip_install(py, srv.simple_url(), ["jinja2"], extra_args=["--proxy", proxy.url(auth=True)])
    assert done.returncode == 0, done.stderr
    assert {e.path for e in proxy.log.all() if e.status == 200} >= {srv.simple_url() + "jinja2/"}
    assert sorted(n.split("-")[0].lower() for n in set(srv.files_served())) == ["jinja2", "markupsafe"]
    assert SECRET not in done.stdout + done.stderr + refused.stdout + refused.stderr


@pytest.mark.slow
def test_uv_with_basic_auth_in_the_index_url(index_server, wheelhouse, tmp_path):
    srv = index_server(auth=("alice", SECRET))
    py = make_venv(tmp_path / "env")
    refused = uv_install(py, srv.whl_url("cpu"), ["torch==2.13.0+cpu"], env=clean_env(UV_HTTP_RETRIES="0"))
    assert refused.returncode != 0 and "401" in refused.stderr
    done = uv_install(py, srv.whl_url("cpu", auth=True), ["torch==2.13.0+cpu"])
    assert done.returncode == 0, done.stderr
    _assert_all_from(srv, wheelhouse, py)
    assert {e.user for e in srv.log.all() if e.status == 200} == {"alice"}


@pytest.mark.slow
def test_pip_with_basic_auth_in_the_index_url(index_server, tmp_path):
    srv = index_server(auth=("alice", SECRET))
    py = make_venv(tmp_path / "env")
    refused = pip_install(py, srv.simple_url(), ["jinja2"], extra_args=["--no-input"])
    assert refused.returncode != 0  # pip says only "No matching distribution": the index log says why
    assert [e.status for e in srv.log.all()] == [401]
    srv.log.clear()
    done = pip_install(py, srv.simple_url(auth=True), ["jinja2"])
    assert done.returncode == 0, done.stderr
    assert sorted(n.split("-")[0].lower() for n in set(srv.files_served())) == ["jinja2", "markupsafe"]
    assert {e.user for e in srv.log.all()} == {"alice"}
    assert SECRET not in done.stdout + done.stderr


@pytest.mark.slow
def test_uv_refuses_a_file_whose_hash_is_not_the_pages(index_server, tiny, tmp_path):
    srv = index_server(tiny, behaviours={"netlab_dep-*": WrongHash("page")})
    py = make_venv(tmp_path / "env")
    done = uv_install(py, srv.simple_url(), ["netlab-demo==1.1"], env=clean_env(UV_HTTP_RETRIES="0"))
    assert done.returncode != 0 and "Hash mismatch" in done.stderr
    ok = index_server(tiny)
    done = uv_install(py, ok.simple_url(), ["netlab-demo==1.1"])
    assert done.returncode == 0, done.stderr
    assert _installed(py)["netlab-demo"] == "1.1"
