"""The core's plain-language sentences in Simplified Chinese (app.core.i18n).

The core writes English templates through ``tr("... {name} ...", name=...)``; with the language
set to zh_CN they are looked up in resources/i18n/core_zh_CN.json. What matters:
  * the catalogue covers every template in app/core, with the same placeholders, and nothing stale;
  * English output does not change at all (the CLI and every English test depend on it);
  * in Chinese, the pre-flight / detection sentences are Chinese and keep the values (GPU names,
    versions, paths) exactly as they are.
The recommendation's sentences moved to texts by code (app.core.text): tests/test_recommend_i18n.py.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import tomllib

from app.core import i18n
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


# ------------------------------------------------------------------ the catalogue

def test_catalogue_covers_every_core_template_with_the_same_placeholders():
    templates = _templates()
    assert len(templates) > 0  # shrinks as areas move to msg(); the file goes when it reaches 0
    cat = _load_catalogue()
    missing = [t for t in templates if not (cat.get(t) or "").strip()]
    assert not missing, f"no zh_CN entry for: {missing[:5]} (used at {[templates[m] for m in missing[:5]]})"
    wrong = [(t, cat[t]) for t in templates if _placeholders(t) != _placeholders(cat[t])]
    assert not wrong, f"placeholders differ: {wrong[:3]}"
    for t in templates:  # each translation formats with the template's own names
        names = {n: "X" for n in _placeholders(t)}
        assert cat[t].format(**names)


# Legacy entries no sentence uses any more because their area moved to the code-keyed catalogues
# (resources/i18n/core/zh_CN/<area>.json) and dropped or reworded them; the legacy file goes once
# every area has moved.
RETIRED = {
    "Windows on Arm",  # recommend: a platform name, the same in both languages (no text)
    "{problem} (also in older releases down to torch {torch})",  # recommend: rec.*_on sentences
    "A plain 'pip install torch' on Windows gives the CPU-only build; the assistant installs the {build} build "
    "from its own index instead.",  # recommend: never reached (the PyPI default sentences cover it)
}


def _migrated(legacy: dict[str, str]) -> set[str]:
    """Legacy entries whose sentence now lives in a code-keyed catalogue (same English or same Chinese)."""
    from tests.test_text_catalogue import load_catalogue, scan_codes

    codes, _ = scan_codes()
    english = {re.sub(r"\{(\w+):cap\}", r"{\1}", en) for en in codes.values()}
    chinese = set(load_catalogue("zh_CN").values())
    return {k for k, v in legacy.items() if k in english or v in chinese} | RETIRED


def test_catalogue_has_no_stale_entries():
    legacy = _load_catalogue()
    stale = sorted(set(legacy) - set(_templates()) - _migrated(legacy))
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


# ------------------------------------------------------------------ detect / pre-flight

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
