"""Settings: the bash sandbox switch, and a base URL carrying a key refused inline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from core.config.settings import config_path, load_settings
from core.safety.sandbox import sandbox_status
from gui.settings.settings_dialog import SettingsDialog

KEY = "sk-live-0123456789abcdef"


@pytest.fixture
def dialog(qtbot: QtBot) -> Iterator[SettingsDialog]:
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    shown.show()
    yield shown
    shown.providers.shutdown()


def test_the_sandbox_is_on_by_default_and_can_be_switched_off(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    page = dialog.tools
    dialog.tabs.setCurrentWidget(page)
    assert page.sandbox.isChecked() and page.network.isChecked()
    assert page.sandbox_state.text().endswith(f"\nHere, bash is {sandbox_status().describe()}.")

    box = QPoint(6, page.sandbox.height() // 2)  # on the check box, not the empty stretch
    qtbot.mouseClick(page.sandbox, Qt.MouseButton.LeftButton, pos=box)
    assert page.sandbox_state.text().endswith(
        "\nHere, bash is not sandboxed: the sandbox is turned off in Settings."
    )
    assert not page.network.isEnabled()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert load_settings().sandbox.enabled is False

    again = SettingsDialog()
    qtbot.addWidget(again)
    assert not again.tools.sandbox.isChecked()
    again.providers.shutdown()


def test_a_key_inside_the_base_url_is_refused_and_points_to_the_key_field(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    page = dialog.providers
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    page.url_edit.clear()
    qtbot.keyClicks(page.url_edit, f"http://me:{KEY}@localhost:11434/v1")
    message = page.errors.message(page.url_edit)
    assert "API key field" in message and KEY not in message
    assert KEY not in dialog.summary.text()
    assert not dialog.save_button.isEnabled()
    assert not dialog.save()
    assert not config_path().exists()
