"""An MCP tool's output in the step pane: a real run against the SDK test server, its events
shown in the run view; the open row shows the picture the tool returned and its structured
content, while the model read only their names and JSON."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.events import Event
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all
from gui.run.run_view import RunView
from gui.run.tool_call_row import ToolCallRow
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import configure, write_agent


def test_the_open_row_shows_the_picture_and_the_structured_content(
    qtbot: QtBot, view: RunView, llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(
        Reply.tool("mcp__t__picture"),
        Reply.tool("mcp__t__weather", {"city": "Oslo"}),
        Reply.answer("A picture and the weather."),
    )
    events: list[Event] = []
    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="x")], cwd=tmp_path)
    runner = Runner(
        request, settings=llm_server.settings(), responder=approve_all, listeners=[events.append]
    )
    assert asyncio.run(runner.run()).status == "ok"

    view.load_events(events)
    picture, weather = [w for w in view.pane(0).item_widgets() if isinstance(w, ToolCallRow)]
    assert picture.tool_name() == "mcp__t__picture"
    qtbot.mouseClick(
        picture.summary, Qt.MouseButton.LeftButton, pos=picture.summary.rect().center()
    )
    assert picture.output_text() == "[image: image/png, 70 bytes]"
    shown = picture.attachments
    assert shown is not None and shown.isVisible()
    (label,) = shown.pictures
    assert not label.pixmap().isNull() and label.pixmap().width() == 1
    assert "image/png" in label.toolTip()

    qtbot.mouseClick(
        weather.summary, Qt.MouseButton.LeftButton, pos=weather.summary.rect().center()
    )
    assert '"celsius": 21.5' in weather.output_text()  # the structured content was the answer
    assert weather.attachments is not None and weather.attachments.texts == []  # not twice
