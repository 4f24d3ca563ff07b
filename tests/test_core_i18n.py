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
    assert len(templates) > 150  # recommend, install pre-flight, envs
    cat = _load_catalogue()
    missing = [t for t in templates if not (cat.get(t) or "").strip()]
    assert not missing, f"no zh_CN entry for: {missing[:5]} (used at {[templates[m] for m in missing[:5]]})"
    wrong = [(t, cat[t]) for t in templates if _placeholders(t) != _placeholders(cat[t])]
    assert not wrong, f"placeholders differ: {wrong[:3]}"
    for t in templates:  # each translation formats with the template's own names
        names = {n: "X" for n in _placeholders(t)}
        assert cat[t].format(**names)


def _retired() -> set[str]:
    """Templates an area moved to its code-keyed catalogue (resources/i18n/core/<lang>/<area>.json lists them
    under "_retired_legacy"; this legacy catalogue keeps them until every area is migrated)."""
    out: set[str] = set()
    for path in sorted((REPO / "resources" / "i18n" / "core" / "zh_CN").glob("*.json")):
        out |= set(json.loads(path.read_text(encoding="utf-8")).get("_retired_legacy", []))
    return out


def test_catalogue_has_no_stale_entries():
    retired = _retired()
    assert not retired & set(_templates()), "a retired template is still used by tr()"
    stale = sorted(set(_load_catalogue()) - set(_templates()) - retired)
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


# ------------------------------------------------------------------ detect / pre-flight

def test_preflight_in_chinese(tmp_path):
    from app.core.install import InstallRequest, plan, preflight

    blocker = tmp_path / "not-empty"
    blocker.mkdir()
    (blocker / "notes.txt").write_text("mine", encoding="utf-8")
    local = tmp_path / "wheels"
    local.mkdir()
    request = InstallRequest(env_path=blocker, installer="pip", packages=["torch==2.13.0"],
                             find_links=(str(local),), default_index_url=str(local))
    english = {c.name: c for c in preflight(plan(request))}
    i18n.set_language("zh_CN")
    zh = {c.name: c for c in preflight(plan(request))}
    assert zh.keys() == english.keys()
    assert [c.ok for c in zh.values()] == [c.ok for c in english.values()]
    target = zh["target"]
    assert not target.ok and str(blocker) in target.message and CJK.search(target.message)
    assert CJK.search(target.hint)
    assert english["target"].message.startswith(f"{blocker} is a folder with files in it")
    for c in zh.values():
        assert CJK.search(c.message), c
    assert "Python" in zh["python"].message


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
        page._on_progress(ProgressEvent("torch", 10, 10, unit="packages"))
        assert page.package_label.text() == "torch (package 10 of 10)"
        gui_i18n.set_language("zh_CN")
        qtbot.waitUntil(lambda: page.package_label.text() != "torch (package 10 of 10)", timeout=3000)
        text = page.package_label.text()
        assert CJK.search(text) and "torch" in text and "10" in text
        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: page.package_label.text() == "torch (package 10 of 10)", timeout=3000)
    finally:
        gui_i18n.set_language("en")


def test_environment_page_reruns_the_preflight_in_the_new_language(qtbot, tmp_path, local_wheels):
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QWizard

    from app.core.detect import detect
    from app.gui import i18n as gui_i18n
    from app.gui.pages.environment import EnvironmentPage
    from app.gui.state import WizardState

    gui_i18n.set_language("en")
    try:
        report = detect()
        state = WizardState(report=report, recommendation=recommend(report))
        wiz = QWizard()
        page = EnvironmentPage(state)
        wiz.setPage(0, page)
        qtbot.addWidget(wiz)
        taken = tmp_path / "envs" / "taken"
        taken.mkdir(parents=True)
        (taken / "thesis.tex").write_text("do not delete", encoding="utf-8")
        page.initializePage()
        page.index_url.setText("https://pypi.org/simple")
        page.find_links.setText(str(local_wheels))
        with qtbot.waitSignal(page.preflight_done, timeout=30000):
            page.location.setText(str(tmp_path / "envs"))
            page.name.setText("taken")
        qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=30000)
        errors = [m for _, s, m, _ in page.checks if s == "error"]
        assert errors and errors[0].startswith(f"{taken} is a folder with files in it")
        with qtbot.waitSignal(page.preflight_done, timeout=30000):
            gui_i18n.set_language("zh_CN")  # LanguageChange -> retranslate() -> pre-flight again
        qtbot.waitUntil(lambda: not page.is_busy(), timeout=30000)
        zh_errors = [(m, h) for _, s, m, h in page.checks if s == "error"]
        assert zh_errors and str(taken) in zh_errors[0][0]
        assert CJK.search(zh_errors[0][0]) and CJK.search(zh_errors[0][1])
        assert all(CJK.search(m) for _, _, m, _ in page.checks)
        assert (taken / "thesis.tex").read_text(encoding="utf-8") == "do not delete"
    finally:
        gui_i18n.set_language("en")
