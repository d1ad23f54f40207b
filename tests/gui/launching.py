"""Helpers for tests that launch runs from the window the way a person does.

The launch dialog is not modal (a person may look at the Agents view while writing a task),
so the autouse dialog answerer leaves it alone; these helpers click and type in it.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QWidget
from pytestqt.qtbot import QtBot

from core.run.run_request import RunRequest
from gui.launch.launch_dialog import LaunchDialog
from gui.run.run_controller import RunSession
from gui.run.run_page import RunPage
from gui.window.main_window import MainWindow

RUN_TIMEOUT_MS = 15_000


def open_launch_dialog(qtbot: QtBot, window: MainWindow) -> LaunchDialog:
    """Ctrl+R in the window, as a person opens the dialog."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window._launch_dialog is not None)
    dialog = window._launch_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)  # Ctrl+Enter is a shortcut of the active window
    return dialog


def click(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def pick_preset(qtbot: QtBot, dialog: LaunchDialog, name: str) -> None:
    """Click the preset's row in the dialog's list (a preset that loads)."""
    click_preset_row(qtbot, dialog, name)
    assert dialog.current_preset() is not None


def click_preset_row(qtbot: QtBot, dialog: LaunchDialog, name: str) -> None:
    """Click the row named ``name`` in the dialog's preset list (also a broken file's)."""
    picker: QListWidget = dialog.preset_list
    for row in range(picker.count()):
        item = picker.item(row)
        if item is not None and item.text() == name:
            picker.scrollToItem(item)
            rect = picker.visualItemRect(item)
            qtbot.mouseClick(picker.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            return
    raise AssertionError(f"no preset {name!r} in the dialog")


def type_into(qtbot: QtBot, widget: QWidget | None, text: str) -> None:
    """Type ``text`` into ``widget`` (``None``, as an editable combo box's missing line edit
    would be, fails the test)."""
    assert widget is not None, "nothing to type into"
    widget.setFocus()
    qtbot.keyClicks(widget, text)


def launch_request(qtbot: QtBot, window: MainWindow, request: RunRequest) -> RunSession:
    """Start ``request`` through the window's launcher (what the dialog and Re-run call)."""
    task = asyncio.ensure_future(window.run_controller.launch(request, "ask", window))
    qtbot.waitUntil(task.done, timeout=RUN_TIMEOUT_MS)
    session = task.result()
    assert session is not None
    return session


def wait_for_session(qtbot: QtBot, window: MainWindow, count: int = 1) -> RunSession:
    """The newest live run once ``count`` runs were started from the window."""
    controller = window.run_controller
    qtbot.waitUntil(lambda: len(controller.sessions()) >= count, timeout=RUN_TIMEOUT_MS)
    return controller.sessions()[-1]


def wait_until_finished(qtbot: QtBot, session: RunSession) -> str:
    """Wait for the run and for its view to show the end; returns the run's status."""
    qtbot.waitUntil(lambda: not session.is_active(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: session.view.state().status != "running", timeout=RUN_TIMEOUT_MS)
    # The state is the runner's own (folded as published); the view hears of it a turn later.
    qtbot.waitUntil(lambda: session.view.model.pending_count() == 0, timeout=RUN_TIMEOUT_MS)
    result = session.runner.result
    assert result is not None
    return result.status


def current_run_page(window: MainWindow) -> RunPage:
    page = window.runs_view.current_page()
    assert page is not None, "no run tab is current"
    return page
