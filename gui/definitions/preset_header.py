"""The strip above the preset editor: name, source, mode, the steps drawn, and the actions.

::

    implement  [Built-in] [chain]                                Duplicate  Delete  [Save]
    ● scout → ● planner → ● worker                                                [Run…]
    Arguments: <what to build>
    /…/resources/presets/implement.yaml

What it shares with the agent header lives in
:class:`gui.definitions.definition_header.DefinitionHeader`; this adds the mode badge, the chain,
the
arguments line and Run….
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from core.definitions.agents import AgentCatalog
from core.definitions.presets import Preset
from gui.definitions.definition_header import DefinitionHeader
from gui.definitions.preset_chain import ChainStep, PresetChain
from gui.widgets import Badge


class PresetHeader(DefinitionHeader):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("preset", parent)
        self.mode_badge = Badge()
        self.mode_badge.hide()
        self.run_button = QPushButton("Run…")
        self.run_button.setObjectName("RunPresetButton")
        self.run_button.setToolTip("Open the launch dialog on this preset")
        self.chain = PresetChain()
        self.arguments = QLabel()
        self.arguments.setObjectName("Secondary")

        chain_row = QHBoxLayout()
        chain_row.setSpacing(8)
        chain_row.addWidget(self.chain, 1)
        chain_row.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        self._lay_out(5, [self.mode_badge], [chain_row, self.arguments, self.path_label])

    def show_preset(
        self,
        preset: Preset | None,
        path: str,
        source: str,
        agents: AgentCatalog,
        override_text: str = "",
    ) -> None:
        """Describe ``preset`` (None: a file that does not parse, shown by its file name)."""
        self._show_common(preset.name if preset else None, path, source, override_text)
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
        self.run_button.setEnabled(preset is not None)
