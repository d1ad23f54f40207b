"""One cost formatter, one meaning (core.model.cost): what each form says, and that the
places showing a cost — usage lines, the budget estimate, Compare, `baton usage` — use it."""

from __future__ import annotations

from core.history.budget_estimate import Estimate
from core.history.run_compare import _delta
from core.model.cost import (
    PARTLY_PRICED_REASON,
    UNPRICED,
    UNPRICED_REASON,
    cost_reason,
    format_cost,
    format_cost_delta,
)
from core.model.events import UsageStats
from core.terminal.commands.usage import cost_text


def test_priced_costs_read_as_dollars() -> None:
    assert format_cost(0.0123) == "$0.0123"
    assert format_cost(0.0) == "$0.0000"
    assert format_cost(0.00001) == "<$0.0001"  # never a misleading $0.0000 for a real cost


def test_a_lower_bound_only_where_one_is_meant_and_unknown_never_reads_zero() -> None:
    assert format_cost(0.0123, priced=False) == "≥$0.0123"
    assert format_cost(0.0, priced=False) == UNPRICED == "$—"
    assert format_cost(0.00001, priced=False) == UNPRICED  # no "≥$0.0000"
    assert cost_reason(0.0, priced=False) == UNPRICED_REASON
    assert cost_reason(0.5, priced=False) == PARTLY_PRICED_REASON
    assert cost_reason(0.5, priced=True) == ""


def test_a_change_in_cost_is_signed_and_formatted_like_a_cost() -> None:
    assert format_cost_delta(0.0002) == "+$0.0002"
    assert format_cost_delta(-0.015) == "−$0.0150"
    assert format_cost_delta(0.0) == "$0.0000"
    assert _delta(0.0010, 0.0012, "$") == "+$0.0002"  # Compare's B − A column


def test_every_place_uses_the_same_words() -> None:
    unpriced = UsageStats(turns=1, input=10, output=5, cost=0.0, priced=False)
    partly = UsageStats(turns=1, input=10, output=5, cost=0.25, priced=False)
    assert "$—" in unpriced.line() and "≥$0.2500" in partly.line()
    assert cost_text(unpriced) == "$—" and cost_text(partly) == "≥$0.2500"
    estimate = Estimate(runs=3, cost=0.0, tokens=1200, priced=False)
    assert estimate.describe() == "usually 1.2k tokens, cost unknown (median of 3 earlier runs)"
    assert "at least" not in Estimate(runs=1, cost=0.5, tokens=10, priced=False).describe()
    assert (
        Estimate(runs=1, cost=0.5, tokens=10, priced=False)
        .describe()
        .startswith("usually ≥$0.5000 and")
    )
