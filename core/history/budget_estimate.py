"""What a run of a preset is likely to cost, from earlier runs of it: shown next to the budget
fields of the launch dialog, so a person picks a cap from evidence rather than a guess.

The median, not the mean: one runaway run (a loop that hit the turn limit) would otherwise
drag the estimate far from what a run usually costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from core.model.cost import UNPRICED, format_cost
from core.model.events import UsageStats, compact_number
from core.record.run_files import RunIndex

SAMPLE = 20
"""How many of the latest finished runs the estimate reads."""


@dataclass(frozen=True)
class Estimate:
    runs: int
    cost: float
    """Median US dollars per run."""
    tokens: int
    """Median new tokens (input + output) per run, as the token cap counts them."""
    priced: bool
    """False when some of those runs used a model with no known price (the cost is low)."""

    def describe(self) -> str:
        """``usually $0.0123 and 12k tokens (median of 5 runs)``."""
        cost = format_cost(self.cost, self.priced)
        plural = "s" if self.runs != 1 else ""
        tokens = f"{compact_number(self.tokens)} tokens"
        figures = f"{tokens}, cost unknown" if cost == UNPRICED else f"{cost} and {tokens}"
        return f"usually {figures} (median of {self.runs} earlier run{plural})"


def estimate_from(usages: list[UsageStats]) -> Estimate | None:
    """The median of ``usages``; None without any."""
    if not usages:
        return None
    return Estimate(
        runs=len(usages),
        cost=float(median(u.cost for u in usages)),
        tokens=int(median(u.input + u.output for u in usages)),
        priced=all(u.priced for u in usages),
    )


def preset_estimate(preset: str, index: RunIndex | None = None) -> Estimate | None:
    """The estimate for ``preset`` from the runs index; None: no finished run yet."""
    return estimate_from((index or RunIndex()).usage_of_preset(preset, SAMPLE))


def describe_estimate(estimate: Estimate | None) -> str:
    return estimate.describe() if estimate is not None else "no estimate yet"
