"""The box under a step where a person talks to it: to the running step ("steer"), or, once it
finished, to continue its conversation as a new step ("continue").

Enter or Ctrl+Enter sends, Shift+Enter starts a new line. The box only says what the person
wants (:attr:`StepMessageBox.sent`); the run view's owner delivers it
(:meth:`core.run.runner.Runner.steer`, or a continuation run) and reports a refusal back with
:meth:`StepMessageBox.show_problem`. The message itself appears in the step's stream from the
``user_message`` event, like everything else the run view shows.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.backends.steering import CONTINUABLE_BACKENDS, TALKING_BACKENDS
from core.record.run_state import StepState
from gui.theme import set_tone
from gui.widgets import PlainLabel

BoxMode = Literal["steer", "continue"]

_PLACEHOLDERS: dict[BoxMode, str] = {
    "steer": "Message the agent — it reads it before its next step (Enter to send)",
    "continue": "Continue this conversation — a follow-up becomes a new step (Enter to send)",
}
_BUTTONS: dict[BoxMode, str] = {"steer": "Send", "continue": "Continue"}
CANNOT_TALK = "This step's backend cannot take messages."


def box_mode(step: StepState, *, run_running: bool) -> BoxMode | None:
    """What the box under ``step`` is for, or None when it has no box: a running step takes
    messages; a finished one (in a run that ended) can be continued, unless it was copied
    from another run or its backend cannot continue a conversation (pi, an imported
    transcript)."""
    if run_running and step.phase in ("running", "waiting"):
        return "steer"
    finished = not run_running and step.phase == "ok" and not step.reused_from
    if finished and step.backend in CONTINUABLE_BACKENDS:
        return "continue"
    return None


class StepMessageBox(QWidget):
    """A small text box and a Send button. GUI thread only."""

    # ------------------------------------------------------------------ signals
    sent = Signal(str, str)
    """``(mode, text)``: the person sent ``text`` (stripped, not empty); mode is ``steer``
    or ``continue``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StepMessageBox")
        self.mode: BoxMode | None = None
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("StepMessageEditor")
        self.editor.setTabChangesFocus(True)
        line = self.editor.fontMetrics().lineSpacing()
        self.editor.setFixedHeight(line * 2 + 14)
        self.editor.installEventFilter(self)
        self.editor.textChanged.connect(self._update_button)
        self.button = QPushButton("Send")
        self.button.setObjectName("StepMessageSend")
        self.button.clicked.connect(self.send)
        self.problem = PlainLabel("")
        self.problem.setObjectName("StepMessageProblem")
        self.problem.setWordWrap(True)
        set_tone(self.problem, "error")
        self.problem.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addWidget(self.editor, 1)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.problem)
        self.hide()

    # ------------------------------------------------------------------ public API

    def update_for(self, step: StepState, *, run_running: bool) -> None:
        """Show the box the step needs now (or hide it); keeps what is being typed."""
        mode = box_mode(step, run_running=run_running)
        if mode is None:
            self.mode = None
            self.hide()
            return
        can_talk = step.backend in TALKING_BACKENDS
        if mode != self.mode:
            self.mode = mode
            self.editor.setPlaceholderText(_PLACEHOLDERS[mode] if can_talk else CANNOT_TALK)
            self.button.setText(_BUTTONS[mode])
            self.problem.hide()
        self.editor.setEnabled(can_talk)
        self.setToolTip("" if can_talk else CANNOT_TALK)
        self._update_button()
        self.show()

    def send(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or self.mode is None or not self.editor.isEnabled():
            return
        self.problem.hide()
        self.editor.clear()
        self.sent.emit(self.mode, text)

    def show_problem(self, text: str) -> None:
        """Why the last message could not be delivered (shown under the box)."""
        self.problem.setText(text)
        self.problem.show()

    # ------------------------------------------------------------------ Qt overrides

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.editor and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.send()
                return True
        return super().eventFilter(watched, event)

    # ------------------------------------------------------------------ private

    def _update_button(self) -> None:
        enabled = self.editor.isEnabled() and bool(self.editor.toPlainText().strip())
        self.button.setEnabled(enabled)
