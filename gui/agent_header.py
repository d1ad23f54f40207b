"""The strip above the agent editor: who this agent is, where it lives, what can be done.

Shows the name, a source badge, an override badge, a one-line model/tools summary, the path
(elided in the middle, full in the tooltip) and the actions Save / Duplicate / Delete. Built-in
agents get a read-only note with a shortcut to Duplicate.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.agents import AgentDefinition
from gui import icons
from gui.agent_rows import SOURCE_LABELS
from gui.widgets import Badge, ElidedLabel


class AgentHeader(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PaneHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)

        self.title = QLabel()
        self.title.setObjectName("EditorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source_badge = Badge()
        self.override_badge = Badge(tone="override")
        self.dirty_mark = QLabel("● unsaved")
        self.dirty_mark.setObjectName("Secondary")
        self.dirty_mark.hide()
        self.summary = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.summary.setObjectName("Secondary")
        self.path_label = ElidedLabel()
        self.path_label.setObjectName("Secondary")
        folder = QLabel()
        folder.setPixmap(icons.pixmap("folder", 14))
        model = QLabel()
        model.setPixmap(icons.pixmap("model", 14))

        self.save_button = QPushButton(icons.icon("save"), "Save")
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.save_button.setDefault(False)
        self.duplicate_button = self._tool("duplicate", "Duplicate")
        self.delete_button = self._tool("delete", "Delete")

        title_row = QHBoxLayout()
        title_row.setSpacing(8)
        title_row.addWidget(self.title)
        title_row.addWidget(self.source_badge)
        title_row.addWidget(self.override_badge)
        title_row.addWidget(self.dirty_mark)
        title_row.addStretch(1)
        title_row.addWidget(self.duplicate_button)
        title_row.addWidget(self.delete_button)
        title_row.addSpacing(4)
        title_row.addWidget(self.save_button)

        summary_row = QHBoxLayout()
        summary_row.setSpacing(6)
        summary_row.addWidget(model)
        summary_row.addWidget(self.summary, 1)
        path_row = QHBoxLayout()
        path_row.setSpacing(6)
        path_row.addWidget(folder)
        path_row.addWidget(self.path_label, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 10, 12, 10)
        layout.setSpacing(4)
        layout.addLayout(title_row)
        layout.addLayout(summary_row)
        layout.addLayout(path_row)

    def _tool(self, icon_name: str, text: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setIcon(icons.icon(icon_name))
        button.setIconSize(QSize(16, 16))
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setAutoRaise(True)
        return button

    def show_agent(
        self,
        agent: AgentDefinition | None,
        path: str,
        source: str,
        override_text: str = "",
    ) -> None:
        """Describe ``agent`` (None: a file that did not parse, shown by its file name)."""
        self.title.setText(agent.name if agent else Path(path).name)
        self.source_badge.setText(SOURCE_LABELS.get(source, source))
        self.override_badge.setText(override_text)
        self.override_badge.setVisible(bool(override_text))
        if agent is None:
            self.summary.set_full_text("Not loaded — fix the problem shown below the text.")
        else:
            tools = agent.declared_tools or agent.tools
            tools_text = ", ".join(tools) if tools else "all default tools"
            model_text = agent.model or "inherits the run's model"
            self.summary.set_full_text(f"Model: {model_text}   ·   Tools: {tools_text}")
        self.path_label.set_full_text(path)
        read_only = source == "builtin"
        self.save_button.setVisible(not read_only)
        self.delete_button.setEnabled(not read_only)
        self.delete_button.setToolTip(
            "Built-in agents cannot be deleted" if read_only else "Move this file to the trash"
        )
        self.duplicate_button.setToolTip(
            "Make an editable copy in your user folder"
            if read_only
            else "Make a copy of this agent next to it"
        )

    def set_dirty(self, dirty: bool) -> None:
        self.dirty_mark.setVisible(dirty)
