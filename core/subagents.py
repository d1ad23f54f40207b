"""The sub-agents a step's agent ran, and what each cost (issue 19 §6).

Claude Code's Task tool and pi's ``subagent`` tool run agents inside a step. Their usage
reaches Baton as ``usage`` events naming the call that started them (``parent_call_id``):
Claude Code streams each sub-agent message (its tool calls arrive as events nested under the
Task call too); pi reports a summary per sub-agent when its ``subagent`` tool ends
(:func:`pi_subagent_usages`, the ``details.results`` of the pi subagent example, with usage,
model and messages per agent). :func:`subagent_rows` reads both from a folded step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.backends.cli_output import as_int
from core.events import UsageStats
from core.run_state import StepState, ToolCall

PI_SUBAGENT_TOOL = "subagent"


@dataclass(frozen=True)
class SubagentRow:
    call_id: str
    """The call that started the sub-agent."""
    name: str
    model: str | None
    tool_calls: int
    usage: UsageStats


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


def subagent_rows(step: StepState) -> list[SubagentRow]:
    """The step's sub-agents in the order they were first seen: name, model, tool calls and
    usage. A Claude Code sub-agent is named by its Task call (``subagent_type``)."""
    rows: list[SubagentRow] = []
    for (call_id, name), usage in step.subagents.items():
        reported = step.subagent_tool_calls.get((call_id, name))
        calls = (
            reported
            if reported is not None
            else sum(
                1 for i in step.items if isinstance(i, ToolCall) and i.parent_call_id == call_id
            )
        )
        rows.append(
            SubagentRow(call_id, name or _task_name(step, call_id), usage.model, calls, usage)
        )
    return rows


def _task_name(step: StepState, call_id: str) -> str:
    call = step.tool_call(call_id)
    if call is None:
        return "sub-agent"
    for key in ("subagent_type", "agent", "description"):
        value = call.arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return call.tool
