"""Settings ▸ ACP agents: the agents Baton knows how to start over the Agent Client Protocol,
whether each is installed here, and how to install it (:mod:`core.config.acp_agents`).

Read-only: an agent file chooses its ACP agent (``acp: opencode`` or ``acp: {command: …}``), so
there is nothing to save; the page tells a person what they can name and what is missing.
Same page protocol as :mod:`gui.settings.settings_pages`.
"""

from __future__ import annotations

import shutil
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.acp_agents import KNOWN_ACP_AGENTS
from core.config.settings import Settings
from gui.settings.settings_pages import MARGINS, Page, Which

COLUMNS = ("Agent", "acp:", "Here", "Speaks to the model", "Install")


class AcpAgentsPage(Page):
    """The known ACP agents as a table (see the module docstring)."""

    def __init__(self, which: Which = shutil.which, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._which = which
        note = QLabel(
            "An agent file with backend: acp runs one of these by name (acp: opencode) or any "
            "other ACP agent by its command (acp: {command: …, args: […]}). The agent runs its "
            "own tools; Baton answers its permission questions with your rules and dialog, and "
            "runs it inside the sandbox when the sandbox is on."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        self.table = QTreeWidget()
        self.table.setObjectName("AcpAgents")
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.header().setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addWidget(self.table, 1)
        self.refresh()

    def refresh(self) -> None:
        self.table.clear()
        for agent in KNOWN_ACP_AGENTS:
            found = self._which(agent.command.command)
            here = "installed" if found else "not installed"
            row = QTreeWidgetItem([agent.label, agent.name, here, agent.model_api, agent.install])
            row.setToolTip(2, found or f"{agent.command.command} is not on PATH")
            row.setToolTip(4, agent.install)
            row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.addTopLevelItem(row)

    def load(self, settings: Settings) -> None:
        self.refresh()

    def contribute(self, data: dict[str, Any]) -> None:
        return None
