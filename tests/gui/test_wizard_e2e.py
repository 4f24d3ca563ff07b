"""The whole wizard, driven offscreen on this machine, with nothing faked.

detection → recommendation (CPU here) → a new uv venv in a temp dir → a real install of the
torch CPU wheel, pointed at the local wheel folder through the Environment page's own
"Local wheels folder" setting → verification all green → a (tiny) speed test whose chart
holds data → Done with a saved report.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QWizard  # noqa: E402

from app.gui import i18n  # noqa: E402
from app.gui.pages import PageId  # noqa: E402
from app.gui.state import WizardState  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def _next(qtbot, w, expect: PageId) -> None:
    button = w.button(QWizard.WizardButton.CommitButton if w.currentPage().isCommitPage()
                      else QWizard.WizardButton.NextButton)
    assert button.isEnabled(), f"Next is disabled on {PageId(w.currentId()).name}"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert w.currentId() == int(expect)


def test_whole_wizard_installs_verifies_and_measures(qtbot, tmp_path, local_wheels):
    pytest.importorskip("app.core.detect")
    pytest.importorskip("app.core.recommend")
    from app.gui.wizard import SetupWizard

    i18n.set_language("en")
    state = WizardState(bench_sizes=[64, 128], bench_dtypes=["float32"], bench_budget_s=20)
    w = SetupWizard(state=state, lang="en")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)

    # 1. Welcome → 2. Your system: detection started after the first paint.
    _next(qtbot, w, PageId.SYSTEM)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=30000)
    assert state.report is not None and state.report.schema_version == 1

    # 3. Recommendation: CPU on this machine.
    _next(qtbot, w, PageId.RECOMMENDATION)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=30000)
    rec = state.recommendation
    assert rec.backend == "cpu", rec
    assert rec.torch_version in w.currentPage().headline.text()

    # 4. Environment: a new uv venv in a temp dir, torch from the local wheels folder.
    _next(qtbot, w, PageId.ENVIRONMENT)
    env_page = w.currentPage()
    assert env_page.r_uv.isChecked()
    env_page.location.setText(str(tmp_path / "envs"))
    env_page.name.setText("torch env")  # a space in the path, on purpose
    env_page.advanced.set_expanded(True)
    env_page.find_links.setText(str(local_wheels))
    # The PyTorch index is unreachable here: everything else comes from PyPI.
    env_page.index_url.setText("https://pypi.org/simple")
    qtbot.waitUntil(env_page.isComplete, timeout=60000)
    env_path = tmp_path / "envs" / "torch env"
    assert Path(state.install_request.env_path) == env_path
    assert env_page.buttonText(QWizard.WizardButton.NextButton) == "&Install"

    # 5. Install (the commit page): real bytes, real uv.
    _next(qtbot, w, PageId.INSTALL)
    install = w.currentPage()
    assert install.isCommitPage()
    qtbot.waitUntil(lambda: install.status() in ("succeeded", "failed", "cancelled"), timeout=600000)
    assert install.status() == "succeeded", install.status()
    assert state.install_result is not None and state.install_result.torch_version.startswith(rec.torch_version)
    assert (env_path / "pyvenv.cfg").is_file()

    # 6. Verify: all green. Back is gone after the commit page.
    _next(qtbot, w, PageId.VERIFY)
    assert not w.button(QWizard.WizardButton.BackButton).isVisible() or \
        not w.button(QWizard.WizardButton.BackButton).isEnabled()
    verify = w.currentPage()
    qtbot.waitUntil(verify.isComplete, timeout=300000)
    vr = state.verify_report
    assert vr is not None and vr.ok, vr
    assert all(c.status in ("passed", "skipped") for c in vr.checks)

    # 7. Speed test: the chart holds data.
    _next(qtbot, w, PageId.SPEEDTEST)
    speed = w.currentPage()
    qtbot.waitUntil(speed.isComplete, timeout=300000)
    assert state.bench_report is not None
    assert speed.chart is not None and speed.chart.point_count() > 0

    # 8. Done: a report was saved.
    _next(qtbot, w, PageId.DONE)
    done = w.currentPage()
    qtbot.waitUntil(lambda: bool(state.saved_reports), timeout=30000)
    js = [p for p in state.saved_reports if Path(p).suffix == ".json"]
    assert js, state.saved_reports
    data = json.loads(Path(js[0]).read_text(encoding="utf-8"))
    assert data["system"]["schema_version"] == 1
    assert done.isFinalPage()
