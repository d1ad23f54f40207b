"""The ad-hoc half of the launch dialog: a mode (single / parallel / chain) and a list of steps.

Each step is an agent, a task and an optional sub-folder. The agent field is an editable combo
box: picking from the list is the normal way, but a name can also be typed (or arrive from a
re-run of an older run), so an unknown name is possible and is reported by the runner's own
check when the person presses Run — the same sentence ``baton run`` prints.

Steps can be added, removed and moved up or down; in a chain, ``{previous}`` in a task stands
for the previous step's answer, which the hint under the list says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QCompleter,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.definitions.presets import MAX_PARALLEL_TASKS
from gui.theme import icons

MODES = ("single", "parallel", "chain")
MODE_HINTS = {
    "single": "One agent, one task.",
    "parallel": f"Up to {MAX_PARALLEL_TASKS} tasks at once (4 run at a time).",
    "chain": "Steps run in order; write {previous} in a task for the previous step's answer.",
}


@dataclass(frozen=True)
class StepInput:
    agent: str
    task: str
    cwd: str = ""


class StepRow(QFrame):
    """One step: number, agent, task, folder and the move/remove buttons."""

    changed = Signal()
    removeRequested = Signal(object)
    moveRequested = Signal(object, int)
    """(row, -1 for up / +1 for down)."""

    def __init__(self, agents: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StepRow")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.number = QLabel("1")
        self.number.setObjectName("StepNumber")
        self.number.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.number.setFixedWidth(22)
        self.agent = QComboBox()
        self.agent.setObjectName("StepAgent")
        self.agent.setEditable(True)
        self.agent.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.agent.setMinimumWidth(150)
        line_edit = self.agent.lineEdit()
        if line_edit is not None:
            line_edit.setPlaceholderText("agent")
        self.set_agents(agents)
        self.task = QPlainTextEdit()
        self.task.setObjectName("StepTask")
        self.task.setPlaceholderText("What should this agent do?")
        self.task.setTabChangesFocus(True)
        self.task.setFixedHeight(self.task.fontMetrics().lineSpacing() * 3 + 14)
        self.cwd = QLineEdit()
        self.cwd.setObjectName("StepFolder")
        self.cwd.setPlaceholderText("sub-folder (optional)")
        self.cwd.setToolTip("Run this step in a folder relative to the working folder")
        self.up = self._tool("↑", "Move up", -1)
        self.down = self._tool("↓", "Move down", 1)
        self.remove = QToolButton()
        self.remove.setIcon(icons.icon("delete"))
        self.remove.setToolTip("Remove this step")
        self.remove.setAutoRaise(True)
        self.remove.clicked.connect(lambda: self.removeRequested.emit(self))

        grid = QGridLayout(self)
        grid.setContentsMargins(8, 8, 6, 8)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(6)
        grid.addWidget(self.number, 0, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.agent, 0, 1)
        grid.addWidget(self.cwd, 0, 2)
        buttons = QHBoxLayout()
        buttons.setSpacing(0)
        for button in (self.up, self.down, self.remove):
            buttons.addWidget(button)
        grid.addLayout(buttons, 0, 3)
        grid.addWidget(self.task, 1, 1, 1, 3)
        grid.setColumnStretch(1, 2)
        grid.setColumnStretch(2, 1)

        self.agent.currentTextChanged.connect(self.changed)
        self.task.textChanged.connect(self.changed)
        self.cwd.textChanged.connect(self.changed)

    def _tool(self, text: str, tip: str, direction: int) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.moveRequested.emit(self, direction))
        return button

    def set_agents(self, agents: list[str]) -> None:
        current = self.agent.currentText()
        self.agent.blockSignals(True)
        self.agent.clear()
        self.agent.addItems(agents)
        self.agent.setCurrentText(current)
        self.agent.blockSignals(False)
        completer = QCompleter(agents, self.agent)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        # Inline, not a popup: a popup eats the next click (meant for the task field) to
        # close itself, and the task then lands in the agent field. The list is one arrow away.
        completer.setCompletionMode(QCompleter.CompletionMode.InlineCompletion)
        self.agent.setCompleter(completer)

    def value(self) -> StepInput:
        return StepInput(
            self.agent.currentText().strip(), self.task.toPlainText(), self.cwd.text().strip()
        )

    def set_value(self, step: StepInput) -> None:
        self.agent.setCurrentText(step.agent)
        self.task.setPlainText(step.task)
        self.cwd.setText(step.cwd)


class StepsEditor(QWidget):
    """Mode buttons, the step rows and "Add step". GUI thread only."""

    changed = Signal()
    """The mode, an agent, a task or the list of steps changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._agents: list[str] = []
        self._rows: list[StepRow] = []
        self.mode_buttons: dict[str, QRadioButton] = {}
        self._mode_group = QButtonGroup(self)
        mode_row = QHBoxLayout()
        mode_row.addWidget(QLabel("Mode:"))
        for mode in MODES:
            button = QRadioButton(mode.capitalize())
            button.setObjectName(f"mode-{mode}")
            self._mode_group.addButton(button)
            self.mode_buttons[mode] = button
            mode_row.addWidget(button)
            button.toggled.connect(self._mode_toggled)
        mode_row.addStretch(1)
        self.mode_hint = QLabel()
        self.mode_hint.setObjectName("Secondary")
        self.mode_hint.setWordWrap(True)

        self._rows_box = QWidget()
        self._rows_layout = QVBoxLayout(self._rows_box)
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.setSpacing(6)
        self._rows_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._rows_box)
        # The rows sit on the tab page itself, not on a differently shaded scroll viewport
        # (selectors by name: a bare rule would cascade into the rows' own fields).
        scroll.setObjectName("StepScroll")
        self._rows_box.setObjectName("StepRows")
        scroll.viewport().setAutoFillBackground(False)
        scroll.setStyleSheet(
            "QScrollArea#StepScroll, QWidget#StepRows { background: transparent; }"
        )
        self.add_button = QPushButton(icons.icon("add"), "Add step")
        self.add_button.clicked.connect(lambda: self.add_step())
        add_row = QHBoxLayout()
        add_row.addWidget(self.add_button)
        add_row.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(mode_row)
        layout.addWidget(self.mode_hint)
        layout.addWidget(scroll, 1)
        layout.addLayout(add_row)
        self.mode_buttons["chain"].setChecked(True)
        self.add_step()

    # -- public API ----------------------------------------------------------------------

    def mode(self) -> str:
        return next((m for m, b in self.mode_buttons.items() if b.isChecked()), "chain")

    def set_mode(self, mode: str) -> None:
        self.mode_buttons[mode].setChecked(True)

    def set_agents(self, agents: Iterable[str]) -> None:
        self._agents = list(agents)
        for row in self._rows:
            row.set_agents(self._agents)

    def rows(self) -> list[StepRow]:
        return list(self._rows)

    def steps(self) -> list[StepInput]:
        return [row.value() for row in self._rows]

    def set_steps(self, steps: Iterable[StepInput]) -> None:
        for row in list(self._rows):
            self._remove(row)
        for step in steps:
            self.add_step(step)
        if not self._rows:
            self.add_step()

    def add_step(self, step: StepInput | None = None) -> StepRow:
        row = StepRow(self._agents)
        if step is not None:
            row.set_value(step)
        elif self._rows:
            row.agent.setCurrentText("")
        row.changed.connect(self.changed)
        row.removeRequested.connect(self._remove_clicked)
        row.moveRequested.connect(self._move)
        self._rows.append(row)
        self._rows_layout.insertWidget(len(self._rows) - 1, row)
        self._renumber()
        self.changed.emit()
        return row

    # -- private -------------------------------------------------------------------------

    def _remove_clicked(self, row: StepRow) -> None:
        self._remove(row)
        self._renumber()
        self.changed.emit()

    def _remove(self, row: StepRow) -> None:
        self._rows.remove(row)
        self._rows_layout.removeWidget(row)
        row.hide()
        row.deleteLater()

    def _move(self, row: StepRow, direction: int) -> None:
        index = self._rows.index(row)
        target = index + direction
        if not 0 <= target < len(self._rows):
            return
        self._rows[index], self._rows[target] = self._rows[target], self._rows[index]
        self._rows_layout.removeWidget(row)
        self._rows_layout.insertWidget(target, row)
        self._renumber()
        self.changed.emit()

    def _renumber(self) -> None:
        mode = self.mode()
        alone = len(self._rows) == 1
        for number, row in enumerate(self._rows, start=1):
            row.number.setText(str(number))
            row.up.setEnabled(number > 1)
            row.down.setEnabled(number < len(self._rows))
            # One step has nothing to reorder or be removed from: no buttons that do nothing.
            for button in (row.up, row.down, row.remove):
                button.setVisible(not alone)
        limit = 1 if mode == "single" else MAX_PARALLEL_TASKS if mode == "parallel" else 50
        self.add_button.setEnabled(len(self._rows) < limit)
        self.add_button.setToolTip(
            "A single run has one step; choose Parallel or Chain for more"
            if mode == "single"
            else ""
        )

    def _mode_toggled(self, checked: bool) -> None:
        if not checked:
            return
        self.mode_hint.setText(MODE_HINTS[self.mode()])
        self._renumber()
        self.changed.emit()
