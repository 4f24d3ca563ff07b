"""Page 7, Speed test: matrix-multiply GFLOP/s in the new environment, drawn as a chart.

The benchmark (the session's ``bench``, over ``app.core.bench.run_bench``) runs in a Task
with a time budget; each measurement arrives as a StepEvent and is drawn at once. The summary gives the best speed,
the accelerator's speedup over the CPU and the share of the device's peak where known. The
speed test can be skipped (the checkbox), stopped, and run again; a stopped run keeps what
it measured (a BenchReport with status "cancelled"), shown as partial results.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.core.errors import UserError
from app.core.events import Event, StepEvent
from app.core.session import BenchOptions, Stage
from app.gui.pages._common import ErrorPanel
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.worker import Task

if TYPE_CHECKING:
    from app.core.bench import BenchReport, BenchResult, Speedup
    from app.core.runner import CancelToken
    from app.gui.charts import BenchChart

IDLE, RUNNING, DONE, FAILED, STOPPED = "idle", "running", "done", "failed", "stopped"

# What the page measures on a CPU-only machine when the state has no overrides: a short
# sweep (a CPU's matmul speed levels off by 1024–2048) within a budget a person will wait.
CPU_SIZES = (256, 512, 1024, 2048)
CPU_DTYPES = ("fp32", "bf16")  # the bench probe caps bf16 sizes on CPUs without bf16 hardware
DEFAULT_BUDGET_S = 20.0


class SpeedTestPage(BasePage):
    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._status = IDLE
        self._started_at: float | None = None
        self._budget = DEFAULT_BUDGET_S
        self.chart: BenchChart | None = None  # built when the page is first shown

        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        f = self.summary.font()
        f.setBold(True)
        self.summary.setFont(f)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.current = QLabel(self)
        self.skip = QCheckBox(self)
        self.skip.setChecked(bool(state.skip_bench))
        self.skip.toggled.connect(self._on_skip_toggled)
        self.run_again = QPushButton(self)
        self.run_again.clicked.connect(self.start)
        self.stop = QPushButton(self)
        self.stop.clicked.connect(self.cancel)
        self.error_panel = ErrorPanel(self)
        self.error_panel.setVisible(False)

        row = QHBoxLayout()
        row.addWidget(self.skip, 1)
        row.addWidget(self.stop)
        row.addWidget(self.run_again)
        self.body.addWidget(self.summary)
        self.body.addWidget(self.details)
        self.body.addWidget(self.progress)
        self.body.addWidget(self.current)
        self._chart_index = self.body.count()
        self.body.addWidget(self.error_panel)
        self.body.addLayout(row)

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
        from app.core.bench import result_of_step  # loaded with the speed test, not at start-up

        r = result_of_step(ev)
        if r is not None and self.chart is not None:
            self.chart.add_result(r)
            self.current.setText(self.tr("{device} {dtype}, {size}×{size}: {gflops:.1f} GFLOP/s").format(
                device=r.device, dtype=r.dtype, size=r.n, gflops=r.gflops))
        elif ev.detail:
            self.current.setText(ev.detail)

    def _tick(self) -> None:
        if self._started_at is None or self._budget <= 0:
            return
        frac = min(0.99, (time.monotonic() - self._started_at) / self._budget)
        self.progress.setValue(max(self.progress.value(), int(1000 * frac)))

    def _show_report(self, report: BenchReport) -> None:
        chart = self._ensure_chart()
        if _drawn(report):  # the final report is the truth; live points were a preview
            chart.set_report(report)

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
        """(headline, details) for the finished (or stopped) run."""
        rep = self.state.session.bench_report
        results = _drawn(rep) if rep is not None else []
        if rep is None or not results:
            return self.tr("No measurement finished."), ""
        best = max(results, key=lambda r: r.gflops)
        head = self.tr("Fastest: {gflops:.1f} GFLOP/s ({device}, {dtype}, {size}×{size}).").format(
            gflops=best.gflops, device=best.device, dtype=best.dtype, size=best.n)
        lines = self._speedup_lines(rep, results)
        # Share of the device's peak, where the core knows the peak.
        known = [r for r in rep.results if r.fraction_of_peak is not None]
        if known:
            top = max(known, key=lambda r: r.fraction_of_peak or 0.0)
            lines.append(self.tr("That is {pct:.0f}% of the theoretical peak of {device} in {dtype}.").format(
                pct=100 * (top.fraction_of_peak or 0.0), device=top.device, dtype=top.dtype))
        else:
            lines.append(self.tr("The theoretical peak of this device is not known, so no share of it is shown."))
        if rep.cancelled:
            lines.append(self.tr("Partial results: the speed test was stopped before it finished."))
        lines += [self.tr("The build was chosen with compatibility data {version}.").format(
            version=r.compat_data_version) for r in (self.state.session.recommendation,) if r and r.compat_data_version]
        return head, "\n".join(lines)

    def _speedup_lines(self, rep: BenchReport, results: list[BenchResult]) -> list[str]:
        """The accelerator against the CPU: the probe's same-size pairs (the largest size per
        dtype), else the best of each where both were measured."""
        lines = []
        if rep.speedup:
            per_dtype: dict[str, Speedup] = {}
            for s in rep.speedup:
                if s.dtype not in per_dtype or s.n > per_dtype[s.dtype].n:
                    per_dtype[s.dtype] = s
            acc = next((r.device for r in results if not r.device.lower().startswith("cpu")),
                       self.tr("The accelerator"))
            for d, s in sorted(per_dtype.items()):
                lines.append(self.tr("{device} is {x:.1f}× faster than the CPU in {dtype} (at {n}×{n}).").format(
                    device=acc, x=s.speedup, dtype=d, n=s.n))
            return lines
        by: dict[tuple[str, str], tuple[float, str]] = {}
        for r in results:
            key = ("cpu" if r.device.lower().startswith("cpu") else "acc", r.dtype)
            by[key] = max(by.get(key, (0.0, r.device))[0], r.gflops), r.device
        for (kind, dtype), (gf, dev) in sorted(by.items()):
            cpu = by.get(("cpu", dtype))
            if kind == "acc" and cpu and cpu[0] > 0:
                lines.append(self.tr("{device} is {x:.1f}× faster than the CPU in {dtype}.").format(
                    device=dev, x=gf / cpu[0], dtype=dtype))
        return lines

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

    def retranslate(self) -> None:
        self.setTitle(self.tr("Speed test"))
        self.setSubTitle(self.tr("Multiplies matrices of growing size to show how fast PyTorch runs "
                                 "here. It takes under a minute and can be skipped."))
        self.skip.setText(self.tr("Skip the speed test"))
        self.stop.setText(self.tr("Stop"))
        self.progress.setAccessibleName(self.tr("Speed test progress"))
        self._apply()


def _drawn(report: BenchReport) -> list[BenchResult]:
    """The report's measurements the chart draws (the device's, then the CPU baseline's)."""
    from app.gui.charts import drawable  # QtCharts: only once the speed test is shown

    return [r for r in report.all_results() if drawable(r)]
