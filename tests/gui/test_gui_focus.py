"""Keyboard focus is visible on the widgets a person tabs through."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from gui.window.main_window import MainWindow


def _picture(widget: QWidget) -> QImage:
    QApplication.processEvents()
    return widget.grab().toImage()


@pytest.mark.parametrize(
    "pick",
    [lambda w: w.sidebar.list, lambda w: w.agents_view.agent_list],
    ids=["sidebar", "agent list"],
)
def test_focus_changes_what_the_widget_looks_like(
    qtbot: QtBot, make_window: Callable[..., MainWindow], pick: Callable[[MainWindow], QWidget]
) -> None:
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    elsewhere = window.agents_view.findChild(QLineEdit)
    assert elsewhere is not None
    elsewhere.setFocus()
    qtbot.waitUntil(elsewhere.hasFocus)
    widget = pick(window)
    before = _picture(widget)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    assert _picture(widget) != before
