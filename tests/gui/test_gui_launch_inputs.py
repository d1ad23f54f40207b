"""The launch dialog as a person fills it in: the agent field does not eat clicks, an error
goes away once it is fixed, the last run's inputs come back, and a single step has no
reorder or remove buttons."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gui.window.main_window import MainWindow
from tests.gui.launching import (
    click,
    open_launch_dialog,
    pick_preset,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")
Window = Callable[..., MainWindow]


def test_typing_an_agent_then_clicking_the_task_writes_the_task(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    dialog = open_launch_dialog(qtbot, make_window())
    dialog.tabs.setCurrentIndex(1)
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("")
    type_into(qtbot, row.agent.lineEdit(), "sc")
    assert row.agent.currentText() == "scout"  # completed in place, no popup
    qtbot.mouseClick(row.task.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClicks(row.task, "look around")
    assert row.task.toPlainText() == "look around"
    assert row.agent.currentText() == "scout"


def test_an_error_from_run_goes_away_once_fixed(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    dialog = open_launch_dialog(qtbot, make_window())
    dialog.tabs.setCurrentIndex(1)
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("scout")
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == "Step 1: write a task for scout."
    type_into(qtbot, row.task, "look")
    assert dialog.error_text() == ""


def test_a_single_step_has_no_reorder_or_remove_buttons(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    dialog = open_launch_dialog(qtbot, make_window())
    dialog.tabs.setCurrentIndex(1)
    editor = dialog.steps_editor
    click(qtbot, editor.mode_buttons["single"])
    (only,) = editor.rows()
    assert not any(b.isVisible() for b in (only.up, only.down, only.remove))
    click(qtbot, editor.mode_buttons["chain"])
    click(qtbot, editor.add_button)
    qtbot.waitUntil(
        lambda: all(b.isVisible() for row in editor.rows() for b in (row.up, row.remove))
    )


def test_the_last_runs_inputs_come_back(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    server.queue(Reply.answer("found"), Reply.answer("planned"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "scout-and-plan")
    type_into(qtbot, dialog.args_edit, "the --json flag")
    click(qtbot, dialog.run_button)
    assert wait_until_finished(qtbot, wait_for_session(qtbot, window)) == "ok"
    qtbot.waitUntil(lambda: window._launch_dialog is None)

    again = open_launch_dialog(qtbot, window)
    preset = again.current_preset()
    assert preset is not None and preset.name == "scout-and-plan"
    assert again.args_edit.text() == "the --json flag"
