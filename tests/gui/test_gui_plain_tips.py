"""Tooltips quote what a model, a tool or a checkout said: shown as written, never as HTML
(Qt renders a tooltip that looks like HTML as HTML — a local image would be loaded)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.record.run_state import ToolCall
from gui.run.tool_call_row import ToolCallRow
from gui.widgets import ElidedLabel
from gui.widgets.plain_text import plain_tip
from tests.gui.labels import tip_shows

HOSTILE = [
    '<img src="/etc/x.png"> rm -rf build',
    "echo <b>loud</b>\n  second line  with  spaces",
    "a < b && c > d <i>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_tip_that_looks_like_html_shows_as_written(qapp: object, text: str) -> None:
    assert tip_shows(plain_tip(text)) == text


def test_a_plain_tip_is_left_as_it_is() -> None:
    assert plain_tip("Working in /home/ana/code") == "Working in /home/ana/code"


def test_an_elided_labels_tip_shows_its_whole_text(qtbot: QtBot) -> None:
    label = ElidedLabel(HOSTILE[0], Qt.TextElideMode.ElideRight)
    qtbot.addWidget(label)
    assert tip_shows(label.toolTip()) == HOSTILE[0]


def test_a_tool_calls_tip_shows_the_command_as_sent(qtbot: QtBot) -> None:
    call = ToolCall(call_id="c", tool="bash", arguments={"command": HOSTILE[0]}, started=0.0)
    row = ToolCallRow(call)
    qtbot.addWidget(row)
    assert tip_shows(row.summary.toolTip()) == f"bash: {HOSTILE[0]}"
