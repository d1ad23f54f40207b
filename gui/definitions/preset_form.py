"""The preset step editor: add, remove and connect steps without writing YAML by hand.

It sits beside the preset's text in the Presets view and edits *the text*: each change is made
to the file's YAML document (:class:`core.definitions.preset_yaml.PresetDocument`, which keeps
comments and formatting) and the new text is handed to the text editor as one undoable edit
(:attr:`textEdited`). So the file stays the truth: validation (with the line of each problem),
saving (atomic), and the warning when the file changed on disk under the editor are the text
editor's, unchanged; and a hand edit of the text shows in the form at once (:meth:`load`).

What the form edits per step: name, agent (the agents visible from the working folder, or any
name typed), task, ``after:`` (what it waits for: the connections of the graph), ``when:`` and a
gate with its question. Anything else (loops, ``best_of:``, models) is edited in the text, and
kept as written.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.definitions.preset_yaml import PresetDocument, PresetYAMLError, StepFields

APPLY_DELAY_MS = 300
"""Typing in a field is written to the text after this pause (one undo step per pause)."""
NEW_TASK = "{previous}"
AFTER_TIP = (
    "What this step waits for (and gets the answers of), separated by commas: step or loop "
    "names. Empty: the step listed before. 'none': it starts at once."
)
GRAPH_ONLY = "Only in a graph preset (mode: graph)"
MIN_WIDTH = 170


class PresetForm(QWidget):
    """See the module docstring. GUI thread only."""

    textEdited = Signal(str)
    """The whole new text of the file, after a change made in the form."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PresetForm")
        self._document: PresetDocument | None = None
        self._steps: list[StepFields] = []
        self._loading = False
        self._read_only = False

        self.note = QLabel()
        self.note.setObjectName("Secondary")
        self.note.setWordWrap(True)
        self.step_list = QListWidget()
        self.step_list.setObjectName("PresetFormSteps")
        self.add_button = QPushButton("Add step")
        self.add_button.setObjectName("AddStepButton")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("RemoveStepButton")
        self.name_field = QLineEdit()
        self.name_field.setPlaceholderText("a-z, 0-9, - and _")
        self.agent_field = QComboBox()
        self.agent_field.setEditable(True)
        self.task_field = QPlainTextEdit()
        self.task_field.setPlaceholderText("What the step does; {previous}, {step.NAME}, $@")
        self.task_field.setMaximumHeight(110)
        self.after_field = QLineEdit()
        self.after_field.setPlaceholderText("the step listed before")
        self.when_field = QLineEdit()
        self.when_field.setPlaceholderText("always, e.g. review.max_severity >= major")
        self.gate_box = QCheckBox("A person decides before this step starts")
        self.question_field = QLineEdit()
        self.question_field.setPlaceholderText("Continue?")

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        self.fields = QWidget()
        form = QFormLayout(self.fields)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name_field)
        form.addRow("Agent", self.agent_field)
        form.addRow("Task", self.task_field)
        form.addRow("After", self.after_field)
        form.addRow("When", self.when_field)
        form.addRow("Gate", self.gate_box)
        form.addRow("Question", self.question_field)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(QLabel("<b>Steps</b>"))
        layout.addWidget(self.step_list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.fields)
        layout.addWidget(self.note)

        # Narrow windows: the form may be squeezed (its fields scroll their text) rather than
        # widen the window past what an 800-pixel screen holds.
        self.setMinimumWidth(MIN_WIDTH)
        self._apply_timer = QTimer(self)
        self._apply_timer.setSingleShot(True)
        self._apply_timer.setInterval(APPLY_DELAY_MS)
        self._apply_timer.timeout.connect(self.apply_now)
        self.step_list.currentRowChanged.connect(self._show_step)
        self.add_button.clicked.connect(self.add_step)
        self.remove_button.clicked.connect(self.remove_step)
        for line in (self.name_field, self.after_field, self.when_field, self.question_field):
            line.textEdited.connect(self._field_changed)
            line.editingFinished.connect(self._apply_if_pending)
        self.agent_field.currentTextChanged.connect(self._field_changed)
        self.task_field.textChanged.connect(self._field_changed)
        self.gate_box.toggled.connect(self._gate_toggled)
        self._enable()

    # -- public API ----------------------------------------------------------------------

    def set_agents(self, names: list[str]) -> None:
        current = self.agent_field.currentText()
        self._loading = True
        self.agent_field.clear()
        self.agent_field.addItems(sorted(names, key=str.casefold))
        self.agent_field.setCurrentText(current)
        self._loading = False

    def load(self, text: str, read_only: bool = False) -> None:
        """Show the steps of ``text`` (the editor's), keeping the selected step."""
        self._apply_timer.stop()
        self._read_only = read_only
        row = max(0, self.step_list.currentRow())
        try:
            self._document = PresetDocument(text)
        except PresetYAMLError as error:
            self._document = None
            self._steps = []
            self.note.setText(f"The step editor cannot read this text ({error}); edit the text.")
        else:
            self._steps = self._document.steps()
            self.note.setText(
                "Read-only: duplicate the preset to edit it."
                if read_only
                else "Changes are written into the text, comments kept; Save writes the file."
            )
        self._loading = True
        self.step_list.clear()
        for step in self._steps:
            label = step.label() + (f"  ·  {step.agent}" if step.agent else "")
            if step.loop:
                label = f"⟲ {step.loop} / {label}"
            QListWidgetItem(label, self.step_list)
        self._loading = False
        if self._steps:
            self.step_list.setCurrentRow(min(row, len(self._steps) - 1))
        self._show_step(self.step_list.currentRow())
        self._enable()

    def steps(self) -> list[StepFields]:
        return list(self._steps)

    def select_step(self, row: int) -> None:
        self.step_list.setCurrentRow(row)

    def add_step(self) -> None:
        """A new step at the end, after the last one, asking the agent of the selected step."""
        if self._document is None or self._read_only:
            return
        self.apply_now()
        graph = self._document.is_graph()
        agent = self.agent_field.currentText().strip() or "worker"
        path = self._document.add_step(
            agent, NEW_TASK, self._document.free_name() if graph else None
        )
        self._emit()
        self.select_step(next(i for i, s in enumerate(self._steps) if s.path == path))
        self.name_field.setFocus() if graph else self.agent_field.setFocus()

    def remove_step(self) -> None:
        step = self._current()
        if self._document is None or step is None or self._read_only:
            return
        self._apply_timer.stop()
        self._document.remove_step(step.path)
        self._emit()

    def apply_now(self) -> None:
        """Write the fields of the selected step into the text (if they changed)."""
        self._apply_timer.stop()
        step = self._current()
        if self._document is None or step is None or self._read_only:
            return
        wanted: dict[str, object] = {
            "name": self.name_field.text().strip(),
            "agent": self.agent_field.currentText().strip(),
            "task": self.task_field.toPlainText(),
            "when": self.when_field.text().strip(),
        }
        after_text = self.after_field.text().strip()
        after: tuple[str, ...] | None = None
        if after_text:
            after = (
                ()
                if after_text.casefold() == "none"
                else tuple(n.strip() for n in after_text.split(",") if n.strip())
            )
        question = self.question_field.text().strip()
        changed = False
        for key, value in wanted.items():
            if value != getattr(step, key):
                self._document.set_field(step.path, key, value)
                changed = True
        if after != step.after:
            self._document.set_field(step.path, "after", None if after is None else list(after))
            changed = True
        if self.gate_box.isChecked() != step.gate or (step.gate and question != step.question):
            gate: object = (question or True) if self.gate_box.isChecked() else None
            self._document.set_field(step.path, "gate", gate)
            changed = True
        if changed:
            self._emit()

    # -- private -------------------------------------------------------------------------

    def _emit(self) -> None:
        assert self._document is not None
        text = self._document.text()
        self._steps = self._document.steps()
        self.textEdited.emit(text)
        self.load(text, self._read_only)

    def _current(self) -> StepFields | None:
        row = self.step_list.currentRow()
        return self._steps[row] if 0 <= row < len(self._steps) else None

    def _show_step(self, row: int) -> None:
        step = self._steps[row] if 0 <= row < len(self._steps) else None
        self._loading = True
        _set_line(self.name_field, step.name if step else "")
        self.agent_field.setCurrentText(step.agent if step else "")
        if step is None or self.task_field.toPlainText() != step.task:
            self.task_field.setPlainText(step.task if step else "")
        after = "" if step is None or step.after is None else ", ".join(step.after) or "none"
        _set_line(self.after_field, after)
        _set_line(self.when_field, step.when if step else "")
        self.gate_box.setChecked(bool(step and step.gate))
        _set_line(self.question_field, step.question if step else "")
        self._loading = False
        self._enable()

    def _field_changed(self, *_changed: object) -> None:
        if not self._loading:
            self._apply_timer.start()

    def _apply_if_pending(self) -> None:
        if self._apply_timer.isActive():
            self.apply_now()

    def _gate_toggled(self, _checked: bool) -> None:
        if not self._loading:
            self.apply_now()

    def _enable(self) -> None:
        editable = self._document is not None and not self._read_only
        step = self._current()
        graph = self._document is not None and self._document.is_graph()
        self.add_button.setEnabled(editable)
        self.remove_button.setEnabled(editable and step is not None)
        self.fields.setEnabled(editable and step is not None)
        for field in (self.name_field, self.after_field, self.when_field, self.gate_box):
            field.setEnabled(graph)
            field.setToolTip("" if graph else GRAPH_ONLY)
        if graph:
            self.after_field.setToolTip(AFTER_TIP)
        self.question_field.setEnabled(graph and self.gate_box.isChecked())


def _set_line(field: QLineEdit, text: str) -> None:
    """Show ``text`` without moving the cursor of a person typing the same text."""
    if field.text() != text:
        field.setText(text)
