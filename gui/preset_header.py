"""The strip above the preset editor: name, source, mode, the steps drawn, and the actions.

::

    implement  [Built-in] [chain]                                Duplicate  Delete  [Save]
    ● scout → ● planner → ● worker                                                [Run…]
    Arguments: <what to build>
    /…/resources/presets/implement.yaml
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QVBoxLayout, QWidget

from core.agents import AgentCatalog
from core.presets import Preset
from gui import icons
from gui.agent_rows import SOURCE_LABELS
from gui.preset_chain import ChainStep, PresetChain
from gui.widgets import Badge, ElidedLabel


class PresetHeader(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PaneHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.title = QLabel()
        self.title.setObjectName("EditorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source_badge = Badge()
        self.mode_badge = Badge()
        self.override_badge = Badge(tone="override")
        self.mode_badge.hide()
        self.override_badge.hide()
        self.dirty_mark = QLabel("● unsaved")
        self.dirty_mark.setObjectName("Secondary")
        self.dirty_mark.hide()
        self.duplicate_button = self._tool("duplicate", "Duplicate")
        self.delete_button = self._tool("delete", "Delete")
        self.save_button = QPushButton(icons.icon("save"), "Save")
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.run_button = QPushButton("Run…")
        self.run_button.setObjectName("RunPresetButton")
        self.run_button.setToolTip("Open the launch dialog on this preset")
        self.chain = PresetChain()
        self.arguments = QLabel()
        self.arguments.setObjectName("Secondary")
        self.path_label = ElidedLabel()
        self.path_label.setObjectName("Secondary")

        title_row = QHBoxLayout()
        title_row.setSpacing(8)
        for widget in (self.title, self.source_badge, self.mode_badge, self.override_badge):
            title_row.addWidget(widget)
        title_row.addWidget(self.dirty_mark)
        title_row.addStretch(1)
        title_row.addWidget(self.duplicate_button)
        title_row.addWidget(self.delete_button)
        title_row.addSpacing(4)
        title_row.addWidget(self.save_button)
        chain_row = QHBoxLayout()
        chain_row.setSpacing(8)
        chain_row.addWidget(self.chain, 1)
        chain_row.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 10, 12, 10)
        layout.setSpacing(5)
        layout.addLayout(title_row)
        layout.addLayout(chain_row)
        layout.addWidget(self.arguments)
        layout.addWidget(self.path_label)

    def _tool(self, icon_name: str, text: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setIcon(icons.icon(icon_name))
        button.setIconSize(QSize(16, 16))
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setAutoRaise(True)
        return button

    def show_preset(
        self,
        preset: Preset | None,
        path: str,
        source: str,
        agents: AgentCatalog,
        override_text: str = "",
    ) -> None:
        """Describe ``preset`` (None: a file that does not parse, shown by its file name)."""
        self.title.setText(preset.name if preset else Path(path).name)
        self.source_badge.setText(SOURCE_LABELS.get(source, source))
        self.override_badge.setText(override_text)
        self.override_badge.setVisible(bool(override_text))
        if preset is None:
            self.mode_badge.hide()
            self.chain.set_steps("chain", [])
            self.chain.hide()
            self.arguments.setText("Not loaded — fix the problem shown below the text.")
        else:
            self.mode_badge.setText(preset.mode)
            self.mode_badge.show()
            steps = [ChainStep(s.agent, agents.get(s.agent) is not None) for s in preset.steps]
            self.chain.set_steps(preset.mode, steps)
            self.chain.show()
            hint = preset.argument_hint or "none"
            self.arguments.setText(f"Arguments: {hint}")
        self.path_label.set_full_text(path)
        read_only = source == "builtin"
        self.save_button.setVisible(not read_only)
        self.delete_button.setEnabled(not read_only)
        self.delete_button.setToolTip(
            "Built-in presets cannot be deleted" if read_only else "Move this file to the trash"
        )
        self.duplicate_button.setToolTip(
            "Make an editable copy in your user folder"
            if read_only
            else "Make a copy of this preset next to it"
        )
        self.run_button.setEnabled(preset is not None)

    def set_dirty(self, dirty: bool) -> None:
        self.dirty_mark.setVisible(dirty)
