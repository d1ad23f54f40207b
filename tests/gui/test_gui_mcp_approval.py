"""An MCP tool call in the window: the approval dialog names the tool and its server and shows
the server's description and read-only / destructive hints beside the arguments; the call
runs against the real SDK test server once approved."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.events import Event, ToolCallFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.approval_queue import ApprovalQueue
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import configure, wait_no_server_left, write_agent


@pytest.fixture
def queue(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApprovalQueue]:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    approvals = ApprovalQueue()
    yield approvals
    if approvals._dialog is not None:
        approvals._dialog.clear_request()
        approvals._dialog.deleteLater()


@pytest.mark.usefixtures("qasync_loop")
def test_the_dialog_shows_the_server_and_its_hints_and_approving_runs_the_call(
    qtbot: QtBot, llm_server: LLMServer, queue: ApprovalQueue, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(
        Reply.tool("mcp__t__delete_everything", {"confirm": False}), Reply.answer("done")
    )
    events: list[Event] = []
    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="x")], cwd=tmp_path)
    runner = Runner(
        request, settings=llm_server.settings(), responder=queue, listeners=[events.append]
    )
    task = asyncio.ensure_future(runner.run())

    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible, timeout=60_000)
    assert dialog.headline.text() == "mcp-user wants to use delete_everything of the MCP server t"
    assert dialog.tool_note.isVisible()
    note = dialog.tool_note.text()
    assert "MCP server t" in note and "A test server for Baton" in note and "destructive" in note
    assert json.loads(dialog.json_view.toPlainText()) == {"confirm": False}

    qtbot.waitUntil(dialog.buttons_enabled)
    qtbot.mouseClick(dialog.approve_once_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done, timeout=60_000)
    assert task.result().status == "ok"
    (call,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert call.status == "ok" and call.result == "kept"
    wait_no_server_left()
