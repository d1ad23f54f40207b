"""A gate waiting for a person, in the run view: what is handed on, and the four answers.

A gated step does not start until someone decides (architecture: "Graph pipelines"). The panel
sits between the run's graph and its panes while a gate waits, and shows:

* the question, and which step waits behind it;
* what the previous steps produced — the hand-off the next step would get — read-only until
  the person chooses **Edit what is handed on**, which makes it editable and offers
  **Hand on my edit** (the run file records the edited text as the person's);
* **Continue**, **Send back…** (a note for the step or loop sent back to), **Stop**;
* for a best-of without a judge, one **Keep attempt#N** button per attempt instead;
* the countdown to the gate's default decision when it has a timeout.

The panel only asks: :attr:`decided` carries the answer to the run view's owner, which calls
the runner's ``decide_gate``; a refusal comes back through :meth:`show_problem`.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.run.graph_progress import OpenGate
from gui.theme import set_tone

PERSON_OPTIONS = ("continue", "edit", "send_back", "stop")
DEFAULT_WORDS = {"continue": "Continues", "stop": "Stops", "edit": "Continues"}


def countdown(seconds: float) -> str:
    """``4:05`` — minutes and seconds left, never negative."""
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


class GatePanel(QFrame):
    """See the module docstring. GUI thread only."""

    decided = Signal(str, str, object, object)
    """``(gate_id, decision, text | None, note | None)``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GatePanel")
        self._gate: OpenGate | None = None
        self._editing = False
        self._sending_back = False
        # Tinted amber by the application style sheet (QFrame#GatePanel), in the palette's
        # colours: a light ↔ dark switch recolours it with everything else.
        self.question = QLabel()
        self.question.setObjectName("GateQuestion")
        self.question.setWordWrap(True)
        set_tone(self.question, "waiting")
        self.remaining = QLabel()
        self.remaining.setObjectName("Secondary")
        self.caption = QLabel("What the previous steps hand on:")
        self.caption.setObjectName("Secondary")
        self.handoff = QPlainTextEdit()
        self.handoff.setObjectName("GateHandoff")
        self.handoff.setReadOnly(True)
        self.handoff.setMaximumHeight(150)
        self.note = QLineEdit()
        self.note.setObjectName("GateNote")
        self.note.setPlaceholderText("What should be done differently (sent with the step)")
        self.note.hide()
        self.problem = QLabel()
        self.problem.setObjectName("ErrorText")
        self.problem.setWordWrap(True)
        self.problem.hide()

        self.continue_button = QPushButton("Continue")
        self.continue_button.setObjectName("GateContinue")
        self.edit_button = QPushButton("Edit what is handed on")
        self.edit_button.setObjectName("GateEdit")
        self.send_back_button = QPushButton("Send back…")
        self.send_back_button.setObjectName("GateSendBack")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("GateStop")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.hide()
        self._pick_buttons: list[QPushButton] = []
        self._buttons = QHBoxLayout()
        self._buttons.setSpacing(6)
        for button in (self.continue_button, self.edit_button, self.send_back_button):
            self._buttons.addWidget(button)
        self._buttons.addStretch(1)
        self._buttons.addWidget(self.cancel_button)
        self._buttons.addWidget(self.stop_button)

        top = QHBoxLayout()
        top.addWidget(self.question, 1)
        top.addWidget(self.remaining)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.caption)
        layout.addWidget(self.handoff)
        layout.addWidget(self.note)
        layout.addWidget(self.problem)
        layout.addLayout(self._buttons)

        self.continue_button.clicked.connect(self._continue_clicked)
        self.edit_button.clicked.connect(self._edit_clicked)
        self.send_back_button.clicked.connect(self._send_back_clicked)
        self.stop_button.clicked.connect(lambda: self._decide("stop"))
        self.cancel_button.clicked.connect(self._reset_modes)
        self.note.returnPressed.connect(self._send_back_clicked)
        self.hide()

    # -- public API ----------------------------------------------------------------------

    def gate(self) -> OpenGate | None:
        return self._gate

    def show_gate(self, gate: OpenGate | None, elapsed: float = 0.0) -> None:
        """Ask ``gate`` (None: nothing waits; the panel hides). The same gate again keeps
        what the person is typing."""
        if gate is None:
            self._gate = None
            self.hide()
            return
        if self._gate is not None and self._gate.gate_id == gate.gate_id:
            self.tick(elapsed)
            return
        self._gate = gate
        picking = any(o not in PERSON_OPTIONS for o in gate.options)
        where = "" if picking else f" — before “{gate.node}” starts"
        self.question.setText(f"<b>{html.escape(gate.question)}</b>{where}")
        self.handoff.setPlainText(gate.handoff or "(nothing: no step ran before this one)")
        self._set_picks([o for o in gate.options if o not in PERSON_OPTIONS])
        self._reset_modes()
        self.tick(elapsed)
        self.show()

    def tick(self, elapsed: float) -> None:
        """Redraw the countdown (``elapsed``: seconds into the run, as the model counts)."""
        gate = self._gate
        if gate is None or gate.timeout_s is None:
            self.remaining.setText("")
            return
        left = gate.timeout_s - (elapsed - gate.since)
        words = DEFAULT_WORDS.get(gate.default, "Decides")
        self.remaining.setText(f"{words} in {countdown(left)} unless you decide")

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.setVisible(bool(text))

    def is_editing(self) -> bool:
        return self._editing

    def pick_buttons(self) -> list[QPushButton]:
        return list(self._pick_buttons)

    # -- private -------------------------------------------------------------------------

    def _set_picks(self, picks: list[str]) -> None:
        for button in self._pick_buttons:
            self._buttons.removeWidget(button)
            button.deleteLater()
        self._pick_buttons = []
        for position, option in enumerate(picks):
            button = QPushButton(f"Keep {option}")
            button.clicked.connect(lambda _c=False, o=option: self._decide("continue", text=o))
            self._buttons.insertWidget(position, button)
            self._pick_buttons.append(button)

    def _decide(self, decision: str, *, text: str | None = None, note: str | None = None) -> None:
        if self._gate is not None:
            self.show_problem("")
            self.decided.emit(self._gate.gate_id, decision, text, note)

    def _continue_clicked(self) -> None:
        if self._editing:
            self._decide("edit", text=self.handoff.toPlainText())
        else:
            self._decide("continue")

    def _edit_clicked(self) -> None:
        self._reset_modes()
        self._editing = True
        self.handoff.setReadOnly(False)
        self.caption.setText("What the next step gets (your edit is recorded as yours):")
        self.continue_button.setText("Hand on my edit")
        self.edit_button.hide()
        self.send_back_button.hide()
        self.cancel_button.show()
        self.handoff.setFocus()

    def _send_back_clicked(self) -> None:
        if self._sending_back:
            self._decide("send_back", note=self.note.text().strip() or None)
            return
        self._reset_modes()
        self._sending_back = True
        self.note.show()
        self.note.setFocus()
        self.send_back_button.setText("Send back")
        self.continue_button.hide()
        self.edit_button.hide()
        self.cancel_button.show()

    def _reset_modes(self) -> None:
        gate = self._gate
        self._editing = False
        self._sending_back = False
        self.handoff.setReadOnly(True)
        if gate is not None:
            self.handoff.setPlainText(gate.handoff or "(nothing: no step ran before this one)")
        self.caption.setText("What the previous steps hand on:")
        self.continue_button.setText("Continue")
        self.send_back_button.setText("Send back…")
        self.note.hide()
        self.note.clear()
        self.cancel_button.hide()
        offered = [o for o in gate.options if o in PERSON_OPTIONS] if gate else []
        picks = bool(gate and any(o not in PERSON_OPTIONS for o in gate.options))
        every = not offered and not picks
        self.continue_button.setVisible(every or "continue" in offered)
        self.edit_button.setVisible(every or "edit" in offered)
        self.send_back_button.setVisible(every or "send_back" in offered)
