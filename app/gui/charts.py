"""The speed-test charts.

* GFLOP/s against matrix size, both axes logarithmic, so that every dtype is visible (bf16 at
  5 GFLOP/s beside fp32 at 200 is a line, not a flat zero): one line per device and dtype,
  named by the device's real name, each with a band for the spread of its runs (the middle
  half of them), and the estimated peak of each dtype as a dashed line of the same colour;
* the accelerator's speed-up over the CPU, as its own bar chart, when there is an accelerator.

QtCharts is a large module; the Speed test page imports this file only when it is first
shown, so the wizard starts without loading it.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCharts import (
    QAreaSeries,
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QLineSeries,
    QLogValueAxis,
    QValueAxis,
)
from PySide6.QtCore import QEvent, QMargins, QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from app.core.measure.bench import BenchReport, BenchResult
    from app.core.measure.peak import Peak

DTYPE_ORDER = ("fp32", "tf32", "bf16", "fp16")


def drawable(r: BenchResult) -> bool:
    """A measurement the chart can draw (a failed point has no positive, finite speed)."""
    return r.n > 0 and math.isfinite(r.gflops) and r.gflops > 0


class BenchChart(QWidget):
    """GFLOP/s against size (log-log) with spread bands and peak lines; the speed-up below it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart = QChart()
        self.chart.legend().setVisible(True)
        self.chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        self.chart.setMargins(QMargins(4, 4, 4, 4))
        self.chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
        self.x_axis = QLogValueAxis()
        self.x_axis.setBase(2.0)
        self.x_axis.setLabelFormat("%d")
        self.y_axis = QLogValueAxis()
        self.y_axis.setBase(10.0)
        self.y_axis.setLabelFormat("%g")
        self.y_axis.setMinorTickCount(8)
        self.chart.addAxis(self.x_axis, Qt.AlignmentFlag.AlignBottom)
        self.chart.addAxis(self.y_axis, Qt.AlignmentFlag.AlignLeft)
        self.view = QChartView(self.chart, self)
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setMinimumHeight(240)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

        self.speedup_chart = QChart()
        self.speedup_chart.setMargins(QMargins(4, 4, 4, 4))
        self.speedup_chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
        self.speedup_chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        self.speedup_view = QChartView(self.speedup_chart, self)
        self.speedup_view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.speedup_view.setMinimumHeight(180)
        self.speedup_view.setVisible(False)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view, 3)
        lay.addWidget(self.speedup_view, 2)
        self._series: dict[tuple[str, str], QLineSeries] = {}
        self._points: dict[tuple[str, str], dict[int, float]] = {}
        self._bands: dict[tuple[str, str], QAreaSeries] = {}
        self._band_points: dict[tuple[str, str], dict[int, tuple[float, float]]] = {}
        self._peaks: dict[str, QLineSeries] = {}
        self._peak_values: dict[str, float] = {}
        self._names: dict[str, str] = {}  # device -> its real name
        self._speedups: list[tuple[str, int, float]] = []  # (dtype, n, x faster)
        self._title_device = ""  # the device named in the title, once a report is shown
        self._apply_theme()
        self.retranslate()
        self._rescale()

    # -- data ---------------------------------------------------------------------------------
    def set_device_names(self, names: Mapping[str, str]) -> None:
        """Name the lines by the devices' real names ("AMD EPYC 7B13 · fp32"), not "cpu"."""
        self._names.update({k: v for k, v in names.items() if v})
        for (device, dtype), s in self._series.items():
            s.setName(self._label(device, dtype))

    def _label(self, device: str, dtype: str) -> str:
        return self.tr("{device} · {dtype}").format(device=self._names.get(device, device), dtype=dtype)

    def clear(self) -> None:
        for s in [*self._series.values(), *self._bands.values(), *self._peaks.values()]:
            self.chart.removeSeries(s)
        self._series.clear()
        self._points.clear()
        self._bands.clear()
        self._band_points.clear()
        self._peaks.clear()
        self._peak_values.clear()
        self._set_speedups([])
        self._rescale()

    def add_point(self, device: str, dtype: str, size: int, gflops: float,
                  band: tuple[float, float] | None = None) -> None:
        key = (device, dtype)
        pts = self._points.setdefault(key, {})
        pts[int(size)] = float(gflops)
        series = self._series.get(key)
        if series is None:
            series = QLineSeries()
            series.setName(self._label(device, dtype))
            series.setPointsVisible(True)
            self.chart.addSeries(series)
            series.attachAxis(self.x_axis)
            series.attachAxis(self.y_axis)
            self._series[key] = series
        series.replace([QPointF(x, y) for x, y in sorted(pts.items())])
        if band is not None and all(v > 0 and math.isfinite(v) for v in band):
            self._band_points.setdefault(key, {})[int(size)] = (min(band), max(band))
            self._draw_band(key)
        self._rescale()

    def _draw_band(self, key: tuple[str, str]) -> None:
        """The spread of the runs: a translucent area from the slower to the faster quartile."""
        pts = sorted(self._band_points.get(key, {}).items())
        if not pts:
            return
        old = self._bands.pop(key, None)
        if old is not None:
            self.chart.removeSeries(old)
        upper, lower = QLineSeries(), QLineSeries()
        upper.append([QPointF(x, hi) for x, (_lo, hi) in pts])
        lower.append([QPointF(x, lo) for x, (lo, _hi) in pts])
        area = QAreaSeries(upper, lower)
        upper.setParent(area)
        lower.setParent(area)
        colour = QColor(self._series[key].color())
        colour.setAlpha(60)
        area.setBrush(QBrush(colour))
        area.setPen(QPen(Qt.PenStyle.NoPen))
        area.setName(self.tr("spread of the runs"))
        self.chart.addSeries(area)
        area.attachAxis(self.x_axis)
        area.attachAxis(self.y_axis)
        for marker in self.chart.legend().markers(area):
            marker.setVisible(False)
        self._bands[key] = area

    def add_result(self, r: BenchResult) -> None:
        if drawable(r):
            self.add_point(r.device, r.dtype, r.n, r.gflops, r.band())

    def set_results(self, results: Iterable[BenchResult]) -> None:
        self.clear()
        for r in sorted(results, key=lambda r: (r.device, _dtype_rank(r.dtype), r.n)):
            self.add_result(r)

    def set_peak(self, peak: Peak | None, dtypes: Iterable[str]) -> None:
        """Dashed lines at the estimated peak of each measured dtype (the colour of its line)."""
        for s in self._peaks.values():
            self.chart.removeSeries(s)
        self._peaks.clear()
        self._peak_values.clear()
        if peak is None:
            self._rescale()
            return
        # One dashed line per distinct peak value: the dtypes it bounds share it ("fp32, fp16"
        # on a CPU whose fp16 has no native path and is bounded by the fp32 peak).
        by_value: dict[float, list[str]] = {}
        for dtype in dtypes:
            value = peak.gflops.get(dtype)
            if value:
                by_value.setdefault(float(value), []).append(dtype)
        for value, names in by_value.items():
            key = ", ".join(names)
            line = QLineSeries()
            line.setName(self.tr("estimated peak · {dtype}").format(dtype=key))
            pen = QPen(self._colour_of(peak.device, names[0]))
            pen.setStyle(Qt.PenStyle.DashLine)
            pen.setWidthF(1.5)
            line.setPen(pen)
            self.chart.addSeries(line)
            line.attachAxis(self.x_axis)
            line.attachAxis(self.y_axis)
            self._peaks[key] = line
            self._peak_values[key] = value
        self._rescale()

    def _colour_of(self, device: str, dtype: str) -> QColor:
        key = next((k for k in self._series if k[1] == dtype and (k[0] == device or device in ("cuda", "rocm"))),
                   None)
        return QColor(self._series[key].color()) if key is not None else self.palette().color(QPalette.ColorRole.Text)

    def set_report(self, report: BenchReport) -> None:
        """Every measurement of the report (the CPU baseline as its own lines), the peak, the speed-up."""
        names = {report.device: report.device_name}
        if report.cpu_name:
            names["cpu"] = report.cpu_name
        self._names.clear()  # this report's devices, not an earlier one's
        self.set_device_names(names)
        self.set_results(report.all_results())
        self._title_device = report.device_name or report.device
        self._set_title()
        self.set_peak(report.peak, report.dtypes())
        self._set_speedups([(s.dtype, s.n, s.speedup) for s in report.speedup])

    def _set_speedups(self, rows: list[tuple[str, int, float]]) -> None:
        self._speedups = rows
        chart = self.speedup_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        self.speedup_view.setVisible(bool(rows))
        if not rows:
            return
        sizes = sorted({n for _, n, _ in rows})
        bars = QBarSeries()
        for dtype in sorted({d for d, _, _ in rows}, key=_dtype_rank):
            bar = QBarSet(dtype)
            values = {n: x for d, n, x in rows if d == dtype}
            bar.append([values.get(n, 0.0) for n in sizes])
            bars.append(bar)
        bars.setLabelsVisible(True)
        bars.setLabelsFormat("@value×")
        chart.addSeries(bars)
        cats = QBarCategoryAxis()
        cats.append([f"{n}×{n}" for n in sizes])
        values_axis = QValueAxis()
        values_axis.setRange(0.0, _nice_ceiling(max(x for _, _, x in rows) * 1.15))
        values_axis.setLabelFormat("%g")
        values_axis.setTitleText(self.tr("× faster than the CPU"))
        chart.addAxis(cats, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(values_axis, Qt.AlignmentFlag.AlignLeft)
        bars.attachAxis(cats)
        bars.attachAxis(values_axis)

    def series(self) -> list[QLineSeries]:
        """The measurement lines (not the bands or the peak lines)."""
        return list(self._series.values())

    def band_count(self) -> int:
        return len(self._bands)

    def peak_lines(self) -> dict[str, float]:
        """The dtypes of each dashed peak line ("fp32, fp16") -> the GFLOP/s it is drawn at."""
        return dict(self._peak_values)

    def speedups(self) -> list[tuple[str, int, float]]:
        return list(self._speedups)

    def point_count(self) -> int:
        return sum(s.count() for s in self._series.values())

    def _rescale(self) -> None:
        xs = [x for pts in self._points.values() for x in pts]
        ys = [y for pts in self._points.values() for y in pts.values()]
        ys += [v for band in self._band_points.values() for pair in band.values() for v in pair]
        if xs:
            lo, hi = min(xs), max(xs)
            x0, x1 = 2 ** math.floor(math.log2(lo)), 2 ** math.ceil(math.log2(hi) + (lo == hi))
        else:
            x0, x1 = 128, 4096
        self.x_axis.setRange(x0, x1)
        for dtype, line in self._peaks.items():
            v = self._peak_values[dtype]
            line.replace([QPointF(x0, v), QPointF(x1, v)])
        ys += list(self._peak_values.values())
        ys = [y for y in ys if y > 0 and math.isfinite(y)]
        if ys:
            bottom = 10 ** math.floor(math.log10(min(ys)))
            top = 10 ** math.ceil(math.log10(max(ys) * 1.2))
            self.y_axis.setRange(bottom, max(top, bottom * 10))
        else:
            self.y_axis.setRange(1.0, 1000.0)

    # -- look ---------------------------------------------------------------------------------
    def _apply_theme(self) -> None:
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        theme = QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight
        for chart in (self.chart, self.speedup_chart):
            chart.setTheme(theme)
            chart.setBackgroundVisible(False)

    def _set_title(self) -> None:
        if self._title_device:
            self.chart.setTitle(self.tr("Matrix multiply speed on {device}").format(device=self._title_device))
        else:
            self.chart.setTitle(self.tr("Matrix multiply speed"))

    def retranslate(self) -> None:
        self._set_title()
        self.x_axis.setTitleText(self.tr("Matrix size (n × n)"))
        # short: a long title is cut off on a low chart (the axis is as tall as the plot)
        self.y_axis.setTitleText(self.tr("GFLOP/s (log scale)"))
        self.view.setAccessibleName(self.tr("Chart of GFLOP/s against matrix size"))
        self.view.setAccessibleDescription(self.tr("Higher is faster; both axes are logarithmic."))
        self.speedup_chart.setTitle(self.tr("Speed-up over the CPU"))
        self.speedup_view.setAccessibleName(self.tr("Chart of the accelerator's speed-up over the CPU"))
        for (device, dtype), s in self._series.items():
            s.setName(self._label(device, dtype))
        for dtype, line in self._peaks.items():
            line.setName(self.tr("estimated peak · {dtype}").format(dtype=dtype))
        if self._speedups:
            self._set_speedups(self._speedups)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            self._apply_theme()
        super().changeEvent(event)


def _dtype_rank(dtype: str) -> int:
    return DTYPE_ORDER.index(dtype) if dtype in DTYPE_ORDER else len(DTYPE_ORDER)


def _nice_ceiling(x: float) -> float:
    if x <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(x))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= x:
            return step * mag
    return 10 * mag
