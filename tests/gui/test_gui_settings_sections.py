"""Settings as a list of sections beside the page: every section reachable by click and by
keyboard, and the search box narrowing the list to the sections that mention a word."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gui.settings.settings_dialog import SettingsDialog


def _dialog(qtbot: QtBot, tmp_path: Path) -> SettingsDialog:
    dialog = SettingsDialog(path=tmp_path / "config.yaml", which=lambda _name: None)
    qtbot.addWidget(dialog)
    dialog.resize(760, 560)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _shown(dialog: SettingsDialog) -> list[str]:
    sections = dialog.tabs
    return [sections.tabText(i) for i in range(sections.count()) if sections.isTabVisible(i)]


def test_every_section_opens_from_the_list_by_click_and_by_arrow_keys(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = _dialog(qtbot, tmp_path)
    sections = dialog.tabs
    assert len(_shown(dialog)) == 11  # all listed at once: no tab scroll arrows at 760 px
    last = sections.list.item(sections.count() - 1)
    assert sections.list.viewport().rect().contains(sections.list.visualItemRect(last))
    qtbot.mouseClick(
        sections.list.viewport(),
        Qt.MouseButton.LeftButton,
        pos=sections.list.visualItemRect(last).center(),
    )
    assert sections.currentWidget() is dialog.appearance
    sections.list.setFocus()
    for _ in range(sections.count()):
        qtbot.keyClick(sections.list, Qt.Key.Key_Up)
    assert sections.currentWidget() is dialog.providers
    qtbot.keyClick(sections.list, Qt.Key.Key_Down)
    assert sections.currentWidget() is dialog.models


def test_search_narrows_the_list_and_enter_goes_on_to_it(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, tmp_path)
    dialog.tabs.setCurrentWidget(dialog.appearance)
    dialog.search.setFocus()
    qtbot.keyClicks(dialog.search, "proxy")
    assert _shown(dialog) == ["Providers"]
    assert dialog.tabs.currentWidget() is dialog.providers
    url_box = dialog.providers.url_edit.parentWidget()
    assert url_box is not None and url_box.property("settingsMatch") == "true"
    assert dialog.search_result.text() == "1 match in Providers"

    qtbot.keyClick(dialog.search, Qt.Key.Key_Return)
    assert dialog.isVisible()  # Enter in the search box does not press Save
    qtbot.waitUntil(dialog.tabs.list.hasFocus)

    dialog.search.clear()
    assert len(_shown(dialog)) == 11
    assert url_box.property("settingsMatch") is None


def test_every_section_fits_a_dialog_on_an_800_by_600_screen(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, tmp_path)
    sections = dialog.tabs
    for index in range(sections.count()):
        page = sections.widget(index)
        assert page is not None
        width = sections.list.width() + page.minimumSizeHint().width()
        assert width <= 760, sections.tabText(index)  # no sideways scrolling at 760 px
    # A long page (Limits) scrolls rather than make the dialog taller than the screen.
    assert dialog.minimumSizeHint().height() <= 560
    dialog.resize(760, 560)
    sections.setCurrentWidget(dialog.limits)
    scroll = dialog.limits.parentWidget()
    assert scroll is not None
    qtbot.waitUntil(lambda: dialog.height() <= 560)
