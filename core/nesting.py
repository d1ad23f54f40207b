"""Runs started from inside a step: linked to that step, and never more than one level deep.

Sub-agents cannot launch sub-agents (DESIGN §4). Baton offers its steps no tool to start runs,
but an approved ``bash`` call can still type ``baton run …``. Every tool process therefore gets
:data:`PARENT_VARIABLE` naming the run, the step and how deep it already is; a ``baton`` that
finds it records its run as a child of that step (shown under it in History) and refuses to
start at all past :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from core.errors import RunError

PARENT_VARIABLE = "BATON_PARENT_RUN"
MAX_DEPTH = 1
"""A run a step started may run; a run started from one of *its* steps is refused."""


@dataclass(frozen=True)
class ParentStep:
    run_id: str
    step: int
    """0-based, as in events."""
    depth: int
    """How deep a run started from this step would be (1: started by a top-level run's step)."""


class NestedRunRefused(RunError):
    """``baton run`` from a step of a run that a step started."""

    def __init__(self, parent: ParentStep) -> None:
        self.parent = parent
        super().__init__(
            f"this run would be started by step {parent.step + 1} of run {parent.run_id}, "
            f"itself started by an agent; Baton allows agents one level of nested runs"
        )


def current_parent(environ: Mapping[str, str] | None = None) -> ParentStep | None:
    """The step this process runs under, from the environment (None: started by a person)."""
    value = (os.environ if environ is None else environ).get(PARENT_VARIABLE, "")
    run_id, _, rest = value.partition(":")
    step, _, depth = rest.partition(":")
    if not (run_id and step.isdigit() and depth.isdigit()):
        return None
    return ParentStep(run_id, int(step), int(depth))


def check_depth(parent: ParentStep | None) -> None:
    """Refuse a run that would be nested deeper than :data:`MAX_DEPTH`."""
    if parent is not None and parent.depth > MAX_DEPTH:
        raise NestedRunRefused(parent)


def marker_for(run_id: str, step: int | None) -> dict[str, str]:
    """The environment entry a tool process of ``run_id``'s ``step`` gets."""
    if not run_id or step is None:
        return {}
    own = current_parent()
    depth = (own.depth if own is not None else 0) + 1
    return {PARENT_VARIABLE: f"{run_id}:{step}:{depth}"}
