"""The launch dialog against the real runner and the scripted model server: presets with
arguments, ad-hoc runs, inline errors, Ctrl+Enter, project trust, approval choices."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.safety.trust import TrustStore
from gui.window.main_window import MainWindow
from tests.gui.launching import (
    click,
    current_run_page,
    open_launch_dialog,
    pick_preset,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")


def test_a_preset_with_arguments_runs_and_its_steps_appear(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    server.queue(Reply.answer("src/cli.py defines the flags"), Reply.answer("1. add --json"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "scout-and-plan")
    assert dialog.preset_chain.describe() == "scout → planner"
    assert dialog.args_edit.placeholderText() == "<what to plan>"
    type_into(qtbot, dialog.args_edit, 'a "--json flag"')
    assert dialog.preview.toPlainText().split("\n") == [
        "1 · scout",
        "Find all code relevant to: a --json flag",
        "2 · planner",
        'Create an implementation plan for "a --json flag" using this context:',
        "",
        "{previous}",
    ]

    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    qtbot.waitUntil(lambda: window._launch_dialog is None)  # accepted, closed, deleted

    assert window.current_view() == "runs"
    page = current_run_page(window)
    assert page.view is session.view
    qtbot.waitUntil(lambda: len(page.view.panes()) == 2)
    state = page.view.state()
    assert [step.agent for step in state.steps] == ["scout", "planner"]
    assert [step.phase for step in state.steps] == ["ok", "ok"]
    assert state.preset == "scout-and-plan" and state.args == ["a", "--json flag"]
    first, second = server.requests
    assert first.user_text.endswith("Find all code relevant to: a --json flag")
    assert "src/cli.py defines the flags" in second.user_text
    tab = window.runs_view.tabs
    assert tab.tabText(tab.currentIndex()).startswith("scout-and-plan a --json")


def test_a_missing_argument_is_shown_in_the_dialog(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "implement")
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == (
        "“implement” needs 1 argument: <what to build>. Type it in Arguments."
    )
    assert dialog.isVisible()
    assert window.run_controller.sessions() == []
    assert server.requests == []

    type_into(qtbot, dialog.args_edit, 'an "unclosed')
    click(qtbot, dialog.run_button)
    assert dialog.error_text().startswith("Arguments: No closing quotation")


def test_ad_hoc_errors_stay_in_the_dialog(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer, tmp_path: Path
) -> None:
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.tabs.setCurrentIndex(1)
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("")
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == "Nothing to run: add a step with an agent and a task."

    type_into(qtbot, row.task, "map the code")
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == "Step 1: choose an agent."

    line_edit = row.agent.lineEdit()
    assert line_edit is not None
    type_into(qtbot, line_edit, "ghost")
    click(qtbot, dialog.run_button)
    qtbot.waitUntil(lambda: "unknown agent" in dialog.error_text())
    assert dialog.error_text().startswith("Step 1: unknown agent 'ghost' (available: ")
    assert "scout" in dialog.error_text()
    assert dialog.run_button.isEnabled() and dialog.run_button.text() == "Run"

    dialog.folder_edit.setText(str(tmp_path / "missing"))
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == f"The working folder {tmp_path / 'missing'} does not exist."
    assert dialog.isVisible()
    assert window.run_controller.sessions() == []
    assert server.requests == []


def test_ctrl_enter_launches_a_chain_built_by_hand(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    server.queue(Reply.answer("three files matter"), Reply.answer("planned: fine"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.tabs.setCurrentIndex(1)
    editor = dialog.steps_editor
    click(qtbot, editor.mode_buttons["chain"])
    first = editor.rows()[0]
    first.agent.setCurrentText("scout")
    type_into(qtbot, first.task, "Look around")
    click(qtbot, editor.add_button)
    second = editor.rows()[1]
    second.agent.setCurrentText("planner")
    type_into(qtbot, second.task, "Check this: {previous}")
    # Reordering: move the planner up and back down again.
    click(qtbot, second.up)
    assert [r.agent.currentText() for r in editor.rows()] == ["planner", "scout"]
    click(qtbot, editor.rows()[0].down)
    assert [r.agent.currentText() for r in editor.rows()] == ["scout", "planner"]

    qtbot.keyClick(second.task, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    session = wait_for_session(qtbot, window)
    assert session.request.mode == "chain"
    assert wait_until_finished(qtbot, session) == "ok"
    assert "Check this: three files matter" in server.requests[1].user_text
    # Ctrl+Enter ran the dialog; it typed no newline into the task.
    assert [s.task for s in session.request.steps] == ["Look around", "Check this: {previous}"]


def test_an_untrusted_project_asks_before_its_agent_runs(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    server: LLMServer,
    project: Path,
    write_agent: Callable[..., Path],
    dialogs: Any,
) -> None:
    write_agent(project / ".claude" / "agents", "deployer", tools="read")
    server.queue(Reply.answer("deployed nothing"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.set_ad_hoc("single", [])
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("deployer")
    type_into(qtbot, row.task, "Ship it")

    dialogs.answer("Cancel")
    click(qtbot, dialog.run_button)
    qtbot.waitUntil(lambda: dialog.error_banner.isVisible())
    assert dialog.error_banner.message() == "Nothing was run."
    assert dialog.isVisible() and window.run_controller.sessions() == []

    dialogs.answer("Trust this project")
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    assert dialogs.seen == ["TrustDialog", "TrustDialog"]
    assert TrustStore().is_trusted(project)
    assert session.runner.request.steps[0].agent == "deployer"


def test_deny_all_answers_tool_calls_without_asking(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    server: LLMServer,
    project: Path,
) -> None:
    server.queue(Reply.tool("bash", {"command": "touch made.txt"}), Reply.answer("could not"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.set_ad_hoc("single", [])
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("worker")
    type_into(qtbot, row.task, "Make a file")
    dialog.approval_combo.setCurrentIndex(dialog.approval_combo.findText("Deny all"))
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    assert not (project / "made.txt").exists()
    assert server.requests[1].tool_messages[0]["content"] == (
        "Denied: this run denies every call that needs approval (approvals: deny)"
    )
    assert window.run_controller.approvals.pending() == []
