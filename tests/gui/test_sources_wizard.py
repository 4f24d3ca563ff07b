"""The wizard with the PyTorch index unreachable and only the "Local wheels folder" filled (issue 12).

Nothing faked: detection, a recommendation (torch 2.15.0 for this CPU machine), then on the
Environment page only the local wheels field gets the folder (torch 2.13.0+cpu and everything
it needs). The page makes the recommendation fit what the folder holds, says why, and the
install runs with no index at all; back on the Recommendation page the new build and its
reason are shown; the Done page says why that version, in both languages.
"""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def _click(qtbot, w, which) -> None:
    button = w.button(which)
    assert button.isVisible() and button.isEnabled(), f"{which} is not clickable on {PageId(w.currentId()).name}"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _next(qtbot, w, expect: PageId) -> None:
    _click(qtbot, w, QWizard.WizardButton.CommitButton if w.currentPage().isCommitPage()
           else QWizard.WizardButton.NextButton)
    assert w.currentId() == int(expect), f"expected {expect.name}, on {PageId(w.currentId()).name}"


def test_only_the_local_wheels_field_installs_the_newest_build_the_folder_holds(
        qtbot, tmp_path, torch_wheelhouse, unreachable, monkeypatch):
    from app.gui.wizard import SetupWizard

    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", unreachable.refused_url.replace("simple", "whl"))
    i18n.set_language("en")
    state = WizardState(skip_bench=True)
    w = SetupWizard(state=state, lang="en")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    _next(qtbot, w, PageId.SYSTEM)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=60000)
    _next(qtbot, w, PageId.RECOMMENDATION)
    rec_page = w.currentPage()
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    assert state.session.recommendation.torch_version == "2.15.0"  # no source named yet

    # Environment: only the local wheels field (and where the env goes)
    _next(qtbot, w, PageId.ENVIRONMENT)
    env_page = w.currentPage()
    env_page.location.setText(str(tmp_path / "envs"))
    env_page.advanced.set_expanded(True)
    qtbot.keyClicks(env_page.find_links, str(torch_wheelhouse.folder))
    qtbot.waitUntil(env_page.isComplete, timeout=120000)
    rec = state.session.recommendation
    assert rec.torch_version == "2.13.0" and rec.packages == ("torch==2.13.0+cpu",)
    why = (f"torch 2.13.0 (CPU), the newest build available in your folder {torch_wheelhouse.folder}; "
           "2.15.0 exists but is not reachable.")
    assert env_page.sources_note.isVisible() and why in env_page.sources_note.text()
    # the Python list and its note speak of the build the folder gave, not of the one before it
    assert "2.15" not in env_page.python_note.text(), env_page.python_note.text()
    plan = state.session.approved_plan
    assert plan is not None and plan.index.offline and plan.recommendation is rec
    warn = [(n, m) for n, s, m, _h in env_page.checks if s == "warning"]
    assert any("Nothing is needed from it" in m for _n, m in warn), env_page.checks

    # Back: the Recommendation page shows the build the folder holds, and why
    _click(qtbot, w, QWizard.WizardButton.BackButton)
    assert w.currentId() == int(PageId.RECOMMENDATION)
    assert "2.13.0" in rec_page.headline.text() and "newest build your sources hold" in rec_page.summary.text()
    from PySide6.QtWidgets import QLabel

    assert why in [lb.text() for lb in rec_page.findChildren(QLabel)]  # the reason among the "why" rows
    _next(qtbot, w, PageId.ENVIRONMENT)
    qtbot.waitUntil(env_page.isComplete, timeout=120000)
    assert state.session.recommendation is rec  # the folder still holds it: nothing made anew

    _next(qtbot, w, PageId.INSTALL)
    install = w.currentPage()
    qtbot.waitUntil(lambda: install.status() in ("succeeded", "failed", "cancelled"), timeout=600000)
    assert install.status() == "succeeded", install.error_panel.message.text()
    assert state.session.install_result.torch_version == "2.13.0+cpu"
    _next(qtbot, w, PageId.VERIFY)
    verify = w.currentPage()
    qtbot.waitUntil(lambda: verify.status() not in ("idle", "running"), timeout=300000)
    assert verify.status() == "passed"
    _next(qtbot, w, PageId.SPEEDTEST)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=60000)
    _next(qtbot, w, PageId.DONE)
    done = w.currentPage()
    assert why in done.summary.text() and "2.13.0+cpu" in done.summary.text()
    w.welcome.select_language("zh_CN")
    qtbot.waitUntil(lambda: "无法访问" in done.summary.text(), timeout=5000)
    assert str(torch_wheelhouse.folder) in done.summary.text()
    w.welcome.select_language("en")
    assert Path(state.session.install_result.env_path).is_dir()


def test_verified_mirrors_are_offered_first_as_a_choice_under_a_chinese_locale(qtbot, monkeypatch):
    """The mirror check's verdicts (real Route values) reorder the choice, verified first; nothing
    is chosen for the user, and the choice goes into the request."""
    from app.core.detection.system import SystemReport
    from app.core.pipeline.session import Session
    from app.core.recommend import recommend
    from app.core.sources.routing import RemoteFile, Route, Verdict
    from app.core.sources.settings import Source
    from app.gui.pages.environment import EnvironmentPage

    report = SystemReport.from_dict({"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64",
                                     "python": {"version": "3.11.7"}, "gpus": []})
    rec = recommend(report)
    state = WizardState(session=Session.resume(system=report, recommendation=rec))
    monkeypatch.setattr(EnvironmentPage, "run_mirror_check", lambda self: None)  # no real mirror is asked
    i18n.set_language("zh_CN")
    try:
        wiz = QWizard()
        page = EnvironmentPage(state)
        wiz.setPage(0, page)
        qtbot.addWidget(wiz)
        page.initializePage()
        assert page.mirror_choice.currentData() == "auto"
        f = RemoteFile("torch==2.15.0+cpu", "torch-2.15.0+cpu-x.whl", "https://m/x.whl", "ab" * 32)
        route = Route(rec.index_url, ("torch==2.15.0+cpu",), "3.11", (
            Verdict(Source("origin", "PyTorch", "origin", rec.index_url), True, files=(f,), speed_bps=1e6),
            Verdict(Source("nju-torch", "NJU", "mirror", "https://nju/{variant}/"), False, "answers 403 Forbidden"),
        ))
        page._on_mirrors_checked(route)
        first = page.mirror_choice.itemData(0)
        assert first != "auto" and first in page._mirror_ids  # the mirrors lead the list under zh_CN
        assert page.mirror_choice.currentData() == "auto"  # a choice, never made silently
        assert "✗" in page.mirror_results.text() and "403" in page.mirror_results.text()
        assert page._mirror_ids == ["nju-torch"]  # the catalogue's mirrors of the cpu index
        page.mirror_choice.setCurrentIndex(page.mirror_choice.findData("nju-torch"))
        assert page.build_request().sources.mirrors == ("nju-torch", "origin")
        page.cancel_and_wait(10)
    finally:
        i18n.set_language("en")
