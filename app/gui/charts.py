"""The speed-test chart: GFLOP/s against matrix size, one line per device and dtype.

QtCharts is a large module; the Speed test page imports this file only when it is first
shown, so the wizard starts without loading it.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCharts import QChart, QChartView, QLineSeries, QLogValueAxis, QValueAxis
from PySide6.QtCore import QEvent, QMargins, QPointF, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from app.core.bench import BenchReport, BenchResult


def drawable(r: BenchResult) -> bool:
    """A measurement the chart can draw (a failed point has no positive, finite speed)."""
    return r.n > 0 and math.isfinite(r.gflops) and r.gflops > 0


class BenchChart(QWidget):
    """A QChartView with one QLineSeries per (device, dtype); x is log2 matrix size."""

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
        self.y_axis = QValueAxis()
        self.y_axis.setLabelFormat("%.0f")
        self.chart.addAxis(self.x_axis, Qt.AlignmentFlag.AlignBottom)
        self.chart.addAxis(self.y_axis, Qt.AlignmentFlag.AlignLeft)
        self.view = QChartView(self.chart, self)
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setMinimumHeight(220)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view)
        self._series: dict[tuple[str, str], QLineSeries] = {}
        self._points: dict[tuple[str, str], dict[int, float]] = {}
        self._apply_theme()
        self.retranslate()
        self._rescale()

    # -- data ---------------------------------------------------------------------------------
    def clear(self) -> None:
        for s in self._series.values():
            self.chart.removeSeries(s)
        self._series.clear()
        self._points.clear()
        self._rescale()

    def add_point(self, device: str, dtype: str, size: int, gflops: float) -> None:
        key = (device, dtype)
        pts = self._points.setdefault(key, {})
        pts[int(size)] = float(gflops)
        series = self._series.get(key)
        if series is None:
            series = QLineSeries()
            series.setName(f"{device} · {dtype}")
            series.setPointsVisible(True)
            self.chart.addSeries(series)
            series.attachAxis(self.x_axis)
            series.attachAxis(self.y_axis)
            self._series[key] = series
        series.replace([QPointF(x, y) for x, y in sorted(pts.items())])
        self._rescale()

    def add_result(self, r: BenchResult) -> None:
        if drawable(r):
            self.add_point(r.device, r.dtype, r.n, r.gflops)

    def set_results(self, results: Iterable[BenchResult]) -> None:
        self.clear()
        for r in results:
            self.add_result(r)

    def set_report(self, report: BenchReport) -> None:
        """Every measurement of the report: the device's, and the CPU baseline's as its own lines."""
        self.set_results(report.all_results())

    def series(self) -> list[QLineSeries]:
        return list(self._series.values())

    def point_count(self) -> int:
        return sum(s.count() for s in self._series.values())

    def _rescale(self) -> None:
        xs = [x for pts in self._points.values() for x in pts]
        ys = [y for pts in self._points.values() for y in pts.values()]
        if xs:
            lo, hi = min(xs), max(xs)
            self.x_axis.setRange(2 ** math.floor(math.log2(lo)), 2 ** math.ceil(math.log2(hi) + (lo == hi)))
        else:
            self.x_axis.setRange(128, 4096)
        top = max(ys) if ys else 100.0
        self.y_axis.setRange(0.0, _nice_ceiling(top * 1.1))
        self.y_axis.applyNiceNumbers()

    # -- look ---------------------------------------------------------------------------------
    def _apply_theme(self) -> None:
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        self.chart.setTheme(QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight)
        self.chart.setBackgroundVisible(False)

    def retranslate(self) -> None:
        self.chart.setTitle(self.tr("Matrix multiply speed"))
        self.x_axis.setTitleText(self.tr("Matrix size (n × n)"))
        self.y_axis.setTitleText(self.tr("GFLOP/s (higher is faster)"))
        self.view.setAccessibleName(self.tr("Chart of GFLOP/s against matrix size"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            self._apply_theme()
        super().changeEvent(event)


def _nice_ceiling(x: float) -> float:
    if x <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(x))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= x:
            return step * mag
    return 10 * mag
