"""Our downloader on the link laboratory (issue 29): several connections per file, resumed after a
drop with only the missing bytes (the server counts them), a server without ranges, a mirror
that sends another file, a stalling mirror, and never more connections per server than the limit.

Real servers on 127.0.0.1 (tests/netlab) with a paced link where the test needs connections to
overlap; the files are the generated CUDA-like set at 1 % (``cuda_set``). One test installs
through the assistant's real install path from a server that refuses ranges.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from app.core.base.text import render
from app.core.proc.runner import CancelToken
from app.core.sources import pieces
from app.core.sources.download import Downloader, Wanted
from app.core.sources.pieces import HostSlots, Stalls, host_of
from app.core.sources.settings import Source
from tests.netlab import Drop, Link, Stall, WrongHash, file_sha256
from tests.netlab.clients import clean_env

FAST = Link(per_conn_bps=16 << 20)  # one connection: 16 MB/s, so that pieces of a 5 MB file overlap


def _wanted(path, *servers) -> Wanted:
    return Wanted(path.name, file_sha256(path),
                  tuple((Source(f"s{i}", f"source {i}", "mirror", s.origin), s.file_url(path.name))
                        for i, s in enumerate(servers)), "torch")


def _downloader(tmp_path, events=None, **kw) -> Downloader:
    kw.setdefault("slots", HostSlots())
    kw.setdefault("stalls", Stalls())
    return Downloader(_net(), tmp_path / "dl", (events.append if events is not None else lambda e: None),
                      CancelToken(), **kw)


def _net():
    from app.core.net.client import Client

    return Client()


def _gets(server, name):
    return [r for r in server.log.all() if r.method == "GET" and unquote(r.path).endswith(name)]


def test_a_drop_is_resumed_from_the_byte_it_had_and_only_the_missing_bytes_are_sent(tmp_path, index_server,
                                                                                       cuda_set):
    torch = cuda_set.torch
    size = torch.stat().st_size
    at = int(size * 0.7)
    server = index_server(cuda_set.files, behaviours={torch.name: Drop(after=at)}, link=FAST)
    path, served = _downloader(tmp_path).fetch(_wanted(torch, server))
    assert file_sha256(path) == file_sha256(torch)
    assert server.file_bytes(torch.name) == size  # every byte once: nothing sent twice
    gets = _gets(server, torch.name)
    (dropped,) = [r for r in gets if r.note.startswith("dropped after")]
    start = int(dropped.header("Range")[len("bytes="):].split("-")[0])
    resumed = start + dropped.bytes_sent  # the byte the drop stopped at (the drop is at byte `at` of the file)
    assert resumed == max(at, start)
    assert any(r.header("Range").startswith(f"bytes={resumed}-") for r in gets)  # asked again from that byte
    assert len(gets) > 2  # in pieces, over several connections
    assert served.source_id == "s0"  # the only source went on from there


def test_a_server_without_ranges_sends_the_file_once_over_one_connection(tmp_path, index_server, cuda_set):
    torch = cuda_set.torch
    server = index_server(cuda_set.files, ranges=False, link=FAST)
    events: list = []
    path, served = _downloader(tmp_path, events).fetch(_wanted(torch, server))
    assert file_sha256(path) == file_sha256(torch) and served.source_id == "s0"
    gets = _gets(server, torch.name)
    assert [r.status for r in gets] == [200]  # the first piece's answer was the whole file: nothing asked again
    assert server.file_bytes(torch.name) == torch.stat().st_size
    progress = [e for e in events if getattr(e, "kind", "") == "progress"]
    assert progress[0].total_bytes == torch.stat().st_size  # the size was known before the first byte


def test_a_mirror_that_sends_another_file_is_refused_and_the_next_source_sends_the_right_one(
        tmp_path, index_server, cuda_set):
    torch, other = cuda_set.torch, cuda_set.files[1]
    bad = index_server(cuda_set.files, behaviours={torch.name: WrongHash(replacement=other)}, link=FAST)
    good = index_server(cuda_set.files, link=FAST)
    path, served = _downloader(tmp_path).fetch(_wanted(torch, bad, good))
    assert file_sha256(path) == file_sha256(torch)
    assert served.source_id == "s1" and served.earlier == ("s0",) and served.resumed_at == 0
    assert "SHA-256" in render(served.failures[0])
    assert good.file_bytes(torch.name) == torch.stat().st_size  # the right file, whole, from the next source
    assert not list((tmp_path / "dl").glob("*.part"))


def test_the_parallel_fetch_never_opens_more_connections_than_the_limit(tmp_path, index_server, cuda_set):
    server = index_server(cuda_set.files, link=Link(per_conn_bps=8 << 20))
    slots = HostSlots(limit=3)
    wanted = [_wanted(f, server) for f in cuda_set.files]
    got = _downloader(tmp_path, slots=slots).fetch_all(wanted)
    assert [file_sha256(p) for p, _ in got] == [file_sha256(f) for f in cuda_set.files]
    assert server.peak_requests <= 3  # the server's own count of requests answered at once
    assert slots.peak(host_of(server.origin)) == 3  # and the limit was used: the fetch was parallel
    assert len(_gets(server, cuda_set.torch.name)) > 1  # the large file in pieces


class _Granted(HostSlots):
    """The slots, and the size of the file each piece's slot went to, in order."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.granted: list[int | None] = []

    def try_acquire(self, host: str, *, size: int | None = None, who: int | None = None) -> bool:
        ok = super().try_acquire(host, size=size, who=who)
        if ok:
            self.granted.append(size)
        return ok


def test_a_slot_goes_to_the_larger_file_of_another_download_first():
    slots, host = HostSlots(limit=2), "http://127.0.0.1:80"
    slots.bid(1, {host: 500})  # download 1 would fetch a 500-byte file there
    assert not slots.try_acquire(host, size=20, who=2)  # download 2's smaller file waits
    assert slots.try_acquire(host, size=500, who=1)
    assert slots.try_acquire(host, size=20, who=1)  # a download's own smaller file: its own order decides
    slots.release(host)
    assert slots.try_acquire(host, size=600, who=2)  # a larger file than the bid goes first
    slots.release(host)
    assert slots.try_acquire("http://other:80", size=20, who=2)  # another server: no bid there
    woken: list[int] = []
    slots.listen(lambda: woken.append(1))
    slots.bid(1, {})  # download 1 has nothing more to ask for
    slots.release(host)
    assert woken == [1] and slots.try_acquire(host, size=20, who=2)


def test_the_largest_file_takes_the_slots_first_over_every_download_of_the_process(
        tmp_path, index_server, cuda_set, monkeypatch):
    """The install's early download fetches torch; a second download then asks for every file (as
    the install's wheelhouse does). The rest waits for torch's last piece (its files' sizes asked
    first), and torch, complete, is handed over at once, not after every other file: so the file
    that arrives last is a small one, which goes into the environment at once, not torch (issue
    29: a clean link)."""
    monkeypatch.setattr(pieces, "MAX_PIECE", 1 << 20)  # the 1 % set's torch: more pieces than slots
    monkeypatch.setattr(pieces, "MIN_PIECE", 256 << 10)
    torch = cuda_set.torch
    rest = [f for f in cuda_set.files if f != torch]
    server = index_server(cuda_set.files, link=Link(total_bps=8 << 20))
    slots = _Granted(limit=2)
    early = threading.Thread(target=lambda: _downloader(tmp_path, slots=slots).fetch(_wanted(torch, server)))
    early.start()
    deadline = time.monotonic() + 30
    while not slots.granted and time.monotonic() < deadline:  # torch's first piece is on its way
        time.sleep(0.005)
    told: list[str] = []
    got = _downloader(tmp_path, slots=slots, on_file=lambda path, s: told.append(s.filename)).fetch_all(
        [_wanted(f, server) for f in (torch, *rest)])
    early.join(60)
    assert [file_sha256(p) for p, _ in got] == [file_sha256(f) for f in (torch, *rest)]
    assert told.index(torch.name) < len(rest) // 2, told  # handed over as soon as the early download had it
    size = torch.stat().st_size
    mine = [i for i, s in enumerate(slots.granted) if s == size]
    others = [i for i, s in enumerate(slots.granted) if s != size]
    assert len(mine) > 2 and others  # torch in more pieces than slots, beside the others' pieces
    assert max(mine) < min(others), slots.granted  # every piece of torch had its slot before any other file


def test_a_stalling_mirror_is_left_within_the_stall_time_for_the_next_one(tmp_path, index_server, cuda_set):
    torch = cuda_set.torch
    size = torch.stat().st_size
    stalling = index_server(cuda_set.files, behaviours={torch.name: Stall(after=size // 4)}, link=FAST)
    good = index_server(cuda_set.files, link=FAST)
    stalls = Stalls()
    path, served = _downloader(tmp_path, stall_s=0.5, stalls=stalls).fetch(_wanted(torch, stalling, good))
    assert file_sha256(path) == file_sha256(torch)
    assert served.source_id == "s1" and served.earlier == ("s0",) and served.resumed_at > 0
    assert "did not answer in time" in render(served.failures[0])
    assert stalls.stalled(host_of(stalling.origin)) and not stalls.stalled(host_of(good.origin))
    assert stalling.file_bytes(torch.name) + good.file_bytes(torch.name) < size * 1.05  # what came stays


@pytest.mark.slow
def test_the_install_path_installs_from_a_mirror_that_refuses_ranges(tmp_path, index_server, cuda_set,
                                                                      unreachable, monkeypatch):
    """The assistant's install (pre-flight routing, resolve, our downloads, uv --no-index) from a
    mirror that answers every range request with the whole file."""
    from app.core.detection.system import SystemReport
    from app.core.install import InstallRequest, install, plan, preflight
    from app.core.recommend import Choices, recommend
    from app.core.sources import SourceSettings

    seeds = sorted(Path("/opt/pypi/files").glob("pip-*.whl"))  # the new env is seeded from the index
    server = index_server([*cuda_set.files, *seeds], ranges=False)
    for k, v in clean_env(TORCH_SETUP_TORCH_INDEX=unreachable.refused_url.replace("/simple/", "/whl/"),
                          UV_CACHE_DIR=str(tmp_path / "uv")).items():
        monkeypatch.setenv(k, v)
    box = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64",
           "python": {"version": f"{sys.version_info[0]}.{sys.version_info[1]}.0"},
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "driver_version": "580.65",
                     "compute_capability": "8.9", "memory_mb": 24564}]}
    rec = recommend(SystemReport.from_dict(box), None, Choices(torch="2.13.0"))
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable,
                            sources=SourceSettings(mirrors=(server.whl_url("cu132").replace("/cu132/", "/{variant}/"),),
                                                   default_index=server.simple_url())))
    result = install(p, checks=preflight(p))
    assert result.torch_version == "2.13.0+cu132"
    assert {d.source_id for d in result.downloads} == {"mirror-1"}
    assert all(r.status == 200 for r in server.log.all() if r.method == "GET" and r.path.endswith(".whl"))
