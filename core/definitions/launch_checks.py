"""What the launch dialog can tell before Run is pressed (Qt-free, so it reads and tests
plainly): a step whose agent's file has an error, and step folders outside the working folder.

The runner checks both again (``core.run.runner.Runner.prepare``); these only let the dialog say
so at once and disable Run, instead of after a click.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.definitions.agents import AgentCatalog

StepInput = tuple[str, str]
"""(agent name, step folder as typed; "" for the working folder)."""


def agent_problem(steps: Sequence[StepInput], agents: AgentCatalog) -> str | None:
    """Why an agent of ``steps`` cannot run (its file's error, with ``file:line``), or None.
    Unknown names are left to the runner: a person may still be typing one."""
    for number, (name, _folder) in enumerate(steps, start=1):
        agent = agents.get(name) if name else None
        if agent is not None and agent.error is not None:
            error = agent.error
            return (
                f"step {number}: agent '{agent.name}' cannot run: {error.location}: {error.message}"
            )
    return None


def outside_folders(root: Path, steps: Sequence[StepInput]) -> list[tuple[int, Path]]:
    """Steps whose folder lies outside ``root``: (1-based number, resolved folder)."""
    root = root.resolve()
    outside = []
    for number, (_agent, folder) in enumerate(steps, start=1):
        if folder and not (root / folder).resolve().is_relative_to(root):
            outside.append((number, (root / folder).resolve()))
    return outside
