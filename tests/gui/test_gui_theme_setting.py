"""Settings ▸ Appearance: light, dark or the system's colours, applied as they are picked,
kept on Save, undone on Cancel, and opened with at the next start."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.app import APPLICATION, ORGANIZATION, create_application
from gui.settings.settings_dialog import SettingsDialog
from gui.theme.scheme import SETTINGS_KEY, apply_scheme
from gui.window.main_window import MainWindow


def _dark(app: QApplication) -> bool:
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


@pytest.fixture(autouse=True)
def back_to_system(qapp: QApplication) -> Iterator[None]:
    yield
    apply_scheme(qapp, "system")


def _pick(dialog: SettingsDialog, label: str) -> None:
    dialog.tabs.setCurrentWidget(dialog.appearance)
    dialog.appearance.theme.setCurrentIndex(dialog.appearance.theme.findText(label))


def test_dark_applies_at_once_and_is_kept_on_save(
    qtbot: QtBot, qapp: QApplication, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    dialog = window.open_settings()
    _pick(dialog, "Dark")
    assert _dark(qapp)
    qtbot.waitUntil(lambda: _is_dark_widget(window))  # the window follows the application's palette
    assert "#1e1e20" in window.styleSheet()  # its style sheet is built from the dark base
    dialog.save_button.click()
    assert window.settings.value(SETTINGS_KEY) == "dark"

    again = window.open_settings()
    assert again.appearance.theme.currentText() == "Dark"
    _pick(again, "Light")
    assert not _dark(qapp)
    again.cancel_button.click()  # Cancel puts the saved choice back
    assert _dark(qapp)
    assert window.settings.value(SETTINGS_KEY) == "dark"


def test_the_next_start_opens_in_the_saved_scheme(qapp: QApplication) -> None:
    qapp.setOrganizationName(ORGANIZATION)
    qapp.setApplicationName(APPLICATION)
    QSettings().setValue(SETTINGS_KEY, "dark")  # where create_application will look
    try:
        create_application([])
        assert _dark(qapp)
    finally:
        QSettings().remove(SETTINGS_KEY)


def _is_dark_widget(widget: MainWindow) -> bool:
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 128
