"""Two runs side by side: totals, a row per step, and the chosen step's tool calls and output.

The data is :func:`core.history.run_compare.compare_runs`'s (the same ``baton runs compare``
prints),
computed on a worker thread by the owner; this view only lays it out. Each step row says
whether the output and the tool-call sequence are the same, and how tokens, cost and duration
moved (B against A); choosing a row shows both tool-call sequences next to each other and the
output diff (:class:`gui.widgets.diff_view.DiffView`). The files each side changed (from its
checkpoints, see :func:`core.history.run_compare.changed_files`) are listed under its tool calls.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.history.run_compare import RunComparison, StepComparison, StepSide
from core.model.cost import format_cost, format_cost_delta
from core.model.events import UsageStats, compact_number
from gui.widgets import PaneHeader, PlainLabel
from gui.widgets.diff_view import DiffView
from gui.widgets.plain_text import plain_tip
from gui.widgets.run_status import format_seconds

MAX_STEP_ROWS = 8
"""Step rows shown at once; a longer run's table scrolls."""
STEP_COLUMNS = (
    "Step",
    "Agent",
    "Model",
    "Output",
    "Tool calls",
    "Tokens",
    "Cost",
    "Duration",
    "Files changed",
)


def _cost(usage: UsageStats) -> str:
    return format_cost(usage.cost, usage.priced)


def _cost_pair(a: UsageStats, b: UsageStats) -> str:
    """``$0.0010 → $0.0012 (+$0.0002)``: both costs and the change, formatted alike."""
    pair = _pair(_cost(a), _cost(b))
    if pair == _cost(a) or not (a.priced and b.priced):
        return pair
    return f"{pair} ({format_cost_delta(b.cost - a.cost)})"


def _seconds(value: float | None) -> str:
    return "—" if value is None else format_seconds(value)


def _pair(a: str, b: str) -> str:
    return a if a == b else f"{a} → {b}"


def step_cells(step: StepComparison) -> list[str]:
    """The texts of a step's row (A → B where they differ)."""
    a, b = step.left, step.right
    if a is None or b is None:
        present = a or b
        assert present is not None
        side = "A" if a is not None else "B"
        cells = [str(step.index + 1), present.agent, present.model or "—", f"only in {side}"]
        return cells + [""] * (len(STEP_COLUMNS) - len(cells))
    return [
        str(step.index + 1),
        _pair(a.agent, b.agent),
        _pair(a.model or "—", b.model or "—"),
        "same" if step.same_output else "changed",
        "same" if step.same_tools else _pair(str(len(a.tools)), str(len(b.tools))) + " (differ)",
        _pair(compact_number(a.tokens), compact_number(b.tokens)),
        _cost_pair(a.usage, b.usage),
        _pair(_seconds(a.duration_s), _seconds(b.duration_s)),
        _pair(str(len(a.files)), str(len(b.files))),
    ]


def _files(side: StepSide | None) -> str:
    if side is None:
        return ""
    return "Files changed: " + (", ".join(side.files) if side.files else "none")


class CompareView(QWidget):
    """One comparison. GUI thread only."""

    def __init__(self, comparison: RunComparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CompareView")
        self.comparison = comparison
        a, b = comparison.left, comparison.right
        self.header = PaneHeader(f"Comparing {a.title} and {b.title}")

        totals = QGridLayout()
        totals.setContentsMargins(12, 8, 12, 8)
        for column, text in enumerate(("", "A", "B")):
            label = QLabel(f"<b>{text}</b>")
            totals.addWidget(label, 0, column)
        rows = (
            ("Run", a.run_id, b.run_id),
            ("Status", a.status, b.status),
            (
                "Tokens",
                compact_number(a.usage.input + a.usage.output),
                compact_number(b.usage.input + b.usage.output),
            ),
            ("Cost", _cost(a.usage), _cost(b.usage)),
            ("Duration", _seconds(a.duration_s), _seconds(b.duration_s)),
        )
        for row, texts in enumerate(rows, 1):
            for column, text in enumerate(texts):
                label = QLabel(text)
                label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                totals.addWidget(label, row, column)
        totals.setColumnStretch(1, 1)
        totals.setColumnStretch(2, 1)

        self.steps = QTableWidget(len(comparison.steps), len(STEP_COLUMNS))
        self.steps.setObjectName("CompareSteps")
        self.steps.setHorizontalHeaderLabels(list(STEP_COLUMNS))
        self.steps.verticalHeader().hide()
        self.steps.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.steps.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps.setAlternatingRowColors(True)
        self.steps.setShowGrid(False)
        for row, step in enumerate(comparison.steps):
            for column, text in enumerate(step_cells(step)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(text))
                self.steps.setItem(row, column, item)
        header = self.steps.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(STEP_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)

        self.tools_a = QListWidget()
        self.tools_b = QListWidget()
        self.tools_a.setObjectName("CompareToolsA")
        self.tools_b.setObjectName("CompareToolsB")
        self.diff = DiffView()
        self.diff.setObjectName("CompareOutputDiff")
        self.step_title = QLabel("")
        self.files_a = PlainLabel("")
        self.files_b = PlainLabel("")
        tools = QHBoxLayout()
        for name, widget, files in (
            ("Tool calls in A", self.tools_a, self.files_a),
            ("Tool calls in B", self.tools_b, self.files_b),
        ):
            files.setWordWrap(True)
            files.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            side = QVBoxLayout()
            side.addWidget(QLabel(name))
            side.addWidget(widget)
            side.addWidget(files)
            tools.addLayout(side)
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(12, 4, 12, 8)
        detail_layout.addWidget(self.step_title)
        detail_layout.addLayout(tools, 1)
        detail_layout.addWidget(QLabel("Output, A → B"))
        detail_layout.addWidget(self.diff, 2)

        # Every step row shows (up to MAX_STEP_ROWS, then the table scrolls): the table is
        # the comparison's summary, not a peephole.
        shown = self.table_height(min(len(comparison.steps), MAX_STEP_ROWS))
        self.steps.setMinimumHeight(shown)
        if len(comparison.steps) <= MAX_STEP_ROWS:
            self.steps.setMaximumHeight(shown)  # no empty band under a short table
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.steps)
        split.addWidget(detail)
        split.setChildrenCollapsible(False)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([shown, 10 * shown])  # the table as tall as its rows, the rest below
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addLayout(totals)
        layout.addWidget(split, 1)
        self.steps.currentCellChanged.connect(lambda row, *_: self.show_step(row))
        if comparison.steps:
            self.steps.selectRow(0)
            self.show_step(0)

    # -- public API ---------------------------------------------------------------------

    def show_step(self, row: int) -> None:
        """Show step ``row``'s tool calls and output diff below the table."""
        if not 0 <= row < len(self.comparison.steps):
            return
        step = self.comparison.steps[row]
        self.step_title.setText(f"<b>Step {step.index + 1}</b>")
        for widget, side in ((self.tools_a, step.left), (self.tools_b, step.right)):
            widget.clear()
            widget.addItems(side.tools if side is not None else ["(no such step)"])
        self.files_a.setText(_files(step.left))
        self.files_b.setText(_files(step.right))
        if step.left is None or step.right is None:
            self.diff.set_diff("(only one run has this step)")
        elif step.same_output:
            self.diff.set_diff("(the outputs are identical)")
        else:
            self.diff.set_diff(step.output_diff)

    def table_height(self, rows: int) -> int:
        """The step table's height showing ``rows`` rows and its header, without scrolling."""
        header = self.steps.horizontalHeader().sizeHint().height()
        row_height = self.steps.verticalHeader().defaultSectionSize()
        scroll = self.steps.horizontalScrollBar().sizeHint().height()
        return header + rows * row_height + 2 * self.steps.frameWidth() + scroll

    def row_texts(self, row: int) -> list[str]:
        """What step row ``row`` shows, cell by cell."""
        items = (self.steps.item(row, c) for c in range(self.steps.columnCount()))
        return [item.text() if item is not None else "" for item in items]


class CompareDialog(QDialog):
    """A comparison in a window of its own, beside the run tabs (not modal)."""

    def __init__(self, comparison: RunComparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CompareDialog")
        self.setWindowTitle(f"Compare {comparison.left.run_id} and {comparison.right.run_id}")
        self.view = CompareView(comparison)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.resize(1100, 760)
