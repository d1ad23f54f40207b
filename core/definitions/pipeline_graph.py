"""The shape of a pipeline as a graph: what the Presets view draws and the run view colours.

Every preset has one, whatever its form: ``single`` is one node, ``parallel`` nodes side by side
with no edges, ``chain`` a line, ``graph`` its named steps with their ``after:`` edges (each
labelled with the target's ``when:``) and loop groups. A drawing needs only names, edges and
groups — not tasks or models — so the window can lay out any preset (or a run's recorded
steps) with one algorithm, and the graph runner can report live status by node name.

This module is the contract between the preset format (which builds a :class:`PipelineGraph`)
and the views (which draw one); neither side needs the other's internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.definitions.graph_form import LoopSpec, PresetStep, dependencies

if TYPE_CHECKING:
    from core.definitions.presets import Preset

NodeKind = Literal["step", "judge", "merge"]


class GraphNode(BaseModel):
    """One step of the pipeline, drawn as a box."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Unique within the graph; events name the node they concern by it."""
    agent: str
    kind: NodeKind = "step"
    gate: bool = False
    """A person's checkpoint waits before this step starts."""
    best_of: int = 1
    """How many attempts run side by side (each in its own worktree); 1 is an ordinary step."""
    loop: str | None = None
    """The loop group this node repeats in, if any."""


class GraphEdge(BaseModel):
    """``target`` starts after ``source`` (and receives its answer)."""

    model_config = ConfigDict(frozen=True)

    source: str
    target: str
    condition: str | None = None
    """The ``when:`` text that must hold for ``target`` to run, as written in the file."""


class LoopGroup(BaseModel):
    """Nodes repeated together until ``until`` holds or ``max_iterations`` is reached."""

    model_config = ConfigDict(frozen=True)

    name: str
    members: tuple[str, ...]
    until: str
    max_iterations: int = Field(ge=1)


class PipelineGraph(BaseModel):
    model_config = ConfigDict(frozen=True)

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...] = ()
    loops: tuple[LoopGroup, ...] = ()

    def node(self, name: str) -> GraphNode | None:
        return next((node for node in self.nodes if node.name == name), None)

    def predecessors(self, name: str) -> list[str]:
        return [edge.source for edge in self.edges if edge.target == name]


def step_node_name(index: int) -> str:
    """The node name of the ``index``-th (0-based) step of a preset whose steps have no names:
    ``step-1``, ``step-2`` … — the numbers people see in the run view."""
    return f"step-{index + 1}"


def linear_graph(agents: list[str], mode: str) -> PipelineGraph:
    """The graph of an unnamed list of steps: a line for ``chain``, side by side otherwise."""
    nodes = tuple(
        GraphNode(name=step_node_name(index), agent=agent) for index, agent in enumerate(agents)
    )
    edges: tuple[GraphEdge, ...] = ()
    if mode == "chain":
        edges = tuple(
            GraphEdge(source=before.name, target=after.name) for before, after in pairwise(nodes)
        )
    return PipelineGraph(nodes=nodes, edges=edges)


def pipeline_graph(preset: Preset) -> PipelineGraph:
    """The graph of any preset."""
    if preset.mode != "graph":
        return linear_graph([step.agent for step in preset.steps], preset.mode)
    return graph_of(preset.steps, preset.loops)


def graph_of(steps: Sequence[PresetStep], loops: Sequence[LoopSpec]) -> PipelineGraph:
    """The graph of a graph preset's steps and loops (also what a graph run records)."""
    deps = dependencies(steps, loops)
    judges = {s.best_of.judge for s in steps if s.best_of and s.best_of.judge}
    merges = {name for name, before in deps.items() if len(before) > 1}
    nodes = tuple(
        GraphNode(
            name=step.name or "",
            agent=step.agent,
            kind="judge" if step.name in judges else "merge" if step.name in merges else "step",
            gate=step.gate is not None,
            best_of=step.best_of.n if step.best_of else 1,
            loop=step.loop,
        )
        for step in steps
    )
    when = {step.name: step.when for step in steps}
    edges = tuple(
        GraphEdge(source=source, target=target, condition=when.get(target))
        for target, before in deps.items()
        for source in before
    )
    groups = tuple(
        LoopGroup(
            name=loop.name,
            members=tuple(loop.members),
            until=loop.until,
            max_iterations=loop.max_iterations,
        )
        for loop in loops
    )
    return PipelineGraph(nodes=nodes, edges=edges, loops=groups)
