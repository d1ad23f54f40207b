"""Choosing from a button's menu with the keyboard, as a person does."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QToolButton
from pytestqt.qtbot import QtBot


def choose_from_button_menu(qtbot: QtBot, button: QToolButton, keys: Sequence[Qt.Key]) -> None:
    """Click ``button`` and type ``keys`` into its menu once the menu is on screen.

    The click returns only when the menu closes (Qt runs a popup menu in its own loop), so the
    keys are typed from that loop — when the menu has said it is about to show, not after a
    guessed delay that a busy machine outlasts."""
    menu = button.menu()
    assert menu is not None

    def type_keys() -> None:
        assert QApplication.activePopupWidget() is menu
        for key in keys:
            qtbot.keyClick(menu, key)

    def about_to_show() -> None:
        QTimer.singleShot(0, menu, type_keys)  # after the popup is shown, inside its loop

    menu.aboutToShow.connect(about_to_show)
    try:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    finally:
        menu.aboutToShow.disconnect(about_to_show)
