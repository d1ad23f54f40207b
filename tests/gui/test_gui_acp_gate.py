"""The real OpenCode asks through Baton's approval dialog: a person denies a command with a
reason by clicking, OpenCode does not run it, and the reason reaches the model as the next
prompt (ACP's permission answer has no field for one)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.approval_queue import ApprovalQueue
from tests.acp_agents import opencode_agent
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.integration

WAIT_MS = 300_000
"""OpenCode on a loaded 2-core machine takes tens of seconds to start and answer."""


def _model(body: dict[str, Any]) -> Reply:
    if not body.get("tools"):
        return Reply.answer("A title")
    users = " ".join(
        str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"
    )
    if "keep my files" in users:
        return Reply.answer("Understood, nothing deleted.")
    return Reply.tool("bash", {"command": "rm notes.txt", "description": "Delete it"})


@pytest.mark.usefixtures("qasync_loop")
def test_a_deny_reason_typed_in_the_dialog_reaches_opencode_s_model(
    qtbot: QtBot,
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    queue = ApprovalQueue()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("keep\n", encoding="utf-8")
    llm_server.responder = _model
    agent = opencode_agent(tmp_path / "oc-home", llm_server, monkeypatch)
    runner = Runner(
        RunRequest(mode="single", steps=[StepSpec("coder", "Tidy up")], cwd=work),
        settings=Settings(policy={"bash": "ask"}),
        responder=queue,
        record=False,
        agents=AgentCatalog(agents=[agent]),
    )
    try:
        task = asyncio.ensure_future(runner.run())
        qtbot.waitUntil(queue.dialog.isVisible, timeout=WAIT_MS)
        dialog = queue.dialog
        assert dialog.headline.text() == "coder wants to run a command"
        assert dialog.command_edit.toPlainText() == "rm notes.txt"

        qtbot.keyClicks(dialog.reason_edit, "keep my files")
        qtbot.waitUntil(dialog.buttons_enabled)
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)

        qtbot.waitUntil(task.done, timeout=WAIT_MS)
        assert task.result().status == "ok"
        assert (work / "notes.txt").exists()
        prompts = [r for r in llm_server.requests if r.body.get("tools")]
        assert "keep my files" in prompts[-1].user_text
    finally:
        if queue._dialog is not None:
            queue._dialog.clear_request()
            queue._dialog.deleteLater()
