"""How a cost reads, everywhere: the run header, step panes, History, Compare, the usage
roll-up, batches, the budget estimate and the terminal all format through here.

One scheme, one meaning:

* ``$0.0123`` — every request was priced: this is what it cost.
* ``≥$0.0123`` — some requests used a model with no known price: the figure is what the priced
  ones cost, so the real cost is at least this (a lower bound, and only then).
* ``$—`` — nothing could be priced (the model is in no price table): unknown, never ``$0``.
  Where there is room for a tooltip, :data:`UNPRICED_REASON` says why.

A priced cost too small for four decimals reads ``<$0.0001`` rather than a misleading
``$0.0000``; a lower bound that small carries no information and reads ``$—``.
"""

from __future__ import annotations

UNPRICED = "$—"
UNPRICED_REASON = (
    "Baton has no price for the model used, so the cost is unknown (add the model's price "
    "under prices: in config.yaml)"
)
PARTLY_PRICED_REASON = (
    "Some requests used a model with no known price: the real cost is at least this much"
)
SMALLEST = 0.0001


def format_cost(cost: float, priced: bool = True) -> str:
    """``cost`` in US dollars as every place shows it (see the module docstring)."""
    if not priced:
        return f"≥${cost:.4f}" if cost >= SMALLEST else UNPRICED
    if 0 < cost < SMALLEST:
        return f"<${SMALLEST:.4f}"
    return f"${cost:.4f}"


def format_cost_delta(change: float) -> str:
    """A change in cost, signed and in the same form: ``+$0.0002``, ``−$0.0150``, ``$0.0000``."""
    if abs(change) < SMALLEST / 2:
        return "$0.0000"
    sign = "+" if change > 0 else "−"
    return f"{sign}${abs(change):.4f}"


def cost_reason(cost: float, priced: bool) -> str:
    """Why a cost reads ``$—`` or ``≥$…`` (for a tooltip); "" when it is simply the cost."""
    if priced:
        return ""
    return PARTLY_PRICED_REASON if cost >= SMALLEST else UNPRICED_REASON
