"""Budgets in the window: the launch dialog's cap fields (filled from a preset's ``budget:``),
the estimate from earlier runs, and the question a run at its cap asks — against the scripted
server, counting requests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSpinBox, QPushButton
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from gui.window.main_window import MainWindow
from tests.gui.launching import (
    RUN_TIMEOUT_MS,
    click,
    open_launch_dialog,
    pick_preset,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply, Tokens

pytestmark = pytest.mark.usefixtures("qasync_loop")

# gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
EXPENSIVE = Tokens(prompt=200_000, completion=50_000)  # $0.03 + $0.03 = $0.06


@pytest.fixture
def server(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings(default_model="gpt-4o-mini"))
    llm_server.queue(Reply.tool("ls", {"path": "."}, tokens=EXPENSIVE), Reply.answer("done"))
    return llm_server


def _preset(folder: Path, budget: str = "") -> None:
    (folder / "look.yaml").write_text(
        "name: look\ndescription: one look around\nmode: single\n"
        "steps:\n  - {agent: scout, task: Look around}\n" + budget,
        encoding="utf-8",
    )


def _type_value(qtbot: QtBot, box: QAbstractSpinBox, text: str) -> None:
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, text)


def test_a_preset_cap_pauses_the_run_and_stop_sends_nothing_more(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer, user_presets: Path
) -> None:
    _preset(user_presets, "budget: {run: {max_cost: 0.05}}\n")
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "look")
    fields = dialog.budget_fields
    assert fields.run_cost.text() == "$0.05"  # the preset's cap, shown before running
    assert fields.run_tokens.text() == "no cap"
    assert fields.estimate.text() == "no estimate yet"
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)

    question = window.run_controller.budgets.dialog
    qtbot.waitUntil(question.isVisible, timeout=RUN_TIMEOUT_MS)
    assert question.heading.text() == "look: step 1 reached its budget"
    assert "$0.0600 spent of a $0.0500 cap" in question.reason.text()
    assert len(server.requests) == 1
    assert session.view.state().steps[0].phase == "waiting"  # the run's own state, shown
    qtbot.waitUntil(lambda: session.view.header.status_text() == "Waiting for you")
    assert window.inbox.count() == 1
    assert "Inbox (1)" in window.sidebar.labels()
    assert window.windowTitle() == "Baton (1 waiting for you)"

    click(qtbot, question.stop_button)
    assert wait_until_finished(qtbot, session) == "error"
    assert len(server.requests) == 1  # nothing went out after the cap
    step = session.view.state().steps[0]
    assert step.error == "budget reached: $0.0600 spent of a $0.0500 cap"
    assert session.view.header.status_text() == "Stopped at budget"
    assert [item.kind for item in window.inbox.items] == ["failed"]  # the stopped step waits


def test_a_cap_typed_in_the_dialog_can_be_raised_and_feeds_the_estimate(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer, user_presets: Path
) -> None:
    _preset(user_presets)
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "look")
    assert dialog.budget_fields.run_cost.text() == "no cap"
    _type_value(qtbot, dialog.budget_fields.run_cost, "0.05")
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)

    question = window.run_controller.budgets.dialog
    qtbot.waitUntil(question.isVisible, timeout=RUN_TIMEOUT_MS)
    assert question.cost.text() == "$0.10"  # twice the old cap, to start from
    _type_value(qtbot, question.cost, "1")
    click(qtbot, question.raise_button)
    assert wait_until_finished(qtbot, session) == "ok"
    assert len(server.requests) == 2
    assert window.inbox.count() == 0
    assert window.windowTitle() == "Baton"

    again = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, again, "look")
    estimate = again.budget_fields.estimate.text()
    assert estimate.startswith("usually $0.06")
    assert estimate.endswith("(median of 1 earlier run)")
    bar = again.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
    assert again.tabs.currentIndex() == 1
    assert again.budget_fields.estimate.text() == "no estimate yet"  # a run built by hand


def test_resuming_a_run_stopped_at_its_cap_keeps_the_cap(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer, user_presets: Path
) -> None:
    """Stopped at $0.05, then Resume: the resumed run asks again at the same cap instead of
    spending on without one."""
    save_settings(llm_server.settings(default_model="gpt-4o-mini"))
    server = llm_server
    server.queue(Reply.tool("ls", {"path": "."}, tokens=EXPENSIVE))
    _preset(user_presets, "budget: {run: {max_cost: 0.05}}\n")
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "look")
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    question = window.run_controller.budgets.dialog
    qtbot.waitUntil(question.isVisible, timeout=RUN_TIMEOUT_MS)
    click(qtbot, question.stop_button)
    assert wait_until_finished(qtbot, session) == "error"

    server.queue(Reply.tool("ls", {"path": "."}, tokens=EXPENSIVE))
    banner = session.view.header.banner
    qtbot.waitUntil(banner.isVisible)
    resume = next(b for b in banner.findChildren(QPushButton) if b.text().startswith("Resume"))
    click(qtbot, resume)
    resumed = wait_for_session(qtbot, window, count=2)
    qtbot.waitUntil(question.isVisible, timeout=RUN_TIMEOUT_MS)
    assert "$0.0600 spent of a $0.0500 cap" in question.reason.text()
    assert len(server.requests) == 2  # one request of the resumed run, then the cap held
    click(qtbot, question.stop_button)
    assert wait_until_finished(qtbot, resumed) == "error"
    assert len(server.requests) == 2


def test_the_budget_fields_say_what_each_box_caps(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    fields = dialog.budget_fields
    assert fields.cost_header.text() == "Cost (US$)"
    assert fields.tokens_header.text() == "Tokens (in + out)"
    boxes = (fields.run_cost, fields.run_tokens, fields.step_cost, fields.step_tokens)
    names = [box.accessibleName() for box in boxes]
    assert names == [
        "The whole run: cost cap in US dollars",
        "The whole run: token cap, input + output",
        "Each step: cost cap in US dollars",
        "Each step: token cap, input + output",
    ]
    assert all(box.toolTip() for box in boxes)
    # the headers stand above their columns
    assert fields.cost_header.geometry().center().x() == pytest.approx(
        fields.run_cost.geometry().center().x(), abs=fields.run_cost.width() // 2
    )
