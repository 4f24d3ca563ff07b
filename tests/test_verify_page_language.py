"""The wizard's Verify page renders the checks and the doctor's findings in the wizard's language,
and again when the user switches it (texts by code; no translation of English output)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from app.core.base.text import render
from app.core.detection.system import GPU, SystemReport
from app.core.doctor import Diagnosis, analyze
from app.core.measure.verify import VerifyReport

RECORDED = Path(__file__).parent / "fixtures" / "verify-probe" / "result-torch2.13.0-cpu-linux.json"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _rows(page) -> list[tuple[str, str]]:
    return [(page.checks.topLevelItem(i).text(0), page.checks.topLevelItem(i).text(1))
            for i in range(page.checks.topLevelItemCount())]


def test_checks_and_findings_follow_the_language_switch(qtbot):
    from app.core.pipeline.session import Session
    from app.gui import i18n as gui_i18n
    from app.gui.pages.verify import VerifyPage
    from app.gui.state import WizardState

    report = VerifyReport.from_dict(json.loads(RECORDED.read_text(encoding="utf-8")))
    gpu = SystemReport(gpus=[GPU(vendor="nvidia", name="NVIDIA GeForce RTX 3090")])
    diagnosis = Diagnosis("/env/bin/python", "/env", tuple(analyze(verify=report, report=gpu)))
    gui_i18n.set_language("en")
    try:
        # The session holds what its verify and diagnose steps returned; the page is told they ended.
        page = VerifyPage(WizardState(session=Session.resume(system=gpu, verify=report, diagnosis=diagnosis)))
        qtbot.addWidget(page)
        page._on_report(report)
        english = _rows(page)
        assert english == [(render(c.title), render(c.detail)) for c in report.checks]
        assert not any(CJK.search(t + d) for t, d in english)
        page._on_diagnosis(diagnosis)
        assert "CPU-only PyTorch (+cpu)" in page.diagnosis.toPlainText()

        gui_i18n.set_language("zh_CN")  # LanguageChange -> retranslate(): the same checks, re-rendered
        qtbot.waitUntil(lambda: all(CJK.search(t) for t, _ in _rows(page)), timeout=5000)
        zh = _rows(page)
        assert zh == [(render(c.title, "zh_CN"), render(c.detail, "zh_CN")) for c in report.checks]
        assert ("在 CPU 上做矩阵乘法", render(report.check("cpu_matmul").detail, "zh_CN")) in zh
        assert CJK.search(page.diagnosis.toPlainText()) and "RTX 3090" in page.diagnosis.toPlainText()

        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: _rows(page) == english, timeout=5000)
    finally:
        gui_i18n.set_language("en")
