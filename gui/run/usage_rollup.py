"""The run's usage per agent, under the run header's Usage button.

A small tree: one row per agent definition with its total (steps, tool calls, tokens, cost),
its steps below it, and under each step the sub-agents its agent ran (Claude Code's Task,
pi's subagent tool) with their own model, tool calls and tokens. Figures come from
:func:`core.history.usage_rollup.agent_totals`; the tree is rebuilt only while it is shown.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from core.history.usage_rollup import agent_totals
from core.model.cost import format_cost
from core.model.events import UsageStats, compact_number
from core.record.run_state import RunState

COLUMNS = ["Agent", "Model", "Tool calls", "Tokens", "Cost"]
MAX_HEIGHT = 220
"""Pixels; a run with many agents scrolls inside the panel instead of pushing the steps away."""


def _item(name: str, model: str | None, tool_calls: int, usage: UsageStats) -> QTreeWidgetItem:
    tokens = f"↑{compact_number(usage.input)} ↓{compact_number(usage.output)}"
    cost = format_cost(usage.cost, usage.priced)
    return QTreeWidgetItem([name, model or "", str(tool_calls), tokens, cost])


class UsageRollup(QTreeWidget):
    """See the module docstring. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UsageRollup")
        self.setColumnCount(len(COLUMNS))
        self.setHeaderLabels(COLUMNS)
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setSizeAdjustPolicy(QTreeWidget.SizeAdjustPolicy.AdjustToContents)
        self.setMaximumHeight(MAX_HEIGHT)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    def set_state(self, state: RunState) -> None:
        self.clear()
        for total in agent_totals(state):
            steps = len(total.steps)
            name = f"{total.agent} · {steps} step{'s' if steps != 1 else ''}"
            models = ", ".join(sorted({s.model for s in total.steps if s.model}))
            agent = _item(name, models, total.tool_calls, total.usage)
            self.addTopLevelItem(agent)
            for step in total.steps:
                row = _item(f"Step {step.index + 1}", step.model, step.tool_calls, step.usage)
                agent.addChild(row)
                for sub in step.subagents:
                    row.addChild(_item(f"↳ {sub.name}", sub.model, sub.tool_calls, sub.usage))
        self.expandAll()

    def rows(self) -> list[list[str]]:
        """Every row's texts, depth-first, indented by two spaces per level (for tests)."""
        found: list[list[str]] = []

        def walk(item: QTreeWidgetItem, depth: int) -> None:
            texts = [item.text(c) for c in range(len(COLUMNS))]
            found.append(["  " * depth + texts[0], *texts[1:]])
            for index in range(item.childCount()):
                child = item.child(index)
                if child is not None:
                    walk(child, depth + 1)

        for index in range(self.topLevelItemCount()):
            top = self.topLevelItem(index)
            if top is not None:
                walk(top, 0)
        return found
