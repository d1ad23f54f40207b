"""Usage as bars (QtCharts): a run's steps, and History's days and agents.

QtCharts (PySide6-Addons) rather than pyqtgraph: the bundle grows by its two libraries
(about 3 MB) instead of numpy's 30 MB. Two charts side by side, each a :class:`BarChart`:
tokens stacked by kind, and cost. A chart is rebuilt only when its numbers change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QStackedBarSeries,
    QValueAxis,
)
from PySide6.QtCore import QMargins, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHBoxLayout, QWidget

from core.events import UsageStats
from gui.theme import SEVERITY_HUES, tint

TOKEN_KINDS = ("input", "output", "cache read", "cache write")
_KIND_HUES = {
    "input": SEVERITY_HUES["info"],
    "output": SEVERITY_HUES["ok"],
    "cache read": 270,
    "cache write": SEVERITY_HUES["warning"],
}


@dataclass(frozen=True)
class UsageBar:
    """One bar's worth of figures: a step, a day or an agent."""

    label: str
    usage: UsageStats
    seconds: float | None = None


def _tokens(usage: UsageStats) -> dict[str, float]:
    return {
        "input": usage.input,
        "output": usage.output,
        "cache read": usage.cache_read,
        "cache write": usage.cache_write,
    }


class BarChart(QChartView):
    """A small bar chart; :meth:`values` says what it draws (for tests and tooltips)."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(210)
        self._title = title
        self._values: dict[str, list[float]] = {}
        self._labels: list[str] = []

    def values(self) -> dict[str, list[float]]:
        return {kind: list(values) for kind, values in self._values.items()}

    def labels(self) -> list[str]:
        return list(self._labels)

    def set_values(
        self, labels: Sequence[str], values: dict[str, list[float]], *, stacked: bool
    ) -> None:
        if list(labels) == self._labels and values == self._values:
            return
        self._labels, self._values = list(labels), {k: list(v) for k, v in values.items()}
        chart = QChart()
        chart.setTitle(self._title)
        chart.setMargins(QMargins(4, 4, 4, 4))
        chart.legend().setVisible(len(values) > 1)
        chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        series = QStackedBarSeries() if stacked else QBarSeries()
        palette = self.palette()
        for kind, numbers in values.items():
            bar_set = QBarSet(kind)
            bar_set.append(numbers)
            bar_set.setColor(tint(palette, _KIND_HUES.get(kind, SEVERITY_HUES["info"]), 0.7))
            bar_set.setBorderColor(QColor(0, 0, 0, 0))
            series.append(bar_set)
        chart.addSeries(series)
        categories = QBarCategoryAxis()
        categories.append(list(labels))
        chart.addAxis(categories, Qt.AlignmentFlag.AlignBottom)
        series.attachAxis(categories)
        axis = QValueAxis()
        axis.setLabelFormat("%.0f" if stacked else "%.3g")
        columns = list(zip(*values.values(), strict=True)) if values else []
        top = max((sum(c) if stacked else max(c) for c in columns), default=0.0)
        axis.setRange(0, top or 1)  # all zero (an unpriced model): an empty but valid axis
        axis.setTickCount(4)
        chart.addAxis(axis, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(axis)
        if top:
            axis.applyNiceNumbers()
        old = self.chart()
        self.setChart(chart)
        if old is not None:
            old.deleteLater()


class UsageCharts(QWidget):
    """Tokens (stacked by kind) and cost per bar, side by side."""

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tokens = BarChart(f"Tokens per {what}")
        self.cost = BarChart(f"Cost per {what} (US$)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tokens, 3)
        layout.addWidget(self.cost, 2)

    def set_bars(self, bars: Sequence[UsageBar]) -> None:
        labels = [bar.label for bar in bars]
        tokens = {kind: [_tokens(bar.usage)[kind] for bar in bars] for kind in TOKEN_KINDS}
        shown = {kind: values for kind, values in tokens.items() if any(values)}
        self.tokens.set_values(labels, shown or {"input": [0.0] * len(bars)}, stacked=True)
        self.cost.set_values(labels, {"cost": [bar.usage.cost for bar in bars]}, stacked=False)
        tips = [
            f"{bar.label}: {bar.usage.line() or 'no usage'}"
            + (f" · {bar.seconds:.1f} s" if bar.seconds is not None else "")
            for bar in bars
        ]
        self.setToolTip("\n".join(tips))
