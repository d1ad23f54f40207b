"""A preset's steps drawn small: ``scout → planner → worker``, or a fan for parallel runs.

Used in the Presets view's header and in the launch dialog, so a person sees the shape of a
run before reading any YAML. Each agent is a rounded pill tinted by a hue derived from its
name (the same agent always gets the same colour, as in the agents list); an agent that does
not exist is drawn with a red outline and a tooltip saying so.

Chains wrap onto a second line when they do not fit; parallel runs are drawn as a fork (a dot
with a branch to each task, the tasks stacked), which is how they run: all at once.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from gui.theme import SEVERITY_HUES, is_dark, mix, secondary_text

PILL_HEIGHT = 22
PILL_PAD = 10
ARROW = 22
ROW_GAP = 6
FORK = 26


@dataclass(frozen=True)
class ChainStep:
    agent: str
    known: bool = True


def agent_color(name: str, dark: bool) -> QColor:
    """The colour of an agent everywhere it is drawn small (derived from its name)."""
    hue = zlib.crc32(name.casefold().encode()) % 360
    return QColor.fromHslF(hue / 360, 0.45, 0.42 if dark else 0.55)


class PresetChain(QWidget):
    """Paints the steps of one preset (or ad-hoc run). GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PresetChain")
        self._mode = "chain"
        self._steps: list[ChainStep] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    # -- public API ----------------------------------------------------------------------

    def set_steps(self, mode: str, steps: list[ChainStep]) -> None:
        self._mode = mode
        self._steps = list(steps)
        unknown = [s.agent for s in steps if not s.known]
        self.setToolTip(
            f"Unknown agent{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"
            if unknown
            else ""
        )
        self.updateGeometry()
        self.update()

    def steps(self) -> list[ChainStep]:
        return list(self._steps)

    def describe(self) -> str:
        """The drawing in words (``scout → planner``), for tests and accessibility."""
        joiner = " → " if self._mode == "chain" else " + "
        return joiner.join(step.agent for step in self._steps)

    # -- layout --------------------------------------------------------------------------

    def _font(self) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.92))
        font.setWeight(QFont.Weight.DemiBold)
        return font

    def _pill_width(self, metrics: QFontMetrics, step: ChainStep) -> int:
        return metrics.horizontalAdvance(step.agent) + 2 * PILL_PAD + 10

    def _rows(self, width: int) -> list[list[int]]:
        """Step indexes per row: chains wrap, parallel runs stack one task per row."""
        if self._mode == "parallel":
            return [[i] for i in range(len(self._steps))]
        metrics = QFontMetrics(self._font())
        rows: list[list[int]] = [[]]
        used = 0
        for index, step in enumerate(self._steps):
            needed = self._pill_width(metrics, step) + (ARROW if rows[-1] else 0)
            if rows[-1] and used + needed > width:
                rows.append([])
                used = 0
                needed = self._pill_width(metrics, step)
            rows[-1].append(index)
            used += needed
        return rows

    def _height_for(self, width: int) -> int:
        rows = len(self._rows(width)) if self._steps else 1
        return rows * PILL_HEIGHT + (rows - 1) * ROW_GAP + 4

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._height_for(width)

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self._font())
        pills = [self._pill_width(metrics, step) for step in self._steps]
        if self._mode == "parallel":
            width = FORK + max(pills, default=60) + 4
        else:
            width = sum(pills) + ARROW * max(0, len(pills) - 1) + 4
        return QSize(width, self._height_for(max(self.width(), width)))

    def minimumSizeHint(self) -> QSize:
        return QSize(60, self._height_for(max(self.width(), 60)))

    # -- painting ------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._steps:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setFont(self._font())
        metrics = QFontMetrics(painter.font())
        palette = self.palette()
        dark = is_dark(palette)
        line = secondary_text(palette)
        rows = self._rows(self.width() - 2)
        parallel = self._mode == "parallel"
        left0 = 2 + (FORK if parallel else 0)
        if parallel:
            self._paint_fork(painter, line, len(rows))
        for row_number, row in enumerate(rows):
            top = 2 + row_number * (PILL_HEIGHT + ROW_GAP)
            x = float(left0)
            for position, index in enumerate(row):
                step = self._steps[index]
                if position and not parallel:
                    self._paint_arrow(painter, line, x, top + PILL_HEIGHT / 2)
                    x += ARROW
                width = self._pill_width(metrics, step)
                self._paint_pill(painter, QRectF(x, top, width, PILL_HEIGHT), step, dark)
                x += width
        painter.end()

    def _paint_fork(self, painter: QPainter, color: QColor, rows: int) -> None:
        middle = 2 + (rows * PILL_HEIGHT + (rows - 1) * ROW_GAP) / 2
        origin = QPointF(5, middle)
        painter.setPen(QPen(color, 1.4))
        for row in range(rows):
            y = 2 + row * (PILL_HEIGHT + ROW_GAP) + PILL_HEIGHT / 2
            path = QPainterPath(origin)
            path.cubicTo(QPointF(FORK * 0.6, middle), QPointF(FORK * 0.4, y), QPointF(FORK, y))
            painter.drawPath(path)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawEllipse(origin, 3.5, 3.5)

    def _paint_arrow(self, painter: QPainter, color: QColor, x: float, y: float) -> None:
        painter.setPen(QPen(color, 1.4))
        start, end = x + 5, x + ARROW - 5
        painter.drawLine(QPointF(start, y), QPointF(end, y))
        painter.drawLine(QPointF(end - 4, y - 3.5), QPointF(end, y))
        painter.drawLine(QPointF(end - 4, y + 3.5), QPointF(end, y))

    def _paint_pill(self, painter: QPainter, rect: QRectF, step: ChainStep, dark: bool) -> None:
        palette = self.palette()
        base = palette.color(palette.ColorRole.Base)
        text = palette.color(palette.ColorRole.Text)
        accent = agent_color(step.agent, dark)
        radius = rect.height() / 2
        if step.known:
            painter.setPen(QPen(mix(base, accent, 0.55), 1))
            painter.setBrush(mix(base, accent, 0.28 if dark else 0.16))
        else:
            error = QColor.fromHslF(SEVERITY_HUES["error"] / 360, 0.7, 0.5)
            painter.setPen(QPen(error, 1.4, Qt.PenStyle.DashLine))
            painter.setBrush(mix(base, error, 0.12))
        painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), radius, radius)
        dot = QRectF(rect.left() + PILL_PAD - 2, rect.center().y() - 3.5, 7, 7)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(accent)
        painter.drawEllipse(dot)
        painter.setPen(text)
        label = rect.adjusted(PILL_PAD + 8, 0, -PILL_PAD + 2, 0)
        painter.drawText(
            label, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, step.agent
        )
