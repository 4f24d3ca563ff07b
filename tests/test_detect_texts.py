"""Detection's sentences are texts by code (rendered in the language asked for), its notes on
*_VISIBLE_DEVICES read the value the way app.core.base.visible does, and its one concurrency helper
keeps a hung source from delaying detection or keeping the process alive."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.base import visible
from app.core.base.text import Msg, render, render_all
from app.core.detection import envvars
from app.core.detection.detect import explain
from app.core.detection.jobs import Jobs, error_of, result_of
from app.core.detection.system import SystemReport

REPO = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")


def _scenario_report(name: str) -> SystemReport:
    with open(REPO / "tests" / "scenarios" / name, "rb") as fh:
        return SystemReport.from_dict(tomllib.load(fh)["report"])


# ------------------------------------------------------------------ explain(): texts by code

def test_explain_in_chinese():
    """Moved from test_core_i18n: the same explanation in Chinese, values kept; English unchanged."""
    report = _scenario_report("gtx1080ti-driver580.toml")
    report = replace(report, env={**report.env, "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
                                  "CUDA_VISIBLE_DEVICES": ""})
    ex = explain(report)
    english, zh = ex.render("en"), ex.render("zh_CN")
    assert len(zh["found"]) == len(english["found"]) and len(zh["problems"]) == len(english["problems"]) >= 2
    for line in zh["found"] + zh["meaning"] + zh["problems"]:
        assert CJK.search(line), line
    assert any("NVIDIA GeForce GTX 1080 Ti" in line and "计算能力 6.1" in line for line in zh["found"])
    assert any("CUDA_VISIBLE_DEVICES" in p for p in zh["problems"])
    assert not any(CJK.search(line) for lines in english.values() for line in lines)
    assert explain(report) == ex  # the language is a parameter of rendering, not state
    assert ex.to_dict()["problems"] == english["problems"]
    assert "detect.visible_empty" in ex.to_dict()["problem_codes"]


def test_explanation_holds_texts_with_codes():
    ex = explain(_scenario_report("gtx1080ti-driver580.toml"))
    assert all(isinstance(t, Msg) or hasattr(t, "parts") for t in ex.found + ex.meaning)
    assert ex.found[0].code == "detect.system"
    assert render(ex.meaning[0]) == "PyTorch can use your NVIDIA GPU through a CUDA build."
    assert ex.meaning[0].code == "detect.nvidia_one"
    with_cuda = explain(replace(_scenario_report("gtx1080ti-driver580.toml"), nvidia_cuda_version="13.0"))
    assert render(with_cuda.meaning[0]).startswith("PyTorch can use your NVIDIA GPU through a CUDA build; the driver "
                                                   "supports CUDA up to 13.0")


# ------------------------------------------------------------------ visible devices: app.core.base.visible

values = st.lists(st.sampled_from(["0", "1", "7", "abc", "-1", "none", "GPU-<uuid>", " ", "NoDevFiles"]),
                  max_size=4).map(",".join)


@settings(max_examples=150, deadline=None)
@given(value=values, var=st.sampled_from(sorted(visible.VISIBLE_VARS)))
def test_visible_notes_follow_parse_visible(value, var):
    notes = [n for n in envvars.visible_devices_note({var: value}) if isinstance(n, Msg)]
    vis = visible.parse_visible(value)
    expect = {visible.Visibility.EMPTY: "detect.visible_empty", visible.Visibility.DISABLED: "detect.visible_disabled",
              visible.Visibility.NONE_VALID: "detect.visible_none_valid",
              visible.Visibility.PARTIAL: "detect.visible_partial"}.get(vis.state)
    assert [n.code for n in notes] == ([expect] if expect else [])
    for n in notes:
        assert var in render(n) and CJK.search(render(n, "zh_CN"))


def test_visible_notes_named_cases():
    note = render_all(envvars.visible_devices_note({"CUDA_VISIBLE_DEVICES": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,x"}))
    assert note == ["CUDA_VISIBLE_DEVICES=GPU-<uuid>,x: 'x' is not a GPU, so PyTorch (CUDA and ROCm builds) will see "
                    "only the entries before it."]
    assert render_all(envvars.visible_devices_note({"ROCR_VISIBLE_DEVICES": "-1"})) == [
        "ROCR_VISIBLE_DEVICES=-1 hides every GPU from the ROCm runtime."]
    assert envvars.visible_devices_note({"HIP_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "GPU-<uuid>"}) == []


# ------------------------------------------------------------------ the one concurrency helper

def test_jobs_share_one_deadline_and_name_the_late_ones():
    jobs = Jobs("test")
    release = threading.Event()
    quick = jobs.start("quick", lambda: 42)
    hung = jobs.start("hung", lambda: release.wait(60))
    boom = jobs.start("boom", lambda: 1 // 0)
    t0 = time.monotonic()
    late = jobs.wait(time.monotonic() + 0.5)
    assert time.monotonic() - t0 < 5
    assert late == ["hung"]
    assert result_of(quick) == 42 and result_of(hung) is None
    assert result_of(boom) is None and isinstance(error_of(boom), ZeroDivisionError)
    assert all(t.daemon for t in threading.enumerate() if t.name.startswith("test-"))
    release.set()


def test_a_hung_source_never_keeps_the_process_alive():
    code = textwrap.dedent("""
        import threading, time
        from app.core.detection.jobs import Jobs
        jobs = Jobs("hang")
        jobs.start("forever", lambda: threading.Event().wait())
        print(jobs.wait(time.monotonic() + 0.2))
    """)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "['forever']", out.stderr
    assert time.monotonic() - t0 < 30
