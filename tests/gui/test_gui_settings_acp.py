"""Settings ▸ ACP agents lists the agents Baton knows, whether each is installed here and how
to install it — what a person reads before writing ``acp: opencode`` in an agent file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gui.settings.settings_dialog import SettingsDialog


def test_the_acp_tab_shows_known_agents_and_what_is_missing(qtbot: QtBot, tmp_path: Path) -> None:
    def which(name: str) -> str | None:
        return "/opt/bin/opencode" if name == "opencode" else None

    dialog = SettingsDialog(path=tmp_path / "config.yaml", which=which)
    qtbot.addWidget(dialog)
    dialog.show()
    tab = next(i for i in range(dialog.tabs.count()) if dialog.tabs.tabText(i) == "ACP agents")
    sections = dialog.tabs.list
    qtbot.mouseClick(
        sections.viewport(),
        Qt.MouseButton.LeftButton,
        pos=sections.visualItemRect(sections.item(tab)).center(),
    )
    assert dialog.tabs.currentWidget() is dialog.acp_agents

    table = dialog.acp_agents.table
    items = [table.topLevelItem(r) for r in range(table.topLevelItemCount())]
    rows = [[item.text(c) for c in range(3)] for item in items if item is not None]
    assert rows == [
        ["OpenCode", "opencode", "installed"],
        ["Codex (codex-acp)", "codex", "not installed"],
        ["Gemini CLI", "gemini", "not installed"],
        ["Claude (claude-agent-acp)", "claude-acp", "not installed"],
    ]
    first, second = items[0], items[1]
    assert second is not None and second.text(4) == "npm install -g @zed-industries/codex-acp"
    assert first is not None and first.toolTip(2) == "/opt/bin/opencode"
