"""Usage as bars, drawn with QPainter: a run's steps, and History's days and agents.

Two small bar charts side by side, each a :class:`BarChart`: tokens stacked by kind, and
cost. They are painted by hand rather than with QtCharts because QtCharts ships only in the
PySide6-Addons wheel (420 MB installed, tens of MB in the bundle) and these two charts need
nothing but rectangles, a few labels and a legend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QWidget

from core.model.events import UsageStats
from gui.theme import SEVERITY_HUES, secondary_text, tint

TOKEN_KINDS = ("input", "output", "cache read", "cache write")
_KIND_HUES = {
    "input": SEVERITY_HUES["info"],
    "output": SEVERITY_HUES["ok"],
    "cache read": 270,
    "cache write": SEVERITY_HUES["warning"],
}
_PAD = 6.0
_TICKS = 4


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


def axis_ticks(top: float) -> list[float]:
    """The value axis, 0 first: at most :data:`_TICKS` steps of 1, 2 or 5 times a power of
    ten, the last at or above ``top``, so every label is a round number. An all-zero chart
    (an unpriced model) still gets an axis."""
    if top <= 0:
        return [0.0, 0.5, 1.0]
    least = top / _TICKS
    power = 10.0 ** math.floor(math.log10(least))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= least * (1 - 1e-9))
    count = math.ceil(top / step - 1e-9)
    return [round(step * i, 12) for i in range(count + 1)]


def _tick_text(value: float, stacked: bool) -> str:
    if stacked:
        return f"{value / 1000:g}k" if value >= 1000 else f"{value:.0f}"
    return f"{value:.3g}"


class BarChart(QWidget):
    """A small bar chart; :meth:`values` says what it draws (for tests and tooltips)."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(210)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._title = title
        self._values: dict[str, list[float]] = {}
        self._labels: list[str] = []
        self._stacked = False

    def values(self) -> dict[str, list[float]]:
        return {kind: list(values) for kind, values in self._values.items()}

    def labels(self) -> list[str]:
        return list(self._labels)

    def set_values(
        self, labels: Sequence[str], values: dict[str, list[float]], *, stacked: bool
    ) -> None:
        if list(labels) == self._labels and values == self._values and stacked == self._stacked:
            return
        self._labels, self._values = list(labels), {k: list(v) for k, v in values.items()}
        self._stacked = stacked
        self.update()

    def _ticks(self) -> list[float]:
        columns = list(zip(*self._values.values(), strict=True)) if self._values else []
        return axis_ticks(max((sum(c) if self._stacked else max(c) for c in columns), default=0.0))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text, faint = palette.color(QPalette.ColorRole.Text), secondary_text(palette)
        metrics = QFontMetricsF(self.font())
        line = metrics.height()
        area = QRectF(self.rect()).adjusted(_PAD, _PAD, -_PAD, -_PAD)
        painter.setPen(text)
        painter.drawText(
            area, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, self._title
        )
        area.setTop(area.top() + line + _PAD)
        if len(self._values) > 1:
            area.setBottom(self._draw_legend(painter, area, metrics) - _PAD)
        ticks = self._ticks()
        top = ticks[-1]
        axis_width = max(metrics.horizontalAdvance(_tick_text(t, self._stacked)) for t in ticks)
        plot = area.adjusted(axis_width + _PAD, line / 2, 0, -(line + _PAD / 2))
        if plot.width() <= 0 or plot.height() <= 0:
            return
        for value in ticks:
            y = plot.bottom() - plot.height() * value / top
            painter.setPen(faint)
            painter.drawText(
                QRectF(area.left(), y - line / 2, axis_width, line),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                _tick_text(value, self._stacked),
            )
            grid = QColor(faint)
            grid.setAlpha(60)
            painter.setPen(grid)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        self._draw_bars(painter, plot, top, metrics, faint)

    def _draw_bars(
        self, painter: QPainter, plot: QRectF, top: float, metrics: QFontMetricsF, faint: QColor
    ) -> None:
        count = len(self._labels)
        if not count:
            return
        slot = plot.width() / count
        kinds = list(self._values)
        groups = 1 if self._stacked else max(len(kinds), 1)
        width = min(slot * 0.7, 90.0) / groups  # one bar does not fill the whole chart
        palette = self.palette()
        painter.setPen(Qt.PenStyle.NoPen)
        for index in range(count):
            left = plot.left() + slot * index + (slot - width * groups) / 2
            base = plot.bottom()
            for position, kind in enumerate(kinds):
                value = self._values[kind][index]
                height = plot.height() * value / top
                x = left if self._stacked else left + width * position
                colour = tint(palette, _KIND_HUES.get(kind, SEVERITY_HUES["info"]), 0.7)
                painter.setBrush(colour)
                painter.drawRect(QRectF(x, base - height, width, height))
                if self._stacked:
                    base -= height
        painter.setPen(faint)
        for index, label in enumerate(self._labels):
            cell = QRectF(plot.left() + slot * index, plot.bottom() + 2, slot, metrics.height())
            shown = metrics.elidedText(label, Qt.TextElideMode.ElideRight, slot)
            painter.drawText(cell, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, shown)

    def _draw_legend(self, painter: QPainter, area: QRectF, metrics: QFontMetricsF) -> float:
        """Draw one swatch and name per kind along the bottom; return the legend's top."""
        line = metrics.height()
        y = area.bottom() - line
        widths = [line + 4 + metrics.horizontalAdvance(kind) + 12 for kind in self._values]
        x = area.center().x() - sum(widths) / 2
        palette = self.palette()
        for kind, width in zip(self._values, widths, strict=True):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(tint(palette, _KIND_HUES.get(kind, SEVERITY_HUES["info"]), 0.7))
            painter.drawRect(QRectF(x, y + line * 0.2, line * 0.6, line * 0.6))
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            painter.drawText(QRectF(x + line * 0.6 + 4, y, width, line), kind)
            x += width
        return y


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
