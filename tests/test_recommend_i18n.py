"""The recommendation's sentences are texts with codes; the language is a parameter of rendering.

What matters:
  * ``recommend()`` is a pure function of (report, data, choices): no language setting changes it;
  * rendered in zh_CN, every reason, warning, alternative and the summary is Chinese (no English
    sentence), with the values (GPU names, versions, drivers) exactly as they are;
  * English output is what it always was (the CLI and every English test depend on it);
  * the wizard's Recommendation page re-renders the same Recommendation on a language switch,
    without asking the engine again.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import tomllib

from app.core.base.text import render
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Recommendation, code_of, recommend, valid_choices
from app.gui import i18n

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "tests" / "scenarios"
CJK = re.compile(r"[\u4e00-\u9fff]")
# an English sentence: three English words in a row (names like "GTX 1080 Ti" or "CUDA 12.6" are not)
ENGLISH = re.compile(r"\b[a-z]{2,}\s+[a-z]{2,}\s+[a-z]{2,}\b")


def _scenario_report(name: str) -> SystemReport:
    with open(SCENARIOS / name, "rb") as fh:
        return SystemReport.from_dict(tomllib.load(fh)["report"])


def _all_scenario_reports() -> list[tuple[str, SystemReport]]:
    out = []
    for path in sorted(SCENARIOS.glob("*.toml")):
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        if "report" in data:
            out.append((path.name, SystemReport.from_dict(data["report"])))
    return out


def _chinese(text: str) -> bool:
    """Chinese words, and no English sentence left in it (commands, names and numbers may stay; so do
    the compat data's own notes: on Jetson boards, and why a row's facts are assumed, which are data,
    not the engine's sentences)."""
    data = load_compat()
    bare = text.replace(data.jetson_note, " ")
    for note in {v.assumed for r in data.releases for v in r.variants if v.assumed}:
        bare = bare.replace(note, " ")
    bare = re.sub(r"'[^']*'|--\S+|\S+/\S+|\S+\.\S+", " ", bare)  # quoted commands, options, paths, URLs
    return bool(CJK.search(text)) and not ENGLISH.search(bare)


# ------------------------------------------------------------------ a pure function


def test_the_core_keeps_no_language_state():
    """No module of the core holds a current language: no set_language/get_language, no global
    assignment to a language variable; text.render takes the language as an argument."""
    for path in sorted((REPO / "app" / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                assert node.name not in ("set_language", "get_language"), f"{path}: {node.name}"
            if isinstance(node, ast.Global):
                assert not any("lang" in n for n in node.names), f"{path}: global {node.names}"


@pytest.mark.parametrize("name", ["gtx1080ti-driver580.toml", "no-gpu.toml"])
def test_recommend_is_the_same_whatever_the_language_setting(name):
    report = _scenario_report(name)
    english, en_choices = recommend(report), valid_choices(report)
    for lang in ("zh_CN", "en", "zh_CN"):
        i18n.set_language(lang)  # the wizard's language: the engine does not read it
        again = recommend(report)
        assert again == english
        assert again.to_dict() == english.to_dict() and again.texts("en") == english.texts("en")
        assert valid_choices(report) == en_choices and valid_choices(report).to_dict() == en_choices.to_dict()
    i18n.set_language("en")


def test_reasons_and_warnings_carry_codes():
    rec = recommend(_scenario_report("gtx1080ti-driver580.toml"))
    assert rec.reason_codes[0] == "rec.cuda_left_out" and rec.reason_codes[-1] == "rec.decided_with"
    assert all(c.startswith("rec.") for c in rec.reason_codes + rec.warning_codes)
    assert {a.code for a in rec.alternatives} >= {"rec.works_older_torch", "rec.no_kernels"}
    d = rec.to_dict()
    assert d["reason_codes"] == list(rec.reason_codes) and [a["code"] for a in d["alternatives"]] == \
        [a.code for a in rec.alternatives]
    assert code_of("plain words") == "text.plain"


# ------------------------------------------------------------------ rendered in Chinese


def test_recommendation_in_chinese_keeps_the_values_gtx_1080_ti():
    report = _scenario_report("gtx1080ti-driver580.toml")
    rec = recommend(report)
    en, zh = rec.texts("en"), rec.texts("zh_CN")
    # the decision is one; only the words change
    assert len(zh.reasons) == len(en.reasons) and len(zh.alternatives) == len(rec.alternatives)
    for r in zh.reasons:
        assert _chinese(r), r
    first = zh.reasons[0]
    assert "GTX 1080 Ti" in first and "6.1" in first and "580.82.07" in first and "2.14" in first
    assert "计算能力" in first
    assert CJK.search(zh.summary) and rec.torch_version in zh.summary and "cu126" in zh.summary
    for why in zh.alternatives:
        assert _chinese(why), why
    assert any(a.torch_version and a.torch_version in why for a, why in zip(rec.alternatives, zh.alternatives,
                                                                          strict=True) if a.valid)
    # and English: byte-identical to what the engine always said
    assert "Your GTX 1080 Ti (compute capability 6.1) is not supported by the CUDA 12.8, 12.9 and 13.x builds" \
        in en.reasons[0]
    assert rec.to_dict()["reasons"] == list(en.reasons)


def test_recommendation_in_chinese_no_gpu():
    rec = recommend(_scenario_report("no-gpu.toml"))
    en, zh = rec.texts("en"), rec.texts("zh_CN")
    assert zh.reasons[0] == "没有找到显卡，所以推荐 CPU 版。"
    assert en.reasons[0] == "No graphics card was found, so this is the CPU build."
    for r, e in zip(zh.reasons, en.reasons, strict=True):
        assert _chinese(r) and r != e
    assert any(rec.torch_version in r for r in zh.reasons)


SCENARIO_REPORTS = dict(_all_scenario_reports())


@pytest.mark.parametrize("name", sorted(SCENARIO_REPORTS))
def test_every_scenario_renders_in_chinese(name):
    """Every template formats in both languages, and no English sentence is left in Chinese: each
    scenario's machine (with the default choices, which every one of them can be given) on its own."""
    assert len(SCENARIO_REPORTS) >= 30  # the machines this covers
    report = SCENARIO_REPORTS[name]
    rec = recommend(report)
    zh = rec.texts("zh_CN")
    assert all(_chinese(r) for r in zh.reasons), (name, zh.reasons)
    assert all(_chinese(w) for w in zh.warnings), (name, zh.warnings)
    assert all(_chinese(w) for w in zh.alternatives), (name, zh.alternatives)
    assert all(CJK.search(u) for u in zh.unserved), (name, zh.unserved)
    assert CJK.search(zh.summary), name
    choices = valid_choices(report)
    for o in choices.options + choices.backends + choices.variants + choices.torch_versions:
        assert o.valid or CJK.search(render(o.why, "zh_CN")), (name, o)


def test_json_is_english_whatever_the_language():
    rec = recommend(_scenario_report("gtx1080ti-driver580.toml"))
    i18n.set_language("zh_CN")
    d = rec.to_dict()
    i18n.set_language("en")
    assert d["reasons"] == list(rec.texts("en").reasons) and not any(CJK.search(r) for r in d["reasons"])
    assert Recommendation.from_dict(d).texts("zh_CN").reasons == rec.texts("en").reasons  # words read back


# ------------------------------------------------------------------ the wizard


def test_wizard_rerenders_the_reasons_on_a_language_switch_without_asking_the_engine(qtbot, monkeypatch):
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QLabel

    import app.core.recommend as rec_pkg
    from app.core.pipeline.session import Session
    from app.gui import i18n as gui_i18n
    from app.gui.pages.recommendation import RecommendationPage
    from app.gui.state import WizardState
    from app.gui.widgets import StatusRow

    report = _scenario_report("gtx1080ti-driver580.toml")
    gui_i18n.set_language("en")
    try:
        state = WizardState(session=Session.resume(system=report))
        page = RecommendationPage(state)
        qtbot.addWidget(page)
        with qtbot.waitSignal(page.recommended, timeout=20000):
            page.initializePage()
        qtbot.waitUntil(page.isComplete, timeout=5000)
        rec = state.session.recommendation

        def reason_texts() -> list[str]:
            rows = [page.reasons_box.itemAt(i).widget() for i in range(page.reasons_box.count())]
            return [r.title_label.text() for r in rows if isinstance(r, StatusRow)]

        english = reason_texts()
        assert english and english == list(rec.texts("en").reasons)
        assert not any(CJK.search(t) for t in english)

        calls: list[object] = []

        def no_engine(*args, **kwargs):
            calls.append(args)
            raise AssertionError("a language switch must not run the engine again")

        monkeypatch.setattr(rec_pkg, "recommend", no_engine)
        monkeypatch.setattr("app.core.recommend.engine.recommend", no_engine)
        assert gui_i18n.set_language("zh_CN") == "zh_CN"
        qtbot.waitUntil(lambda: bool(reason_texts()) and all(CJK.search(t) for t in reason_texts()), timeout=5000)
        zh = reason_texts()
        assert len(zh) == len(english) and "GTX 1080 Ti" in zh[0] and "580.82.07" in zh[0]
        assert zh == list(rec.texts("zh_CN").reasons)
        assert state.session.recommendation is rec and rec.variant == "cu126"  # the same answer, only re-drawn
        texts = "\n".join(label.text() for label in page.findChildren(QLabel))
        assert "计算能力 6.1" in texts
        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: reason_texts() == english, timeout=5000)
        assert calls == [] and state.session.recommendation is rec
    finally:
        gui_i18n.set_language("en")


def test_change_dialog_gives_its_reasons_in_the_wizard_language(qtbot):
    pytest.importorskip("PySide6")
    from app.gui import i18n as gui_i18n
    from app.gui.pages.recommendation import options_for

    report = _scenario_report("gtx1080ti-driver580.toml")
    rec = recommend(report)
    en = options_for(report, rec, "en")
    zh = options_for(report, rec, "zh_CN")
    assert [(o["backend"], o["variant"], o["torch_version"], o["valid"]) for o in en] == \
        [(o["backend"], o["variant"], o["torch_version"], o["valid"]) for o in zh]
    greyed = [o for o in zh if not o["valid"]]
    assert greyed and all(CJK.search(o["why"]) for o in greyed)
    assert not any(CJK.search(o["why"]) for o in en)
    assert gui_i18n.current_language() == "en"
