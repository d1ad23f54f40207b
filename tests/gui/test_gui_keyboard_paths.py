"""Reaching things with the keyboard alone, as the newcomer test did: Ctrl+3 lands in the
history's filter field (visible focus, typing filters); Tab, Down, Enter opens the run."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.window.main_window import MainWindow
from tests.test_run_state import sample_run
from tests.test_runs_cli import save


def test_ctrl_3_tab_down_enter_opens_a_run(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    save(sample_run())
    window = make_window()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.current_view() == "runs"
    history = window.runs_view.history
    qtbot.waitUntil(lambda: len(history.visible_records()) == 1)
    qtbot.waitUntil(history.filter_field.hasFocus)
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Down, Qt.Key.Key_Return):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, key)
    qtbot.waitUntil(lambda: window.runs_view.current_page() is not None)
    page = window.runs_view.current_page()
    assert page is not None and page.run_id == "r1"
