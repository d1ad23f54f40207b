"""The strip above the preset editor: name, source, mode, the steps drawn, and the actions.

::

    implement  [Built-in] [chain]                                Duplicate  Delete  [Save]
    [scout] ─→ [planner] ─→ [worker]
    Arguments: <what to build>                                                    [Run…]
    /…/resources/presets/implement.yaml

What it shares with the agent header lives in
:class:`gui.definitions.definition_header.DefinitionHeader`; this adds the mode badge, the
preset's graph (:class:`gui.widgets.graph_canvas.GraphView`: every form of preset drawn the same
way, loops, gates and best-of included), the arguments line and Run….
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from core.definitions.agents import AgentCatalog
from core.definitions.presets import Preset
from gui.definitions.definition_header import DefinitionHeader
from gui.definitions.preset_chain import draw_preset
from gui.widgets import Badge, PlainLabel
from gui.widgets.graph_canvas import GraphView

GRAPH_MAX_HEIGHT = 240
"""The graph scrolls beyond this: the YAML below stays the larger part of the page."""


class PresetHeader(DefinitionHeader):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("preset", parent)
        self.mode_badge = Badge()
        self.mode_badge.hide()
        self.run_button = QPushButton("Run…")
        self.run_button.setObjectName("RunPresetButton")
        self.run_button.setToolTip("Open the launch dialog on this preset")
        self.graph = GraphView(GRAPH_MAX_HEIGHT)
        self.arguments = PlainLabel()
        self.arguments.setObjectName("Secondary")

        # The graph gets the header's whole width; Run… sits on the arguments' line.
        arguments_row = QHBoxLayout()
        arguments_row.setSpacing(8)
        arguments_row.addWidget(self.arguments, 1)
        arguments_row.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self._lay_out(5, [self.mode_badge], [self.graph, arguments_row, self.path_label])

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
            draw_preset(self.graph, None, agents)
            self.graph.hide()
            self.arguments.setText("Not loaded — fix the problem shown below the text.")
        else:
            self.mode_badge.setText(preset.mode)
            self.mode_badge.show()
            draw_preset(self.graph, preset, agents)
            self.graph.show()
            hint = preset.argument_hint or "none"
            self.arguments.setText(f"Arguments: {hint}")
        self.run_button.setEnabled(preset is not None)
