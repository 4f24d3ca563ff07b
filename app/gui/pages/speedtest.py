"""Page 7, Speed test: matrix-multiply GFLOP/s in the new environment, drawn as a chart.

The benchmark (``app.core.bench.run_bench``) runs in a Task with a time budget; each
measurement arrives as a StepEvent and is drawn at once. The summary gives the best speed,
the accelerator's speedup over the CPU and the share of the device's peak where known. The
speed test can be skipped (the checkbox), stopped, and run again.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QProgressBar, QPushButton

from app.core.events import StepEvent
from app.gui.pages._common import ErrorPanel, field_of
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.worker import Task

IDLE, RUNNING, DONE, FAILED, STOPPED = "idle", "running", "done", "failed", "stopped"

# What the page measures on a CPU-only machine when the state has no overrides: a short
# sweep (a CPU's matmul speed levels off by 1024–2048) within a budget a person will wait.
CPU_SIZES = (256, 512, 1024, 2048)
CPU_DTYPES = ("fp32", "bf16")  # the bench probe caps bf16 sizes on CPUs without bf16 hardware
DEFAULT_BUDGET_S = 20.0


class SpeedTestPage(BasePage):
    state_changed = Signal(str)

    def __init__(self, state: WizardState, parent=None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._status = IDLE
        self._started_at: float | None = None
        self._budget = DEFAULT_BUDGET_S
        self.chart = None  # app.gui.charts.BenchChart, built when the page is first shown

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
    def initializePage(self) -> None:  # noqa: N802
        self._ensure_chart()
        if self._status == IDLE and not self.skip.isChecked():
            self.start()

    def isComplete(self) -> bool:  # noqa: N802
        if self.skip.isChecked():
            return not self.is_busy()
        return self._status in (DONE, FAILED, STOPPED)

    def status(self) -> str:
        return self._status

    def _ensure_chart(self) -> None:
        if self.chart is None:
            from app.gui.charts import BenchChart  # QtCharts loads only now

            self.chart = BenchChart(self)
            self.body.insertWidget(self._chart_index, self.chart, 1)

    # -- running --------------------------------------------------------------------------------
    def bench_options(self) -> dict:
        """sizes / dtypes / budget_s / device for run_bench: the state's overrides, else a short
        CPU sweep on a CPU-only machine, else the core's defaults for the accelerator."""
        st = self.state
        backend = str(field_of(st.recommendation, "backend", default="") or "").lower()
        cpu_only = backend in ("", "cpu")
        sizes = list(st.bench_sizes) if st.bench_sizes else (list(CPU_SIZES) if cpu_only else None)
        dtypes = list(st.bench_dtypes) if st.bench_dtypes else (list(CPU_DTYPES) if cpu_only else None)
        budget = float(st.bench_budget_s) if st.bench_budget_s else (DEFAULT_BUDGET_S if cpu_only else 60.0)
        return {"device": st.bench_device or "auto", "sizes": sizes, "dtypes": dtypes, "budget_s": budget}

    def start(self) -> None:
        if self.is_busy():
            return
        python = field_of(self.state.install_result, "python")
        self._ensure_chart()
        self.chart.clear()
        self.error_panel.setVisible(False)
        self.state.bench_report = None
        if python is None:
            from app.core.errors import UserError

            self._on_failed(UserError(self.tr("There is no installed environment to measure.")))
            return
        opts = self.bench_options()
        self._budget = opts["budget_s"]

        def work(on_event, cancel):
            from app.core.bench import run_bench

            return run_bench(python, on_event=on_event, cancel=cancel, **opts)

        self._task = Task(work, self, name="bench")
        self._task.event.connect(self.on_event)
        self._task.succeeded.connect(self._on_report)
        self._task.failed.connect(self._on_failed)
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

    def on_event(self, ev) -> None:
        if not isinstance(ev, StepEvent):
            return
        data = ev.data or {}
        from app.gui.charts import point_of

        p = point_of(data)
        if p is not None and self.chart is not None:
            self.chart.add_point(*p)
            dev, dtype, size, gf = p
            self.current.setText(self.tr("{device} {dtype}, {size}×{size}: {gflops:.1f} GFLOP/s").format(
                device=dev, dtype=dtype, size=size, gflops=gf))
        elif ev.detail:
            self.current.setText(ev.detail)
        frac = field_of(data, "progress", "fraction")
        if isinstance(frac, (int, float)):
            self.progress.setValue(max(self.progress.value(), int(1000 * min(1.0, float(frac)))))

    def _tick(self) -> None:
        if self._started_at is None or self._budget <= 0:
            return
        frac = min(0.99, (time.monotonic() - self._started_at) / self._budget)
        self.progress.setValue(max(self.progress.value(), int(1000 * frac)))

    def _on_report(self, report) -> None:
        self.state.bench_report = report
        self._ensure_chart()
        from app.gui.charts import points_of

        pts = points_of(report)
        if pts:  # the final report is the truth; live points were a preview
            self.chart.set_points(pts)
        self.progress.setValue(1000)
        self.current.clear()
        self._set_status(DONE)

    def _on_failed(self, err) -> None:
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
        """(headline, details) for the finished run."""
        from app.gui.charts import points_of

        rep = self.state.bench_report
        pts = points_of(rep) if rep is not None else []
        if not pts:
            return self.tr("No measurement finished."), ""
        best = max(pts, key=lambda p: p[3])
        head = self.tr("Fastest: {gflops:.1f} GFLOP/s ({device}, {dtype}, {size}×{size}).").format(
            gflops=best[3], device=best[0], dtype=best[1], size=best[2])
        lines = []
        speedup = field_of(rep, "speedup")
        if isinstance(speedup, (int, float)):
            lines.append(self.tr("Accelerator speedup over the CPU: {x:.1f}×.").format(x=speedup))
        elif isinstance(speedup, (list, tuple)) and speedup:
            # [{n, dtype, cpu_gflops, device_gflops, speedup}]: the largest size per dtype.
            per_dtype: dict[str, dict] = {}
            for s in speedup:
                d = str(field_of(s, "dtype", default=""))
                if d not in per_dtype or (field_of(s, "n", default=0) or 0) > (field_of(per_dtype[d], "n", default=0) or 0):
                    per_dtype[d] = s
            acc = next((p[0] for p in pts if not p[0].lower().startswith("cpu")), self.tr("The accelerator"))
            for d, s in sorted(per_dtype.items()):
                x = field_of(s, "speedup")
                if isinstance(x, (int, float)):
                    lines.append(self.tr("{device} is {x:.1f}× faster than the CPU in {dtype} (at {n}×{n}).").format(
                        device=acc, x=x, dtype=d, n=field_of(s, "n", default="?")))
        # Else: the best of each per dtype, where both the CPU and an accelerator were measured.
        by = {}
        have_list = bool(lines)
        for dev, dtype, _size, gf in pts:
            kind = "cpu" if dev.lower().startswith("cpu") else "acc"
            key = (kind, dtype)
            by[key] = max(by.get(key, (0.0, dev))[0], gf), dev
        for (kind, dtype), (gf, dev) in sorted(by.items()):
            cpu = by.get(("cpu", dtype))
            if not have_list and kind == "acc" and cpu and cpu[0] > 0:
                lines.append(self.tr("{device} is {x:.1f}× faster than the CPU in {dtype}.").format(
                    device=dev, x=gf / cpu[0], dtype=dtype))
        # Share of the device's peak, where the core knows the peak.
        rows = field_of(rep, "results", "measurements", "rows", default=[]) or []
        best_frac = None
        for r in rows:
            fr = field_of(r, "fraction_of_peak", "peak_fraction", "of_peak")
            if isinstance(fr, (int, float)) and (best_frac is None or fr > best_frac[0]):
                best_frac = (float(fr), field_of(r, "device", default=best[0]), field_of(r, "dtype", default=""))
        if best_frac is None:
            peak = field_of(rep, "peak_gflops")
            if isinstance(peak, dict):
                peak = peak.get(best[1]) or peak.get(best[0])
            if isinstance(peak, (int, float)) and peak > 0:
                best_frac = (best[3] / peak, best[0], best[1])
        if best_frac is not None:
            lines.append(self.tr("That is {pct:.0f}% of the theoretical peak of {device} in {dtype}.").format(
                pct=100 * best_frac[0], device=best_frac[1], dtype=best_frac[2]))
        else:
            lines.append(self.tr("The theoretical peak of this device is not known, so no share of it is shown."))
        return head, "\n".join(lines)

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
