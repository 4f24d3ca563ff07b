"""The wizard names the compatibility data: its date on the Recommendation page (plus one line when
`compat status` saw newer releases), its version on the Speed test page, in both languages."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QWizard

from app.core.compat import freshness
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.pipeline.session import Session
from app.core.recommend import recommend
from app.gui import i18n
from app.gui.state import WizardState
from tests.factories import make_bench_report, make_bench_result

pytestmark = pytest.mark.gui
DATA = load_compat(bundled=True)
REPORT = SystemReport.from_dict({"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64",
                                  "python": {"version": "3.12.4"}, "gpus": []})


@pytest.fixture
def page_of(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TORCH_SETUP_COMPAT", "bundled")

    wizards = []  # held for the test's lifetime: a collected QWizard deletes its pages

    def build(cls, state):
        wiz = QWizard()
        page = cls(state)
        wiz.setPage(0, page)
        qtbot.addWidget(wiz)
        wizards.append(wiz)
        return page

    return build


def test_recommendation_page_shows_the_data_date_and_newer_releases(page_of):
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=REPORT, recommendation=recommend(REPORT, DATA)))
    page = page_of(RecommendationPage, state)
    page.initializePage()
    assert page.data_version.text() == f"Compatibility data of {DATA.date}"
    new = freshness.NewRelease("2.16", "2.16.0", {"linux-x86_64": ("cpu",)}, ("3.12",))
    freshness.save_status(freshness.Status("2026-12-02T08:00:00+00:00", "https://download.pytorch.org/whl",
                                           DATA.version, DATA.date, new_releases=(new,)))
    page.initializePage()
    lines = page.data_version.text().split("\n")
    assert lines[0] == f"Compatibility data of {DATA.date}"
    assert lines[1].startswith("The PyTorch index listed newer releases than this data on 2026-12-02: torch 2.16.0.")
    i18n.set_language("zh_CN")
    try:
        page.retranslate()
        zh = page.data_version.text().split("\n")
    finally:
        i18n.set_language("en")
    assert zh[0] == f"兼容性数据（{DATA.date}）" and "2.16.0" in zh[1] and "推定" in zh[1]


def test_speed_test_page_names_the_data_version(page_of):
    from app.gui.pages.speedtest import SpeedTestPage

    state = WizardState(session=Session.resume(recommendation=recommend(REPORT, DATA),
                                               bench=make_bench_report([make_bench_result(256, 50.0)])))
    page = page_of(SpeedTestPage, state)
    _head, details = page.summary_text()
    assert f"The build was chosen with compatibility data {DATA.version}." in details.split("\n")
    i18n.set_language("zh_CN")
    try:
        zh = page.summary_text()[1]
    finally:
        i18n.set_language("en")
    assert f"这个版本是依据兼容性数据 {DATA.version} 选定的。" in zh
