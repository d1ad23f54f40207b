"""A run's graph and each node's live status, folded from the core's typed events.

The run view draws the pipeline above the step panes (:class:`gui.widgets.graph_canvas.
GraphCanvas`); this module says what to draw: which graph (the one the run started with —
``run_started.graph`` for a graph run, else the line or fan of its planned steps), and per node
its status, loop iteration, best-of progress and why it was skipped or what its gate asks.
Everything comes from events — ``step_started``/``step_finished`` with their ``node``,
``iteration`` and ``branch``, ``step_skipped``, ``loop_iteration_started``, ``loop_finished``,
``gate_waiting``, ``gate_decided``, ``best_of_picked`` — never from a backend's output.

Events are matched by their ``type`` and read by field name, so a run file written before graph
runs existed (no ``node`` on its steps) still draws: step ``i`` is node ``step-{i+1}``, as
:func:`core.definitions.pipeline_graph.linear_graph` names them. Pure Python: the run model
folds it on the GUI thread next to the :class:`~core.record.run_state.RunState`.
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
from core.model.events import Event
from core.record.run_state import RunState
from gui.widgets.graph_canvas import LoopView, NodeStatus, NodeView

_FINISHED: dict[str, NodeStatus] = {"ok": "done", "error": "failed", "aborted": "stopped"}
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
        """Fold one event; True when anything drawn changed."""
        handler = _HANDLERS.get(event.type)
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
        shape = getattr(state, "graph", None)  # kept by the state once the core folds it
        graph: PipelineGraph | None = None
        if isinstance(shape, dict):
            try:
                graph = PipelineGraph.model_validate(shape)
            except ValidationError:
                graph = None
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
        node = getattr(event, "node", None)
        if isinstance(node, str):
            return node
        step = event.step
        return self.node_of_step.get(step) if step is not None else None

    def _run_started(self, event: Event) -> bool:
        planned: list[Any] = list(getattr(event, "steps", []))
        shape = getattr(event, "graph", None)
        graph: PipelineGraph | None = None
        if isinstance(shape, dict):
            try:
                graph = PipelineGraph.model_validate(shape)
            except ValidationError:
                graph = None
        if graph is None:
            graph = linear_graph([str(s.agent) for s in planned], str(getattr(event, "mode", "")))
        self.graph = graph
        self.nodes = {node.name: NodeView("queued") for node in graph.nodes}
        self.loops, self.gates, self._branches, self._branch_of_step = {}, {}, {}, {}
        self.steps_of, self.node_of_step = {}, {}
        for index, step in enumerate(planned):
            node = getattr(step, "node", None) or step_node_name(index)
            self.node_of_step[index] = node
        return True

    def _remember_step(self, node: str, step: int | None) -> None:
        if step is None:
            return
        self.node_of_step[step] = node
        steps = self.steps_of.setdefault(node, [])
        if step not in steps:
            steps.append(step)

    def _step_started(self, event: Event) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        self._remember_step(node, event.step)
        branch = getattr(event, "branch", None)
        if branch and event.step is not None:
            self._branch_of_step[event.step] = str(branch)
        view = self.nodes.get(node, NodeView())
        iteration = getattr(event, "iteration", None)
        attempts = view.attempts
        best_of = self._best_of(node)
        if getattr(event, "branch", None) and best_of > 1:
            attempts = f"{len(self._branches.get(node, set()))}/{best_of}"
        self.nodes[node] = NodeView("running", iteration or view.iteration, attempts)
        return True

    def _step_finished(self, event: Event) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        status = _FINISHED.get(str(getattr(event, "status", "")), "done")
        view = self.nodes.get(node, NodeView())
        iteration = getattr(event, "iteration", None) or view.iteration
        branch = getattr(event, "branch", None) or (
            self._branch_of_step.get(event.step) if event.step is not None else None
        )
        best_of = self._best_of(node)
        if branch and best_of > 1:
            done = self._branches.setdefault(node, set())
            done.add(str(branch))
            attempts = f"{len(done)}/{best_of}"
            if len(done) < best_of and status == "done":
                status = "running"
            self.nodes[node] = NodeView(status, iteration, attempts)
        else:
            self.nodes[node] = NodeView(status, iteration, view.attempts)
        return True

    def _step_skipped(self, event: Event) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        condition = getattr(event, "condition", None)
        reason = str(getattr(event, "reason", "") or "")
        note = "skipped" if condition else (reason or "skipped")  # the edge shows the condition
        iteration = getattr(event, "iteration", None)
        self.nodes[node] = NodeView("skipped", iteration, note=note)
        return True

    def _loop_iteration(self, event: Event) -> bool:
        loop = str(getattr(event, "loop", ""))
        iteration = getattr(event, "iteration", None)
        self.loops[loop] = LoopView(iteration if isinstance(iteration, int) else None)
        group = next((lp for lp in self.graph.loops if lp.name == loop), None)
        if group is not None and isinstance(iteration, int) and iteration > 1:
            for member in group.members:  # a new round: the members wait their turn again
                self.nodes[member] = NodeView("queued", iteration)
        return True

    def _loop_finished(self, event: Event) -> bool:
        loop = str(getattr(event, "loop", ""))
        iterations = getattr(event, "iterations", None)
        summary = str(getattr(event, "summary", "") or getattr(event, "status", ""))
        self.loops[loop] = LoopView(iterations if isinstance(iterations, int) else None, summary)
        return True

    def _gate_waiting(self, event: Event) -> bool:
        node = self._node_for(event)
        gate_id = str(getattr(event, "gate_id", ""))
        if node is None or not gate_id:
            return False
        question = str(getattr(event, "question", "") or "Continue?")
        timeout = getattr(event, "timeout_s", None)
        self.gates[gate_id] = OpenGate(
            gate_id=gate_id,
            node=node,
            question=question,
            handoff=str(getattr(event, "handoff", "") or ""),
            timeout_s=float(timeout) if isinstance(timeout, int | float) else None,
            default=str(getattr(event, "default", "stop")),
            options=tuple(str(o) for o in getattr(event, "options", []) or []),
            since=event.ts,
        )
        view = self.nodes.get(node, NodeView())
        self.nodes[node] = NodeView("waiting", view.iteration, view.attempts, question)
        return True

    def _gate_decided(self, event: Event) -> bool:
        gate = self.gates.pop(str(getattr(event, "gate_id", "")), None)
        if gate is None:
            return False
        decision = str(getattr(event, "decision", ""))
        by = str(getattr(event, "by", "person"))
        view = self.nodes.get(gate.node, NodeView())
        words = {"continue": "continued", "edit": "edited", "send_back": "sent back"}
        if decision == "stop":
            note = f"stopped at its gate ({by})"
            self.nodes[gate.node] = replace(view, status="stopped", note=note)
        else:
            note = f"{words.get(decision, decision)} ({by})"
            self.nodes[gate.node] = replace(view, status="queued", note=note)
        return True

    def _best_of_picked(self, event: Event) -> bool:
        node = self._node_for(event)
        if node is None:
            return False
        view = self.nodes.get(node, NodeView())
        winner = str(getattr(event, "winner", ""))
        self.nodes[node] = replace(view, attempts=f"kept {winner.rpartition('#')[2] or winner}")
        return True

    def _run_finished(self, event: Event) -> bool:
        if getattr(event, "status", "ok") == "ok":
            return False
        for name, view in list(self.nodes.items()):
            if view.status in ("running", "waiting"):
                self.nodes[name] = replace(view, status="stopped")
        self.gates.clear()
        return True

    def _best_of(self, node: str) -> int:
        found = self.graph.node(node)
        return found.best_of if found is not None else 1


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


_HANDLERS: dict[str, Callable[[GraphProgress, Event], bool]] = {
    "run_started": GraphProgress._run_started,
    "step_started": GraphProgress._step_started,
    "step_finished": GraphProgress._step_finished,
    "step_skipped": GraphProgress._step_skipped,
    "loop_iteration_started": GraphProgress._loop_iteration,
    "loop_finished": GraphProgress._loop_finished,
    "gate_waiting": GraphProgress._gate_waiting,
    "gate_decided": GraphProgress._gate_decided,
    "best_of_picked": GraphProgress._best_of_picked,
    "run_finished": GraphProgress._run_finished,
}
"""By event ``type``: the graph events are matched by name, so this module reads run files
from before and after they existed alike."""
