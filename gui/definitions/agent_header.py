"""The strip above the agent editor: who this agent is, where it lives, what can be done.

Shows the name, a source badge, an override badge, a one-line model/tools summary, the path
(elided in the middle, full in the tooltip) and the actions Save / Duplicate / Delete. Built-in
agents get a read-only note with a shortcut to Duplicate. What it shares with the preset header
lives in :class:`gui.definitions.definition_header.DefinitionHeader`; this adds the model/tools
line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from gui.definitions.definition_header import DefinitionHeader
from gui.theme import icons
from gui.widgets import ElidedLabel

if TYPE_CHECKING:  # the agent model (pydantic) is not on the start-up path
    from core.definitions.agents import AgentDefinition


class AgentHeader(DefinitionHeader):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("agent", parent)
        self.summary = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.summary.setObjectName("Secondary")
        folder = QLabel()
        folder.setPixmap(icons.pixmap("folder", 14))
        model = QLabel()
        model.setPixmap(icons.pixmap("model", 14))

        summary_row = QHBoxLayout()
        summary_row.setSpacing(6)
        summary_row.addWidget(model)
        summary_row.addWidget(self.summary, 1)
        path_row = QHBoxLayout()
        path_row.setSpacing(6)
        path_row.addWidget(folder)
        path_row.addWidget(self.path_label, 1)
        self._lay_out(4, [], [summary_row, path_row])

    def show_agent(
        self,
        agent: AgentDefinition | None,
        path: str,
        source: str,
        override_text: str = "",
    ) -> None:
        """Describe ``agent`` (None: a file that did not parse, shown by its file name)."""
        self._show_common(agent.name if agent else None, path, source, override_text)
        if agent is None:
            self.summary.set_full_text("Not loaded — fix the problem shown below the text.")
        else:
            tools = agent.declared_tools or agent.tools
            tools_text = ", ".join(tools) if tools else "all default tools"
            model_text = agent.model or "inherits the run's model"
            summary = f"Model: {model_text}   ·   Tools: {tools_text}"
            if agent.skills:
                summary += f"   ·   Skills: {', '.join(agent.skills)}"
            self.summary.set_full_text(summary)
