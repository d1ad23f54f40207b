"""``baton run`` on a terminal: a reached budget cap asks for a new one, or stops the step."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from core.model.budget import BudgetQuestion, Caps


async def ask_on_terminal(
    question: BudgetQuestion, read_line: Callable[[str], str] = input
) -> Caps | None:
    """The raised caps the person types, or None (empty answer, closed input: stop)."""
    kind = "cost in US dollars" if question.kind == "cost" else "tokens"
    prompt = f"New {question.scope} cap ({kind}), or Enter to stop: "
    sys.stderr.write(
        f"\nBudget reached in step {question.step + 1} ({question.scope} cap): {question.reason}.\n"
    )
    while True:
        try:
            answer = await asyncio.to_thread(read_line, prompt)
        except EOFError:
            return None
        answer = answer.strip().lstrip("$")
        if not answer:
            return None
        try:
            value = float(answer)
        except ValueError:
            continue
        if value <= 0:
            continue
        if question.kind == "cost":
            return question.caps.model_copy(update={"max_cost": value})
        return question.caps.model_copy(update={"max_tokens": int(value)})
