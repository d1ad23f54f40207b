"""How a run, a step or a tool call says how it is doing: words, colours, a painted icon.

Status icons are painted, not loaded: a filled disc with a check, a cross or a pause, a ring
for pending, a dashed ring for "not run", and for running a rotating arc. All spinners share
one timer that only runs while a spinner is shown, and each repaint reads the angle from the
clock, so a hundred spinners cost one timer and a few small paints per tick.
"""

from __future__ import annotations

import math
import time
import weakref

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPointF, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from core.record.run_names import status_word
from gui.theme import SEVERITY_HUES, STATUS_TEXT, is_dark, mix, tone_color

PHASE_LABELS = {
    "pending": "pending",
    "running": "running",
    "waiting": "waiting for you",
    "ok": "done",
    "error": "failed",
    "aborted": "cancelled",
    "not_run": "not run",
    "interrupted": "interrupted",
}
"""Words for a step's phase (``core.record.run_state.StepPhase``), as shown in its header, plus
``interrupted``: a saved run that ended while the step was still running."""


def run_status_label(status: str) -> str:
    """A run's status as a label: the shared word (:data:`core.record.run_names.STATUS_WORDS`),
    capitalised — ``Done``, ``Failed``, ``Cancelled``, ``Waiting for you``, ``Interrupted``."""
    word = status_word(status)
    return word[:1].upper() + word[1:]


_HUES = {
    "running": SEVERITY_HUES["info"],
    "waiting": SEVERITY_HUES["warning"],
    "budget": SEVERITY_HUES["warning"],
    "ok": SEVERITY_HUES["ok"],
    "error": SEVERITY_HUES["error"],
}
SPIN_INTERVAL_MS = 80


def status_tone(phase: str) -> str:
    """The text tone (:func:`gui.theme.set_tone`) of ``phase`` (phase or run status)."""
    tone = "waiting" if phase == "budget" else phase
    return tone if tone in STATUS_TEXT else "secondary"


def status_color(palette: QPalette, phase: str) -> QColor:
    """Text colour for ``phase`` (phase or run status), readable on the palette's base."""
    return tone_color(palette, status_tone(phase))


def fill_color(palette: QPalette, phase: str) -> QColor:
    """The disc colour of a status icon: saturated, a little lighter on dark palettes."""
    hue = _HUES.get(phase)
    if hue is None:
        return mix(
            palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.5
        )
    lightness = 0.52 if is_dark(palette) else 0.44
    return QColor.fromHslF(hue / 360.0, 0.62 if phase != "waiting" else 0.85, lightness)


def format_seconds(seconds: float) -> str:
    """``4.2 s``, ``42 s``, ``3m 04s``, ``1h 02m``: short, and steady while it ticks.

    Never below zero: a span whose clock ran backwards (a run file joined from two machines,
    an edited one) took no time anyone can tell, and ``-0.0 s`` reads as a bug."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def format_ms(milliseconds: float) -> str:
    return f"{milliseconds:.0f} ms" if milliseconds < 1000 else format_seconds(milliseconds / 1000)


class SpinnerArea(QWidget):
    """A widget whose spinner is a small part of it (a tool call's summary line): at each
    tick only :meth:`spinner_rect` is repainted, not the whole line with its text."""

    def spinner_rect(self) -> QRect:
        raise NotImplementedError


class _SpinnerClock(QObject):
    """One timer for every spinner; runs only while a registered widget is shown. A spinner
    hidden with its window, tab or folded pane stops costing ticks, and one closed at the
    end of a run (or of a test) leaves no timer behind."""

    def __init__(self) -> None:
        super().__init__()
        self._widgets: weakref.WeakSet[QWidget] = weakref.WeakSet()
        self._timer = QTimer(self)
        self._timer.setInterval(SPIN_INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def register(self, widget: QWidget) -> None:
        if widget not in self._widgets:
            self._widgets.add(widget)
            widget.installEventFilter(self)
        self._follow_visibility()

    def unregister(self, widget: QWidget) -> None:
        if widget in self._widgets:
            self._widgets.discard(widget)
            widget.removeEventFilter(self)
        self._follow_visibility()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A registered widget was shown or hidden (Qt has already changed its visibility)."""
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            self._follow_visibility()
        return False

    def is_ticking(self) -> bool:
        return self._timer.isActive()

    def _follow_visibility(self) -> None:
        shown = False
        for widget in list(self._widgets):
            if not shiboken6.isValid(widget):
                self._widgets.discard(widget)
            elif widget.isVisible():
                shown = True
        if not shown:
            self._timer.stop()
        elif not self._timer.isActive():
            self._timer.start()

    def _tick(self) -> None:
        for widget in list(self._widgets):
            if shiboken6.isValid(widget) and widget.isVisible():
                if isinstance(widget, SpinnerArea):
                    widget.update(widget.spinner_rect())
                else:
                    widget.update()
        self._follow_visibility()


_clock: _SpinnerClock | None = None


def spinner_clock() -> _SpinnerClock:
    """The shared clock: ``register(widget)`` repaints it every tick while it is visible."""
    global _clock
    if _clock is None or not shiboken6.isValid(_clock):
        _clock = _SpinnerClock()
    return _clock


def paint_status(
    painter: QPainter, box: QRectF, phase: str, palette: QPalette, *, compact: bool = False
) -> None:
    """Draw the status mark of ``phase`` into ``box`` (a square). ``compact`` draws only the
    mark, no disc, for one-line rows. A running spinner's angle comes from the clock."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    side = box.width()
    color = fill_color(palette, phase)
    width = max(1.4, side / 10)
    if phase == "running":
        pen = QPen(color, width * 1.2)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        angle = int((time.monotonic() * 1.1 % 1.0) * 360 * 16)
        painter.drawArc(box.adjusted(1, 1, -1, -1), -angle, 270 * 16)
    elif phase in ("pending", "not_run"):
        pen = QPen(color, width)
        if phase == "not_run":
            pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.drawEllipse(box.adjusted(1, 1, -1, -1))
    elif compact:
        _draw_mark(painter, phase, color, box, width * 1.3)
    else:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawEllipse(box)
        inner = box.adjusted(side * 0.22, side * 0.22, -side * 0.22, -side * 0.22)
        _draw_mark(painter, phase, QColor("white"), inner, width * 1.1)
    painter.restore()


def _draw_mark(painter: QPainter, phase: str, color: QColor, box: QRectF, width: float) -> None:
    pen = QPen(color, width)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    x, y, w, h = box.x(), box.y(), box.width(), box.height()

    def line(x1: float, y1: float, x2: float, y2: float) -> None:
        painter.drawLine(QPointF(x + w * x1, y + h * y1), QPointF(x + w * x2, y + h * y2))

    if phase == "ok":
        points = [(0.08, 0.55), (0.4, 0.85), (0.95, 0.18)]
        painter.drawPolyline([QPointF(x + w * px, y + h * py) for px, py in points])
    elif phase == "error":
        line(0.15, 0.15, 0.85, 0.85)
        line(0.85, 0.15, 0.15, 0.85)
    elif phase == "waiting":
        line(0.33, 0.15, 0.33, 0.85)
        line(0.67, 0.15, 0.67, 0.85)
    elif phase == "aborted":
        radius = min(w, h) / 2
        centre = box.center()
        painter.drawEllipse(centre, radius, radius)
        offset = radius * math.cos(math.pi / 4)
        painter.drawLine(
            QPointF(centre.x() - offset, centre.y() + offset),
            QPointF(centre.x() + offset, centre.y() - offset),
        )


class StatusIcon(QWidget):
    """A small painted status mark (see :func:`paint_status`) with the phase as tooltip."""

    def __init__(self, phase: str = "pending", size: int = 16, *, compact: bool = False) -> None:
        super().__init__()
        self._phase = ""
        self._size = size
        self._compact = compact
        self.setFixedSize(QSize(size, size))
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.set_phase(phase)

    def phase(self) -> str:
        return self._phase

    def set_phase(self, phase: str) -> None:
        if phase == self._phase:
            return
        self._phase = phase
        self.setToolTip(PHASE_LABELS.get(phase, phase))
        if phase == "running":
            spinner_clock().register(self)
        else:
            spinner_clock().unregister(self)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        pad = 1.5
        side = float(self._size)
        box = QRectF(pad, pad, side - 2 * pad, side - 2 * pad)
        paint_status(painter, box, self._phase, self.palette(), compact=self._compact)
        painter.end()
