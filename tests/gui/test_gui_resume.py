"""A failed chain's banner offers "Resume from step N" and "Re-run"; resuming reuses the
finished steps (no request for them) and shows them as reused."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.run.run_request import RunRequest, StepSpec
from gui.run.run_controller import RunSession
from gui.window.main_window import MainWindow
from tests.gui.launching import RUN_TIMEOUT_MS, wait_for_session, wait_until_finished
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")


def _failed_chain(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> tuple[MainWindow, RunSession]:
    """A window and a two-step chain in it whose second step failed."""
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("found it"), Reply.error(400, "context too long"))
    window = make_window()
    request = RunRequest(
        mode="chain",
        steps=[StepSpec("scout", "find"), StepSpec("planner", "plan {previous}")],
        cwd=window.working_folder,
    )
    task = asyncio.ensure_future(window.run_controller.launch(request, "ask", window))
    qtbot.waitUntil(task.done, timeout=RUN_TIMEOUT_MS)
    failed = task.result()
    assert failed is not None and wait_until_finished(qtbot, failed) == "error"
    return window, failed


def test_resume_from_the_failed_step_reuses_the_steps_before_it(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    window, failed = _failed_chain(qtbot, make_window, llm_server)
    banner = failed.view.header.banner
    qtbot.waitUntil(banner.isVisible)
    labels = [b.text() for b in banner.findChildren(QPushButton)]
    assert labels == ["Resume from step 2", "Re-run"]
    assert not failed.view.header.rerun_button.isVisible()  # the banner offers it

    llm_server.queue(Reply.answer("the plan"))
    resume = next(b for b in banner.findChildren(QPushButton) if b.text().startswith("Resume"))
    qtbot.mouseClick(resume, Qt.MouseButton.LeftButton)
    resumed = wait_for_session(qtbot, window, count=2)
    assert wait_until_finished(qtbot, resumed) == "ok"
    assert len(llm_server.requests) == 3  # none for step 1
    assert llm_server.requests[2].user_text == "plan found it"
    first = resumed.view.pane(0)
    assert first.model.full_text() == f"reused from run {failed.run_id}"
    assert resumed.view.header.rerun_button.isVisible()
    origin = f"resumed from run {failed.run_id}, at step 2"
    assert resumed.view.header.origin.full_text() == f"·  {origin}"
    history = window.runs_view.history
    qtbot.waitUntil(lambda: len(history.visible_records()) == 2)
    names = [history.model.index(row, 1).data() for row in range(2)]
    assert any(name.endswith(f"↳ {origin}") for name in names)


def test_history_resumes_a_failed_run_and_not_a_finished_one(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    window, failed = _failed_chain(qtbot, make_window, llm_server)

    runs = window.runs_view
    history = runs.history
    runs.show_history()
    qtbot.waitUntil(lambda: [r.id for r in history.visible_records()] == [failed.run_id])
    table = history.table
    qtbot.mouseClick(
        table.viewport(),
        Qt.MouseButton.LeftButton,
        pos=table.visualRect(history.model.index(0, 1)).center(),
    )
    assert history.resume_button.isEnabled()
    assert history.resume_action.isEnabled()
    assert history.resume_action.text() == "Resume from the first unfinished step"

    llm_server.queue(Reply.answer("the plan"))
    qtbot.mouseClick(history.resume_button, Qt.MouseButton.LeftButton)
    resumed = wait_for_session(qtbot, window, count=2)
    assert wait_until_finished(qtbot, resumed) == "ok"
    assert len(llm_server.requests) == 3  # none for step 1
    assert llm_server.requests[2].user_text == "plan found it"
    assert resumed.view.pane(0).model.full_text() == f"reused from run {failed.run_id}"

    runs.show_history()
    qtbot.waitUntil(lambda: len(history.visible_records()) == 2)
    row = [r.id for r in history.visible_records()].index(resumed.run_id)
    qtbot.mouseClick(
        table.viewport(),
        Qt.MouseButton.LeftButton,
        pos=table.visualRect(history.model.index(row, 1)).center(),
    )
    assert not history.resume_button.isEnabled()  # it finished: nothing to resume
    assert not history.resume_action.isEnabled()
