"""Running a saved run again: whole (Re-run), from its first unfinished step (Resume), or from
step N with that step changed (Re-run from step N).

A saved run's ``run_started`` holds everything needed to repeat it: mode, agents, planned tasks
(arguments and parameters already substituted, ``{previous}`` still open), folders, preset,
arguments and parameter values. Resume and re-run-from also copy the finished steps' results
(their ``step_finished``) into :attr:`core.run.run_request.RunRequest.reused`: the runner shows and
hands them on as saved, byte for byte, and sends no request for them. The new run is linked to its
parent (:class:`core.model.events.Lineage`) and keeps its budget: the caps it started with, as a
person
last raised them (:func:`core.model.budget.budget_of`), so a run stopped at a cap never resumes
uncapped.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.definitions.graph_form import GraphShape, LoopSpec, PresetStep
from core.definitions.params import split_shown
from core.model.budget import budget_of
from core.model.errors import RunError
from core.model.events import (
    Event,
    GateDecided,
    GateWaiting,
    Lineage,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from core.run.graph_runner import execution_keys
from core.run.run_request import RunRequest, StepSpec


def request_from_run(started: RunStarted) -> RunRequest:
    """The request that repeats a run: same mode, agents, planned tasks, folders, preset and
    arguments. Models and backends are chosen afresh, as for any launch; parameter values are
    the run's (agent bodies are filled in again, from them)."""
    run_wide, own = split_shown(started.params, len(started.steps))
    steps = [
        StepSpec(agent=s.agent, task=s.task, cwd=s.cwd, params=values)
        for s, values in zip(started.steps, own, strict=True)
    ]
    return RunRequest(
        mode=started.mode,
        steps=steps,
        cwd=Path(started.cwd),
        preset=started.preset,
        args=list(started.args),
        params=run_wide,
        graph=_graph_of(started),
    )


def _graph_of(started: RunStarted) -> GraphShape | None:
    """A graph run's steps and loops as it ran them (tasks as planned, arguments filled)."""
    if started.mode != "graph":
        return None
    if started.graph_steps is None:
        raise RunError(f"run {started.run_id} does not say its graph: it cannot be run again")
    steps = tuple(
        PresetStep.model_validate({**spec, "task": planned.task})
        for spec, planned in zip(started.graph_steps, started.steps, strict=True)
    )
    loops = tuple(LoopSpec.model_validate(loop) for loop in started.graph_loops or [])
    return GraphShape(steps, loops)


def _graph_resume(events: list[Event], started: RunStarted) -> RunRequest:
    """A graph run again, every execution that finished ok reused by its key — inside a loop
    too, so the run goes on in the iteration it stopped in."""
    ended = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    if ended is not None and ended.status == "ok":
        raise RunError(
            f"run {started.run_id} finished; nothing to resume (re-run it, or from a step)"
        )
    keys = execution_keys(events)
    finished = [e for e in events if isinstance(e, StepFinished) and e.step in keys]
    reused = {keys[e.step]: e for e in finished if e.status == "ok" and e.step is not None}
    unfinished = [i for i in keys if keys[i] not in reused]
    request = request_from_run(started)
    let_through, sent_back = _gate_answers(events, request)
    return replace(
        request,
        budget=budget_of(events),
        reused_nodes=reused,
        reused_gates=let_through,
        reused_send_backs=sent_back,
        lineage=Lineage(
            run_id=started.run_id, step=min(unfinished, default=len(keys)), kind="resume"
        ),
    )


def _gate_answers(
    events: list[Event], request: RunRequest
) -> tuple[dict[str, tuple[str, str | None]], dict[str, list[str]]]:
    """The parent's answers at gates before steps outside loops: the one that let the step
    through (the last per step), and the notes it was sent back with, in order. Resume sends
    back again as the person did (what that ran is reused) and hands on what they decided,
    the edit included, instead of asking again."""
    in_loops = {s.name for s in request.graph.steps if s.loop} if request.graph else set()
    nodes = {e.gate_id: e.node for e in events if isinstance(e, GateWaiting)}
    decided: dict[str, tuple[str, str | None]] = {}
    sent_back: dict[str, list[str]] = {}
    for event in events:
        if not isinstance(event, GateDecided):
            continue
        node = nodes.get(event.gate_id)
        if node is None or node in in_loops:
            continue
        if event.decision in ("continue", "edit"):
            decided[node] = (event.decision, event.text)
        elif event.decision == "send_back":
            sent_back.setdefault(node, []).append(event.note or "")
    return decided, sent_back


def _graph_rerun_from(
    events: list[Event],
    started: RunStarted,
    index: int,
    task: str | None,
    agent: str | None,
    model: str | None,
) -> RunRequest:
    """A graph again from execution ``index``: what started before it is reused."""
    keys = execution_keys(events)
    if index not in keys:
        raise RunError(f"run {started.run_id} has no step {index + 1} that ran")
    order = [e.step for e in events if isinstance(e, StepStarted) and e.step in keys]
    before = set(order[: order.index(index)])
    reused = {
        keys[e.step]: e
        for e in events
        if isinstance(e, StepFinished) and e.step in before and e.status == "ok"
    }
    request = request_from_run(started)
    node = keys[index].split("@")[0].split("#")[0].split("~")[0]
    position = next(i for i, s in enumerate(request.graph.steps) if s.name == node)  # type: ignore[union-attr]
    steps = list(request.steps)
    steps[position] = replace(
        steps[position],
        task=steps[position].task if task is None else task,
        agent=steps[position].agent if agent is None else agent,
        model=steps[position].model if model is None else model,
    )
    return replace(
        request,
        steps=steps,
        budget=budget_of(events),
        reused_nodes=reused,
        lineage=Lineage(run_id=started.run_id, step=index, kind="rerun"),
    )


def _parts(events: list[Event]) -> tuple[RunStarted, dict[int, StepFinished]]:
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None:
        raise RunError("this file has no run_started event: it cannot be run again")
    finished = {e.step: e for e in events if isinstance(e, StepFinished) and e.step is not None}
    return started, finished


def resume_request(events: list[Event]) -> RunRequest:
    """A failed, cancelled or interrupted run, from its first unfinished step: a chain reuses
    every step before it; parallel tasks reuse every task that finished ok."""
    started, finished = _parts(events)
    if started.mode == "graph":
        return _graph_resume(events, started)
    done = {i: f for i, f in finished.items() if f.status == "ok" and i < len(started.steps)}
    if len(done) == len(started.steps):
        raise RunError(
            f"run {started.run_id} finished every step; nothing to resume "
            "(re-run it, or re-run from a step)"
        )
    if started.mode == "chain":
        first = next(i for i in range(len(started.steps)) if i not in done)
        done = {i: f for i, f in done.items() if i < first}
    else:
        first = min(i for i in range(len(started.steps)) if i not in done)
    request = request_from_run(started)
    return replace(
        request,
        budget=budget_of(events),
        reused=done,
        lineage=Lineage(run_id=started.run_id, step=first, kind="resume"),
    )


def rerun_from_request(
    events: list[Event],
    step_number: int,
    *,
    task: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    backend: str | None = None,
) -> RunRequest:
    """A chain again from step ``step_number`` (1-based), that step's task, agent or model
    changed if given; the steps before it are reused from the saved run (they must have
    finished ok). ``backend`` runs that step and the later ones on another backend (the
    reused steps send nothing, so it only matters from there on)."""
    started, finished = _parts(events)
    if started.mode == "graph":
        request = _graph_rerun_from(events, started, step_number - 1, task, agent, model)
        return replace(request, backend=backend)
    if started.mode != "chain":
        raise RunError("re-running from a step needs a chain; re-run the whole run instead")
    if not 1 <= step_number <= len(started.steps):
        has = "only step 1" if len(started.steps) == 1 else f"steps 1 to {len(started.steps)}"
        raise RunError(f"run {started.run_id} has {has}")
    index = step_number - 1
    missing = [i + 1 for i in range(index) if finished.get(i) is None or finished[i].status != "ok"]
    if missing:
        raise RunError(
            f"step {missing[0]} of run {started.run_id} did not finish ok, so it cannot be "
            f"reused; resume the run or re-run from step {missing[0]}"
        )
    request = request_from_run(started)
    steps = list(request.steps)
    changed = steps[index]
    steps[index] = replace(
        changed,
        task=changed.task if task is None else task,
        agent=changed.agent if agent is None else agent,
        model=changed.model if model is None else model,
    )
    return replace(
        request,
        steps=steps,
        budget=budget_of(events),
        backend=backend,
        reused={i: finished[i] for i in range(index)},
        lineage=Lineage(run_id=started.run_id, step=index, kind="rerun"),
    )
