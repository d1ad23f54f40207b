"""What to run: a request (mode, steps, folder, options), built from a preset or by hand.

A :class:`RunRequest` is plain data: the command line, the launch dialog, resume/re-run
(:mod:`core.run.rerun`) and batches build one; :class:`core.run.runner.Runner` checks and runs it.
Keeping it apart from the runner lets each side read on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.backends.steering import Continuation
from core.definitions.agents import AgentCatalog, Scope, discover_agents
from core.definitions.graph_form import GraphShape
from core.definitions.presets import (
    Preset,
    PresetCatalog,
    PresetError,
    check_agents,
    discover_presets,
    required_argument_count,
)
from core.model.budget import Budget
from core.model.errors import RunError
from core.model.events import Isolation, Lineage, RunMode, StepFinished


@dataclass(frozen=True)
class StepSpec:
    agent: str
    task: str
    """The task template (see :func:`core.definitions.presets.expand_template`)."""
    cwd: str | None = None
    """Relative to the run's folder (or absolute)."""
    model: str | None = None
    args: tuple[str, ...] | None = None
    """Positional arguments for ``$1``… in ``task``; None takes ``$…`` literally (ad-hoc tasks,
    re-runs of already expanded tasks)."""
    params: dict[str, Any] = field(default_factory=dict)
    """Values for this step's agent only (``--param STEP.NAME=VALUE``), over the run's."""
    continues: Continuation | None = None
    """The finished conversation this step goes on with (Continue); ``task`` is the follow-up."""


@dataclass
class RunRequest:
    mode: RunMode
    steps: list[StepSpec]
    cwd: Path
    preset: str | None = None
    args: list[str] = field(default_factory=list)
    model: str | None = None
    """Overrides every step's model."""
    backend: str | None = None
    """Overrides every agent's and the settings' backend choice."""
    scope: Scope = "both"
    trust_project: bool = False
    batch_id: str | None = None
    """The batch this run is an item of (:mod:`core.batch`), recorded in ``run_started``."""
    batch_item: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    """Values of the agents' typed ``params:``, substituted into tasks as ``{name}``."""
    allow_outside_folder: bool = False
    """Let a step work in a folder outside :attr:`cwd` (the person confirmed it)."""
    budget: Budget | None = None
    """Cost and token caps (``--max-cost``/``--max-tokens``, a preset's ``budget:``)."""
    reused: dict[int, StepFinished] = field(default_factory=dict)
    """Results copied from :attr:`lineage`'s run, by 0-based step: no request is sent for
    them; their output is handed on exactly as saved (see :mod:`core.run.rerun`)."""
    lineage: Lineage | None = None
    isolation: Isolation = "none"
    """``worktree``: work in a new git worktree on branch ``baton/<run-id>``
    (core.workspace.worktrees)."""
    graph: GraphShape | None = None
    """``mode: graph``: the preset's named steps and loops (:mod:`core.run.graph_runner`)."""
    reused_nodes: dict[str, StepFinished] = field(default_factory=dict)
    """A graph run's results copied from :attr:`lineage`'s run, by execution key
    (``node``, ``node@2`` for a loop's second iteration, ``node#3`` for a best-of attempt)."""
    reused_gates: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Gates outside loops the parent run's person let through, by node: ``(decision,
    text)`` (``continue``, or ``edit`` with the text handed on), not asked again."""
    reused_send_backs: dict[str, list[str]] = field(default_factory=dict)
    """The notes the parent run's person sent back with at gates outside loops, by node, in
    order: sent back again before the gate (what they ran is reused, by execution key)."""


def request_from_preset(preset: Preset, args: list[str], cwd: Path, **options: Any) -> RunRequest:
    """Expand a preset's ``$1``/``$@`` arguments into a request; refuses missing arguments."""
    needed = required_argument_count(preset)
    if len(args) < needed:
        hint = f" {preset.argument_hint}" if preset.argument_hint else ""
        raise RunError(
            f"preset '{preset.name}' needs {needed} argument{'s' if needed != 1 else ''}"
            f" (usage: baton run {preset.name}{hint})"
        )
    steps = [
        StepSpec(agent=s.agent, task=s.task, cwd=s.cwd, model=s.model, args=tuple(args))
        for s in preset.steps
    ]
    options.setdefault("budget", preset.budget)
    options.setdefault("isolation", preset.isolation)
    if preset.mode == "graph":
        options.setdefault("graph", GraphShape(tuple(preset.steps), tuple(preset.loops)))
    return RunRequest(
        mode=preset.mode, steps=steps, cwd=cwd, preset=preset.name, args=list(args), **options
    )


def preset_request(
    name: str, args: list[str], cwd: Path, scope: Scope = "both", **options: Any
) -> tuple[RunRequest, AgentCatalog, PresetCatalog]:
    """Find a preset by name and expand it; the error names what is available.

    The catalogs read on the way come back too: pass them to :class:`Runner` so it does not
    read every definition file again."""
    preset, agents, presets = find_preset(name, cwd, scope)
    return request_from_preset(preset, args, cwd, scope=scope, **options), agents, presets


def find_preset(
    name: str, cwd: Path, scope: Scope = "both"
) -> tuple[Preset, AgentCatalog, PresetCatalog]:
    """The preset called ``name`` with the catalogs read to find and check it (a batch
    expands it once per item); raises :class:`RunError` naming what is available."""
    presets = discover_presets(cwd, scope)
    preset = presets.get(name)
    problem = presets.problem_for(name) if preset is None else None
    if problem is not None:
        raise RunError(f"preset '{name}' cannot run: {problem.location}: {problem.message}")
    if preset is None:
        available = ", ".join(p.name for p in presets.presets) or "none"
        raise RunError(f"unknown preset '{name}' (available: {available})")
    agents = discover_agents(cwd, scope)
    try:
        check_agents(preset, agents)
    except PresetError as error:
        raise RunError(str(error)) from None
    return preset, agents, presets
