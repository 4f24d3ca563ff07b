"""The core's plain-language sentences in Simplified Chinese (app.core.i18n).

The core writes English templates through ``tr("... {name} ...", name=...)``; with the language
set to zh_CN they are looked up in resources/i18n/core_zh_CN.json. What matters:
  * the catalogue covers every template in app/core, with the same placeholders, and nothing stale;
  * English output does not change at all (the CLI and every English test depend on it);
  * in Chinese, the recommendation / pre-flight / detection sentences are Chinese and keep the
    values (GPU names, versions, paths) exactly as they are;
  * the wizard re-makes the engine's sentences when the user switches language.
"""
from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

import pytest

from app.core import i18n
from app.core.recommend import recommend, valid_choices
from app.core.system import SystemReport

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "resources" / "i18n" / "core_zh_CN.json"
SCENARIOS = REPO / "tests" / "scenarios"
CJK = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDER = re.compile(r"(?<!\{)\{(\w*)[^{}]*\}(?!\})")


@pytest.fixture(autouse=True)
def english_after():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def _placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def _templates() -> dict[str, list[str]]:
    """Every tr("literal", ...) template in app/core -> where it is used."""
    found: dict[str, list[str]] = {}
    non_literal = []
    for path in sorted((REPO / "app" / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "tr"):
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            arg = node.args[0] if node.args else None
            options = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
            for opt in options:
                if isinstance(opt, ast.Constant) and isinstance(opt.value, str):
                    found.setdefault(opt.value, []).append(where)
                else:
                    non_literal.append(where)
    assert not non_literal, f"tr() needs a literal template (the catalogue scan must see it): {non_literal}"
    return found


def _load_catalogue() -> dict[str, str]:
    return json.loads(CATALOGUE.read_text(encoding="utf-8"))


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


# ------------------------------------------------------------------ the catalogue

def test_catalogue_covers_every_core_template_with_the_same_placeholders():
    templates = _templates()
    assert len(templates) > 150  # recommend, install pre-flight, detect, envs
    cat = _load_catalogue()
    missing = [t for t in templates if not (cat.get(t) or "").strip()]
    assert not missing, f"no zh_CN entry for: {missing[:5]} (used at {[templates[m] for m in missing[:5]]})"
    wrong = [(t, cat[t]) for t in templates if _placeholders(t) != _placeholders(cat[t])]
    assert not wrong, f"placeholders differ: {wrong[:3]}"
    for t in templates:  # each translation formats with the template's own names
        names = {n: "X" for n in _placeholders(t)}
        assert cat[t].format(**names)


def _migrated() -> set[str]:
    """English templates of msg() calls: areas moved to code-keyed catalogues (resources/i18n/core/zh_CN),
    whose legacy entries stay here until the lead removes this file."""
    found = set()
    for path in sorted((REPO / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "msg" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                found.add(node.args[1].value)
    return found


def test_catalogue_has_no_stale_entries():
    stale = sorted(set(_load_catalogue()) - set(_templates()) - _migrated())
    assert not stale, f"entries no code uses any more: {stale[:5]}"


def test_placeholder_scan_sees_what_format_sees():
    # the test's own tool: a mismatch here would let a broken entry through
    assert _placeholders("a {x} {{literal}} b {y}") == {"x", "y"}
    assert _placeholders("{gpu}（计算能力 {cc}）") == {"gpu", "cc"}


def test_set_language_normalises_and_unknown_templates_pass_through():
    assert i18n.set_language("zh-CN") == "zh_CN" and i18n.get_language() == "zh_CN"
    assert i18n.tr("not in the catalogue {x}", x=1) == "not in the catalogue 1"
    assert i18n.tr("this machine has no NVIDIA GPU") == "这台电脑没有 NVIDIA 显卡"
    assert i18n.set_language("en_US") == "en"
    assert i18n.tr("this machine has no NVIDIA GPU") == "this machine has no NVIDIA GPU"
    assert i18n.set_language(None) == "en"


# ------------------------------------------------------------------ recommend()

def test_recommendation_in_chinese_keeps_the_values_gtx_1080_ti():
    report = _scenario_report("gtx1080ti-driver580.toml")
    english = recommend(report)
    i18n.set_language("zh_CN")
    zh = recommend(report)
    # the decision is the same; only the words change
    assert (zh.backend, zh.variant, zh.torch_version, zh.command) == \
           (english.backend, english.variant, english.torch_version, english.command)
    assert len(zh.reasons) == len(english.reasons)
    for r in zh.reasons:
        assert CJK.search(r), r
    first = zh.reasons[0]
    assert "GTX 1080 Ti" in first and "6.1" in first and "580.82.07" in first and "2.14" in first
    assert "计算能力" in first
    assert CJK.search(zh.summary) and zh.torch_version in zh.summary and "cu126" in zh.summary
    for a in zh.alternatives:
        assert CJK.search(a.why), a
    assert any(a.torch_version and a.torch_version in a.why for a in zh.alternatives if a.valid)
    # and back: byte-identical English
    i18n.set_language("en")
    assert recommend(report).to_dict() == english.to_dict()
    assert "Your GTX 1080 Ti (compute capability 6.1) is not supported by the CUDA 12.8, 12.9 and 13.x builds" \
        in english.reasons[0]


def test_recommendation_in_chinese_no_gpu():
    report = _scenario_report("no-gpu.toml")
    english = recommend(report)
    i18n.set_language("zh_CN")
    zh = recommend(report)
    assert zh.reasons[0] == "没有找到显卡，所以推荐 CPU 版。"
    assert english.reasons[0] == "No graphics card was found, so this is the CPU build."
    for r, e in zip(zh.reasons, english.reasons):
        assert CJK.search(r) and r != e
    assert any(english.torch_version in r for r in zh.reasons)
    i18n.set_language("en")
    assert recommend(report).to_dict() == english.to_dict()


def test_every_scenario_recommends_the_same_build_in_chinese():
    """Every template formats (no KeyError) and the decision never depends on the language."""
    checked = 0
    for name, report in _all_scenario_reports():
        try:
            english = recommend(report)
        except Exception as exc:  # scenarios that expect a refusal
            i18n.set_language("zh_CN")
            with pytest.raises(type(exc)):
                recommend(report)
            i18n.set_language("en")
            continue
        i18n.set_language("zh_CN")
        zh = recommend(report)
        zh_choices = valid_choices(report)
        i18n.set_language("en")
        en_choices = valid_choices(report)
        assert (zh.backend, zh.variant, zh.torch_version, zh.packages, zh.command, zh.env_vars) == \
               (english.backend, english.variant, english.torch_version, english.packages, english.command,
                english.env_vars), name
        assert [(a.backend, a.variant, a.torch_version, a.valid) for a in zh.alternatives] == \
               [(a.backend, a.variant, a.torch_version, a.valid) for a in english.alternatives], name
        assert all(CJK.search(r) for r in zh.reasons), (name, zh.reasons)
        assert all(CJK.search(w) for w in zh.warnings), (name, zh.warnings)
        assert [o["valid"] for o in zh_choices["options"]] == [o["valid"] for o in en_choices["options"]]
        assert recommend(report).to_dict() == english.to_dict(), name
        checked += 1
    assert checked >= 30


# ------------------------------------------------------------------ detect (pre-flight: tests/test_install_checks.py)

def test_explain_in_chinese():
    from app.core.detect import explain

    report = _scenario_report("gtx1080ti-driver580.toml")
    report.env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64"
    report.env["CUDA_VISIBLE_DEVICES"] = ""
    english = explain(report)
    i18n.set_language("zh_CN")
    zh = explain(report)
    assert len(zh.found) == len(english.found) and len(zh.problems) == len(english.problems) >= 2
    for line in zh.found + zh.meaning + zh.problems:
        assert CJK.search(line), line
    assert any("NVIDIA GeForce GTX 1080 Ti" in line and "计算能力 6.1" in line for line in zh.found)
    assert any("CUDA_VISIBLE_DEVICES" in p for p in zh.problems)
    i18n.set_language("en")
    again = explain(report)
    assert (again.found, again.meaning, again.problems) == (english.found, english.meaning, english.problems)


# ------------------------------------------------------------------ the wizard

def test_wizard_shows_the_engine_reasons_in_chinese_and_back(qtbot):
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QLabel

    from app.gui import i18n as gui_i18n
    from app.gui.pages.recommendation import RecommendationPage
    from app.gui.state import WizardState
    from app.gui.widgets import StatusRow

    report = _scenario_report("gtx1080ti-driver580.toml")
    gui_i18n.set_language("en")
    try:
        state = WizardState(report=report)
        page = RecommendationPage(state)
        qtbot.addWidget(page)
        with qtbot.waitSignal(page.recommended, timeout=20000):
            page.initializePage()
        qtbot.waitUntil(page.isComplete, timeout=5000)

        def reason_texts() -> list[str]:
            rows = [page.reasons_box.itemAt(i).widget() for i in range(page.reasons_box.count())]
            return [r.title_label.text() for r in rows if isinstance(r, StatusRow)]

        english = reason_texts()
        assert english and english == state.recommendation.reasons
        assert not any(CJK.search(t) for t in english)
        assert gui_i18n.set_language("zh_CN") == "zh_CN"
        assert i18n.get_language() == "zh_CN"  # the GUI switch sets the core's language too
        qtbot.waitUntil(lambda: bool(reason_texts()) and all(CJK.search(t) for t in reason_texts()), timeout=5000)
        zh = reason_texts()
        assert len(zh) == len(english) and "GTX 1080 Ti" in zh[0] and "580.82.07" in zh[0]
        assert state.recommendation.reasons == zh  # the wizard's state holds the new words too
        assert state.recommendation.variant == "cu126"
        texts = "\n".join(l.text() for l in page.findChildren(QLabel))
        assert "计算能力 6.1" in texts
        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: reason_texts() == english, timeout=5000)
    finally:
        gui_i18n.set_language("en")


def test_install_page_redraws_the_package_line_on_language_change(qtbot):
    pytest.importorskip("PySide6")
    from app.core.events import ProgressEvent
    from app.gui import i18n as gui_i18n
    from app.gui.pages.install import InstallPage
    from app.gui.state import WizardState

    gui_i18n.set_language("en")
    try:
        page = InstallPage(WizardState())
        qtbot.addWidget(page)
        page.on_event(ProgressEvent("torch", 10, 10, unit="packages"))
        assert page.package_label.text() == "torch (package 10 of 10)"
        gui_i18n.set_language("zh_CN")
        qtbot.waitUntil(lambda: page.package_label.text() != "torch (package 10 of 10)", timeout=3000)
        text = page.package_label.text()
        assert CJK.search(text) and "torch" in text and "10" in text
        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: page.package_label.text() == "torch (package 10 of 10)", timeout=3000)
    finally:
        gui_i18n.set_language("en")


# ------------------------------------------------------------------ doctor

def test_doctor_findings_in_chinese():
    from app.core.doctor import analyze
    from app.core.system import GPU
    from app.core.verify import VerifyReport

    pascal = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", driver_version="570.86.10",
                                    compute_capability="6.1")])
    cu128 = VerifyReport.from_dict({"torch_version": "2.7.0+cu128", "python": "/env/bin/python",
                                    "build": {"cuda": "12.8", "local_tag": "cu128",
                                              "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_120"]},
                                    "backends": {"cuda": {"built": True, "available": True}}})
    env = {"CUDA_VISIBLE_DEVICES": ""}
    english = analyze(verify=cu128, report=pascal, env=env)
    i18n.set_language("zh_CN")
    zh = analyze(verify=cu128, report=pascal, env=env)
    assert [(f.code, f.severity, f.evidence) for f in zh] == [(f.code, f.severity, f.evidence) for f in english]
    assert {f.code for f in zh} >= {"arch-missing", "cuda-visible-devices"}
    for f in zh:
        assert CJK.search(f.title) and CJK.search(f.explanation) and CJK.search(f.fix), f
    arch = next(f for f in zh if f.code == "arch-missing")
    assert "NVIDIA GeForce GTX 1080 Ti" in arch.title and "6.1" in arch.title and "sm_61" in arch.fix
    i18n.set_language("en")
    assert [f.to_dict() if hasattr(f, "to_dict") else f for f in analyze(verify=cu128, report=pascal, env=env)] == \
           [f.to_dict() if hasattr(f, "to_dict") else f for f in english]
    assert next(f for f in english if f.code == "arch-missing").title == \
        "NVIDIA GeForce GTX 1080 Ti (compute capability 6.1) is not supported by this PyTorch build"


# ------------------------------------------------------------------ verify

def test_verify_check_titles_and_skip_reasons_in_chinese():
    from app.core.verify import localize_check

    title = "Matrix multiply on the accelerator matches the CPU"
    reason = "no accelerator is usable: this PyTorch (+cpu) is a CPU-only build, so it cannot use a GPU"
    assert localize_check(title, reason) == (title, reason)  # English: untouched
    i18n.set_language("zh_CN")
    zh_title, zh_reason = localize_check(title, reason)
    assert zh_title == "加速器上的矩阵乘法结果与 CPU 一致"
    assert CJK.search(zh_reason) and "(+cpu)" in zh_reason
    # measured details stay as the probe wrote them; unknown titles pass through
    assert localize_check("Matrix multiply on the CPU", "float32 max error 1.2e-06 (4096x4096)") == \
        ("在 CPU 上做矩阵乘法", "float32 max error 1.2e-06 (4096x4096)")
    assert localize_check("Some new check", "") == ("Some new check", "")
