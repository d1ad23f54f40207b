"""The sub-agents a step's agent ran, and what each cost.

Claude Code's Task tool and pi's ``subagent`` tool run agents inside a step. Their usage
reaches Baton as ``usage`` events naming the call that started them (``parent_call_id``):
Claude Code streams each sub-agent message (its tool calls arrive as events nested under the
Task call too); pi reports a summary per sub-agent when its ``subagent`` tool ends
(:func:`core.backends.pi_subagents.pi_subagent_usages` reads them where pi's events are
parsed). :func:`subagent_rows` reads both from a folded step.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.model.events import UsageStats
from core.record.run_state import StepState, ToolCall


@dataclass(frozen=True)
class SubagentRow:
    call_id: str
    """The call that started the sub-agent."""
    name: str
    model: str | None
    tool_calls: int
    usage: UsageStats


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
