"""A :class:`StepContext` for tests that drive a backend or a step's supervision directly,
with the approval gate on the context's own clock (what the runner makes for a step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.backends.base import RunClock, StepContext
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.safety.approvals import ApprovalGate, deny_all


def step_context(
    agent: AgentDefinition, cwd: Path, settings: Settings | None = None, **fields: Any
) -> StepContext:
    """Step 0 of run ``r`` with the agent's own tools; ``fields`` override any of it."""
    settings = settings if settings is not None else Settings()
    clock = fields.pop("clock", None) or RunClock()
    gate = ApprovalGate(settings.effective_policy(), deny_all, lambda event: None, clock.now)
    given: dict[str, Any] = {
        "run_id": "r",
        "step": 0,
        "task": "t",
        "model": None,
        "tools": agent.allowed_tools,
        **fields,
    }
    return StepContext(
        agent=agent, cwd=cwd, settings=settings, approvals=gate, clock=clock, **given
    )
