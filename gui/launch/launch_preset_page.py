"""The "From a preset" tab of the launch dialog: pick a preset, type its arguments, read the
tasks the agents will receive.

The list shows every preset visible from the working folder (built-in, user, project) with
its description, painted like the agents list. The details show the description, the steps
drawn as the Presets view draws them (:class:`gui.widgets.graph_canvas.GraphView`: loops,
gates and best-of included), the arguments field — split like a shell
(:func:`shlex.split`), so a quoted phrase is one argument — and a preview of every step's task
with the arguments and parameters substituted. ``{previous}`` stays: a chain fills it in as it
runs.
"""

from __future__ import annotations

import shlex
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.definitions.agents import AgentCatalog
from core.definitions.presets import (
    Preset,
    PresetCatalog,
    expand_template,
    required_argument_count,
    step_agent_problems,
)
from gui.definitions.agent_rows import ROLE_ENTRY, ROLE_KIND, AgentDelegate, AgentEntry
from gui.definitions.preset_chain import draw_preset
from gui.theme import secondary_text
from gui.widgets.graph_canvas import GraphView

CHAIN_MAX_HEIGHT = 150
"""The preset's graph scrolls beyond this: the task preview keeps its room."""


class PresetPage(QWidget):
    """Preset list and details. GUI thread only."""

    presetChanged = Signal()
    """Another preset was picked (or the list was re-read)."""
    argumentsChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._presets = PresetCatalog()
        self._problems: dict[str, str] = {}
        """Why a listed preset cannot run, by its item key."""
        self.preset_list = QListWidget()
        self.preset_list.setObjectName("PresetPicker")
        self.preset_list.setItemDelegate(AgentDelegate(self.preset_list))
        self.preset_list.setMinimumWidth(250)
        self.preset_list.currentItemChanged.connect(lambda *_: self.presetChanged.emit())
        self.title = QLabel()
        self.title.setObjectName("EditorTitle")
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.chain = GraphView(CHAIN_MAX_HEIGHT)
        self.args_edit = QLineEdit()
        self.args_edit.setObjectName("PresetArguments")
        self.args_edit.textChanged.connect(self.argumentsChanged)
        self.args_hint = QLabel()
        self.args_hint.setObjectName("Secondary")
        self.preview_label = QLabel("Tasks as the agents will receive them")
        self.preview = QTextBrowser()
        self.preview.setObjectName("TaskPreview")
        self.preview.setOpenLinks(False)
        details = QWidget()
        column = QVBoxLayout(details)
        column.setContentsMargins(8, 0, 0, 0)
        column.addWidget(self.title)
        column.addWidget(self.description)
        column.addWidget(self.chain)
        column.addSpacing(6)
        column.addWidget(QLabel("Arguments"))
        column.addWidget(self.args_edit)
        column.addWidget(self.args_hint)
        column.addSpacing(6)
        column.addWidget(self.preview_label)
        column.addWidget(self.preview, 1)
        row = QHBoxLayout(self)
        row.addWidget(self.preset_list)
        row.addWidget(details, 1)

    # -- public API ----------------------------------------------------------------------

    def set_presets(self, presets: PresetCatalog, agents: AgentCatalog) -> None:
        """Show ``presets``, keeping the chosen one when it still exists. Presets that cannot
        run (a file that does not load, a step naming an unknown or broken agent) are listed
        with the error mark; :meth:`current_problem` says why."""
        chosen = self.preset_list.currentItem()
        chosen_key = None if chosen is None else chosen.data(Qt.ItemDataRole.UserRole)
        self._presets = presets
        self._problems = {}
        self.preset_list.blockSignals(True)
        self.preset_list.clear()
        for preset in presets.presets:
            problems = step_agent_problems(preset, agents)
            problem = problems[0][2] if problems else None
            entry = AgentEntry(
                preset.name,
                f"Cannot run: {problem}" if problem else preset.description,
                preset.source,
                preset.path or "",
                mark="error" if problem else "",
            )
            self._add(preset.key, preset.name, entry, problem)
        loaded = {p.path for p in presets.presets}
        for diagnostic in presets.diagnostics:
            if diagnostic.path in loaded or not diagnostic.path.endswith((".yaml", ".yml")):
                continue
            name = Path(diagnostic.path).stem
            problem = f"{diagnostic.location}: {diagnostic.message}"
            row = f"Cannot run: {diagnostic.message}"
            entry = AgentEntry(name, row, "user", diagnostic.path, mark="error")
            self._add(f"file:{diagnostic.path}", name, entry, problem)
        self.preset_list.blockSignals(False)
        if not (chosen_key and self._select_key(str(chosen_key))) and self.preset_list.count():
            self.preset_list.setCurrentRow(0)
        self.presetChanged.emit()

    def current(self) -> Preset | None:
        item = self.preset_list.currentItem()
        return None if item is None else self._presets.get(str(item.data(Qt.ItemDataRole.UserRole)))

    def current_problem(self) -> str | None:
        """Why the chosen preset cannot run, or None."""
        item = self.preset_list.currentItem()
        if item is None:
            return None
        key = str(item.data(Qt.ItemDataRole.UserRole))
        problem = self._problems.get(key)
        return None if problem is None else f"preset “{item.text()}” cannot run: {problem}"

    def select(self, name: str) -> bool:
        return self._select_key(name.casefold())

    def arguments(self) -> list[str]:
        """The arguments as the run gets them; ``ValueError`` for an unclosed quote."""
        return shlex.split(self.args_edit.text())

    def describe(self, agents: AgentCatalog) -> None:
        """Fill the details for the current preset (agents mark unknown steps in red)."""
        preset = self.current()
        if preset is None:
            self.title.setText("No presets")
            self.description.setText("")
            draw_preset(self.chain, None, agents)
            return
        self.title.setText(preset.name)
        self.description.setText(preset.description)
        draw_preset(self.chain, preset, agents)
        self.args_edit.setPlaceholderText(preset.argument_hint or "no arguments needed")
        self.args_hint.setText(
            "Words are split like a shell's: quote a phrase to keep it one argument ($1)."
            if required_argument_count(preset)
            else "This preset takes no arguments."
        )

    def update_preview(self, params: dict[str, Any]) -> None:
        preset = self.current()
        if preset is None:
            self.preview.clear()
            return
        try:
            args = self.arguments()
        except ValueError:
            args = self.args_edit.text().split()
        muted = secondary_text(self.palette()).name()
        parts = []
        for number, step in enumerate(preset.steps, start=1):
            # A stand-in no text can contain marks where the previous answer goes, so an
            # argument that happens to say "{previous}" is not dressed up as one.
            task = escape(expand_template(step.task, args=args, params=params, previous="\0"))
            task = task.replace("\0", f"<span style='color:{muted}'><i>{{previous}}</i></span>")
            parts.append(
                f"<p style='margin:0 0 2px 0'><b>{number} · {escape(step.agent)}</b></p>"
                f"<p style='margin:0 0 10px 0; white-space:pre-wrap'>{task}</p>"
            )
        self.preview.setHtml("".join(parts))

    # -- private -------------------------------------------------------------------------

    def _add(self, key: str, name: str, entry: AgentEntry, problem: str | None) -> None:
        item = QListWidgetItem(name)
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setData(ROLE_KIND, "agent")
        item.setData(ROLE_ENTRY, entry)
        item.setToolTip(entry.description)
        if problem:
            self._problems[key] = problem
        self.preset_list.addItem(item)

    def _select_key(self, key: str) -> bool:
        for row in range(self.preset_list.count()):
            item = self.preset_list.item(row)
            if item is not None and str(item.data(Qt.ItemDataRole.UserRole)) == key:
                self.preset_list.setCurrentItem(item)
                return True
        return False
