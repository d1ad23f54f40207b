"""Budgets: a cost and token cap per run and per step, checked before every model request.

Usage is priced with the same table as the usage line (:mod:`core.config.pricing`). When a request
would start with a cap already reached, the run pauses and asks (:data:`BudgetAsker`): the
person raises the cap, or the step stops with "budget reached"; with nobody to ask it stops at
once. Tokens count what a model read and wrote anew: input + output (cache reads are not new
work and are priced in the cost cap instead).

Baton's own loop asks before each request, so no request goes out past a cap, and it tells
the provider how much the answer may be (``max_tokens``, :meth:`BudgetGuard.output_allowance`):
without it one answer could run twenty times past the cap before Baton sees its usage. The pi and
Claude Code CLIs make their requests themselves: their steps are checked on every usage report
and stopped there (one request may go past the cap).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.model.cost import format_cost
from core.model.events import BudgetAnswered, BudgetAsked, Event, RunCaps, RunStarted, UsageStats

CapKind = Literal["cost", "tokens"]


class Caps(BaseModel):
    """Limits for one scope (the run, or each step); None: no limit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_cost: float | None = Field(default=None, gt=0)
    """US dollars."""
    max_tokens: int | None = Field(default=None, gt=0)

    def reached(self, usage: UsageStats) -> tuple[CapKind, str] | None:
        """Which cap ``usage`` has reached and how, in words; None when none."""
        if self.max_cost is not None and usage.cost >= self.max_cost:
            spent, cap = format_cost(usage.cost, usage.priced), format_cost(self.max_cost)
            return "cost", f"{spent} spent of a {cap} cap"
        tokens = usage.input + usage.output
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return "tokens", f"{tokens:,} tokens used of a {self.max_tokens:,} cap"
        return None


class Budget(BaseModel):
    """``budget:`` in a preset, or ``--max-cost`` / ``--max-tokens`` on the command line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run: Caps = Field(default_factory=Caps)
    step: Caps = Field(default_factory=Caps)


def caps_of(budget: Budget | None) -> RunCaps | None:
    """A budget as the run file keeps it (``run_started.budget``)."""
    if budget is None or budget == Budget():
        return None
    return RunCaps(
        run_max_cost=budget.run.max_cost,
        run_max_tokens=budget.run.max_tokens,
        step_max_cost=budget.step.max_cost,
        step_max_tokens=budget.step.max_tokens,
    )


def budget_of(events: list[Event]) -> Budget | None:
    """The caps a saved run ended with: those it started with, raised wherever a person raised
    them at a reached cap. A resumed or re-run run goes on under these, so stopping at a cap
    and resuming never lifts the cap silently."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None or started.budget is None:
        return None
    caps = started.budget
    scopes = {
        "run": Caps(max_cost=caps.run_max_cost, max_tokens=caps.run_max_tokens),
        "step": Caps(max_cost=caps.step_max_cost, max_tokens=caps.step_max_tokens),
    }
    asked: str | None = None
    for event in events:
        if isinstance(event, BudgetAsked):
            asked = event.scope
        elif isinstance(event, BudgetAnswered) and asked is not None and not event.stopped:
            scopes[asked] = Caps(
                max_cost=event.max_cost if event.max_cost is not None else scopes[asked].max_cost,
                max_tokens=(
                    event.max_tokens if event.max_tokens is not None else scopes[asked].max_tokens
                ),
            )
            asked = None
    return Budget(run=scopes["run"], step=scopes["step"])


@dataclass(frozen=True)
class BudgetQuestion:
    run_id: str
    step: int
    scope: str
    """"run" or "step"."""
    kind: CapKind
    reason: str
    caps: Caps


BudgetAsker = Callable[[BudgetQuestion], Awaitable[Caps | None]]
"""Answers a reached cap: the raised caps to go on with, or None to stop."""


async def stop_at_cap(question: BudgetQuestion) -> None:
    """Nobody to ask (no terminal, a batch): the step stops."""
    return None


def budget_answer_text(answer: BudgetAnswered) -> str:
    """``cap raised to $1.00`` / ``stopped at the cap``, as the step's stream shows it."""
    if answer.stopped:
        return "stopped at the cap"
    caps = []
    if answer.max_cost is not None:
        caps.append(f"${answer.max_cost:.2f}")
    if answer.max_tokens is not None:
        caps.append(f"{answer.max_tokens:,} tokens")
    return "cap raised to " + " and ".join(caps)


@dataclass(frozen=True)
class TokenPrices:
    """US dollars per token of the model a request goes to (None: the model is unpriced)."""

    input: float
    output: float


BUDGET_STOP = "budget reached: "
"""How the error of a step stopped at a cap begins (:class:`BudgetReached`): the run ended as
its budget said, which the window shows as "Stopped at budget", not as a failure."""


class BudgetReached(Exception):
    """A cap was reached and not raised; ``str()`` is the step's error."""


class BudgetGuard:
    """The run's budget, checked by backends before each request. ``usage_of(step)`` gives
    (run usage so far, that step's usage so far)."""

    def __init__(
        self,
        budget: Budget,
        usage_of: Callable[[int], tuple[UsageStats, UsageStats]],
        ask: BudgetAsker = stop_at_cap,
        run_id: str = "",
    ) -> None:
        self.budget = budget
        self._usage_of = usage_of
        self._ask = ask
        self._run_id = run_id

    async def check(self, step: int) -> None:
        """Return when a request may go out; raises :class:`BudgetReached` otherwise."""
        while True:
            run_usage, step_usage = self._usage_of(step)
            for scope, caps, usage in (
                ("run", self.budget.run, run_usage),
                ("step", self.budget.step, step_usage),
            ):
                reached = caps.reached(usage)
                if reached is None:
                    continue
                kind, reason = reached
                question = BudgetQuestion(self._run_id, step, scope, kind, reason, caps)
                raised = await self._ask(question)
                if raised is None or raised.reached(usage) is not None:
                    raise BudgetReached(f"{BUDGET_STOP}{reason}")
                self.budget = self.budget.model_copy(update={scope: raised})
                break
            else:
                return

    def output_allowance(
        self, step: int, prompt_tokens: int, prices: TokenPrices | None
    ) -> int | None:
        """The most tokens the next answer may write without passing a cap, given a prompt of
        about ``prompt_tokens``; None when no cap limits it. At least 1: a request that goes
        out at all (:meth:`check` let it) must be allowed an answer.

        A cost cap limits the answer only when the model has a price; an unpriced model is
        bounded by the token cap alone.
        """
        run_usage, step_usage = self._usage_of(step)
        room: list[float] = []
        for caps, usage in ((self.budget.run, run_usage), (self.budget.step, step_usage)):
            if caps.max_tokens is not None:
                room.append(caps.max_tokens - usage.input - usage.output - prompt_tokens)
            if caps.max_cost is not None and prices is not None and prices.output > 0:
                left = caps.max_cost - usage.cost - prompt_tokens * prices.input
                room.append(left / prices.output)
        if not room:
            return None
        return max(1, int(min(room)))
