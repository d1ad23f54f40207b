"""A run's graph and each node's live status, folded from the core's typed events.

The run view draws the pipeline above the step panes (:class:`gui.widgets.graph_canvas.
GraphCanvas`); this module says what to draw: which graph (the one the run started with —
``run_started.graph`` for a graph run, else the line or fan of its planned steps), and per node
its status, loop iteration, best-of progress and why it was skipped or what its gate asks.
Everything comes from events — ``step_started``/``step_finished`` with their ``node``,
``iteration`` and ``branch``, ``step_skipped``, ``loop_iteration_started``, ``loop_finished``,
``gate_waiting``, ``gate_decided``, ``best_of_picked`` — never from a backend's output.

A run file written before graph runs existed (no ``node`` on its steps) still draws: step ``i``
is node ``step-{i+1}``, as :func:`core.definitions.pipeline_graph.linear_graph` names them.
Pure Python: the run model folds it on the GUI thread next to the
:class:`~core.record.run_state.RunState`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from pydantic import ValidationError

from core.definitions.pipeline_graph import (
    GraphEdge,
    GraphNode,
    PipelineGraph,
    linear_graph,
    step_node_name,
)
from core.model.events import (
    BestOfPicked,
    Event,
    GateDecided,
    GateWaiting,
    LoopFinished,
    LoopIterationStarted,
    RunFinished,
    RunStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
)
from core.record.run_state import RunState
from gui.widgets.graph_canvas import LoopView, NodeStatus, NodeView

_FINISHED: dict[str, NodeStatus] = {"ok": "done", "error": "failed", "aborted": "stopped"}
_DECIDED = {"continue": "continued", "edit": "edited", "send_back": "sent back"}
_PHASES: dict[str, NodeStatus] = {
    "pending": "queued",
    "running": "running",
    "waiting": "running",
    "ok": "done",
    "error": "failed",
    "aborted": "stopped",
    "not_run": "queued",
}


@dataclass(frozen=True)
class OpenGate:
    """A gate waiting for a person (from ``gate_waiting``), until ``gate_decided``."""

    gate_id: str
    node: str
    question: str
    handoff: str = ""
    timeout_s: float | None = None
    default: str = "stop"
    options: tuple[str, ...] = ()
    since: float = 0.0
    """The event's time (seconds into the run): the countdown runs from here."""


@dataclass
class GraphProgress:
    graph: PipelineGraph = field(default_factory=lambda: PipelineGraph(nodes=()))
    nodes: dict[str, NodeView] = field(default_factory=dict)
    loops: dict[str, LoopView] = field(default_factory=dict)
    steps_of: dict[str, list[int]] = field(default_factory=dict)
    """Each node's step indexes (one per run of it: iterations, attempts), oldest first."""
    node_of_step: dict[int, str] = field(default_factory=dict)
    gates: dict[str, OpenGate] = field(default_factory=dict)
    """Gates waiting now, by id."""
    _branches: dict[str, set[str]] = field(default_factory=dict)
    """A best-of node's attempts that finished."""
    _branch_of_step: dict[int, str] = field(default_factory=dict)
    """The attempt each step runs (``step_finished`` may leave it out)."""

    # -- public --------------------------------------------------------------------------

    def apply(self, event: Event) -> bool:
        """Fold one event; True when anything drawn changed. One dictionary look-up for the
        events that do not concern the graph (text deltas: most of a run's events)."""
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler is not None else False

    def step_for(self, node: str) -> int | None:
        """The step a click on ``node`` opens: its latest run."""
        steps = self.steps_of.get(node)
        return steps[-1] if steps else None

    @classmethod
    def from_state(cls, state: RunState) -> GraphProgress:
        """The progress of a run folded elsewhere (a saved run read off the GUI thread): its
        graph — the one it started with when the state kept it, else the line or fan of its
        steps — and each node's latest step's phase. Skips and gates are events, so only
        their results show (a skipped step is "not run")."""
        progress = cls()
        graph = _kept_graph(getattr(state, "graph", None))  # once the core's state keeps it
        if graph is None and any(step.node for step in state.steps):
            graph = _nodes_in_order(state)
        if graph is None:
            graph = linear_graph([s.agent for s in state.steps], state.mode)
        progress.graph = graph
        for step in state.steps:
            name = step.node or step_node_name(step.index)
            progress.node_of_step[step.index] = name
            progress.steps_of.setdefault(name, []).append(step.index)
            status = _PHASES.get(step.phase, "queued")
            if step.node and step.phase == "not_run":
                status = "skipped"
            progress.nodes[name] = NodeView(status, step.iteration)
        return progress

    # -- handlers ------------------------------------------------------------------------

    def _node_for(self, event: Event) -> str | None:
        node = getattr(event, "node", None)  # the step events carry it in graph runs
        if isinstance(node, str):
            return node
        return self.node_of_step.get(event.step) if event.step is not None else None

    def _run_started(self, event: RunStarted) -> bool:
        graph = _kept_graph(event.graph)
        if graph is None:
            graph = linear_graph([s.agent for s in event.steps], event.mode)
        self.graph = graph
        self.nodes = {node.name: NodeView("queued") for node in graph.nodes}
        self.loops, self.gates, self._branches, self._branch_of_step = {}, {}, {}, {}
        self.steps_of, self.node_of_step = {}, {}
        for index, step in enumerate(event.steps):
            self.node_of_step[index] = step.node or step_node_name(index)
        return True

    def _remember_step(self, node: str, step: int | None) -> None:
        if step is None:
            return
        self.node_of_step[step] = node
        steps = self.steps_of.setdefault(node, [])
        if step not in steps:
            steps.append(step)

    def _step_started(self, event: StepStarted) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        self._remember_step(node, event.step)
        if event.branch and event.step is not None:
            self._branch_of_step[event.step] = event.branch
        view = self.nodes.get(node, NodeView())
        attempts = view.attempts
        best_of = self._best_of(node)
        if event.branch and best_of > 1:
            attempts = f"{len(self._branches.get(node, set()))}/{best_of}"
        self.nodes[node] = NodeView("running", event.iteration or view.iteration, attempts)
        return True

    def _step_finished(self, event: StepFinished) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        status = _FINISHED.get(event.status, "done")
        view = self.nodes.get(node, NodeView())
        iteration = event.iteration or view.iteration
        branch = event.branch or (
            self._branch_of_step.get(event.step) if event.step is not None else None
        )
        best_of = self._best_of(node)
        if branch and best_of > 1:
            done = self._branches.setdefault(node, set())
            done.add(branch)
            attempts = f"{len(done)}/{best_of}"
            if len(done) < best_of and status == "done":
                status = "running"  # the other attempts are still at it
            self.nodes[node] = NodeView(status, iteration, attempts)
        else:
            self.nodes[node] = NodeView(status, iteration, view.attempts)
        return True

    def _step_skipped(self, event: StepSkipped) -> bool:
        # The edge into the node shows the condition that was false; the box says "skipped".
        note = "skipped" if event.condition else (event.reason or "skipped")
        self.nodes[event.node] = NodeView("skipped", event.iteration, note=note)
        if event.step is not None:
            self._remember_step(event.node, event.step)
        return True

    def _loop_iteration(self, event: LoopIterationStarted) -> bool:
        self.loops[event.loop] = LoopView(event.iteration)
        group = next((lp for lp in self.graph.loops if lp.name == event.loop), None)
        if group is not None and event.iteration > 1:
            for member in group.members:  # a new round: the members wait their turn again
                self.nodes[member] = NodeView("queued", event.iteration)
        return True

    def _loop_finished(self, event: LoopFinished) -> bool:
        self.loops[event.loop] = LoopView(event.iterations, event.summary or event.status)
        return True

    def _gate_waiting(self, event: GateWaiting) -> bool:
        self.gates[event.gate_id] = OpenGate(
            gate_id=event.gate_id,
            node=event.node,
            question=event.question or "Continue?",
            handoff=event.handoff,
            timeout_s=event.timeout_s,
            default=event.default,
            options=tuple(event.options),
            since=event.ts,
        )
        view = self.nodes.get(event.node, NodeView())
        self.nodes[event.node] = NodeView("waiting", view.iteration, view.attempts, event.question)
        return True

    def _gate_decided(self, event: GateDecided) -> bool:
        gate = self.gates.pop(event.gate_id, None)
        if gate is None:
            return False
        view = self.nodes.get(gate.node, NodeView())
        if event.decision == "stop":
            note = f"stopped at its gate ({event.by})"
            self.nodes[gate.node] = replace(view, status="stopped", note=note)
        else:
            note = f"{_DECIDED[event.decision]} ({event.by})"
            self.nodes[gate.node] = replace(view, status="queued", note=note)
        return True

    def _best_of_picked(self, event: BestOfPicked) -> bool:
        view = self.nodes.get(event.node, NodeView())
        kept = event.winner.rpartition("#")[2] or event.winner
        self.nodes[event.node] = replace(view, attempts=f"kept #{kept}")
        return True

    def _run_finished(self, event: RunFinished) -> bool:
        if event.status == "ok":
            return False
        for name, view in list(self.nodes.items()):
            if view.status in ("running", "waiting"):
                self.nodes[name] = replace(view, status="stopped")
        self.gates.clear()
        return True

    def _best_of(self, node: str) -> int:
        found = self.graph.node(node)
        return found.best_of if found is not None else 1


def _kept_graph(shape: dict[str, Any] | None) -> PipelineGraph | None:
    """The graph a run started with (``run_started.graph``), if it was kept and reads."""
    if not isinstance(shape, dict):
        return None
    try:
        return PipelineGraph.model_validate(shape)
    except ValidationError:
        return None


def _nodes_in_order(state: RunState) -> PipelineGraph:
    """A graph run's nodes when its shape was not kept: one box per node, in the order they
    first ran, joined in that order (exact for a line; loops and fans are not known)."""
    agents: dict[str, str] = {}
    for step in state.steps:
        if step.node and step.node not in agents:
            agents[step.node] = step.agent
    nodes = tuple(GraphNode(name=name, agent=agent) for name, agent in agents.items())
    edges = tuple(GraphEdge(source=a.name, target=b.name) for a, b in pairwise(nodes))
    return PipelineGraph(nodes=nodes, edges=edges)


_HANDLERS: dict[type, Callable[[GraphProgress, Any], bool]] = {
    RunStarted: GraphProgress._run_started,
    StepStarted: GraphProgress._step_started,
    StepFinished: GraphProgress._step_finished,
    StepSkipped: GraphProgress._step_skipped,
    LoopIterationStarted: GraphProgress._loop_iteration,
    LoopFinished: GraphProgress._loop_finished,
    GateWaiting: GraphProgress._gate_waiting,
    GateDecided: GraphProgress._gate_decided,
    BestOfPicked: GraphProgress._best_of_picked,
    RunFinished: GraphProgress._run_finished,
}
"""Each event class the graph folds, to its handler (events are final classes: no subclasses
to miss)."""
