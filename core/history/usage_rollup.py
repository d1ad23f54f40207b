"""Which agent costs what in a run: totals per agent definition.

A run's steps folded per agent name — how many steps, tool calls and what usage — with each
step's own sub-agents (:func:`core.history.subagents.subagent_rows`) kept apart, so a table can show
them nested under their step. History's per-agent totals across runs come from the runs index
(:meth:`core.record.run_files.RunIndex.usage_by_agent`); this is the same question within one run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.history.subagents import SubagentRow, subagent_rows
from core.model.events import UsageStats
from core.record.run_state import RunState, StepState, ToolCall


@dataclass(frozen=True)
class StepUsage:
    index: int
    model: str | None
    tool_calls: int
    """The step's own calls (its sub-agents' are counted in their rows)."""
    usage: UsageStats
    subagents: list[SubagentRow]


@dataclass
class AgentTotal:
    agent: str
    usage: UsageStats = field(default_factory=UsageStats)
    tool_calls: int = 0
    steps: list[StepUsage] = field(default_factory=list)


def step_usage(step: StepState) -> StepUsage:
    own = sum(1 for i in step.items if isinstance(i, ToolCall) and i.parent_call_id is None)
    return StepUsage(step.index, step.model, own, step.usage, subagent_rows(step))


def agent_totals(state: RunState) -> list[AgentTotal]:
    """One total per agent, in the order the agents first run; steps not run yet count too
    (with nothing), so the table's rows do not jump around while a run goes."""
    totals: dict[str, AgentTotal] = {}
    for step in state.steps:
        total = totals.setdefault(step.agent, AgentTotal(step.agent))
        row = step_usage(step)
        total.usage = total.usage + row.usage
        total.tool_calls += row.tool_calls + sum(s.tool_calls for s in row.subagents)
        total.steps.append(row)
    return list(totals.values())
