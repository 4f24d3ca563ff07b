"""SessionReport: JSON / Markdown / HTML renderings, partial reports, saving."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.core.base.errors import BadInput, Cancelled, UserError
from app.core.detection.system import GPU, CPUInfo, OSInfo, PythonInfo, SystemReport
from app.core.doctor import Diagnosis, Finding
from app.core.install import InstallResult
from app.core.measure.bench import BenchReport, BenchStatus
from app.core.measure.verify import VerifyReport
from app.core.pipeline.report import SessionReport, load_session_report, safe_stem
from app.core.recommend import Recommendation
from tests.factories import (
    make_bench_report,
    make_bench_result,
    make_check,
    make_install_result,
    make_recommendation,
    make_verify_report,
)


def _system():
    return SystemReport(os=OSInfo(family="linux", version="Debian GNU/Linux 12"), arch="x86_64",
                        python=PythonInfo(version="3.11.7", executable="/usr/bin/python3"),
                        cpu=CPUInfo(model="Xeon", cores=2, threads=2), memory_mb=24000,
                        gpus=[GPU(vendor="nvidia", name="GeForce GTX 1080 Ti", driver_version="550.54",
                                  compute_capability="6.1", memory_mb=11264)])


def _full(**kw):
    return SessionReport(
        system=_system(),
        recommendation=make_recommendation(
            backend="cpu", variant="cpu", torch_version="2.13.0", index_url="https://download.pytorch.org/whl/cpu",
            packages=("torch==2.13.0",), reasons=("No GPU <b>found</b>.",), warnings=("fp16 is slow here",),
            command=("uv", "pip", "install", "torch==2.13.0")),
        install=make_install_result("/tmp/env with space", torch_version="2.13.0+cpu", duration_s=7.25,
                                    log_path=Path("/tmp/log"), packages={"torch": "2.13.0+cpu"}),
        verify=make_verify_report([make_check("cpu matmul", "passed", "max err 1e-6"),
                                   make_check("cuda", "skipped", "no CUDA in this wheel"),
                                   make_check("gloo all_reduce", "passed", "")]),
        bench=make_bench_report([make_bench_result(1024, 171.2, median_s=0.0125),
                                 make_bench_result(2048, 169.0, median_s=0.1017)]),
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


def test_from_dict_rebuilds_the_core_types():
    rep = _full(duration_s=12.5, diagnosis=Diagnosis(python="/tmp/env/bin/python", env_path="/tmp/env", findings=(
        Finding("cpu-wheel-with-gpu", "warning", "A CPU build", "It cannot use the GPU.", "Reinstall.", ("x",)),)),
        error=Cancelled("Stopped.", hint="run again", lines=["a line"]), status="cancelled", exit_code=130,
        notes=("a note",))
    again = SessionReport.from_dict(json.loads(rep.to_json()))
    assert isinstance(again.system, SystemReport) and again.system == rep.system
    assert isinstance(again.recommendation, Recommendation)
    assert again.recommendation.variant == "cpu" and list(again.recommendation.reasons) == ["No GPU <b>found</b>."]
    assert isinstance(again.install, InstallResult) and again.install == rep.install
    assert isinstance(again.verify, VerifyReport) and again.verify.checks == rep.verify.checks
    assert isinstance(again.bench, BenchReport) and again.bench == rep.bench
    assert isinstance(again.diagnosis, Diagnosis) and again.diagnosis.findings == rep.diagnosis.findings
    assert isinstance(again.error, Cancelled) and again.error.hint == "run again" and again.error.lines == ["a line"]
    assert again.notes == ("a note",) and again.exit_code == 130
    assert json.loads(again.to_json()) == json.loads(rep.to_json())  # the same JSON, read back and written again


def test_a_stopped_speed_test_is_in_the_report_marked_partial():
    partial = make_bench_report([make_bench_result(256, 90.0)], status=BenchStatus.CANCELLED)
    rep = replace(_full(), bench=partial)
    data = json.loads(rep.to_json())
    assert data["bench"]["status"] == "cancelled" and data["bench"]["cancelled"] is True
    assert data["bench"]["results"][0]["gflops"] == 90.0
    assert data["summary"]["bench_status"] == "cancelled" and data["summary"]["best_gflops"] == 90.0
    md = rep.to_markdown()
    assert "## Speed test (matrix multiply), partial" in md
    assert "stopped before it finished" in md and "| cpu | fp32 | 256 | 90.0 |" in md
    assert "partial" in rep.to_html()
    assert "partial" not in _full().to_markdown()
    assert json.loads(_full().to_json())["summary"]["bench_status"] == "complete"


def test_failed_verify_or_error_makes_the_outcome_failed():
    rep = replace(_full(), verify=make_verify_report([make_check("matmul", "failed", "mismatch")]))
    assert rep.outcome == "failed"
    rep2 = SessionReport(error=UserError("pip failed", hint="check the index", lines=["ERROR: x"]),
                         exit_code=1, hostname="h")
    d = rep2.to_dict()
    assert d["status"] == "failed" and d["error"]["message"] == "pip failed"
    assert "check the index" in rep2.to_markdown() and "ERROR: x" in rep2.to_html()


@pytest.mark.parametrize("part", ["system", "recommendation", "install", "verify", "bench", "diagnosis"])
def test_every_part_may_be_missing(part):
    rep = replace(_full(), **{part: None})
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
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(BadInput, match="cannot be created"):
        _full().save(blocker / "sub")


def test_safe_stem():
    assert safe_stem("lab-07.example.org") == "lab-07.example.org"
    assert safe_stem("..") == "report"
    assert safe_stem("实验室 1") == "实验室_1"


def test_load_rejects_other_json(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(BadInput, match="not a torch-setup session report"):
        load_session_report(f)
