"""``torch-setup compat status``: the data against what a PyTorch-style index lists (a real server on
127.0.0.1, tests/netlab), and what the engine then does with a release it did not know."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base.text import render
from app.core.compat import freshness
from app.core.compat.data import load_compat
from app.core.recommend import recommend
from tests.netlab.clients import clean_env
from tests.netlab.files import FakeRelease

REPO = Path(__file__).resolve().parents[1]
DATA = load_compat(bundled=True)
RTX4090 = {"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": {"version": "3.12.4"},
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "index": 0, "compute_capability": "8.9",
                     "driver_version": "590.48.01"}]}
NEW = FakeRelease("torch", "2.16.0", ("cpu", "cu132", "cu134"))


def _cli(home: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    env = clean_env(TORCH_SETUP_HOME=str(home), TORCH_SETUP_COMPAT="bundled")
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          cwd=REPO, env=env)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_status_reports_a_made_up_release_and_recommend_uses_it_marked_assumed(index_server, home, tmp_path):
    server = index_server(files=[], fake=[NEW])
    done = _cli(home, "compat", "status", "--index-url", server.origin + "/simple", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["latest"] for r in out["new_releases"]] == ["2.16.0"]
    assert out["new_releases"][0]["builds"] == {"linux-x86_64": ["cpu", "cu132", "cu134"]}
    assert out["new_releases"][0]["pythons"] == ["3.10", "3.11", "3.12", "3.13"]
    assert out["up_to_date"] is False and out["in_use"]["version"] == DATA.version
    plan = " ".join(out["plan"])
    assert "cu134 (linux-x86_64) is used with facts assumed from the cu132 build of torch 2.15" in plan
    assert [p.rsplit("/", 3)[-3:] for p in out["pages"]] == [["simple", "torch", ""]]
    # what a JSON-speaking server answered: PEP 691
    assert any("application/vnd.pypi.simple.v1+json" in (r.header("Accept") or "") for r in server.log.all())

    report = tmp_path / "rtx4090.json"
    report.write_text(json.dumps(RTX4090), encoding="utf-8")
    rec = _cli(home, "recommend", "--from-report", str(report), "--json")
    assert rec.returncode == 0, rec.stderr
    r = json.loads(rec.stdout)
    assert (r["variant"], r["torch_version"], r["facts_assumed"]) == ("cu134", "2.16.0", True)
    assert r["command"] == ["pip", "install", "torch==2.16.0+cu134", "--index-url",
                            "https://download.pytorch.org/whl/cu134"]
    assert "rec.assumed_discovered" in r["reason_codes"] and "rec.assumed_warning" in r["warning_codes"]
    assert any("is assumed to be like the cu132 build of torch 2.15" in x for x in r["reasons"])
    assert "facts assumed" in r["summary"]
    human = _cli(home, "recommend", "--from-report", str(report))
    assert "torch 2.16.0" in human.stdout and "assumed" in human.stdout
    # --verified-only: the data alone decides
    plain = json.loads(_cli(home, "recommend", "--from-report", str(report), "--json", "--verified-only").stdout)
    assert (plain["variant"], plain["torch_version"], plain["facts_assumed"]) == ("cu132", "2.15.0", False)


def test_status_human_output_and_html_pages(index_server, home):
    server = index_server(files=[], fake=[NEW], pep691=False)
    done = _cli(home, "compat", "status", "--index-url", server.origin + "/simple")
    assert done.returncode == 0, done.stderr
    assert "New release: torch 2.16.0 — linux-x86_64: cpu, cu132, cu134" in done.stdout
    assert "What the engine will do:" in done.stdout and "cu134" in done.stdout
    assert freshness.load_status() is not None  # cached for recommend and the wizard


def test_per_variant_pages_when_there_is_no_combined_page(index_server, home):
    """download.pytorch.org-style: {url}/<variant>/torch/; the variants come from the data and the root page."""
    known = FakeRelease("torch", "2.15.0", ("cpu", "cu130", "cu132"), python_tags=("cp311", "cp312"))
    server = index_server(files=[], fake=[NEW, known])
    result = freshness.check(DATA, server.origin + "/whl", timeout=10)
    assert [r.latest for r in result.new_releases] == ["2.16.0"]
    assert result.new_releases[0].builds["linux-x86_64"] == ("cpu", "cu132", "cu134")
    assert any(p.endswith("/whl/cu134/torch/") for p in result.pages)
    # 2.15 is listed with three of its Linux builds: the others are reported missing, 2.14 and 2.13 not listed
    assert ("2.15", "rocm10.0", "linux-x86_64") in result.missing_builds
    assert ("2.15", "cu132", "linux-x86_64") not in result.missing_builds
    assert result.missing_releases == ("2.14", "2.13")


def test_unreachable_index_exits_1_and_changes_nothing(unreachable, home):
    done = _cli(home, "compat", "status", "--index-url", unreachable.refused_url, timeout=60)
    assert done.returncode == 1
    assert "The index could not be read" in done.stderr and "Nothing was compared" in done.stderr
    assert freshness.load_status() is None


def test_bad_url_is_bad_input(home):
    done = _cli(home, "compat", "status", "--index-url", "ftp://example.invalid/whl")
    assert done.returncode == 2 and "is not an http(s) URL" in done.stderr


def test_compare_finds_patches_and_new_builds_of_known_releases():
    names = ["torch-2.15.1+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
             "torch-2.14.1+cu134-cp312-cp312-manylinux_2_28_x86_64.whl",
             "torch-2.16.0rc1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",  # a release candidate is no release
             "torch-2.15.1+cpu-cp312-none-macosx_14_0_arm64.whl", "not-a-wheel.tar.gz"]
    result = freshness.compare(freshness.builds_of(names), DATA, url="https://example.invalid/whl")
    assert result.new_patches == (("2.15", "2.15.0", "2.15.1"),)
    assert ("2.14", "cu134", "linux-x86_64") in result.new_builds
    assert not result.new_releases and result.news
    lines = [render(t) for t in freshness.plan(result, DATA)]
    assert any("2.15.1" in t for t in lines)


def test_a_new_cuda_major_without_a_driver_floor_is_not_used():
    new = freshness.NewRelease("2.17", "2.17.0", {"linux-x86_64": ("cu140", "cpu")}, ("3.12",))
    inherited = freshness.inherit(DATA, new)
    assert [(i.variant, i.like is None) for i in inherited] == [("cu140", True), ("cpu", False)]
    status = freshness.Status("2026-12-02T00:00:00+00:00", "https://example.invalid/whl", DATA.version, DATA.date,
                              new_releases=(new,))
    data = freshness.with_discovered(DATA, status)
    assert [v.name for v in data.release("2.17").variants] == ["cpu"]
    rec = recommend(RTX4090, data)
    assert (rec.variant, rec.torch_version) == ("cu132", "2.15.0")  # no CUDA build of 2.17 is usable


def test_discovered_rows_inherit_and_say_so():
    new = freshness.NewRelease("2.16", "2.16.0", {"linux-x86_64": ("cu134", "rocm10.1")}, ())
    status = freshness.Status("2026-12-02T00:00:00+00:00", "https://download.pytorch.org/whl", DATA.version,
                              DATA.date, new_releases=(new,))
    data = freshness.with_discovered(DATA, status)
    rel = data.release("2.16")
    cu = next(v for v in rel.variants if v.name == "cu134")
    src = next(v for v in DATA.release("2.15").variants if v.name == "cu132" and "linux-x86_64" in v.platforms)
    assert (cu.cuda, cu.arch, cu.assumed != "") == ("13.4", src.arch, True)
    rocm = next(v for v in rel.variants if v.name == "rocm10.1")
    assert rocm.rocm == "10.1" and "gfx900" not in rocm.gfx and rocm.therock
    assert (rel.python_min, rel.python_max) == ("3.11", "3.15")  # no Python tags seen: the newest release's
    assert freshness.with_discovered(data, status) is data  # already known: nothing added twice
    note = freshness.newer_note(DATA, status)
    assert note is not None and "torch 2.16.0" in render(note) and "2.16.0" in render(note, "zh_CN")
    assert freshness.newer_note(data, status) is None  # the data (with it) is not older
    gpu = {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100"}
    rec = recommend({**RTX4090, "gpus": [gpu]}, data)
    assert (rec.variant, rec.torch_version, rec.facts_assumed) == ("rocm10.1", "2.16.0", True)
    assert any("assumed" in r for r in rec.texts("zh_CN").reasons + rec.texts().reasons)
