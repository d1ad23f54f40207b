"""The spinners' shared clock ticks only while a running spinner is shown: hidden with its
window it stops, shown again it resumes, and a finished step stops it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from core.record.run_state import ToolCall
from gui.run.tool_call_row import ToolCallRow
from gui.widgets.run_status import StatusIcon, spinner_clock


def test_the_clock_follows_the_shown_running_spinners(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    icon = StatusIcon("running")
    QVBoxLayout(window).addWidget(icon)
    assert not spinner_clock().is_ticking()  # running, but not on screen yet
    window.show()
    assert spinner_clock().is_ticking()
    window.hide()  # the window goes: its spinner with it
    assert not spinner_clock().is_ticking()
    window.show()
    assert spinner_clock().is_ticking()
    icon.set_phase("ok")
    assert not spinner_clock().is_ticking()
    icon.set_phase("running")
    assert spinner_clock().is_ticking()
    window.close()
    assert not spinner_clock().is_ticking()


def test_a_tool_calls_tick_repaints_its_spinner_not_its_line(qtbot: QtBot) -> None:
    """A running tool call's line is mostly text: each tick repaints the spinner's square
    only (a third of the line's paint, measured), and the text stays on screen."""
    window = QWidget()
    qtbot.addWidget(window)
    call = ToolCall(call_id="c1", tool="bash", arguments={"command": "pytest -q"}, started=0.0)
    row = ToolCallRow(call)
    QVBoxLayout(window).addWidget(row)
    window.resize(600, 80)
    window.show()
    qtbot.waitExposed(window)
    summary = row.summary
    rects = PaintRects()
    summary.installEventFilter(rects)
    square = summary.spinner_rect()
    qtbot.waitUntil(lambda: square in rects.seen)  # focus and the first paints are done
    on_screen = window.screen().grabWindow(window.winId()).toImage()
    rects.seen.clear()
    qtbot.waitUntil(lambda: len(rects.seen) >= 2)
    assert rects.seen[:2] == [square, square]
    now = window.screen().grabWindow(window.winId()).toImage()
    corner = summary.mapTo(window, QPoint(square.right() + 2, 0))
    text = QRect(corner, QSize(summary.width() - square.right() - 2, summary.height()))
    assert now.copy(text) == on_screen.copy(text)  # the text was not painted again
    middle = text.center().y()
    shades = {now.pixelColor(x, middle).name() for x in range(text.left(), text.right())}
    assert len(shades) > 2  # and it still shows


class PaintRects(QObject):
    """The rectangles a widget was asked to paint."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.seen.append(event.rect())
        return False
