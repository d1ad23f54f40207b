"""The real Codex (codex-acp) asks through Baton's approval dialog: approving in the dialog
runs the command, as Codex itself would after its own prompt."""

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
from tests.acp_agents import codex_agent
from tests.responses_server import ResponsesReply, ResponsesServer

pytestmark = pytest.mark.integration

WAIT_MS = 300_000


def _model(body: dict[str, Any]) -> ResponsesReply:
    if any(item.get("type") == "function_call_output" for item in body.get("input", [])):
        return ResponsesReply(text="Copied.")
    return ResponsesReply(call=("exec_command", {"cmd": "cp notes.txt copy.txt"}))


@pytest.mark.usefixtures("qasync_loop")
def test_approving_codex_s_command_in_the_dialog_runs_it(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    queue = ApprovalQueue()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("keep\n", encoding="utf-8")
    with ResponsesServer(_model) as server:
        agent = codex_agent(tmp_path / "cx-home", server.base_url, monkeypatch)
        runner = Runner(
            RunRequest(mode="single", steps=[StepSpec("codex", "Copy the notes")], cwd=work),
            settings=Settings(policy={"bash": "ask"}),
            responder=queue,
            record=False,
            agents=AgentCatalog(agents=[agent]),
        )
        try:
            task = asyncio.ensure_future(runner.run())
            qtbot.waitUntil(queue.dialog.isVisible, timeout=WAIT_MS)
            dialog = queue.dialog
            assert dialog.headline.text() == "codex wants to run a command"
            assert dialog.command_edit.toPlainText() == "cp notes.txt copy.txt"
            assert not (work / "copy.txt").exists()

            qtbot.waitUntil(dialog.buttons_enabled)
            qtbot.mouseClick(dialog.approve_once_button, Qt.MouseButton.LeftButton)

            qtbot.waitUntil(task.done, timeout=WAIT_MS)
            assert task.result().status == "ok"
            assert (work / "copy.txt").read_text(encoding="utf-8") == "keep\n"
        finally:
            if queue._dialog is not None:
                queue._dialog.clear_request()
                queue._dialog.deleteLater()
