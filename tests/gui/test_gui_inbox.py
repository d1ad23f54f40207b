"""The attention inbox: approvals, budget questions and failed steps of every run in one list,
counted in the sidebar and the title; a notification when the window is not focused, naming the
run and why, whose click shows the step."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.model.budget import Budget, Caps
from core.run.run_request import RunRequest, StepSpec
from gui.approvals.approval_dialog import ApprovalDialog
from gui.inbox.inbox_view import InboxView
from gui.window.main_window import MainWindow
from gui.window.views import VIEWS
from tests.gui.launching import RUN_TIMEOUT_MS, click, launch_request, wait_until_finished
from tests.llm_server import LLMServer, Reply, Tokens

pytestmark = pytest.mark.usefixtures("qasync_loop")

EXPENSIVE = Tokens(prompt=200_000, completion=50_000)  # $0.06 with gpt-4o-mini


@pytest.fixture
def server(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings(default_model="gpt-4o-mini"))
    return llm_server


def _look_elsewhere(qtbot: QtBot, window: MainWindow) -> None:
    elsewhere = QWidget()
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())


def test_a_failed_step_notifies_when_away_and_the_click_shows_the_step(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    server.queue(Reply.answer("found it"), Reply.error(400, "context too long"))
    window = make_window()
    _look_elsewhere(qtbot, window)
    steps = [StepSpec("scout", "find"), StepSpec("planner", "plan {previous}")]
    session = launch_request(qtbot, window, RunRequest("chain", steps, window.working_folder))
    assert wait_until_finished(qtbot, session) == "error"

    notes = window.run_controller.notifier.sent
    assert [n.title for n in notes] == ["Step failed"]
    assert notes[0].message.startswith("scout → planner, step 2: ")
    assert "context too long" in notes[0].message
    assert "Inbox (1)" in window.sidebar.labels()

    window.show_view("agents")
    window.run_controller.notifier.open_latest()  # the tray's messageClicked
    assert window.current_view() == "runs"
    page = window.runs_view.current_page()
    assert page is not None and page.view is session.view
    qtbot.waitUntil(lambda: len(session.view.panes()) == 2)
    qtbot.waitUntil(session.view.pane(1).is_highlighted)
    assert not session.view.pane(0).is_highlighted()


def test_questions_of_two_runs_wait_in_one_list_until_answered(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    window = make_window()
    controller = window.run_controller
    server.queue(Reply.tool("bash", {"command": "touch made.txt"}))
    asking = launch_request(
        qtbot, window, RunRequest("single", [StepSpec("worker", "make")], window.working_folder)
    )
    qtbot.waitUntil(lambda: len(controller.approvals.pending()) == 1, timeout=RUN_TIMEOUT_MS)
    server.queue(Reply.tool("ls", {"path": "."}, tokens=EXPENSIVE))
    capped = RunRequest(
        "single",
        [StepSpec("scout", "look")],
        window.working_folder,
        budget=Budget(run=Caps(max_cost=0.05)),
    )
    spending = launch_request(qtbot, window, capped)
    qtbot.waitUntil(lambda: len(controller.budgets.pending()) == 1, timeout=RUN_TIMEOUT_MS)

    window.show_view("inbox")
    view = window.view("inbox")
    assert isinstance(view, InboxView)
    assert view.texts() == [
        "Approval needed — worker, step 1\nworker wants to use bash.",
        "Budget reached — scout, step 1\nthe run cap is reached ($0.0600 spent of a $0.0500 cap).",
    ]
    assert "Inbox (2)" in window.sidebar.labels()
    assert window.windowTitle() == "Baton (2 waiting for you)"
    assert not view.dismiss_button.isEnabled()  # questions leave only when answered

    controller.budgets.dialog.hide()
    rect = view.list.visualItemRect(view.list.item(1))
    qtbot.mouseClick(view.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.keyClick(view.list, Qt.Key.Key_Return)  # opens the row under the cursor
    assert window.current_view() == "runs"
    page = window.runs_view.current_page()
    assert page is not None and page.view is spending.view
    assert controller.budgets.dialog.isVisible()  # the question is back in front
    click(qtbot, controller.budgets.dialog.stop_button)
    assert wait_until_finished(qtbot, spending) == "error"
    qtbot.waitUntil(lambda: [i.kind for i in window.inbox.items] == ["approval", "failed"])

    server.queue(Reply.answer("ok, I won't"))
    dialog = controller.approvals.dialog
    qtbot.waitUntil(dialog.buttons_enabled)
    click(qtbot, dialog.deny_button)
    assert wait_until_finished(qtbot, asking) == "ok"
    assert [i.kind for i in window.inbox.items] == ["failed"]

    window.show_view("inbox")
    view.list.setCurrentRow(0)
    click(qtbot, view.dismiss_button)
    assert view.texts() == []
    assert view.empty.isVisible()
    assert "Inbox" in window.sidebar.labels()
    assert window.windowTitle() == "Baton"


def test_a_running_run_shows_in_the_title_sidebar_and_tray_on_every_view(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    """A run at work is visible outside the Runs view: the title, the sidebar's Runs entry
    and the tray say "1 running" until it ends."""
    import threading

    release = threading.Event()
    server.queue(Reply.answer("done", hold=release))
    window = make_window()
    request = RunRequest("single", [StepSpec("scout", "look")], window.working_folder)
    session = launch_request(qtbot, window, request)
    window.show_view("agents")
    qtbot.waitUntil(lambda: window.windowTitle() == "Baton (1 running)")
    assert "Runs (1 running)" in window.sidebar.labels()
    notifier = window.run_controller.notifier
    assert notifier.tray_tooltip() == "Baton — 1 running"

    release.set()
    assert wait_until_finished(qtbot, session) == "ok"
    qtbot.waitUntil(lambda: window.windowTitle() == "Baton")
    assert "Runs" in window.sidebar.labels()
    assert notifier.tray_tooltip() == "Baton"


def test_enter_after_picking_the_inbox_in_the_sidebar_opens_the_selected_row(
    qtbot: QtBot, make_window: Callable[..., MainWindow], server: LLMServer
) -> None:
    """A person clicks Inbox in the sidebar and presses Enter: the selected item opens, as a
    double-click or Open would."""
    server.queue(Reply.error(400, "context too long"))
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    session = launch_request(
        qtbot, window, RunRequest("single", [StepSpec("scout", "look")], window.working_folder)
    )
    assert wait_until_finished(qtbot, session) == "error"
    window.show_view("agents")

    sidebar = window.sidebar.list
    row = sidebar.item(VIEWS.index(next(v for v in VIEWS if v.key == "inbox")))
    rect = sidebar.visualItemRect(row)
    qtbot.mouseClick(sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.current_view() == "inbox"
    view = window.view("inbox")
    assert isinstance(view, InboxView)
    qtbot.waitUntil(view.list.hasFocus)
    focused = QApplication.focusWidget()
    assert focused is not None
    qtbot.keyClick(focused, Qt.Key.Key_Return)
    assert window.current_view() == "runs"
    page = window.runs_view.current_page()
    assert page is not None and page.view is session.view

    window.show_view("agents")
    sidebar.setFocus()
    sidebar.setCurrentItem(row)  # arrow keys browse: the keyboard stays in the sidebar
    assert window.current_view() == "inbox" and sidebar.hasFocus()
    qtbot.keyClick(sidebar, Qt.Key.Key_Return)  # Enter on the row goes into the view
    qtbot.waitUntil(view.list.hasFocus)
    qtbot.keyClick(view.list, Qt.Key.Key_Enter)
    assert window.current_view() == "runs"
