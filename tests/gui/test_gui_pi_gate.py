"""The real pi (0.73.1 and 1.x) asks through Baton's approval dialog: a person edits the
command and approves, or denies with a reason, by clicking — and pi does what was decided."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import RunFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.approval_queue import ApprovalQueue
from tests import real_clis
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.integration


@pytest.fixture
def queue(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApprovalQueue]:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    approvals = ApprovalQueue()
    yield approvals
    if approvals._dialog is not None:
        approvals._dialog.clear_request()
        approvals._dialog.deleteLater()


@pytest.fixture(params=real_clis.PI_CLIS, ids=lambda cli: cli.name)
def pi_run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    queue: ApprovalQueue,
) -> tuple[Runner, Path]:
    """A one-step pi run whose approvals go to the dialog; returns it and its folder."""
    executable = real_clis.find(request.param, monkeypatch)
    work = real_clis.configure_pi(tmp_path, llm_server, monkeypatch)
    worker = AgentDefinition(name="worker", description="w", tools=("bash",), system_prompt="B.")
    run = RunRequest(mode="single", steps=[StepSpec("worker", "Go")], cwd=work, backend="pi")
    runner = Runner(
        run,
        settings=Settings(pi_path=str(executable)),
        responder=queue,
        record=False,
        agents=AgentCatalog(agents=[worker]),
    )
    return runner, work


def _ask(
    qtbot: QtBot, server: LLMServer, queue: ApprovalQueue, runner: Runner, command: str, answer: str
) -> tuple[asyncio.Future[RunFinished], ApprovalDialog]:
    """Start the run with the model calling bash with ``command``; return once the dialog is
    up."""
    server.queue(Reply.tool("bash", {"command": command}), Reply.answer(answer))
    task = asyncio.ensure_future(runner.run())
    qtbot.waitUntil(queue.dialog.isVisible, timeout=60_000)
    return task, queue.dialog


def _click_when_ready(qtbot: QtBot, dialog: ApprovalDialog, button: object) -> None:
    qtbot.waitUntil(dialog.buttons_enabled)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.mark.usefixtures("qasync_loop")
def test_an_edited_command_approved_in_the_dialog_is_what_pi_runs(
    qtbot: QtBot, llm_server: LLMServer, queue: ApprovalQueue, pi_run: tuple[Runner, Path]
) -> None:
    runner, work = pi_run
    task, dialog = _ask(qtbot, llm_server, queue, runner, "echo wrong > out.txt", "ok")
    assert dialog.headline.text() == "worker wants to run a command"
    assert dialog.command_edit.toPlainText() == "echo wrong > out.txt"
    assert not (work / "out.txt").exists()

    dialog.command_edit.setPlainText("echo right > out.txt")
    _click_when_ready(qtbot, dialog, dialog.approve_once_button)

    qtbot.waitUntil(task.done, timeout=60_000)
    assert task.result().status == "ok"
    assert (work / "out.txt").read_text(encoding="utf-8") == "right\n"


@pytest.mark.usefixtures("qasync_loop")
def test_a_deny_reason_typed_in_the_dialog_reaches_the_model(
    qtbot: QtBot, llm_server: LLMServer, queue: ApprovalQueue, pi_run: tuple[Runner, Path]
) -> None:
    runner, work = pi_run
    task, dialog = _ask(qtbot, llm_server, queue, runner, "rm -rf .", "Understood.")

    qtbot.keyClicks(dialog.reason_edit, "keep my files")
    _click_when_ready(qtbot, dialog, dialog.deny_button)

    qtbot.waitUntil(task.done, timeout=60_000)
    assert task.result().status == "ok"
    assert (work / "notes.txt").exists()
    assert "keep my files" in llm_server.requests[1].tool_messages[0]["content"]
