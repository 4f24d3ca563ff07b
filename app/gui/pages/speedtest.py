"""Page 7, Speed test: matrix-multiply GFLOP/s in the new environment, drawn as a chart.

The benchmark (the session's ``bench``, over ``app.core.measure.bench.run_bench``) runs in a Task
with a time budget; each measurement arrives as a StepEvent and is drawn at once (with the spread of its runs). The
summary quotes the median at the largest size (never the single fastest point), per dtype,
the accelerator's speed-up over the CPU and the share of the estimated peak, whose
assumptions are one click away. When other programs kept the machine busy or the runs
scattered, a warning says that the results are lower and less certain; a dtype without native
arithmetic on this CPU says why it is slow. The sentences are the core's texts by code
(``app.core.measure.bench``), rendered in the wizard's language. The speed test can be skipped (the
checkbox), stopped, and run again; a stopped run keeps what it measured (a BenchReport with
status "cancelled"), shown as partial results.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QProgressBar, QWidget

from app.core.base.errors import UserError
from app.core.base.events import Event, StepEvent
from app.core.pipeline.session import BenchOptions, Stage
from app.gui.build import add_all, button, text_label
from app.gui.i18n import current_language, render
from app.gui.pages._common import ErrorPanel
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, Collapsible
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.measure.bench import BenchReport, BenchResult
    from app.core.proc.runner import CancelToken
    from app.gui.charts import BenchChart

IDLE, RUNNING, DONE, FAILED, STOPPED = "idle", "running", "done", "failed", "stopped"

# What the page measures on a CPU-only machine when the state has no overrides: a short
# sweep (a CPU's matmul speed levels off by 1024–2048) within a budget a person will wait.
CPU_SIZES = (256, 512, 1024, 2048)
CPU_DTYPES = ("fp32", "bf16")  # the bench probe caps bf16 sizes on CPUs without bf16 hardware
DEFAULT_BUDGET_S = 20.0  # the whole test, starting PyTorch included (the probe counts from its own start)
_STEP = re.compile(r"^(?:cpu )?matmul (?P<dtype>\w+) n=(?P<n>\d+)$")  # the probe's step names


class SpeedTestPage(BasePage):
    """Measures matrix-multiply speed in the new environment; ``state_changed`` says idle, running,
    done, failed or stopped."""

    state_changed = Signal(str)

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("SpeedTestPage", "Speed test"),
              QT_TRANSLATE_NOOP("SpeedTestPage", "Multiplies matrices of growing size to show how fast PyTorch runs "
                                                 "here. It takes under a minute and can be skipped."))

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._status = IDLE
        self._started_at: float | None = None
        self._budget = DEFAULT_BUDGET_S
        self.chart: BenchChart | None = None  # built when the page is first shown

        self.summary = text_label(self, bold=True)
        self.details = text_label(self)
        # "The machine was busy: ..." / "The runs varied by ±25 %": what lowers the trust in the numbers
        self.warning = Banner("warning", "", self)
        self.warning.setVisible(False)
        self.peak_text = text_label(self)
        self.peak_box = Collapsible("", self.peak_text, self)  # the peak's assumptions, one click away
        self.peak_box.setVisible(False)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.current = QLabel(self)
        self.skip = QCheckBox(self)
        self.skip.setChecked(bool(state.skip_bench))
        self.skip.toggled.connect(self._on_skip_toggled)
        self.run_again = button(self.start, self)
        self.stop = button(self.cancel, self)
        self.error_panel = ErrorPanel(self)
        self.error_panel.setVisible(False)

        row = QHBoxLayout()
        add_all(row, (self.skip, 1), self.stop, self.run_again)
        add_all(self.body, self.summary, self.warning, self.details, self.progress, self.current)
        self._chart_index = self.body.count()
        add_all(self.body, self.peak_box, self.error_panel, row)

        self._clock = QTimer(self)
        self._clock.setInterval(250)
        self._clock.timeout.connect(self._tick)
        self.retranslate()

    # -- wizard hooks -------------------------------------------------------------------------
    def initializePage(self) -> None:
        self._ensure_chart()
        if self._status == IDLE and not self.skip.isChecked():
            self.start()

    def isComplete(self) -> bool:
        if self.skip.isChecked():
            return not self.is_busy()
        return self._status in (DONE, FAILED, STOPPED)

    def status(self) -> str:
        return self._status

    def _ensure_chart(self) -> BenchChart:
        if self.chart is None:
            from app.gui.charts import BenchChart  # QtCharts loads only now

            self.chart = BenchChart(self)
            self.body.insertWidget(self._chart_index, self.chart, 1)
        return self.chart

    # -- running --------------------------------------------------------------------------------
    def bench_options(self) -> dict[str, Any]:
        """sizes / dtypes / budget_s / device for run_bench: the state's overrides, else a short
        CPU sweep on a CPU-only machine, else the core's defaults for the accelerator."""
        st = self.state
        rec = st.session.recommendation_followed
        backend = str(rec.backend).lower() if rec is not None else ""
        cpu_only = backend in ("", "cpu")
        sizes = list(st.bench_sizes) if st.bench_sizes else (list(CPU_SIZES) if cpu_only else None)
        dtypes = list(st.bench_dtypes) if st.bench_dtypes else (list(CPU_DTYPES) if cpu_only else None)
        budget = float(st.bench_budget_s) if st.bench_budget_s else (DEFAULT_BUDGET_S if cpu_only else 60.0)
        return {"device": st.bench_device or "auto", "sizes": sizes, "dtypes": dtypes, "budget_s": budget}

    def start(self) -> None:
        if self.is_busy():
            return
        session = self.state.session
        self._ensure_chart().clear()
        self.error_panel.setVisible(False)
        session.invalidate(Stage.BENCH)
        self._show_peak(None)
        if session.install_result is None:
            self._on_failed(UserError(self.tr("There is no installed environment to measure.")))
            return
        options = BenchOptions(**self.bench_options())
        self._budget = options.budget_s

        def work(on_event: Callable[[Event], None], cancel: CancelToken) -> BenchReport:
            return session.bench(options, on_event=on_event, cancel=cancel)  # kept there, also when stopped

        self._task = Task(work, self, name="bench")
        self._task.event.connect(self.on_event)
        self._task.succeeded.connect(self._on_report)
        self._task.failed.connect(self._on_failed)
        self._task.partial.connect(self._on_partial)
        self._task.cancelled.connect(self._on_cancelled)
        self._started_at = time.monotonic()
        self.progress.setValue(0)
        self.current.setText(self.tr("Starting PyTorch in the new environment…"))
        self._set_status(RUNNING)
        self._clock.start()
        self._task.start()

    def cancel(self) -> None:
        if self._task is not None and self._task.is_running():
            self._task.cancel()

    def on_event(self, ev: Event) -> None:
        if not isinstance(ev, StepEvent):
            return
        from app.core.measure.bench import result_of_step  # loaded with the speed test, not at start-up

        data = ev.data or {}
        if ev.name == "device" and self.chart is not None:  # the probe names the devices first
            names = {str(data.get("device") or ""): str(data.get("device_name") or ""),
                     "cpu": str(data.get("cpu_name") or "")}
            self.chart.set_device_names({k: v for k, v in names.items() if k and v})
        r = result_of_step(ev)
        if r is not None and self.chart is not None:
            self.chart.add_result(r)
            self.current.setText(self.tr("{device} {dtype}, {size}×{size}: {gflops:.1f} GFLOP/s").format(
                device=r.device, dtype=r.dtype, size=r.n, gflops=r.gflops))
        elif ev.status == "running":  # the probe's own words are English: say it in the wizard's language
            m = _STEP.match(ev.name)
            if m is not None:
                self.current.setText(self.tr("Measuring {dtype}, {size}×{size}…").format(
                    dtype=m.group("dtype"), size=m.group("n")))

    def _tick(self) -> None:
        if self._started_at is None or self._budget <= 0:
            return
        frac = min(0.99, (time.monotonic() - self._started_at) / self._budget)
        self.progress.setValue(max(self.progress.value(), int(1000 * frac)))

    def _show_report(self, report: BenchReport) -> None:
        chart = self._ensure_chart()
        if _drawn(report):  # the final report is the truth; live points were a preview
            chart.set_report(report)
        self._show_peak(report)

    def _on_report(self, report: BenchReport) -> None:
        self._show_report(report)
        self.progress.setValue(1000)
        self.current.clear()
        self._set_status(DONE)

    def _on_partial(self, report: BenchReport) -> None:
        """Stopped part-way: keep what was measured (the report marks it partial), unless the
        user chose to skip the speed test altogether."""
        if not self.skip.isChecked():
            self._show_report(report)
        else:
            self.state.session.invalidate(Stage.BENCH)

    def _on_failed(self, err: UserError) -> None:
        self.error_panel.show_error(err)
        self._set_status(FAILED)

    def _on_cancelled(self) -> None:
        self.current.setText(self.tr("Stopped."))
        self._set_status(STOPPED)

    def _on_skip_toggled(self, checked: bool) -> None:
        self.state.skip_bench = checked
        if checked:
            self.cancel()
        elif self._status in (IDLE,) and self.isVisible():
            self.start()
        self._apply()
        self.completeChanged.emit()

    # -- view ---------------------------------------------------------------------------------------
    def _set_status(self, status: str) -> None:
        self._status = status
        if status != RUNNING:
            self._clock.stop()
        self._apply()
        self.completeChanged.emit()
        self.state_changed.emit(status)

    def summary_text(self) -> tuple[str, str]:
        """(headline, details) for the finished (or stopped) run: the median at the largest size,
        each dtype's, the speed-up, the share of the peak, and what to know about them."""
        from app.core.measure.bench import dtype_lines, headline_text, notes, peak_text, speedup_lines, warnings_of

        rep = self.state.session.bench_report
        results = _drawn(rep) if rep is not None else []
        head = headline_text(rep) if rep is not None and results else None
        if rep is None or head is None:
            return self.tr("No measurement finished."), ""
        lang = current_language()
        lines = [render(m, lang) for m in dtype_lines(rep)] if len(rep.dtypes()) > 1 else []
        lines += [render(m, lang) for m in speedup_lines(rep)]
        share = peak_text(rep)
        if share is not None:
            lines.append(render(share, lang))
        warned = warnings_of(rep)
        lines += [render(m, lang) for m in notes(rep) if m not in warned]
        rec = self.state.session.recommendation
        if rec is not None and rec.compat_data_version:
            lines.append(self.tr("The build was chosen with compatibility data {version}.").format(
                version=rec.compat_data_version))
        return render(head, lang), "\n".join(lines)

    def warning_text(self) -> str:
        """The busy-machine / scattered-runs warnings of the report shown ("" when none)."""
        from app.core.measure.bench import warnings_of

        rep = self.state.session.bench_report
        if rep is None or self._status not in (DONE, STOPPED):
            return ""
        return "\n".join(render(w, current_language()) for w in warnings_of(rep))

    def _show_peak(self, report: BenchReport | None) -> None:
        """The estimated peak's assumptions, behind the "How the peak is estimated" toggle."""
        peak = report.peak if report is not None else None
        self.peak_box.setVisible(peak is not None and bool(peak.assumptions))
        if peak is None:
            self.peak_text.clear()
            return
        lang = current_language()
        values = ", ".join(f"{d} {v:,.0f} GFLOP/s" for d, v in peak.gflops.items())
        lines = [f"{peak.name}: {values}"] + ["• " + render(a, lang) for a in peak.assumptions]
        if peak.device == "cpu":  # worked out here, in the lines above (the core's words name no file to a user)
            lines.append(self.tr("Source: an estimate from the processor's cores, clock and SIMD width"))
        elif peak.source:  # a GPU's datasheet
            lines.append(self.tr("Source: {source}").format(source=peak.source))
        self.peak_text.setText("\n".join(lines))

    def _apply(self) -> None:
        st = self._status
        skipping = self.skip.isChecked()
        self.stop.setVisible(st == RUNNING)
        self.run_again.setVisible(st in (DONE, FAILED, STOPPED) or (skipping and st == IDLE))
        self.run_again.setText(self.tr("Run again") if st != IDLE else self.tr("Run the speed test"))
        self.progress.setVisible(st == RUNNING)
        self.error_panel.setVisible(st == FAILED)
        if self.chart is not None:
            self.chart.setVisible(not (skipping and st == IDLE))
        warning = self.warning_text()
        self.warning.set_text(warning)
        self.warning.setVisible(bool(warning))
        if st == RUNNING:
            self.summary.setText(self.tr("Measuring… (at most {s:.0f} s)").format(s=self._budget))
            self.details.setText("")
        elif st == DONE:
            head, details = self.summary_text()
            self.summary.setText(head)
            self.details.setText(details)
        elif st == FAILED:
            self.summary.setText(self.tr("The speed test failed. PyTorch itself was verified; you can go on."))
            self.details.setText("")
        elif skipping:
            self.summary.setText(self.tr("The speed test is skipped."))
            self.details.setText("")
        elif st == STOPPED:
            rep = self.state.session.bench_report
            if rep is not None and _drawn(rep):
                head, details = self.summary_text()
                self.summary.setText(self.tr("The speed test was stopped.") + " " + head)
                self.details.setText(details)
            else:
                self.summary.setText(self.tr("The speed test was stopped."))
                self.details.setText("")
        else:
            self.summary.setText("")
            self.details.setText("")

    def retranslate_page(self) -> None:
        self.skip.setText(self.tr("Skip the speed test"))
        self.stop.setText(self.tr("Stop"))
        self.peak_box.set_title(self.tr("How the peak is estimated"))
        self._show_peak(self.state.session.bench_report if self._status in (DONE, STOPPED) else None)
        self.progress.setAccessibleName(self.tr("Speed test progress"))
        self._apply()



def _drawn(report: BenchReport) -> list[BenchResult]:
    """The report's measurements the chart draws (the device's, then the CPU baseline's)."""
    from app.gui.charts import drawable  # QtCharts: only once the speed test is shown

    return [r for r in report.all_results() if drawable(r)]
