"""Settings ▸ MCP: list the user's and a project's servers, add, edit, remove, switch one off
for the project, and Test connection against a real server — driven as a person would."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from core.config.mcp_servers import disabled_in, read_server_file, user_file
from core.safety.trust import TrustStore
from gui.settings.settings_dialog import SettingsDialog
from tests.mcp_support import REPO, configure, sdk_server, wait_no_server_left

WAIT_MS = 60_000


@pytest.fixture
def project(tmp_path: Path) -> Path:
    servers = {"proj": {"command": "proj-server", "args": ["--port", "0"]}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return tmp_path


@pytest.fixture
def dialog(qtbot: QtBot, project: Path) -> Iterator[SettingsDialog]:
    configure("t", sdk_server())
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    shown.mcp.select_project(project)
    shown.show()
    shown.tabs.setCurrentWidget(shown.mcp)
    yield shown
    shown.providers.shutdown()
    shown.mcp.shutdown()


def _rows(dialog: SettingsDialog) -> list[tuple[str, ...]]:
    tree = dialog.mcp.tree
    rows: list[tuple[str, ...]] = []
    for index in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(index)
        assert top is not None
        rows.append((top.text(0),))
        for child in range(top.childCount()):
            item = top.child(child)
            assert item is not None
            rows.append((item.text(0), item.text(1), item.text(2)))
    return rows


def _item(dialog: SettingsDialog, name: str) -> QTreeWidgetItem:
    tree = dialog.mcp.tree
    for index in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(index)
        assert top is not None
        for child in range(top.childCount()):
            item = top.child(child)
            if item is not None and item.text(0) == name:
                return item
    raise AssertionError(f"no row {name}")


def _click(qtbot: QtBot, button: object) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_the_users_and_the_projects_servers_are_listed(
    dialog: SettingsDialog, project: Path
) -> None:
    rows = _rows(dialog)
    assert rows[0][0].startswith("For me")
    assert rows[1][:2] == ("t", "stdio") and "tests.mcp_test_server" in rows[1][2]
    assert rows[2][0].startswith("Project") and "not trusted" in rows[2][0]
    assert rows[3] == ("proj", "stdio", "proj-server --port 0")


def test_add_edit_and_remove_are_written_only_on_save(qtbot: QtBot, dialog: SettingsDialog) -> None:
    page = dialog.mcp
    page.tree.clearSelection()
    page.tree.setCurrentIndex(page.tree.rootIndex())
    page.name_edit.clear()
    qtbot.keyClicks(page.name_edit, "files")
    qtbot.keyClicks(page.target_edit, "npx -y @modelcontextprotocol/server-filesystem .")
    qtbot.keyClicks(page.extra_edit, "DEBUG=1")
    page.network_box.setChecked(False)
    _click(qtbot, page.add_button)
    assert ("files", "stdio", "npx -y @modelcontextprotocol/server-filesystem .") in _rows(dialog)
    assert "files" not in read_server_file(user_file()).servers  # not yet saved

    page.tree.setCurrentItem(_item(dialog, "t"))
    _click(qtbot, page.remove_button)
    assert all(row[0] != "t" for row in _rows(dialog))

    page.tree.setCurrentItem(_item(dialog, "files"))
    page.kind_combo.setCurrentIndex(1)  # now a streamable-HTTP server
    page.target_edit.clear()
    qtbot.keyClicks(page.target_edit, "https://mcp.example.com/mcp")
    page.extra_edit.setPlainText("Authorization: Bearer sk-mcp-0123456789abcdef")
    _click(qtbot, page.update_button)
    row = _item(dialog, "files")
    assert row.text(1) == "http" and row.text(2) == "https://mcp.example.com/mcp"

    with qtbot.waitSignal(dialog.saved):
        _click(qtbot, dialog.save_button)
    saved = read_server_file(user_file()).servers
    assert set(saved) == {"files"}
    assert saved["files"].headers == {"Authorization": "Bearer sk-mcp-0123456789abcdef"}


def test_a_bad_name_is_said_and_cannot_be_added(qtbot: QtBot, dialog: SettingsDialog) -> None:
    page = dialog.mcp
    page.name_edit.clear()
    qtbot.keyClicks(page.name_edit, "bad name")
    qtbot.keyClicks(page.target_edit, "server")
    assert not page.add_button.isEnabled()
    assert "letters, digits" in page.error_label.text()


def test_a_server_is_switched_off_for_the_project(
    qtbot: QtBot, dialog: SettingsDialog, project: Path
) -> None:
    item = _item(dialog, "t")
    assert item.checkState(3) == Qt.CheckState.Checked
    item.setCheckState(3, Qt.CheckState.Unchecked)
    assert not dialog.mcp.enabled_here("t")
    with qtbot.waitSignal(dialog.saved):
        _click(qtbot, dialog.save_button)
    assert disabled_in(project) == {"t"}
    assert "t" in read_server_file(user_file()).servers  # still configured for other projects


def test_test_connection_lists_the_tools_off_the_gui_thread(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    page = dialog.mcp
    page.tree.setCurrentItem(_item(dialog, "t"))
    _click(qtbot, page.test_button)
    assert "Starting t" in page.test_result.text()  # the window answered before the server
    qtbot.waitUntil(lambda: "tools" in page.test_result.text(), timeout=WAIT_MS)
    assert "t: 10 tools — echo, delete_everything" in page.test_result.text()
    assert page.test_button.isEnabled()
    page.shutdown()
    wait_no_server_left()


def test_test_connection_says_why_a_server_fails(qtbot: QtBot, dialog: SettingsDialog) -> None:
    page = dialog.mcp
    page.tree.clearSelection()
    page.tree.setCurrentIndex(page.tree.rootIndex())
    page.name_edit.clear()
    qtbot.keyClicks(page.name_edit, "broken")
    page.target_edit.setText(f"{sys.executable} -m tests.mcp_test_server crash")
    page.extra_edit.setPlainText(f"PYTHONPATH={REPO}")
    _click(qtbot, page.add_button)
    page.tree.setCurrentItem(_item(dialog, "broken"))
    _click(qtbot, page.test_button)
    qtbot.waitUntil(lambda: "failed" in page.test_result.text(), timeout=WAIT_MS)
    assert "refuses to start" in page.test_result.text()


def test_an_untrusted_projects_server_is_not_started(
    qtbot: QtBot, dialog: SettingsDialog, project: Path
) -> None:
    page = dialog.mcp
    page.tree.setCurrentItem(_item(dialog, "proj"))
    _click(qtbot, page.test_button)
    assert "not trusted" in page.test_result.text()
    TrustStore().trust(project)
    page.select_project(project)
    assert "not trusted" not in _rows(dialog)[2][0]
