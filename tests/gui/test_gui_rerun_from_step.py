"""Re-run from a step pane's menu: the step's task and agent edited in the dialog, the steps
before it reused from the saved run (no request for them), the later ones run again."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.run.run_request import RunRequest, StepSpec
from gui.run.rerun_dialog import RerunDialog
from gui.run.step_pane import StepPane
from gui.window.main_window import MainWindow
from tests.gui.conftest import OFFSCREEN_NOISE, DialogAnswerer
from tests.gui.launching import launch_request, wait_for_session, wait_until_finished
from tests.gui.menus import choose_from_button_menu
from tests.llm_server import LLMServer, Reply

pytestmark = [
    pytest.mark.usefixtures("qasync_loop"),
    # The offscreen platform cannot grab the keyboard for a popup menu; the menu works anyway.
    pytest.mark.qt_log_ignore(
        OFFSCREEN_NOISE, "This plugin does not support grabbing the keyboard"
    ),
]


def _choose_rerun(qtbot: QtBot, pane: StepPane) -> None:
    """Click the pane's "⋯" and pick "Re-run from here…" with the keyboard, as a person."""
    choose_from_button_menu(qtbot, pane.menu_button, (Qt.Key.Key_Down, Qt.Key.Key_Return))


def test_rerun_from_step_3_with_an_edited_task_sends_nothing_for_steps_1_and_2(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    llm_server: LLMServer,
    dialogs: DialogAnswerer,
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("files"), Reply.answer("a plan"), Reply.answer("looks fine"))
    window = make_window()
    steps = [
        StepSpec("scout", "find"),
        StepSpec("planner", "plan {previous}"),
        StepSpec("worker", "do {previous}"),
    ]
    first = launch_request(qtbot, window, RunRequest("chain", steps, window.working_folder))
    assert wait_until_finished(qtbot, first) == "ok"
    qtbot.waitUntil(lambda: len(first.view.panes()) == 3)

    def edit(dialog: QWidget) -> None:
        assert isinstance(dialog, RerunDialog)
        assert dialog.windowTitle() == "Re-run from step 3"
        assert dialog.task.toPlainText() == "do {previous}"
        dialog.task.selectAll()
        qtbot.keyClicks(dialog.task, "check {previous} twice")
        dialog.agent.setFocus()
        qtbot.keyClicks(dialog.agent, "planner")  # type-ahead picks the agent

    dialogs.answer("Re-run", before=edit)
    llm_server.queue(Reply.answer("checked"))
    _choose_rerun(qtbot, first.view.pane(2))
    second = wait_for_session(qtbot, window, count=2)
    assert wait_until_finished(qtbot, second) == "ok"

    assert len(llm_server.requests) == 4  # none for steps 1 and 2
    assert llm_server.requests[3].user_text == "check a plan twice"
    state = second.view.state()
    assert [s.agent for s in state.steps] == ["scout", "planner", "planner"]
    qtbot.waitUntil(lambda: len(second.view.panes()) == 3)
    assert second.view.pane(0).model.full_text() == f"reused from run {first.run_id}"
    assert second.view.pane(1).model.full_text() == f"reused from run {first.run_id}"
    origin = f"re-run from run {first.run_id}, at step 3"
    assert second.view.header.origin.full_text() == f"·  {origin}"


def test_a_step_after_a_failed_one_says_why_it_cannot_be_rerun(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.error(400, "no"))
    window = make_window()
    steps = [StepSpec("scout", "find"), StepSpec("planner", "plan {previous}")]
    run = launch_request(qtbot, window, RunRequest("chain", steps, window.working_folder))
    assert wait_until_finished(qtbot, run) == "error"
    qtbot.waitUntil(lambda: len(run.view.panes()) == 2)
    _choose_rerun(qtbot, run.view.pane(1))
    banner = window.runs_view.history.banner
    qtbot.waitUntil(banner.isVisible)
    assert banner.message().startswith("Step 1 of run")
    assert "did not finish ok" in banner.message()
    assert len(llm_server.requests) == 1
