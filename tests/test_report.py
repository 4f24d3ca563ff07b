"""SessionReport: JSON / Markdown / HTML renderings, partial reports, saving."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from app.core.errors import BadInput, UserError
from app.core.report import SessionReport, load_session_report, safe_stem
from app.core.system import CPUInfo, GPU, OSInfo, PythonInfo, SystemReport


def _system():
    return SystemReport(os=OSInfo(family="linux", version="Debian GNU/Linux 12"), arch="x86_64",
                        python=PythonInfo(version="3.11.7", executable="/usr/bin/python3"),
                        cpu=CPUInfo(model="Xeon", cores=2, threads=2), memory_mb=24000,
                        gpus=[GPU(vendor="nvidia", name="GeForce GTX 1080 Ti", driver_version="550.54",
                                  compute_capability="6.1", memory_mb=11264)])


def _full(**kw):
    return SessionReport(
        system=_system(),
        recommendation={"backend": "cpu", "variant": "cpu", "torch_version": "2.13.0",
                        "index_url": "https://download.pytorch.org/whl/cpu",
                        "packages": ["torch==2.13.0"], "reasons": ["No GPU <b>found</b>."],
                        "warnings": ["fp16 is slow here"], "command": ["uv", "pip", "install", "torch==2.13.0"]},
        install={"env_path": "/tmp/env with space", "python": "/tmp/env with space/bin/python",
                 "torch_version": "2.13.0+cpu", "duration_s": 7.25, "log_path": "/tmp/log",
                 "packages": {"torch": "2.13.0+cpu"}},
        verify={"ok": True, "checks": [{"name": "cpu matmul", "status": "passed", "detail": "max err 1e-6"},
                                       {"name": "cuda", "status": "skipped", "detail": "no CUDA in this wheel"},
                                       {"name": "gloo all_reduce", "status": "passed", "detail": ""}]},
        bench={"device": "cpu", "results": [
            {"device": "cpu", "dtype": "fp32", "size": 1024, "gflops": 171.2, "median_s": 0.0125},
            {"device": "cpu", "dtype": "fp32", "size": 2048, "gflops": 169.0, "median_s": 0.1017}]},
        hostname="lab-07", **kw)


def test_json_round_trip_and_summary():
    rep = _full(duration_s=12.5)
    data = json.loads(rep.to_json())
    assert data["schema"] == "torch-setup-session/1"
    assert data["system"]["gpus"][0]["compute_capability"] == "6.1"
    s = data["summary"]
    assert s["hostname"] == "lab-07" and s["status"] == "ok"
    assert s["torch"] == "2.13.0+cpu" and s["variant"] == "cpu"
    assert (s["verify_passed"], s["verify_failed"], s["verify_skipped"]) == (2, 0, 1)
    assert s["best_gflops"] == pytest.approx(171.2)
    again = SessionReport.from_dict(data)
    assert again.to_dict()["summary"] == s


def test_failed_verify_or_error_makes_the_outcome_failed():
    rep = _full()
    rep.verify = {"ok": False, "checks": [{"name": "matmul", "status": "failed", "detail": "mismatch"}]}
    assert rep.outcome == "failed"
    rep2 = SessionReport(error=UserError("pip failed", hint="check the index", lines=["ERROR: x"]),
                         exit_code=1, hostname="h")
    d = rep2.to_dict()
    assert d["status"] == "failed" and d["error"]["message"] == "pip failed"
    assert "check the index" in rep2.to_markdown() and "ERROR: x" in rep2.to_html()


@pytest.mark.parametrize("part", ["system", "recommendation", "install", "verify", "bench", "diagnosis"])
def test_every_part_may_be_missing(part):
    rep = _full()
    setattr(rep, part, None)
    for text in (rep.to_json(), rep.to_markdown(), rep.to_html()):
        assert "lab-07" in text
    empty = SessionReport(hostname="x")
    assert json.loads(empty.to_json())["summary"]["torch"] is None
    assert "Summary" in empty.to_markdown()


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.attrs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_escaped_and_has_the_bench_table():
    html_text = _full().to_html()
    p = _Collect()
    p.feed(html_text)
    # No external assets: no script/link/img tags and no src/href attributes.
    assert not {"script", "link", "img", "iframe"} & set(p.tags)
    assert not [a for a, _ in p.attrs if a in ("src", "href")]
    assert "<b>found</b>" not in html_text and "&lt;b&gt;found&lt;/b&gt;" in html_text
    text = " ".join(p.text)
    assert "171.2" in text and "169.0" in text and "GFLOP/s" in text
    assert "GeForce GTX 1080 Ti" in text


def test_markdown_tables():
    md = _full().to_markdown()
    assert "| Device | dtype | Size | GFLOP/s | Time (ms) | of peak |" in md
    assert re.search(r"\| cpu \| fp32 \| 1024 \| 171\.2 \| 12\.50 \|", md)
    assert "| gloo all_reduce | passed |" in md


def test_save_writes_each_format_atomically(tmp_path):
    rep = _full()
    paths = rep.save(tmp_path / "reports")
    assert [p.name for p in paths] == ["lab-07.json", "lab-07.md", "lab-07.html"]
    assert not list((tmp_path / "reports").glob(".*tmp"))
    back = load_session_report(paths[0])
    assert back.summary()["best_gflops"] == pytest.approx(171.2)
    only = rep.save(tmp_path / "r2", formats=("json",), stem="a/b:c")
    assert [p.name for p in only] == ["a_b_c.json"]
    with pytest.raises(BadInput, match="pdf"):
        rep.save(tmp_path, formats=("pdf",))


def test_save_into_an_unwritable_place_is_bad_input(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(BadInput, match="cannot be created"):
        _full().save(blocker / "sub")


def test_safe_stem():
    assert safe_stem("lab-07.example.org") == "lab-07.example.org"
    assert safe_stem("..") == "report"
    assert safe_stem("实验室 1") == "实验室_1"


def test_load_rejects_other_json(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"a": 1}')
    with pytest.raises(BadInput, match="not a torch-setup session report"):
        load_session_report(f)
