"""app.core.sources on real 127.0.0.1 servers (tests/netlab): index pages, wheel folders, the
availability input of the recommendation, every failure named, verified routing and the
downloader that falls back (and resumes) when a source fails mid-way."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.detection.system import SystemReport
from app.core.net.client import Client, NetError
from app.core.recommend import Choices, recommend
from app.core.sources import (
    Availability,
    SourceSettings,
    candidates,
    closure,
    parse_mirrors,
    scan,
    torch_origin,
)
from app.core.sources.download import Downloader, DownloadFailed, Wanted
from app.core.sources.pages import read_page
from app.core.sources.routing import verify
from app.core.sources.settings import Source
from tests.helpers import PLATFORM_TAG
from tests.netlab import FORBIDDEN, Drop, Redirect, Slow, WrongHash, file_sha256

CPU_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"},
           "gpus": []}
HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"  # the Python the local torch wheel is for
TORCH = "torch-{v}+{variant}-cp311-cp311-" + PLATFORM_TAG + ".whl"  # a wheel this machine takes


def _folder(tmp_path: Path, *versions: str, variant: str = "cpu") -> Path:
    """A folder of torch wheels (names only: what the availability reads)."""
    d = tmp_path / "wheels"
    d.mkdir(exist_ok=True)
    for v in versions:
        (d / TORCH.format(v=v, variant=variant)).write_bytes(b"")
    return d


@pytest.fixture
def origin_env(monkeypatch, unreachable):
    """The PyTorch server replaced by a port that refuses (never the real one)."""
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", unreachable.refused_url.replace("/simple/", "/whl/"))
    return unreachable


# ---------------------------------------------------------------- settings and candidates
def test_mirrors_setting_is_auto_off_or_known_ids_and_urls():
    assert parse_mirrors(None) == "auto" and parse_mirrors("OFF") == "off"
    assert parse_mirrors("nju-torch, https://m.example/whl/{variant}/") == ("nju-torch",
                                                                             "https://m.example/whl/{variant}/")
    with pytest.raises(BadInput, match="not a mirror of the catalogue"):
        parse_mirrors(["no-such-mirror"])
    with pytest.raises(BadInput, match="PyPI mirror"):
        parse_mirrors(["tuna-pypi"])


def test_candidates_put_the_users_index_first_and_never_offer_a_mirror_without_the_variant(monkeypatch):
    monkeypatch.delenv("TORCH_SETUP_TORCH_INDEX", raising=False)
    cu = "https://download.pytorch.org/whl/cu130"
    auto = candidates(SourceSettings(), cu)
    assert auto[0].id == "origin" and all(s.fallback for s in auto[1:])
    assert {s.id for s in auto[1:]} == {"nju-torch", "sjtu-torch", "aliyun-torch"}
    # a CPU-only (or PyPI) mirror is never a candidate for a CUDA pin; Aliyun lists no cu128
    assert "aliyun-torch" not in {s.id for s in candidates(SourceSettings(), "https://download.pytorch.org/whl/cu128")}
    assert [s.id for s in candidates(SourceSettings(mirrors="off"), cu)] == ["origin"]
    own = candidates(SourceSettings(torch_index="https://my.lab/whl/cu130/", mirrors=("nju-torch",)), cu)
    assert [s.id for s in own] == ["index", "nju-torch"]  # "auto" never overrides the user's own index
    chosen = candidates(SourceSettings(mirrors=("nju-torch", "origin")), cu)
    assert [s.id for s in chosen] == ["nju-torch", "origin"]


def test_the_origin_is_replaced_only_by_the_test_setting(monkeypatch):
    monkeypatch.delenv("TORCH_SETUP_TORCH_INDEX", raising=False)
    assert torch_origin("https://download.pytorch.org/whl/cpu") == "https://download.pytorch.org/whl/cpu"
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", "http://127.0.0.1:9/whl/")
    assert torch_origin("https://download.pytorch.org/whl/cpu") == "http://127.0.0.1:9/whl/cpu/"
    assert torch_origin("https://pypi.org/simple") == "https://pypi.org/simple"


# ---------------------------------------------------------------- pages and folders
def test_index_pages_are_read_as_pep691_json_pep503_html_and_flat(index_server, tiny_wheels):
    files = sorted(tiny_wheels.glob("*.whl"))
    for pep691 in (True, False):
        srv = index_server(files, pep691=pep691)
        links = read_page(Client(), srv.simple_url() + "netlab-demo/", "netlab-demo")
        assert sorted(lk.filename for lk in links) == ["netlab_demo-1.0-py3-none-any.whl",
                                                        "netlab_demo-1.1-py3-none-any.whl"]
        assert all(lk.url.startswith(srv.origin) and lk.sha256 == file_sha256(tiny_wheels / lk.filename)
                   for lk in links)
    flat = read_page(Client(), srv.flat_url(), "netlab-dep")
    assert [lk.filename for lk in flat] == ["netlab_dep-0.5-py3-none-any.whl"]


def test_a_folder_holding_everything_is_a_complete_closure(torch_wheelhouse, local_wheels):
    pin = torch_wheelhouse.requirement  # torch==2.13.0+cpu (torch==2.13.0: Windows's CPU build)
    whole = closure([pin], scan([torch_wheelhouse.folder]), HERE)
    assert whole.complete and {lw.wheel.name for lw in whole.chosen} >= {"torch", "sympy", "jinja2", "networkx"}
    if not any(local_wheels.glob("sympy-*.whl")):  # a folder of torch alone (the Windows lane's holds its needs)
        only_torch = closure([pin], scan([local_wheels]), HERE)
        assert not only_torch.complete and "sympy>=1.13.3" in only_torch.missing
    other = "3.12" if HERE != "3.12" else "3.11"  # a Python the torch wheel is not built for
    assert closure([pin], scan([torch_wheelhouse.folder]), other).missing == (pin,)


# ---------------------------------------------------------------- availability -> recommendation
def test_the_newest_build_in_the_folder_is_recommended_when_the_index_is_unreachable(tmp_path, origin_env):
    folder = _folder(tmp_path, "2.13.0")
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, None,
                    sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert rec.torch_version == "2.13.0" and rec.packages == ("torch==2.13.0+cpu",)
    assert render(rec.availability) == (f"torch 2.13.0 (CPU), the newest build available in your folder {folder}; "
                                        "2.15.0 exists but is not reachable.")
    assert rec.availability in rec.reasons and rec.to_dict()["availability_code"] == "rec.available_unreachable"
    assert "2.15.0" in render(rec.availability, "zh_CN") and "无法访问" in render(rec.availability, "zh_CN")


def test_newest_means_newest_available_an_older_patch_too(tmp_path, origin_env):
    folder = _folder(tmp_path, "2.13.0", "2.14.0")
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, None,
                    sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert rec.torch_version == "2.14.0" and rec.packages == ("torch==2.14.0+cpu",)  # 2.14.1 is the newest 2.14
    pinned = recommend(SystemReport.from_dict(CPU_BOX), None, Choices(torch="2.13"),
                       sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert pinned.torch_version == "2.13.0"


def test_a_reachable_index_adds_what_it_lists(tmp_path, index_server, tiny_wheels, monkeypatch):
    """The folder holds 2.13.0; the origin lists 2.15.0+cpu: newest available is 2.15.0 (a page read once)."""
    from tests.netlab import FakeRelease

    srv = index_server(sorted(tiny_wheels.glob("*.whl")), fake=[FakeRelease("torch", "2.15.0", ("cpu",), platform=PLATFORM_TAG)])
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", srv.origin + "/whl/")
    folder = _folder(tmp_path, "2.13.0")
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, None,
                    sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert rec.torch_version == "2.15.0" and not rec.availability
    assert "available from the PyTorch server" in " ".join(render(r) for r in rec.reasons)
    assert len([r for r in srv.log.all() if r.path == "/whl/cpu/torch/"]) == 1


def test_no_network_at_all_when_the_folder_holds_the_newest_build(tmp_path, monkeypatch, index_server, tiny_wheels):
    srv = index_server(sorted(tiny_wheels.glob("*.whl")))
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", srv.origin + "/whl/")
    folder = _folder(tmp_path, "2.15.0")
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, None,
                    sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert rec.torch_version == "2.15.0" and len(srv.log) == 0


def test_nothing_on_offer_keeps_the_plain_pick_and_warns(tmp_path, origin_env):
    folder = _folder(tmp_path, "2.13.0", variant="cu130")  # a CUDA wheel on a machine without a GPU
    rec = recommend(SystemReport.from_dict(CPU_BOX), None, None,
                    sources=Availability(SourceSettings(find_links=(str(folder),))))
    assert rec.torch_version == "2.15.0" and not rec.availability
    assert "rec.not_on_offer" in rec.warning_codes


# ---------------------------------------------------------------- failures, named
def test_network_failures_are_named_with_their_fix(index_server, tiny_wheels, proxy_server, test_ca, unreachable):
    srv = index_server(sorted(tiny_wheels.glob("*.whl")))
    tls = index_server(sorted(tiny_wheels.glob("*.whl")), tls=True)
    url = srv.file_url("netlab_dep-0.5-py3-none-any.whl")

    def failure(net: Client, target: str):
        with pytest.raises(NetError) as err, net.get(target):
            pass
        return err.value.failure

    assert failure(Client(), unreachable.refused_url).kind == "refused"
    f = failure(Client(), tls.simple_url())  # our own CA is not trusted by default
    assert f.kind == "tls_verify" and "CERTIFICATE_VERIFY_FAILED" in render(f.text)
    assert "--ca-bundle" in render(f.fix) and "--ca-bundle" in render(f.fix, "zh_CN")
    with Client(ca_bundle=str(test_ca.bundle)).get(tls.simple_url()) as r:
        assert r.status == 200
    proxy = proxy_server(auth=("alice", "pa55-w0rd"))
    for target in (url, tls.simple_url()):  # plain forwarding and CONNECT
        f = failure(Client(proxy=proxy.url(), ca_bundle=str(test_ca.bundle)), target)
        assert f.kind == "proxy_auth" and "407" in render(f.text) and "USER:PASSWORD" in render(f.fix)
    with Client(proxy=proxy.url(auth=True), ca_bundle=str(test_ca.bundle)).get(tls.simple_url()) as r:
        assert r.status == 200
    assert "pa55-w0rd" not in repr(Client(proxy=proxy.url(auth=True)))
    blocked = index_server(sorted(tiny_wheels.glob("*.whl")), behaviours={"*": FORBIDDEN})
    f = failure(Client(), blocked.file_url("netlab_dep-0.5-py3-none-any.whl"))
    assert f.status == 403 and render(f.text).startswith("answers 403 Forbidden")
    moved = index_server(sorted(tiny_wheels.glob("*.whl")), behaviours={"*": Redirect()})
    f = failure(Client(), moved.file_url("netlab_dep-0.5-py3-none-any.whl"))
    assert f.kind == "redirect_unreachable" and "which cannot be reached" in render(f.text)


# ---------------------------------------------------------------- the downloader
def _wanted(servers, name: str, folder: Path) -> Wanted:
    return Wanted(name, file_sha256(folder / name),
                  tuple((Source(f"s{i}", f"source {i}", "mirror", s.origin), s.file_url(name))
                        for i, s in enumerate(servers)), "netlab-demo")


def test_a_download_dropped_half_way_goes_on_from_the_next_source(tmp_path, index_server, tiny_wheels):
    name = "netlab_demo-1.1-py3-none-any.whl"
    size = (tiny_wheels / name).stat().st_size
    files = sorted(tiny_wheels.glob("*.whl"))
    drop = index_server(files, behaviours={name: Drop(after=size // 2)})
    good = index_server(files)
    events = []
    from app.core.proc.runner import CancelToken

    path, served = Downloader(Client(), tmp_path / "dl", events.append, CancelToken()).fetch(
        _wanted([drop, good], name, tiny_wheels))
    assert path.read_bytes() == (tiny_wheels / name).read_bytes()
    assert served.source_id == "s1" and served.earlier == ("s0",) and 0 < served.resumed_at <= size // 2 + 1
    assert "closed the connection after" in render(served.failures[0])
    ranged = [r for r in good.log.all() if r.header("Range")]
    assert ranged and ranged[0].status == 206 and ranged[0].bytes_sent == size - served.resumed_at
    progress = [e for e in events if getattr(e, "kind", "") == "progress"]
    assert progress and progress[-1].done_bytes == progress[-1].total_bytes == size


def test_forbidden_and_wrong_bytes_move_on_and_every_reason_is_kept(tmp_path, index_server, tiny_wheels):
    from app.core.proc.runner import CancelToken

    name = "netlab_demo-1.1-py3-none-any.whl"
    files = sorted(tiny_wheels.glob("*.whl"))
    servers = [index_server(files, behaviours={name: FORBIDDEN}), index_server(files, behaviours={name: WrongHash()}),
               index_server(files)]
    _path, served = Downloader(Client(), tmp_path / "dl", lambda e: None, CancelToken()).fetch(
        _wanted(servers, name, tiny_wheels))
    assert served.source_id == "s2" and served.earlier == ("s0", "s1") and served.resumed_at == 0
    assert "403" in render(served.failures[0]) and "SHA-256" in render(served.failures[1])
    with pytest.raises(DownloadFailed) as err:
        Downloader(Client(), tmp_path / "dl2", lambda e: None, CancelToken()).fetch(
            _wanted(servers[:2], name, tiny_wheels))
    assert "403" in err.value.message and "SHA-256" in err.value.message


def test_a_stopped_download_is_resumed_by_the_next_run(tmp_path, index_server, tiny_wheels):
    from app.core.proc.runner import CancelToken

    name = "netlab_demo-1.1-py3-none-any.whl"
    size = (tiny_wheels / name).stat().st_size
    files = sorted(tiny_wheels.glob("*.whl"))
    flaky = index_server(files, behaviours={name: Drop(after=size // 3, times=None)})
    with pytest.raises(DownloadFailed):
        Downloader(Client(), tmp_path / "dl", lambda e: None, CancelToken()).fetch(_wanted([flaky], name, tiny_wheels))
    good = index_server(files)
    _path, served = Downloader(Client(), tmp_path / "dl", lambda e: None, CancelToken()).fetch(
        _wanted([good], name, tiny_wheels))
    ranged = [r for r in good.log.all() if r.method == "GET"]
    assert served.resumed_at == size // 3 and ranged[0].header("Range").startswith(f"bytes={size // 3}-")


# ---------------------------------------------------------------- verified routing
def test_routing_names_each_skipped_source_and_picks_a_verified_one(torch_wheelhouse, index_server, monkeypatch):
    files = torch_wheelhouse.files
    origin = index_server(files, behaviours={"torch-*": Slow(delay_s=0.3)})
    bad = {"403": index_server(files, behaviours={"torch-*": FORBIDDEN}),
           "redirect": index_server(files, behaviours={"torch-*": Redirect()}),
           "hash": index_server(files, behaviours={"torch-*": WrongHash("page")}),
           "lacks": index_server([f for f in files if not f.name.startswith("torch-")])}
    good = index_server(files)
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", origin.origin + "/whl/")
    mirrors = tuple(s.whl_url("cpu").replace("/cpu/", "/{variant}/") for s in (*bad.values(), good))
    pin = torch_wheelhouse.requirement
    route = verify(SourceSettings(mirrors=mirrors), "https://download.pytorch.org/whl/cpu", [pin], HERE)
    reasons = {v.source.id: render(v.reason) for v in route.skipped}
    assert list(reasons) == ["mirror-1", "mirror-2", "mirror-3", "mirror-4"]
    assert reasons["mirror-1"].startswith("answers 403 Forbidden")
    assert reasons["mirror-2"].startswith("redirects to") and "cannot be reached" in reasons["mirror-2"]
    assert reasons["mirror-3"].startswith("lists another SHA-256") and "PyTorch server" in reasons["mirror-3"]
    assert reasons["mirror-4"].startswith(f"does not have {pin}")
    assert [v.source.id for v in route.verified] == ["mirror-5", "origin"]  # the slow origin is not chosen
    assert route.chosen is not None and route.chosen.hash_checked
    assert route.files[0].sha256 == file_sha256(torch_wheelhouse.torch)
    assert not any("torch-" in r.path and r.method == "GET" and r.status == 200 for s in bad.values()
                   for r in s.log.all())  # nothing but pages and short range probes were read from them
    json.dumps([render(v.reason, "zh_CN") for v in route.verdicts], ensure_ascii=False)


# ---------------------------------------------------------------- answer files
def test_answer_files_take_mirrors_auto_off_or_a_list(tmp_path):
    from app.core.pipeline.answers import parse_answers

    base = '[environment]\npath = "env"\n[sources]\n'
    assert parse_answers(base, base=tmp_path).sources.mirrors == "auto"
    assert parse_answers(base + 'mirrors = "off"\n', base=tmp_path).sources.mirrors == "off"
    listed = parse_answers(base + 'mirrors = ["nju-torch", "https://m.example/whl/{variant}/"]\n', base=tmp_path)
    assert listed.sources.mirrors == ("nju-torch", "https://m.example/whl/{variant}/")
    for bad, words in (('mirrors = ["tuna-pypi"]', "PyPI mirror"), ('mirrors = ["nope"]', "not a mirror"),
                       ('mirrors = "sometimes"', 'not "auto" or "off"'), ("mirrors = 3", "expected")):
        with pytest.raises(BadInput) as err:
            parse_answers(base + bad + "\n", base=tmp_path)
        assert "line 4: 'sources.mirrors'" in err.value.text() and words in err.value.text()


def test_a_python_builds_mirror_in_the_list_goes_to_uv():
    from app.core.sources.settings import python_mirror_env

    assert python_mirror_env(("nju-torch", "ustc-python")) == {
        "UV_PYTHON_INSTALL_MIRROR": "https://mirrors.ustc.edu.cn/github-release/astral-sh/python-build-standalone"}
    assert python_mirror_env("auto") == {} and python_mirror_env(("nju-torch",)) == {}
