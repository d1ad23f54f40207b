"""pi's ``subagent`` tool: the usage of each sub-agent it ran, read from its result.

pi reports a summary per sub-agent when its ``subagent`` tool ends (the ``details.results`` of
the pi subagent example, with usage, model and messages per agent). Read here, beside pi's event
parser that uses it, rather than with the folded step's sub-agent rows
(:mod:`core.history.subagents`), so the backends never import the run's fold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.backends.cli_output import as_int
from core.model.events import UsageStats

PI_SUBAGENT_TOOL = "subagent"


@dataclass(frozen=True)
class PiSubagent:
    name: str
    usage: UsageStats
    tool_calls: int


def pi_subagent_usages(details: Any) -> list[PiSubagent]:
    """Each sub-agent of a pi ``subagent`` tool result's ``details``; [] for anything else."""
    results = details.get("results") if isinstance(details, Mapping) else None
    found: list[PiSubagent] = []
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, Mapping):
            continue
        usage = result.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        cost = usage.get("cost")
        model = result.get("model")
        stats = UsageStats(
            turns=as_int(usage.get("turns")),
            input=as_int(usage.get("input")),
            output=as_int(usage.get("output")),
            cache_read=as_int(usage.get("cacheRead")),
            cache_write=as_int(usage.get("cacheWrite")),
            cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0,
            context_tokens=as_int(usage.get("contextTokens")),
            model=model if isinstance(model, str) and model else None,
        )
        name = result.get("agent")
        found.append(
            PiSubagent(
                str(name) if name else "sub-agent", stats, _tool_calls(result.get("messages"))
            )
        )
    return found


def _tool_calls(messages: Any) -> int:
    """Tool calls in a pi sub-agent's messages (``toolCall`` parts of assistant messages)."""
    count = 0
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                count += isinstance(part, Mapping) and part.get("type") == "toolCall"
    return count
