"""The wizard's last four pages, each in a minimal QWizard over a prefilled WizardState.

Real parts: a real uv venv with the torch CPU wheel from the local wheel folder, the real
verify and bench probes, real installs (and a real cancel of one), Qt offscreen.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("PySide6")
psutil = pytest.importorskip("psutil")

from PySide6.QtWidgets import QApplication, QWizard  # noqa: E402

from app.core.base.events import LogEvent, PhaseEvent, ProgressEvent, StepEvent  # noqa: E402
from app.core.base.text import render  # noqa: E402
from app.core.measure.bench import BenchStatus  # noqa: E402
from app.core.pipeline.session import Session  # noqa: E402
from app.gui.state import WizardState  # noqa: E402
from tests.factories import (  # noqa: E402
    make_bench_report,
    make_bench_result,
    make_check,
    make_install_result,
    make_recommendation,
    make_speedup,
    make_verify_report,
)
from tests.helpers import venv_python  # noqa: E402

pytestmark = pytest.mark.gui

def _uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def _clean_env() -> dict:
    env = dict(os.environ)
    for k in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"):
        env.pop(k, None)
    return env


@pytest.fixture
def wizard_with(qtbot):
    """A QWizard holding only the given page classes over one WizardState."""

    def build(*classes, state: WizardState | None = None):
        state = state or WizardState()
        wiz = QWizard()
        pages = []
        for i, cls in enumerate(classes):
            page = cls(state)
            wiz.setPage(i, page)
            pages.append(page)
        qtbot.addWidget(wiz)
        wiz.resize(820, 640)
        return wiz, state, pages

    return build


# ------------------------------------------------------------------------ the Qt binding
_EMIT_LOOP = """
import sys
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
class O(QObject):
    s = Signal(object)
o = O()
o.s.connect(lambda e: None)
before = sys.getrefcount(True)
for i in range(5000):
    o.s.emit(i)
print(sys.getrefcount(True) - before)
"""


def test_signal_emit_keeps_refcounts():
    """Every core event reaches the GUI through Signal.emit(); PySide6 6.12.0 dropped a
    reference to True per emit and aborted the process after ~600 events (a real install
    log). Run in a child so a bad binding fails this test instead of killing the session."""
    res = subprocess.run([sys.executable, "-c", _EMIT_LOOP], capture_output=True, text=True, encoding="utf-8", timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr[-800:]
    assert abs(int(res.stdout.strip().splitlines()[-1])) < 50


# ------------------------------------------------------------------------------- log view
def test_logview_batches_lines_and_bounds_the_widget(qtbot):
    from app.gui.logview import LogView

    view = LogView(max_lines=500)
    qtbot.addWidget(view)
    for i in range(20000):
        view.append(f"line {i}")
    # Appending is a queue: nothing reached the document yet.
    assert view.text.document().blockCount() <= 1
    assert view.pending() == 20000
    qtbot.waitUntil(lambda: view.pending() == 0, timeout=10000)
    assert view.line_count() == 20000
    doc = view.text.document()
    assert doc.blockCount() <= 500
    assert doc.lastBlock().text() == "line 19999"


def test_logview_toggle_shows_and_hides(qtbot):
    from app.gui.logview import LogView

    view = LogView()
    qtbot.addWidget(view)
    view.show()
    assert view.text.isHidden()
    view.toggle.click()
    assert view.text.isVisible()
    assert view.toggle.text() == "Hide details"
    view.toggle.click()
    assert view.text.isHidden()


# ---------------------------------------------------------------------------------- chart
def test_chart_draws_one_series_per_device_and_dtype(qtbot):
    from app.gui.charts import BenchChart, drawable

    report = make_bench_report([
        make_bench_result(256, 90.0), make_bench_result(512, 120.0), make_bench_result(256, 30.0, dtype="bf16"),
        make_bench_result(1024, 0.0, dtype="bf16"),  # a failed point: not drawn
    ])
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.set_report(report)
    names = sorted(s.name() for s in chart.series())
    assert names == ["Test CPU · bf16", "Test CPU · fp32"]  # the device by its real name
    assert chart.point_count() == 3
    assert len([r for r in report.all_results() if drawable(r)]) == 3
    fp32 = next(s for s in chart.series() if s.name().endswith("fp32"))
    assert [(p.x(), p.y()) for p in fp32.points()] == [(256.0, 90.0), (512.0, 120.0)]
    assert chart.x_axis.base() == 2.0
    assert chart.y_axis.max() >= 120.0
    # a log axis: the slow dtype is drawn where it can be seen, not as a line at zero
    assert chart.y_axis.base() == 10.0 and chart.y_axis.min() <= 30.0 < chart.y_axis.max()


def test_chart_draws_spread_bands_peak_lines_and_the_speedup_chart(qtbot):
    """Each line's spread (from its runs' times) as a band; the estimated peak of each dtype as a
    dashed line (dtypes bounded by the same peak share one); on an accelerator the speed-up over
    the CPU is its own chart."""
    from app.core.measure.peak import cpu_peak
    from app.gui.charts import BenchChart

    def timed(n, gflops, dtype="fp32", spread=0.1):
        t = 2 * n ** 3 / gflops / 1e9
        return make_bench_result(n, gflops, dtype=dtype, times_s=(t * (1 - spread), t, t, t * (1 + spread)))

    peak = cpu_peak(cores=2, mhz=2500, flags=["avx2", "fma"])  # no native bf16/fp16: all bounded by fp32
    report = make_bench_report([timed(256, 90.0), timed(512, 120.0), timed(256, 3.0, dtype="bf16")], peak=peak,
                               cpu_name="Some CPU")
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.set_report(report)
    assert chart.band_count() == 2
    assert chart.peak_lines() == {"fp32, bf16": pytest.approx(peak.gflops["fp32"])}
    assert chart.y_axis.max() >= peak.gflops["fp32"] and chart.y_axis.min() <= 3.0
    assert "Test CPU" in chart.chart.title()
    assert chart.speedups() == [] and not chart.speedup_view.isVisibleTo(chart)
    gpu = make_bench_report([make_bench_result(2048, 45000.0, device="cuda")], device="cuda",
                            device_name="NVIDIA H200", cpu_results=[make_bench_result(2048, 180.0)],
                            speedup=[make_speedup(2048, "fp32", 180.0, 45000.0)])
    chart.set_report(gpu)
    assert chart.speedups() == [("fp32", 2048, 250.0)] and chart.speedup_view.isVisibleTo(chart)
    assert sorted(s.name() for s in chart.series()) == ["NVIDIA H200 · fp32", "cpu · fp32"]


# ------------------------------------------------------------------------------- verify
@pytest.mark.slow
def test_verify_page_fills_checklist_live_and_passes(qtbot, wizard_with, torch_env):
    from app.gui.pages.verify import VerifyPage

    env, py = torch_env
    state = WizardState(session=Session.resume(install=make_install_result(env, py)))
    wiz, state, (page,) = wizard_with(VerifyPage, state=state)
    live = []  # (rows in the checklist, page status) after each step event arrived
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.show()
    page._task.event.connect(lambda e: live.append((page.checks.topLevelItemCount(), page.status()))
                             if isinstance(e, StepEvent) else None)
    qtbot.waitUntil(lambda: page.status() != "running", timeout=240000)
    # The checklist filled while the probe was still running, not only at the end.
    assert any(rows > 0 and st == "running" for rows, st in live), live
    assert page.status() == "passed", page.summary.text() + page.error_panel.message.text()
    assert page.isComplete()
    rep = state.session.verify_report
    assert rep is not None and rep.ok
    assert rep.torch_version.startswith("2.13.0")
    # Every check is a row with its icon status and one line of explanation.
    rows = {page.checks.topLevelItem(i).text(0): page.checks.topLevelItem(i)
            for i in range(page.checks.topLevelItemCount())}
    assert len(rows) == len(rep.checks) >= 3
    for c in rep.checks:
        item = rows[render(c.title) or c.name]  # the checks render in the wizard language (English here)
        assert item.data(0, 256) == c.status  # Qt.UserRole
        assert item.text(1)
    assert "2.13.0" in page.summary.text()
    assert not page.diagnosis.isVisible()


@pytest.mark.slow
def test_verify_page_failure_shows_error_and_diagnosis(qtbot, wizard_with, tmp_path):
    """An environment without torch: the probe fails, the page shows why and the doctor's fix."""
    from app.gui.pages.verify import VerifyPage

    env = tmp_path / "empty-env"
    subprocess.run([_uv(), "venv", "--quiet", "--python", sys.executable, str(env)], check=True,
                   env=_clean_env(), timeout=120, capture_output=True)
    py = env / "bin" / "python"
    state = WizardState(session=Session.resume(install=make_install_result(env, py)))
    wiz, state, (page,) = wizard_with(VerifyPage, state=state)
    wiz.show()
    qtbot.waitUntil(lambda: page.status() in ("failed", "error"), timeout=120000)
    assert page.isComplete()  # the user may still go on and save the report
    assert page.error_panel.isVisible() or page.status() == "failed"
    assert page.error_panel.message.text()
    assert page.error_panel.log_path is not None and page.error_panel.log_path.exists()
    qtbot.waitUntil(lambda: not page.is_busy(), timeout=120000)
    assert page.diagnosis_title.isVisible()
    assert page.diagnosis.toPlainText().strip()


# ------------------------------------------------------------------------------- done
@pytest.mark.posix_only("the Linux commands are joined with this OS's path separator")
def test_activation_commands_on_linux():
    from app.gui.pages.done import activation_commands

    lin = dict(activation_commands(Path("/home/a b/env"), platform="linux"))
    assert lin["bash / zsh"] == "source '/home/a b/env/bin/activate'"
    assert lin["fish"].endswith("activate.fish'")
    assert activation_commands(Path("/opt/envs/t"), kind="conda") == [("conda", "conda activate /opt/envs/t")]


def test_activation_commands_on_windows():
    from app.gui.pages.done import activation_commands

    win = dict(activation_commands(Path("C:/Users/li/env"), platform="win32"))
    assert set(win) == {"PowerShell", "cmd"}
    # the default execution policy blocks Activate.ps1: lifted for this PowerShell window only
    assert win["PowerShell"].startswith("Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force; & ")
    assert win["PowerShell"].endswith("Activate.ps1")
    assert win["cmd"].endswith("activate.bat")


def test_done_page_summary_and_saved_report(qtbot, wizard_with, tmp_path):
    from app.gui.pages.done import DonePage

    env = tmp_path / "my env"
    py = venv_python(env)
    py.parent.mkdir(parents=True)
    py.write_text("", encoding="utf-8")
    verify = make_verify_report([make_check("import", "passed", "torch 2.13.0+cpu imported"),
                                 make_check("cuda", "skipped", "no GPU")], torch_version="2.13.0+cpu")
    bench = make_bench_report([make_bench_result(256, 101.5)])
    state = WizardState(session=Session.resume(install=make_install_result(env, py), verify=verify, bench=bench))
    wiz, state, (page,) = wizard_with(DonePage, state=state)
    wiz.show()
    qtbot.waitUntil(lambda: bool(state.saved_reports))
    text = page.summary.text()
    assert str(env) in text and "2.13.0+cpu" in text
    assert "1 passed, 0 failed, 1 skipped" in text
    assert "101.5 GFLOP/s" in text
    shells = [label.text() for label, _row in page.shell_rows]
    assert shells == (["PowerShell", "cmd"] if sys.platform.startswith("win") else ["bash / zsh", "fish"])
    assert page.python_row.edit.text() == str(py)
    assert "ipykernel install --user --name torch-my-env-" in page.jupyter_kernel.edit.text()
    assert page.kernel_button.isEnabled() and "ipykernel" in page.jupyter_install.edit.text()
    # The automatic copy, then "Save report as" into a folder the user chose.
    out = tmp_path / "reports"
    files = page.save_report(out)
    assert sorted(p.suffix for p in files) == [".html", ".json", ".md"]
    for p in files:
        assert p.exists() and "2.13.0+cpu" in p.read_text(encoding="utf-8")
    data = json.loads(next(p for p in files if p.suffix == ".json").read_text(encoding="utf-8"))
    assert data["summary"]["torch"] == "2.13.0+cpu"
    assert page.open_report.isEnabled()
    # "Open folder" and "Open report" hand the paths to the desktop (caught here).
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    class Catcher(QObject):
        urls: ClassVar[list] = []

        @Slot(QUrl)
        def open(self, url):
            self.urls.append(url.toLocalFile())

    catcher = Catcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        page.open_folder.click()
        page.open_report.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert os.path.normpath(catcher.urls[0]) == str(env)  # Qt writes C:/... on Windows
    assert catcher.urls[1].endswith(".html") and Path(catcher.urls[1]).is_file()


# ---------------------------------------------------------------------------- speed test
@pytest.mark.slow
def test_speedtest_page_draws_real_measurements(qtbot, wizard_with, torch_env):
    from app.gui.pages.speedtest import SpeedTestPage

    env, py = torch_env
    state = WizardState(session=Session.resume(install=make_install_result(env, py)), bench_sizes=[64, 128, 256],
                        bench_dtypes=["fp32"],
                        bench_budget_s=15)
    wiz, state, (page,) = wizard_with(SpeedTestPage, state=state)
    assert page.bench_options() == {"device": "auto", "sizes": [64, 128, 256], "dtypes": ["fp32"], "budget_s": 15.0}
    live = []
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.show()
    assert not page.isComplete() and page.stop.isVisible()
    page._task.event.connect(lambda e: live.append(page.chart.point_count()))
    with qtbot.waitSignal(page.state_changed, timeout=180000, check_params_cb=lambda s: s != "running") as done:
        pass
    assert done.args == ["done"], page.error_panel.message.text()
    assert any(n > 0 for n in live), "points are drawn while the test runs"
    series = page.chart.series()
    rep = state.session.bench_report
    assert rep.cpu_name and [s.name() for s in series] == [f"{rep.cpu_name} · fp32"]  # the CPU by its name
    xs = [p.x() for p in series[0].points()]
    assert xs == sorted(xs) and set(xs) <= {64.0, 128.0, 256.0} and len(xs) >= 2
    assert all(p.y() > 0 for p in series[0].points())
    head = rep.headline()  # the median at the largest size, not the fastest point
    assert head.n == max(r.n for r in rep.results)
    assert f"{head.gflops:,.1f} GFLOP/s in fp32 at {head.n}×{head.n} (the median of {head.runs} runs" \
        in page.summary.text()
    assert page.details.text()  # % of peak, or why it is not known; how busy the machine was
    assert page.isComplete() and page.run_again.isVisible()
    # Run again: a second real run replaces the first.
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        page.run_again.click()
    assert state.session.bench_report is None
    with qtbot.waitSignal(page.state_changed, timeout=180000, check_params_cb=lambda s: s != "running") as done:
        pass
    assert done.args == ["done"] and state.session.bench_report is not None


def _fake_sweep_until_stopped(results):
    """A stand-in for run_bench: reports each measurement as the probe does, then waits for the
    Stop button and answers it the way run_bench does (the measurements so far, cancelled)."""
    import dataclasses

    def run_bench(python, *, on_event, cancel, **opts):
        for r in results:
            on_event(StepEvent(f"matmul {r.dtype} n={r.n}", "passed", f"{r.gflops:.1f} GFLOP/s",
                               dataclasses.asdict(r)))
        cancel.wait(60)
        return make_bench_report(results, status=BenchStatus.CANCELLED, python=str(python))

    return run_bench


def test_a_stopped_speed_test_keeps_and_reports_what_it_measured(qtbot, wizard_with, monkeypatch, tmp_path):
    import app.core.measure.bench
    from app.gui.pages.done import DonePage
    from app.gui.pages.speedtest import SpeedTestPage

    measured = [make_bench_result(256, 90.0), make_bench_result(512, 110.0)]
    monkeypatch.setattr(app.core.measure.bench, "run_bench", _fake_sweep_until_stopped(measured))
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    env = tmp_path / "env"
    state = WizardState(session=Session.resume(install=make_install_result(env)), bench_sizes=[256, 512, 1024],
                        bench_dtypes=["fp32"],
                        bench_budget_s=30)
    wiz, state, (page, done_page) = wizard_with(SpeedTestPage, DonePage, state=state)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.show()
    qtbot.waitUntil(lambda: page.chart.point_count() == 2)  # drawn live
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s != "running") as stopped:
        page.stop.click()
    assert stopped.args == ["stopped"] and page.isComplete()
    rep = state.session.bench_report
    assert rep is not None and rep.cancelled and rep.results == tuple(measured)
    assert page.chart.point_count() == 2
    assert page.summary.text() == ("The speed test was stopped. "
                                   "Test CPU: 110.0 GFLOP/s in fp32 at 512×512 (the median of 5 runs).")
    assert "Partial results: the speed test was stopped before it finished." in page.details.text()
    # The Done page and its report include the partial results, marked as such.
    wiz.next()
    qtbot.waitUntil(lambda: bool(state.saved_reports))
    assert ("Speed (partial, the test was stopped): Test CPU: 110.0 GFLOP/s in fp32 at 512×512 (the median of 5 "
            "runs).") in done_page.summary.text()  # the Speed test page's headline, word for word
    md = next(p for p in state.saved_reports if p.suffix == ".md").read_text(encoding="utf-8")
    assert "## Speed test (matrix multiply), partial" in md and "| cpu | fp32 | 512 | 110.0 |" in md
    data = json.loads(next(p for p in state.saved_reports if p.suffix == ".json").read_text(encoding="utf-8"))
    assert data["bench"]["status"] == "cancelled" and data["summary"]["best_gflops"] == 110.0


def test_skipping_a_running_speed_test_keeps_nothing(qtbot, wizard_with, monkeypatch, tmp_path):
    import app.core.measure.bench
    from app.gui.pages.speedtest import SpeedTestPage

    monkeypatch.setattr(app.core.measure.bench, "run_bench", _fake_sweep_until_stopped([make_bench_result(256, 90.0)]))
    state = WizardState(session=Session.resume(install=make_install_result(tmp_path / "env")), bench_sizes=[256])
    wiz, state, (page,) = wizard_with(SpeedTestPage, state=state)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.show()
    qtbot.waitUntil(lambda: page.chart.point_count() == 1)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s != "running"):
        page.skip.setChecked(True)
    assert state.session.bench_report is None and state.skip_bench
    assert "skipped" in page.summary.text()


def test_speedtest_can_be_skipped_without_running(qtbot, wizard_with, tmp_path):
    from app.gui.pages.speedtest import SpeedTestPage

    state = WizardState(session=Session.resume(install=make_install_result(tmp_path, tmp_path / "bin" / "python")),
                        skip_bench=True)
    wiz, state, (page,) = wizard_with(SpeedTestPage, state=state)
    wiz.show()
    assert page.status() == "idle" and page._task is None
    assert page.isComplete()
    assert "skipped" in page.summary.text()
    # Unticking starts it (and the missing interpreter fails plainly, never a crash).
    page.skip.setChecked(False)
    qtbot.waitUntil(lambda: page.status() == "failed")
    assert page.isComplete()


def test_speedtest_default_is_a_short_cpu_sweep(qapp):
    from app.gui.pages.speedtest import SpeedTestPage

    app = QApplication.instance()
    assert app is not None
    page = SpeedTestPage(WizardState())
    opts = page.bench_options()
    assert opts["sizes"] == [256, 512, 1024, 2048] and opts["dtypes"] == ["fp32", "bf16"]
    assert opts["budget_s"] <= 30
    page.deleteLater()


# ---------------------------------------------------------------------- event batching
def test_event_batcher_keeps_order_and_loses_nothing():
    import threading

    from app.gui.pages._common import EventBatcher, LogBatch

    out = []
    sink = EventBatcher(out.append, interval_s=0.02, max_events=500)

    def spew(tag):
        for i in range(5000):
            sink(LogEvent(f"{tag} {i}", "stdout"))

    threads = [threading.Thread(target=spew, args=(t,)) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sink(PhaseEvent("install", "end"))  # a non-log event sends what is gathered first
    sink(ProgressEvent("torch", 1, 10))
    sink(ProgressEvent("torch", 9, 10))  # only the newest per package is kept
    sink(ProgressEvent("torch", 10, 10))
    sink(ProgressEvent("torch", 1, 13, unit="installed"))  # another measure of the same package: kept too
    sink.close()
    lines = [e.text for b in out if isinstance(b, LogBatch) for e in b.events if isinstance(e, LogEvent)]
    assert len(lines) == 10000
    for tag in ("a", "b"):  # each thread's lines stay in order
        mine = [int(x.split()[1]) for x in lines if x.startswith(tag)]
        assert mine == list(range(5000))
    phase_at = next(i for i, e in enumerate(out) if isinstance(e, PhaseEvent))
    assert all(isinstance(e, LogBatch) for e in out[:phase_at])
    assert sum(len(b.events) for b in out[:phase_at]) == 10000
    assert len(out) < 100  # batched: far fewer signals than lines
    last = out[-1]
    assert isinstance(last, LogBatch) and [(e.done_bytes, e.unit) for e in last.events] == [(10, "bytes"),
                                                                                            (1, "installed")]


def test_event_batcher_sends_a_lone_line_by_timer():
    import threading

    from app.gui.pages._common import EventBatcher

    got = threading.Event()
    sink = EventBatcher(lambda b: got.set(), interval_s=0.02)
    sink(LogEvent("only line"))
    assert got.wait(5), "a quiet installer's last line still arrives"


# --------------------------------------------------------------------- accessibility
def test_every_control_of_the_late_pages_has_a_name(qtbot, wizard_with, tmp_path):
    """Screen readers get a name for every control of pages 5-8, in both languages."""
    from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit

    from app.gui import i18n
    from app.gui.pages.done import DonePage
    from app.gui.pages.install import InstallPage
    from app.gui.pages.speedtest import SpeedTestPage
    from app.gui.pages.verify import VerifyPage

    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    state = WizardState(session=Session.resume(install=make_install_result(env, env / "bin" / "python")),
                        skip_bench=True)
    _wiz, state, pages = wizard_with(InstallPage, VerifyPage, SpeedTestPage, DonePage, state=state)
    pages[2]._ensure_chart()
    pages[3]._fill()
    try:
        for lang in ("en", "zh_CN"):
            i18n.set_language(lang)
            for page in pages:
                page.retranslate()
                for w in page.findChildren(QAbstractButton):
                    if w.objectName().startswith("qt_"):
                        continue
                    assert w.accessibleName() or w.text().replace("&", ""), f"{type(page).__name__}: unnamed button"
                for w in (page.findChildren(QLineEdit) + page.findChildren(QComboBox)
                          + page.findChildren(QPlainTextEdit) + page.findChildren(QTextEdit)):
                    if isinstance(w.parent(), QComboBox) or w.objectName().startswith("qt_"):
                        continue
                    assert w.accessibleName(), f"{type(page).__name__}: {type(w).__name__} has no accessible name"
    finally:
        i18n.set_language("en")


# ------------------------------------------------------------- accelerator summaries
def test_speed_summary_on_an_accelerator_gives_speedup_and_share_of_peak(qtbot):
    """A BenchReport as the bench probe reports it on a GPU machine (no GPU here: the report is
    written out by hand in the probe's shape): the CPU baseline is its own series, the
    speedup comes from the probe's same-size pairs, the share of peak from the results."""
    from app.gui.pages.speedtest import SpeedTestPage

    rep = make_bench_report(
        [make_bench_result(1024, 30000.0, device="cuda", fraction_of_peak=0.45),
         make_bench_result(2048, 45000.0, device="cuda", fraction_of_peak=0.67),
         make_bench_result(2048, 400000.0, dtype="bf16", device="cuda", fraction_of_peak=0.81)],
        device="cuda", device_name="NVIDIA H200",
        cpu_results=[make_bench_result(1024, 150.0), make_bench_result(2048, 180.0)],
        speedup=[make_speedup(1024, "fp32", 150.0, 30000.0), make_speedup(2048, "fp32", 180.0, 45000.0)])
    state = WizardState(session=Session.resume(bench=rep))
    page = SpeedTestPage(state)
    qtbot.addWidget(page)
    head, details = page.summary_text()
    assert head == "NVIDIA H200: 400,000.0 GFLOP/s in bf16 at 2048×2048 (the median of 5 runs)."
    assert "fp32: 45,000.0 GFLOP/s at 2048×2048 (median of 5 runs)" in details
    assert "NVIDIA H200 is 250.0× faster than the CPU in fp32 (at 2048×2048)." in details
    assert "That is 81 % of the estimated bf16 peak." in details
    page._ensure_chart()
    page.chart.set_report(rep)
    assert sorted(s.name() for s in page.chart.series()) == ["NVIDIA H200 · bf16", "NVIDIA H200 · fp32",
                                                            "cpu · fp32"]
    assert page.chart.point_count() == 5
    assert page.chart.speedups() == [("fp32", 1024, 200.0), ("fp32", 2048, 250.0)]


def test_qtcharts_loads_only_when_the_speed_test_is_shown():
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from app.gui.wizard import SetupWizard\n"
        "from app.gui.pages import PageId\n"
        "w = SetupWizard(auto_detect=False)\n"
        "w.show(); app.processEvents()\n"
        "print('before', 'PySide6.QtCharts' in sys.modules)\n"
        "page = w.page(int(PageId.SPEEDTEST))\n"
        "page.skip.setChecked(True)\n"
        "page.initializePage()\n"
        "print('after', 'PySide6.QtCharts' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr[-1500:]
    assert "before False" in res.stdout and "after True" in res.stdout, res.stdout


@pytest.mark.slow
def test_verify_expects_the_accelerator_the_install_was_for(qtbot, wizard_with, torch_env):
    """Installed for CUDA but the env holds a CPU build: the accelerator checks fail (not
    skipped), and the doctor explains why."""
    from app.gui.pages.verify import VerifyPage

    env, py = torch_env
    state = WizardState(session=Session.resume(install=make_install_result(env, py),
                                               recommendation=make_recommendation(backend="cuda", variant="cu126")))
    wiz, state, (page,) = wizard_with(VerifyPage, state=state)
    assert page.expected_accelerator() == "cuda"
    wiz.show()
    qtbot.waitUntil(lambda: page.status() not in ("idle", "running"), timeout=240000)
    assert page.status() == "failed"
    assert not state.session.verify_report.ok
    failed = [page.checks.topLevelItem(i) for i in range(page.checks.topLevelItemCount())
              if page.checks.topLevelItem(i).data(0, 256) == "failed"]
    assert failed and all(item.text(1) for item in failed)
    assert "checks failed" in page.summary.text()
    # the session records the diagnosis in the worker; the page shows it when the task's signal arrives
    qtbot.waitUntil(lambda: state.session.diagnosis is not None and page.diagnosis.isVisible(), timeout=120000)
    text = page.diagnosis.toPlainText()
    assert text.strip() and "Fix:" in text
    # the cause named is the build, whatever else the machine shows (a PATH python elsewhere, no GPU)
    assert state.session.diagnosis.findings[0].code == "build-not-as-installed"
    assert "installed for CUDA" in text and "CPU-only build" in text
