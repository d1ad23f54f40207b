"""The launch dialog's budget: a cost and a token cap for the run and for each step, and an
estimate from earlier runs of the same preset.

Empty (zero) means no cap. Choosing a preset fills the fields from its ``budget:``, so what the
dialog shows is what the run gets; the person may change or clear it for this run.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QGridLayout, QLabel, QSpinBox, QWidget

from core.history.budget_estimate import describe_estimate, preset_estimate
from core.model.budget import Budget, Caps

NO_CAP = "no cap"


def _cost_box(name: str, scope: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setObjectName(name)
    box.setToolTip(f"Most {scope} may cost, in US dollars (0: no cap)")
    box.setAccessibleName(f"{scope.capitalize()}: cost cap in US dollars")
    box.setPrefix("$")
    box.setDecimals(2)
    box.setRange(0.0, 10_000.0)
    box.setSingleStep(0.05)
    box.setSpecialValueText(NO_CAP)
    return box


def _token_box(name: str, scope: str) -> QSpinBox:
    box = QSpinBox()
    box.setObjectName(name)
    box.setToolTip(f"Most tokens {scope} may use, input + output (0: no cap)")
    box.setAccessibleName(f"{scope.capitalize()}: token cap, input + output")
    box.setRange(0, 2_000_000_000)
    box.setSingleStep(10_000)
    box.setGroupSeparatorShown(True)
    box.setSpecialValueText(NO_CAP)
    return box


class BudgetFields(QWidget):
    """Four cap fields and the estimate line. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_cost = _cost_box("RunCostCap", "the whole run")
        self.run_tokens = _token_box("RunTokenCap", "the whole run")
        self.step_cost = _cost_box("StepCostCap", "each step")
        self.step_tokens = _token_box("StepTokenCap", "each step")
        # Two boxes per row that both read "no cap" need their columns named.
        self.cost_header = QLabel("Cost (US$)")
        self.tokens_header = QLabel("Tokens (in + out)")
        self.cost_header.setToolTip("Checked before every model request; at the cap you are asked")
        self.tokens_header.setToolTip(
            "Input + output tokens; cache reads are priced in the cost cap instead"
        )
        self.estimate = QLabel("no estimate yet")
        self.estimate.setObjectName("BudgetEstimate")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.cost_header, 0, 1)
        grid.addWidget(self.tokens_header, 0, 2)
        for row, (label, cost, tokens) in enumerate(
            (
                ("Whole run", self.run_cost, self.run_tokens),
                ("Each step", self.step_cost, self.step_tokens),
            ),
            start=1,
        ):
            grid.addWidget(QLabel(label), row, 0)
            grid.addWidget(cost, row, 1)
            grid.addWidget(tokens, row, 2)
        grid.addWidget(QLabel("Earlier runs"), 3, 0)
        grid.addWidget(self.estimate, 3, 1, 1, 3)
        grid.setColumnStretch(3, 1)

    # -- public API ----------------------------------------------------------------------

    def budget(self) -> Budget | None:
        """The caps typed in; None when every field says "no cap"."""
        run = _caps(self.run_cost, self.run_tokens)
        step = _caps(self.step_cost, self.step_tokens)
        if run == Caps() and step == Caps():
            return None
        return Budget(run=run, step=step)

    def set_budget(self, budget: Budget | None) -> None:
        budget = budget or Budget()
        self.run_cost.setValue(budget.run.max_cost or 0.0)
        self.run_tokens.setValue(budget.run.max_tokens or 0)
        self.step_cost.setValue(budget.step.max_cost or 0.0)
        self.step_tokens.setValue(budget.step.max_tokens or 0)

    def show_estimate_for(self, preset: str | None) -> None:
        """The median of earlier runs of ``preset`` (None: an ad-hoc run, no estimate)."""
        found = preset_estimate(preset) if preset else None
        self.estimate.setText(describe_estimate(found))


def _caps(cost: QDoubleSpinBox, tokens: QSpinBox) -> Caps:
    return Caps(max_cost=cost.value() or None, max_tokens=tokens.value() or None)
