"""The menus a keyboard user relies on: Edit on the focused field, Run ▸ Cancel run, and
Help ▸ Keyboard shortcuts — each driven through its shortcut, as a person would."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMenu
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.run.run_request import RunRequest, StepSpec
from gui.window.main_window import MainWindow
from gui.window.shortcuts_dialog import ShortcutsDialog
from tests.gui.launching import RUN_TIMEOUT_MS, wait_until_finished
from tests.llm_server import LLMServer, Reply

Window = Callable[..., MainWindow]


def _focus_window(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def test_keyboard_shortcuts_lists_menu_and_view_shortcuts(
    qtbot: QtBot, make_window: Window
) -> None:
    window = make_window()
    _focus_window(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.findChild(ShortcutsDialog) is not None)
    dialog = window.findChild(ShortcutsDialog)
    assert dialog is not None and dialog.isVisible()
    rows = dialog.rows()
    assert ["Run", "New run", "Ctrl+R"] in rows
    assert ["Run", "Cancel run", "Ctrl+."] in rows
    assert ["Edit", "Copy", "Ctrl+C"] in rows
    assert ["View", "Documents", "Ctrl+4"] in rows
    assert ["Run view", "Expand or collapse all steps", "Ctrl+O"] in rows
    dialog.reject()


def test_edit_menu_acts_on_the_focused_field(qtbot: QtBot, make_window: Window) -> None:
    window = make_window()
    _focus_window(qtbot, window)
    field = window.agents_view.findChild(QLineEdit)
    assert field is not None
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClicks(field, "planner")
    actions = {a.text().replace("&", ""): a for a in window.menuBar().actions()}
    edit = actions["Edit"].menu()
    assert isinstance(edit, QMenu)
    items = {a.text().replace("&", ""): a for a in edit.actions()}
    items["Select All"].trigger()
    items["Cut"].trigger()
    assert field.text() == ""
    items["Paste"].trigger()
    items["Paste"].trigger()
    assert field.text() == "plannerplanner"
    items["Undo"].trigger()
    assert field.text() == "planner"


@pytest.mark.usefixtures("qasync_loop")
def test_cancel_run_from_the_menu_cancels_the_running_run(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer
) -> None:
    save_settings(llm_server.settings())
    release = threading.Event()
    llm_server.queue(Reply.hang(release=release))
    window = make_window()
    _focus_window(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert window.statusBar().currentMessage() == "No run is running."

    request = RunRequest(
        mode="single", steps=[StepSpec(agent="scout", task="wait")], cwd=window.working_folder
    )
    task = asyncio.ensure_future(window.run_controller.launch(request, "ask", window))
    qtbot.waitUntil(task.done, timeout=RUN_TIMEOUT_MS)
    session = task.result()
    assert session is not None
    qtbot.waitUntil(lambda: session.view.header.cancel_button.isEnabled())
    window.show_view("agents")  # the run is not on screen: the menu still finds it
    _focus_window(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert wait_until_finished(qtbot, session) == "aborted"
    release.set()
