"""Broken definitions in the window: marks in
the Presets and Agents lists, the problems panel, the launch dialog saying why and disabling
Run, the consent a step folder outside the working folder needs, and what the run view shows
of params and step folders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.events import PlannedStep, RunStarted
from core.run.rerun import request_from_run
from gui.launch.launch_dialog import LaunchDialog
from gui.launch.launch_steps import StepRow
from gui.window.main_window import MainWindow
from tests.gui.launching import (
    click,
    click_preset_row,
    current_run_page,
    open_launch_dialog,
    pick_preset,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")

Window = Callable[..., MainWindow]
LISTER = "---\nname: lister\ndescription: lists\nmodel: m\ntools: [read, ls\n---\nList.\n"


def write_broken_presets(folder: Path) -> tuple[Path, Path]:
    five = folder / "five.yaml"
    five.write_text("name: five\nsteps: 5\n", encoding="utf-8")
    critic = folder / "critique.yaml"
    critic.write_text(
        "name: critique\nsteps:\n  - {agent: scout, task: a}\n  - {agent: critic, task: b}\n",
        encoding="utf-8",
    )
    return five, critic


def test_presets_list_marks_broken_presets_and_problems_lists_them(
    qtbot: QtBot, make_window: Window, user_presets: Path
) -> None:
    write_broken_presets(user_presets)
    window = make_window()
    window.show_view("presets")
    view = window.presets_view
    entries = {entry.name: entry for entry in view.preset_list.visible_entries()}
    assert entries["five"].mark == "error"
    assert entries["five"].description == (
        "Cannot run: steps: Input should be a valid list"  # the reason, on the row itself
    )
    assert entries["critique"].mark == "error"
    assert "step 2: unknown agent 'critic'" in entries["critique"].description
    assert entries["implement"].mark == ""
    rows = view.diagnostics.row_texts()
    assert any(row.startswith("five.yaml:2") for row in rows)
    assert any(
        row.startswith("critique.yaml:4") and "unknown agent 'critic'" in row for row in rows
    )


def test_launch_dialog_says_why_a_preset_cannot_run_and_disables_run(
    qtbot: QtBot, make_window: Window, user_presets: Path, server: LLMServer
) -> None:
    five, _critic = write_broken_presets(user_presets)
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)

    pick_preset(qtbot, dialog, "critique")
    assert dialog.error_text().startswith(
        "Preset “critique” cannot run: step 2: unknown agent 'critic'"
    )
    assert not dialog.run_button.isEnabled()

    click_preset_row(qtbot, dialog, "five")
    assert dialog.error_text() == (
        f"Preset “five” cannot run: {five}:2: steps: Input should be a valid list."
    )
    assert not dialog.run_button.isEnabled()
    qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.run_controller.sessions() == []

    pick_preset(qtbot, dialog, "scout-and-plan")
    assert dialog.error_text() == ""
    assert dialog.run_button.isEnabled()
    assert server.requests == []


def test_an_agent_with_an_error_is_listed_marked_and_refused_in_the_dialog(
    qtbot: QtBot, make_window: Window, user_agents: Path, server: LLMServer
) -> None:
    path = user_agents / "lister.md"
    path.write_text(LISTER, encoding="utf-8")
    window = make_window()
    entries = {e.name: e for e in window.agents_view.agent_list.visible_entries()}
    assert entries["lister"].mark == "error"
    (problem,) = [r for r in window.agents_view.diagnostics.row_texts() if "lister.md" in r]
    assert problem.startswith("lister.md:5") and "'tools' cannot be read" in problem

    dialog, row = build_one_step(qtbot, window, "lister", "list it")
    assert dialog.error_text().startswith(f"Step 1: agent 'lister' cannot run: {path}:5: ")
    assert "'tools' cannot be read" in dialog.error_text()
    assert not dialog.run_button.isEnabled()

    row.agent.setCurrentIndex(row.agent.findText("scout"))
    assert dialog.error_text() == "" and dialog.run_button.isEnabled()


def test_a_step_folder_outside_needs_a_tick_and_the_pane_shows_it(
    qtbot: QtBot, make_window: Window, project: Path, server: LLMServer
) -> None:
    outside = project.parent / "elsewhere"
    outside.mkdir()
    server.queue(Reply.answer("looked"))
    window = make_window()
    dialog, row = build_one_step(qtbot, window, "scout", "look around")
    type_into(qtbot, row.cwd, "../elsewhere")
    assert dialog.outside_check.isVisible()
    assert str(outside) in dialog.outside_check.text()
    assert "outside the working folder" in dialog.error_text()
    assert not dialog.run_button.isEnabled()

    click(qtbot, dialog.outside_check)
    assert dialog.outside_check.isChecked()
    assert dialog.error_text() == "" and dialog.run_button.isEnabled()
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    pane = current_run_page(window).view.panes()[0]
    assert pane.folder.isVisible()
    assert pane.folder.full_text().endswith("elsewhere")


def test_params_show_in_the_run_header(
    qtbot: QtBot, make_window: Window, user_agents: Path, server: LLMServer
) -> None:
    (user_agents / "writer.md").write_text(
        "---\nname: writer\ndescription: writes\nparams:\n"
        "  tone: {type: enum, values: [formal, casual], default: casual}\n---\n"
        "Write {tone}.\n",
        encoding="utf-8",
    )
    server.queue(Reply.answer("written"))
    window = make_window()
    dialog, _row = build_one_step(qtbot, window, "writer", "notes, {tone}")
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    header = current_run_page(window).view.header
    assert header.params.isVisible() and header.params.full_text() == "·  tone=casual"
    (request,) = server.requests
    assert request.user_text == "notes, casual"
    assert "Write casual." in str(request.messages[0]["content"])


def build_one_step(
    qtbot: QtBot, window: MainWindow, agent: str, task: str
) -> tuple[LaunchDialog, StepRow]:
    """Open the dialog on "Build a run", pick ``agent`` from the drop-down, type ``task``."""
    dialog = open_launch_dialog(qtbot, window)
    dialog.tabs.setCurrentIndex(1)
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentIndex(row.agent.findText(agent))
    type_into(qtbot, row.task, task)
    return dialog, row


def test_rerun_request_carries_the_values_a_run_used() -> None:
    started = RunStarted(
        run_id="r",
        ts=0.0,
        mode="chain",
        steps=[
            PlannedStep(agent="writer", task="a", cwd="/w"),
            PlannedStep(agent="writer", task="b", cwd="/w"),
        ],
        params={"1.tone": "casual", "2.tone": "formal", "count": 3},
        cwd="/w",
        started_at="2026-01-01T00:00:00+00:00",
    )
    request = request_from_run(started)
    assert request.params == {"count": 3}
    assert [s.params for s in request.steps] == [{"tone": "casual"}, {"tone": "formal"}]
