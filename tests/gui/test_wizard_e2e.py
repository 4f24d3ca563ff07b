"""The whole wizard, driven offscreen on this machine the way a person would, nothing faked.

detection → recommendation (CPU here) → a new uv venv in a temp dir → a REAL install of the
torch 2.13.0 CPU wheel, pointed at the local wheel folder through the Environment page's own
"Local wheels folder" (find-links) and index settings → verification all green → a (tiny)
speed test whose chart holds data → Done with a saved report holding the torch version.

While the install runs, a 10 ms QTimer records the GUI thread's longest block (the issue's
50 ms limit is measured by benchmarks/gui_responsiveness.py; here only a gross freeze fails).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWizard

from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def _next(qtbot, w, expect: PageId) -> None:
    """Click the button a person would click (Next, or the commit page's own button)."""
    button = w.button(QWizard.WizardButton.CommitButton if w.currentPage().isCommitPage()
                      else QWizard.WizardButton.NextButton)
    assert button.isVisible() and button.isEnabled(), f"Next is not clickable on {PageId(w.currentId()).name}"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert w.currentId() == int(expect), f"expected {expect.name}, on {PageId(w.currentId()).name}"


class _GapMeter:
    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self._last = time.perf_counter()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000.0)
        self._last = now

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def max_block_ms(self) -> float:
        return max((g - 10.0 for g in self.gaps), default=0.0)


def test_whole_wizard_installs_verifies_and_measures(qtbot, tmp_path, local_wheels):
    pytest.importorskip("app.core.detection.detect")
    pytest.importorskip("app.core.recommend")
    from app.gui.wizard import SetupWizard

    i18n.set_language("en")
    # A tiny sweep: the full default is a 20 s CPU sweep; the page's defaults are tested apart.
    state = WizardState(bench_sizes=[64, 128, 256], bench_dtypes=["fp32"], bench_budget_s=20)
    w = SetupWizard(state=state, lang="en")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)

    # 1. Welcome → 2. Your system: detection starts after the first paint.
    _next(qtbot, w, PageId.SYSTEM)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=60000)
    assert state.session.system is not None and state.session.system.schema_version == 1

    # 3. Recommendation: CPU on this machine.
    _next(qtbot, w, PageId.RECOMMENDATION)
    qtbot.waitUntil(w.currentPage().isComplete, timeout=60000)
    rec = state.session.recommendation
    assert rec is not None and rec.backend == "cpu", rec
    # The local wheel folder holds torch 2.13.0: pick it through "Change…" as a user would
    # (the modal dialog is driven from a timer while it runs its own loop).
    rec_page = w.currentPage()
    picked = []

    def pick_version() -> None:
        dlg = QApplication.activeModalWidget()
        if dlg is None:
            QTimer.singleShot(20, pick_version)
            return
        i = dlg.torch.findData("2.13.0")
        assert i >= 0 and dlg.torch.model().item(i).isEnabled(), "torch 2.13.0 is offered for the CPU"
        dlg.torch.setCurrentIndex(i)
        picked.append(dlg.selection())
        qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, pick_version)
    with qtbot.waitSignal(rec_page.recommended, timeout=60000):
        qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    # the dialog sends only what the user changed: the build stays the engine's (the CPU one here)
    assert picked and picked[0].torch == "2.13.0" and picked[0].backend in (None, "cpu")
    rec = state.session.recommendation
    assert rec.backend == "cpu" and rec.torch_version == "2.13.0", rec

    # 4. Environment: a new uv venv in a temp dir; torch from the local wheel folder set in
    #    the page's own "Local wheels folder" field, everything else from PyPI (the PyTorch
    #    index is unreachable from this machine).
    _next(qtbot, w, PageId.ENVIRONMENT)
    env_page = w.currentPage()
    qtbot.mouseClick(env_page.r_uv, Qt.MouseButton.LeftButton)
    assert env_page.r_uv.isChecked()
    env_page.location.clear()
    qtbot.keyClicks(env_page.location, str(tmp_path / "envs"))
    env_page.name.clear()
    qtbot.keyClicks(env_page.name, "torch env")  # a space in the path, on purpose
    env_page.advanced.set_expanded(True)
    qtbot.keyClicks(env_page.find_links, str(local_wheels))
    qtbot.keyClicks(env_page.index_url, "https://pypi.org/simple")
    qtbot.waitUntil(env_page.isComplete, timeout=120000)
    assert "GiB free there" in env_page.target_label.text()  # binary sizes named as the report names them
    env_path = tmp_path / "envs" / "torch env"
    approved = state.session.approved_plan  # the Environment page approved it: the Install page runs it
    assert approved is not None and approved.request.recommendation is rec
    assert Path(approved.request.env_path) == env_path
    assert [str(p) for p in approved.request.sources.find_links] == [str(local_wheels)]
    assert approved.request.installer == "uv"

    # 5. Install (the commit page): a real uv install of the real wheel, off the GUI thread.
    # First the same meter on the idle wizard: what this machine gives the GUI thread right now (a
    # busy machine pauses it too); the install's longest block is judged against that baseline.
    idle = _GapMeter()
    idle.start()
    qtbot.wait(2000)
    idle.timer.stop()
    meter = _GapMeter()
    meter.start()
    _next(qtbot, w, PageId.INSTALL)
    install = w.currentPage()
    assert install.isCommitPage() and install.is_busy()
    assert not w.button(QWizard.WizardButton.BackButton).isEnabled()
    qtbot.waitUntil(lambda: install.status() in ("succeeded", "failed", "cancelled"), timeout=600000)
    meter.timer.stop()
    assert install.status() == "succeeded", install.error_panel.message.text() + "\n" + \
        install.error_panel.lines.toPlainText()
    assert state.session.approved_plan is approved, "the Install page planned nothing of its own"
    res = state.session.install_result
    assert res.torch_version.startswith(rec.torch_version) and res.torch_version.endswith("+cpu"), res.torch_version
    assert Path(res.env_path) == env_path and (env_path / "pyvenv.cfg").is_file()
    assert install.progress.value() == install.progress.maximum()
    # at 100 % nothing stale (issue 28, Polish): the last package's progress line is gone, no time left
    assert not install.package_label.isVisible() and not install.package_label.text(), install.package_label.text()
    assert "left" not in install.time_label.text(), install.time_label.text()
    assert install.log.line_count() > 0
    blocked, baseline = meter.max_block_ms(), idle.max_block_ms()
    print(f"\nGUI thread: longest block during the install {blocked:.1f} ms over {len(meter.gaps)} ticks "
          f"(idle: {baseline:.1f} ms)")
    # a freeze, not a speed limit (benchmarks/gui_responsiveness.py measures against its 50 ms): work done in
    # the GUI thread would block it for seconds; 500 ms, or 10x what the idle wizard got, whichever is more
    limit = max(500.0, 10 * baseline)
    assert blocked < limit, f"the GUI thread froze for {blocked:.0f} ms during the install (idle {baseline:.0f} ms)"

    # 6. Verify: all green; no way back past the commit page.
    _next(qtbot, w, PageId.VERIFY)
    back = w.button(QWizard.WizardButton.BackButton)
    assert not (back.isVisible() and back.isEnabled())
    verify = w.currentPage()
    qtbot.waitUntil(lambda: verify.status() not in ("idle", "running"), timeout=300000)
    vr = state.session.verify_report
    assert verify.status() == "passed" and vr is not None and vr.ok, vr
    assert all(c.status in ("passed", "skipped") for c in vr.checks)
    assert any(c.status == "passed" for c in vr.checks)
    assert verify.checks.topLevelItemCount() == len(vr.checks)
    assert vr.torch_version == res.torch_version

    # 7. Speed test: a real measurement; the chart's series hold points.
    _next(qtbot, w, PageId.SPEEDTEST)
    speed = w.currentPage()
    qtbot.waitUntil(lambda: speed.status() not in ("idle", "running"), timeout=300000)
    assert speed.status() == "done", speed.error_panel.message.text()
    assert state.session.bench_report is not None and state.session.bench_report.results
    series = speed.chart.series()  # the measurement lines (beside them: spread bands, peak lines)
    assert series and all(s.count() > 0 for s in series)
    assert sum(s.count() for s in series) == len(state.session.bench_report.results)
    assert "GFLOP/s" in speed.summary.text()

    # 8. Done: the summary, the activation commands, and a saved report with the torch version.
    _next(qtbot, w, PageId.DONE)
    done = w.currentPage()
    assert done.isFinalPage()
    qtbot.waitUntil(lambda: bool(state.saved_reports), timeout=30000)
    assert str(env_path) in done.summary.text() and res.torch_version in done.summary.text()
    assert "+cpu (cpu)" not in done.summary.text()  # the build said once (issue 28, Polish)
    assert any(str(env_path) in row.edit.text() for _label, row in done.shell_rows)
    out = tmp_path / "my-reports"
    files = done.save_report(out)
    assert {p.suffix for p in files} == {".html", ".md", ".json"}
    for p in files + list(state.saved_reports):
        assert Path(p).is_file()
        assert res.torch_version in Path(p).read_text(encoding="utf-8"), p
    data = json.loads(next(p for p in files if p.suffix == ".json").read_text(encoding="utf-8"))
    assert data["system"]["schema_version"] == 1
    assert data["summary"]["torch"] == res.torch_version
    assert data["summary"]["status"] == "ok"
    assert data["bench"]["results"]
    qtbot.mouseClick(w.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    assert not w.isVisible()
