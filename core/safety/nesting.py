"""Runs started from inside a step: linked to that step, and never more than one level deep.

Sub-agents cannot launch sub-agents. Baton offers its steps no tool to start runs, but an
approved ``bash`` call can still type ``baton run …``. A ``baton`` finds the step it runs under
(:func:`current_parent`), records its run as a child of that step (shown under it in History),
refuses to start at all past :data:`MAX_DEPTH`, and records document edits as the step's.

It looks, in this order, for: its nearest ancestor that the supervisor recorded as a step's
shell (:mod:`core.safety.step_shells` — the process tree, which ``env -u`` cannot change); an
ancestor whose environment, as it was started, carries :data:`PARENT_VARIABLE` (a changed data
folder hides the record, not that); its own environment (inside the sandbox, where the host's
processes are invisible). A forged variable cannot lower the depth the tree shows.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass

import psutil

from core.model.errors import RunError
from core.safety.step_shells import StepShell, nearest_step_shell, recorded

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
    agent: str = ""
    """The step's agent, when the process tree told (the environment marker does not carry it)."""


class NestedRunRefused(RunError):
    """``baton run`` from a step of a run that a step started."""

    def __init__(self, parent: ParentStep) -> None:
        self.parent = parent
        super().__init__(
            f"this run would be started by step {parent.step + 1} of run {parent.run_id}, "
            f"itself started by an agent; Baton allows agents one level of nested runs"
        )


def current_parent(environ: Mapping[str, str] | None = None) -> ParentStep | None:
    """The step this process runs under (None: started by a person). Given ``environ``, only
    that environment is read."""
    if environ is not None:
        return _from_environ(environ)
    shell = nearest_step_shell()
    if shell is not None:
        return ParentStep(shell.run_id, shell.step, shell.depth, shell.agent)
    found = _marked_ancestor(os.getpid(), os.getppid())
    return found if found is not None else _from_environ(os.environ)


@functools.lru_cache(maxsize=4)
def _marked_ancestor(pid: int, parent: int) -> ParentStep | None:
    """The marker of the nearest ancestor started with one. Read once while this process keeps
    its parent: an environment as started never changes, and reading every ancestor's took
    ~1 ms per run a batch starts (benchmarks/batch.py)."""
    try:
        ancestors = psutil.Process(pid).parents()
    except psutil.Error:
        return None
    for ancestor in ancestors:
        try:
            found = _from_environ(ancestor.environ())
        except psutil.Error:
            continue
        if found is not None:
            return found
    return None


def _from_environ(environ: Mapping[str, str]) -> ParentStep | None:
    value = environ.get(PARENT_VARIABLE, "")
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
    return {PARENT_VARIABLE: f"{run_id}:{step}:{child_depth()}"}


def child_depth() -> int:
    """How deep a run started from one of this process's steps would be."""
    own = current_parent()
    return (own.depth if own is not None else 0) + 1


def step_process(
    pid: int, run_id: str, step: int | None, agent: str
) -> contextlib.AbstractContextManager[None]:
    """Record ``pid`` — a step's bash, or the pi or Claude Code process running the step — as
    the step's (:mod:`core.safety.step_shells`) while the block runs, so a ``baton`` started below
    it
    is known as nested however its environment was changed. Nothing to record outside a run."""
    if not run_id or step is None:
        return contextlib.nullcontext()
    return recorded(pid, StepShell(run_id, step, agent, child_depth()))
