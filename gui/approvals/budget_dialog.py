"""The budget question: a run reached its cost or token cap; raise the cap, or stop.

Asked the way approvals are (:mod:`gui.approvals.approval_dialog`): a non-modal dialog that is
never ``exec()``-ed, so other steps and runs keep going while the person decides, fed one
question at a time by :class:`gui.approvals.budget_queue.BudgetQueue`. The new cap starts at
twice the old one; Escape or closing the window stops (a cap is a promise not to spend more
unless someone says so).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.model.budget import BudgetQuestion, Caps
from gui.widgets import PlainLabel

MAX_COST = 10_000.0
MAX_TOKENS = 2_000_000_000


def raised_caps(question: BudgetQuestion, value: float) -> Caps:
    """``question``'s caps with the reached one set to ``value``."""
    if question.kind == "cost":
        return question.caps.model_copy(update={"max_cost": value})
    return question.caps.model_copy(update={"max_tokens": int(value)})


class BudgetDialog(QDialog):
    """Shows one :class:`BudgetQuestion`; emits :attr:`answered` when the person decides."""

    # -- signals (GUI thread) ------------------------------------------------------------

    answered = Signal(object, object)
    """(question, raised :class:`Caps` or None to stop)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BudgetDialog")
        self.setWindowTitle("Budget reached")
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.question: BudgetQuestion | None = None
        self.heading = PlainLabel()
        self.heading.setObjectName("BudgetHeading")
        self.heading.setStyleSheet("font-weight: 600; font-size: 14px;")
        self.heading.setWordWrap(True)
        self.reason = PlainLabel()
        self.reason.setObjectName("BudgetReason")
        self.reason.setWordWrap(True)
        self.waiting = QLabel()
        self.waiting.setObjectName("Secondary")
        self.cost = QDoubleSpinBox()
        self.cost.setObjectName("NewCostCap")
        self.cost.setPrefix("$")
        self.cost.setDecimals(2)
        self.cost.setRange(0.01, MAX_COST)
        self.tokens = QSpinBox()
        self.tokens.setObjectName("NewTokenCap")
        self.tokens.setRange(1, MAX_TOKENS)
        self.tokens.setGroupSeparatorShown(True)
        self.tokens.setSuffix(" tokens")
        self.cap_label = QLabel("New cap")
        self.stop_button = QPushButton("Stop the run")
        self.stop_button.setObjectName("BudgetStop")
        self.stop_button.setAutoDefault(False)
        self.stop_button.clicked.connect(lambda: self._answer(None))
        self.raise_button = QPushButton("Raise the cap and go on")
        self.raise_button.setObjectName("BudgetRaise")
        self.raise_button.setAutoDefault(False)
        self.raise_button.clicked.connect(self._raise)
        cap_row = QHBoxLayout()
        cap_row.addWidget(self.cap_label)
        cap_row.addWidget(self.cost)
        cap_row.addWidget(self.tokens)
        cap_row.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.waiting)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.raise_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.reason)
        layout.addLayout(cap_row)
        layout.addLayout(buttons)
        self.setMinimumWidth(480)

    # -- public API ----------------------------------------------------------------------

    def show_question(self, question: BudgetQuestion, run_title: str, waiting: int) -> None:
        """Show ``question`` (the oldest of ``waiting``) and bring the dialog up."""
        changed = self.question != question
        self.question = question
        self.heading.setText(f"{run_title}: step {question.step + 1} reached its budget")
        self.reason.setText(
            f"The {question.scope} cap is reached: {question.reason}. The step is paused; "
            "no request goes out until you raise the cap."
        )
        self.waiting.setText(f"1 of {waiting} waiting" if waiting > 1 else "")
        cost = question.kind == "cost"
        self.cost.setVisible(cost)
        self.tokens.setVisible(not cost)
        if changed:
            if cost:
                self.cost.setValue(2 * (question.caps.max_cost or 0.05))
            else:
                self.tokens.setValue(min(MAX_TOKENS, 2 * (question.caps.max_tokens or 1)))
        self.show()
        self.adjustSize()  # the wrapped sentences decide the height
        self.raise_()
        self.activateWindow()

    def clear_question(self) -> None:
        self.question = None
        self.hide()

    # -- Qt overrides --------------------------------------------------------------------

    def reject(self) -> None:
        """Escape: stop (nothing more is spent unless someone says so)."""
        self._answer(None)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.question is not None:
            self._answer(None)
        super().closeEvent(event)

    # -- private -------------------------------------------------------------------------

    def _raise(self) -> None:
        if self.question is None:
            return
        value = self.cost.value() if self.question.kind == "cost" else self.tokens.value()
        self._answer(raised_caps(self.question, value))

    def _answer(self, caps: Caps | None) -> None:
        question = self.question
        if question is None:
            return
        self.question = None
        self.hide()
        self.answered.emit(question, caps)
