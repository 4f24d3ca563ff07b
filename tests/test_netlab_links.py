"""netlab's link laboratory (issue 29): the paced link, the stall, a server that ignores ranges,
the generated CUDA-like wheel set, and the counts the benchmarks read (bytes sent, peak
connections). Real urllib clients on 127.0.0.1; small files, so each test takes well under a
second of pacing."""
from __future__ import annotations

import socket
import threading
import time
import urllib.request
import zipfile

import pytest

from tests.netlab import PROFILES, IndexServer, Link, Stall, cuda_like_set
from tests.netlab.behaviours import parse_behaviour
from tests.netlab.link import MBIT


def _read(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=timeout) as r:
        return r.status, dict(r.headers), r.read()


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    return cuda_like_set(tmp_path_factory.mktemp("cudaset"), scale=0.002)


def test_the_generated_set_is_real_wheels_torch_first_needing_every_library(small_set, index_server):
    assert small_set.torch.name.startswith("torch-2.13.0+cu132-") and small_set.files[0] == small_set.torch
    assert len(small_set.files) == 13 and small_set.requirement == "torch==2.13.0+cu132"
    sizes = [f.stat().st_size for f in small_set.files]
    assert sizes[0] == max(sizes)  # the torch-like wheel is the large one
    with zipfile.ZipFile(small_set.torch) as zf:
        names = zf.namelist()
        record = zf.read(next(n for n in names if n.endswith("/RECORD"))).decode()
        meta = zf.read(next(n for n in names if n.endswith("/METADATA"))).decode()
        assert zf.testzip() is None
    assert all(f"{n}," in record for n in names)  # every member listed with its hash
    assert meta.count("Requires-Dist: ") == 12
    server = index_server(small_set.files)
    status, _, page = _read(server.whl_url("cu132") + "torch/")
    assert status == 200 and small_set.torch.name.encode() in page
    assert cuda_like_set(small_set.folder.parent, scale=0.002).folder == small_set.folder  # made once


def test_a_capped_connection_is_paced_and_every_byte_is_counted(tmp_path, small_set):
    f = small_set.files[1]
    size = f.stat().st_size
    link = Link(per_conn_bps=size * 2, latency_s=0.05)  # half a second for the file, on one connection
    with IndexServer([f], link=link) as server:
        began = time.monotonic()
        _, _, body = _read(server.file_url(f.name))
        took = time.monotonic() - began
        assert body == f.read_bytes()
        assert took >= 0.45  # never faster than the cap (a pacer can only be slower)
        assert server.bytes_out == size and server.file_bytes(f.name) == size


def test_a_stall_sends_the_headers_and_the_first_bytes_then_nothing(small_set):
    f = small_set.files[1]
    with IndexServer([f], behaviours={f.name: Stall(after=1000)}) as server:
        with urllib.request.urlopen(server.file_url(f.name), timeout=0.5) as r:
            assert r.status == 200 and int(r.headers["Content-Length"]) == f.stat().st_size
            assert len(r.read(1000)) == 1000
            with pytest.raises((TimeoutError, socket.timeout)):
                r.read(1)
        (entry,) = server.log.all()
        assert entry.note == "stalled after 1000 bytes"
    assert parse_behaviour("*.whl=stall:5:always") == ("*.whl", Stall(5, None))
    assert parse_behaviour("x=stall") == ("x", Stall(None, None))


def test_a_stall_before_the_headers_holds_the_connection_until_the_client_leaves(small_set):
    f = small_set.files[1]
    with IndexServer([f], behaviours={f.name: Stall()}) as server:
        with pytest.raises((TimeoutError, socket.timeout)):
            _read(server.file_url(f.name), timeout=0.3)
        deadline = time.monotonic() + 5
        while server.open_connections and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.open_connections == 0  # the server noticed the client left


def test_a_server_without_ranges_sends_the_whole_file(small_set):
    f = small_set.files[1]
    with IndexServer([f], ranges=False) as server:
        status, headers, body = _read(server.file_url(f.name), {"Range": "bytes=100-199"})
        assert status == 200 and body == f.read_bytes() and "Accept-Ranges" not in headers
    with IndexServer([f]) as server:
        status, headers, body = _read(server.file_url(f.name), {"Range": "bytes=100-199"})
        assert status == 206 and body == f.read_bytes()[100:200] and headers["Accept-Ranges"] == "bytes"


def test_peak_connections_and_a_lifetime(small_set):
    f = small_set.files[1]
    server = IndexServer([f], link=Link(per_conn_bps=f.stat().st_size * 4), lifetime_s=30)
    with server:
        threads = [threading.Thread(target=_read, args=(server.file_url(f.name),)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert 1 <= server.peak_connections <= 3
    short = IndexServer([f], lifetime_s=0.2).start()
    deadline = time.monotonic() + 10
    while short.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not short.running  # it stopped by itself


def test_the_benchmark_profiles_are_the_issues_links():
    clean, capped = PROFILES["clean"].link(), PROFILES["capped"].link()
    assert clean.total_bps == 100 * MBIT and clean.per_conn_bps is None and clean.latency_s == 0.04
    assert capped.per_conn_bps == 10 * MBIT and capped.total_bps == 200 * MBIT
    assert PROFILES["drop"].drop_at == 0.7 and PROFILES["stall"].stall_at is not None
