"""Runs: single, parallel and chain, with the semantics of the architecture's "Runner".

A :class:`Runner` takes a :class:`RunRequest`, checks everything that can be checked before a
single request is sent (agents exist, parallel limit, working folders, project trust), then
drives one backend per step and publishes every event through a
:class:`~core.record.publisher.EventPublisher` (redaction, the run file flushed once per loop
turn, the subscribers: CLI printer, GUI view model — each isolated from the others).

* **single** — one step.
* **parallel** — at most 8 tasks, at most 4 at once; a failing task does not stop the others.
* **chain** — steps in order, ``{previous}`` = the previous step's final output, capped by
  :func:`core.run.handoff.hand_off`; the first step that fails or is aborted stops the chain with
  ``Chain stopped at step N (agent): <error>``.

Tasks are templates filled in one pass (:func:`core.definitions.presets.expand_template`):
arguments, the
agents' typed parameters and ``{previous}``. What is checked before anything is sent lives in
:mod:`core.run.run_preparation`; how one backend is driven through a step, in
:mod:`core.run.step_execution`; what a run leaves behind (run file, index, liveness), in
:mod:`core.record.run_recording`. This module orchestrates them.

Cancel (:meth:`Runner.cancel`) reaches every running step (see :mod:`core.backends.base` for
the two stages); the run then ends ``aborted`` and whatever was received stays in the run file.
An optional per-step time limit (``limits.step_timeout_s``) ends a step the same way, as an
error that says so. Tool calls still open when a step ends are closed as aborted by the run, so no
backend has to.

Steps never get a tool to start other agents: sub-agents cannot launch sub-agents.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Literal

from core.backends.base import Backend, BackendError, RunClock, StepContext
from core.backends.registry import UnknownBackendError, create_backend
from core.backends.steering import SteerError
from core.config.settings import Settings, load_settings
from core.definitions.agents import AgentCatalog
from core.definitions.params import params_shown
from core.definitions.pipeline_graph import graph_of
from core.definitions.presets import PresetCatalog
from core.definitions.structured import as_handoff, with_structure
from core.model.budget import BudgetAsker, BudgetGuard, caps_of, stop_at_cap
from core.model.collection import weakly
from core.model.errors import RunError
from core.model.events import (
    Event,
    GateDecision,
    Log,
    OutputFileWritten,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepChanges,
    StepFinished,
    StepStarted,
    TextDelta,
    UserMessage,
    WorktreeInfo,
)
from core.record.publisher import EventListener
from core.record.run_recording import RunRecording, new_run_id
from core.record.run_state import RunState
from core.run.gates import GateAsker, Gates
from core.run.graph_runner import GraphRun, StepLabel
from core.run.handoff import hand_off
from core.run.output_file import OutputFileError, write_step_output
from core.run.run_preparation import PreparedStep, prepare_steps
from core.run.run_request import RunRequest
from core.run.steer_spool import watching
from core.run.step_execution import CancelSignal, consume, supervise
from core.safety.approvals import ApprovalGate, Responder, deny_all
from core.safety.nesting import current_parent
from core.safety.redaction import Redactor
from core.safety.rule_store import RuleStore
from core.telemetry.export import traces_for_run
from core.tools.mcp_hub import McpHub
from core.workspace.checkpoints import RunCheckpoints
from core.workspace.worktrees import WorktreeError, create_worktree

__all__ = ["MAX_CONCURRENT_STEPS", "RunError", "Runner", "new_run_id"]

MAX_CONCURRENT_STEPS = 4

Outcome = Literal["ok", "error", "aborted"]


class Runner:
    """Runs one request. Create it, optionally :meth:`prepare` it (to surface errors before
    showing anything), then ``await run()``; :meth:`cancel` may be called at any time from the
    same event loop.
    """

    def __init__(
        self,
        request: RunRequest,
        *,
        settings: Settings | None = None,
        responder: Responder = deny_all,
        listeners: Iterable[EventListener] = (),
        record: bool = True,
        agents: AgentCatalog | None = None,
        presets: PresetCatalog | None = None,
        backend_factory: Callable[[str], Backend] = create_backend,
        run_id: str | None = None,
        budget_asker: BudgetAsker = stop_at_cap,
        gate_asker: GateAsker | None = None,
        steps: list[PreparedStep] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        """``steps``: the request's steps as :meth:`prepare` made them for an earlier runner
        of the same request (a batch checks every item before any runs, then runs each with
        what was checked); never shared between runs, as a run moves its steps' folders.
        ``redactor``: the secrets of ``settings`` gathered once for many runs (a batch's
        items); a redactor holds no state of a run, so it can be shared."""
        self.request = request
        self.settings = settings if settings is not None else load_settings()
        self.run_id = run_id or new_run_id()
        self._parent = current_parent()
        """The step of another run that started this process (an agent ran `baton run`)."""
        self.listeners = list(listeners)
        self._traces = traces_for_run(self.settings, export=record)
        """Trace export (architecture: "Traces"): one more subscriber of a recorded run, when
        it is on (an unrecorded run is recorded, and exported, by whoever receives its
        events: the batch supervisor of a Ray item)."""
        if self._traces is not None and self._traces.subscriber is not None:
            self.listeners.append(self._traces.subscriber)
        self._record = record
        self._redactor = redactor
        self._agents = agents
        self._presets = presets
        self._backend_factory = backend_factory
        self._clock = RunClock()
        self._cancel = CancelSignal()
        self._steps: list[PreparedStep] | None = steps
        self._recording = RunRecording(
            self.run_id, self._clock, self.listeners, weakly(self.cancel)
        )
        self.budget = (
            BudgetGuard(
                request.budget,
                self._recording.usage_of,
                self._recording.recorded(budget_asker),
                self.run_id,
            )
            if request.budget is not None
            else None
        )
        self._labels: dict[int, StepLabel] = {}
        """A graph run's name for each step index it started (node, iteration, branch)."""
        self._running: dict[int, StepContext] = {}
        """The steps whose backend is running, for :meth:`steer`."""
        emit = weakly(self._emit)  # the runner's parts do not keep it alive (no cycles)
        self.gate = ApprovalGate(
            self.settings.effective_policy(), responder, emit, self._clock.now, rules=RuleStore()
        )
        self.gates = Gates(self.run_id, emit, self._clock.now, self._recording.scrub)
        """Graph runs' waiting gates, answered by :meth:`decide_gate` or ``gate_asker``."""
        self._gate_asker = gate_asker
        self.result: RunFinished | None = None
        self.mcp = McpHub()
        """The run's MCP servers: started by the first step that uses one, stopped at the end."""
        self._checkpoints: RunCheckpoints
        """Made once the recording is open, with its redactor (one set of secrets per run)."""

    # ---------------------------------------------------------------------------- public API

    def prepare(self) -> None:
        """Check the request (:func:`core.run.run_preparation.prepare_steps`); raises
        :class:`RunError` (or its trust subclass) when it cannot run. Idempotent; :meth:`run`
        calls it if you did not."""
        if self._steps is None:
            self._steps = prepare_steps(
                self.request,
                self.settings,
                parent=self._parent,
                agents=self._agents,
                presets=self._presets,
            )

    @property
    def prepared_steps(self) -> list[PreparedStep]:
        """The checked steps (:meth:`prepare` first, when it was not called)."""
        self.prepare()
        assert self._steps is not None
        return self._steps

    def cancel(self) -> None:
        """Stop every running step; the run ends ``aborted``. Safe to call more than once."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def state(self) -> RunState:
        """The run as published so far (redacted), folded once: what the runner decides with
        and what the window shows (:meth:`gui.run.run_model.RunModel.follow`). Read it on the
        run's event loop; never modify it."""
        return self._recording.state

    def steer(self, step: int, text: str) -> UserMessage:
        """Say ``text`` to running step ``step`` (0-based): it reaches the agent at its next
        turn boundary, cancelling nothing (:mod:`core.backends.steering`). Recorded as a
        ``user_message`` event, which is returned. Raises :class:`SteerError` when the step
        cannot take it (not running, finishing, an empty message)."""
        ctx = self._running.get(step)
        if ctx is None:
            raise SteerError(f"step {step + 1} is not running")
        message = text.strip()
        if not message:
            raise SteerError("the message is empty")
        ctx.inbox.put(message)
        event = ctx.make(UserMessage, text=message)
        self._emit(event)
        return event

    def decide_gate(
        self,
        gate_id: str,
        decision: GateDecision,
        *,
        text: str | None = None,
        note: str | None = None,
    ) -> None:
        """Answer a waiting gate (a ``gate_waiting`` event's ``gate_id``) as the person:
        ``continue``; ``edit`` with ``text``, the hand-off as edited; ``send_back`` with a
        ``note`` for the step sent back to; ``stop``. A best-of pick is ``continue`` with
        the winning attempt's name as ``text``. Raises :class:`core.run.gates.GateError`
        when the gate is not waiting or does not offer that decision."""
        self.gates.decide(gate_id, decision, text=text, note=note)

    async def run(self) -> RunFinished:
        """Run to the end and return the ``run_finished`` event (also published)."""
        self.prepare()
        assert self._steps is not None
        worktree, refused = await self._isolate(self._steps)
        self._recording.open(self.settings, record=self._record, redactor=self._redactor)
        self._checkpoints = RunCheckpoints(
            self.run_id, self.settings.checkpoints, self._recording.redactor
        )
        start = self._run_started(self._steps, worktree)
        self._recording.started(start)
        if refused is not None:
            return self._finish("error", refused, start)
        try:
            async with self._steered_from_elsewhere(), self.mcp:
                status, error = await self._run_mode(self._steps)
        except asyncio.CancelledError:
            self._finish("aborted", "the run was cancelled", start)
            raise
        except Exception as bug:
            self._finish("error", f"internal error: {bug!r}", start)
            raise
        return self._finish(status, error, start)

    def _steered_from_elsewhere(self) -> contextlib.AbstractAsyncContextManager[None]:
        """While the steps run, ``baton runs steer`` from another process reaches them
        (:mod:`core.run.steer_spool`); a run that is not recorded cannot be named, so not then."""
        if not self._record:
            return contextlib.nullcontext()
        return watching(self.run_id, self._steer_by_number)

    def _steer_by_number(self, step: int | None, text: str) -> int:
        """:meth:`steer` by 1-based step, or the one step running when None; returns the
        1-based step the message went to."""
        if step is None:
            running = sorted(self._running)
            if not running:
                raise SteerError("no step is running")
            if len(running) > 1:
                numbers = ", ".join(str(index + 1) for index in running)
                raise SteerError(f"steps {numbers} are running: say which with --step")
            step = running[0] + 1
        self.steer(step - 1, text)
        return step

    # ---------------------------------------------------------------------------- the run

    async def _isolate(self, steps: list[PreparedStep]) -> tuple[WorktreeInfo | None, str | None]:
        """Move the run into its own git worktree when it asks for one (core.workspace.worktrees);
        agents and trust were settled in the person's folder, as they asked. The second
        value says why the worktree could not be made (the run then ends with it)."""
        if self.request.isolation != "worktree":
            return None, None
        old = self.request.cwd.resolve()
        try:
            info, folder = await create_worktree(old, self.run_id)
        except WorktreeError as error:
            return None, str(error)
        self.request = dataclasses.replace(self.request, cwd=folder)
        for step in steps:
            if step.cwd.is_relative_to(old):
                step.cwd = folder / step.cwd.relative_to(old)
        return info, None

    def _run_started(self, steps: list[PreparedStep], worktree: WorktreeInfo | None) -> RunStarted:
        shape = self.request.graph if self.request.mode == "graph" else None
        nodes = [s.name for s in shape.steps] if shape is not None else [None] * len(steps)
        return RunStarted(
            run_id=self.run_id,
            ts=self._clock.now(),
            mode=self.request.mode,
            preset=self.request.preset,
            args=self.request.args,
            steps=[
                PlannedStep(
                    agent=s.agent.name,
                    task=s.task,
                    model=s.model,
                    backend=s.backend,
                    cwd=str(s.cwd),
                    node=node,
                )
                for s, node in zip(steps, nodes, strict=True)
            ],
            graph=(
                graph_of(list(shape.steps), list(shape.loops)).model_dump(mode="json")
                if shape is not None
                else None
            ),
            graph_steps=(
                [s.model_dump(mode="json", exclude_none=True) for s in shape.steps]
                if shape is not None
                else None
            ),
            graph_loops=(
                [loop.model_dump(mode="json") for loop in shape.loops]
                if shape is not None
                else None
            ),
            params=params_shown([(s.agent, s.params) for s in steps]),
            cwd=os.path.realpath(self.request.cwd),  # as resolve(), without its extra stat
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            batch_id=self.request.batch_id,
            batch_item=self.request.batch_item,
            parent_run=self._parent.run_id if self._parent else None,
            parent_step=self._parent.step if self._parent else None,
            lineage=self.request.lineage,
            worktree=worktree,
            budget=caps_of(self.request.budget),
        )

    def _finish(self, status: Outcome, error: str | None, start: RunStarted) -> RunFinished:
        self.result = self._recording.finish(status, error, start)
        return self.result

    # ---------------------------------------------------------------------------- modes

    async def _run_mode(self, steps: list[PreparedStep]) -> tuple[Outcome, str | None]:
        if self.request.mode == "graph" and self.request.graph is not None:
            return await GraphRun(
                self.request.graph,
                steps,
                run_step=self._run_labelled_step,
                emit=self._emit,
                now=self._clock.now,
                cancel=self._cancel,
                gates=self.gates,
                gate_asker=self._gate_asker,
                run_id=self.run_id,
                handoff_limit=self.settings.limits.handoff_chars,
                run_file=self._recording.run_file,
                reused=list(self.request.reused_nodes),
                reused_gates=self.request.reused_gates,
                reused_send_backs=self.request.reused_send_backs,
            ).run()
        if self.request.mode == "parallel":  # one checkpoint pair around all its tasks
            run_folders = [s.cwd for i, s in enumerate(steps) if i not in self.request.reused]
            notices = await self._checkpoints.before_run(run_folders if self._record else [])
            outcome = await self._run_parallel(steps)
            for said in [*notices, *await self._checkpoints.after_run()]:
                self._said(None, said)
            return outcome
        previous = ""
        for index, step in enumerate(steps):
            task = step.task_with(previous) if self.request.mode == "chain" else step.task
            finished = await self._run_step(index, step, task)
            if finished.status != "ok":
                if self.request.mode == "chain":
                    message = (
                        f"Chain stopped at step {index + 1} ({step.agent.name}): "
                        f"{finished.error or finished.status}"
                    )
                else:
                    message = finished.error or finished.status
                return ("aborted" if finished.status == "aborted" else "error"), message
            if self.request.mode != "chain" or index + 1 == len(steps):
                continue
            text = as_handoff(finished.structured) if finished.structured else finished.output
            previous = hand_off(
                text,
                limit=self.settings.limits.handoff_chars,
                run_id=self.run_id,
                step_number=index + 1,
                run_file=self._recording.run_file,
            )
        return "ok", None

    async def _run_parallel(self, steps: list[PreparedStep]) -> tuple[Outcome, str | None]:
        slots = asyncio.Semaphore(MAX_CONCURRENT_STEPS)

        async def one(index: int, step: PreparedStep) -> StepFinished:
            async with slots:
                if self._cancel.is_set():
                    return self._recording.step_finished(index, "aborted", "", "cancelled")
                return await self._run_step(index, step, step.task)

        results = await asyncio.gather(*(one(i, s) for i, s in enumerate(steps)))
        failed = [(i, r) for i, r in enumerate(results) if r.status != "ok"]
        if not failed:
            return "ok", None
        if self._cancel.is_set():
            return "aborted", "the run was cancelled"
        details = "; ".join(
            f"task {i + 1} ({steps[i].agent.name}): {r.error or r.status}" for i, r in failed
        )
        return "error", f"{len(failed)} of {len(steps)} parallel tasks failed: {details}"

    # ---------------------------------------------------------------------------- one step

    async def _run_labelled_step(
        self, index: int, step: PreparedStep, task: str, label: StepLabel
    ) -> StepFinished:
        """A graph's execution of a node: the chain's step, named by node, iteration and
        branch; one its parent run finished (resume, re-run) is replayed, not requested."""
        self._labels[index] = label
        saved = self.request.reused_nodes.get(label.key)
        if saved is not None:
            return self._replay(index, step, task, saved)
        return await self._run_step(index, step, task)

    async def _run_step(self, index: int, step: PreparedStep, task: str) -> StepFinished:
        """The step between two checkpoints of its folder (:mod:`core.workspace.checkpoints`), when
        the
        run is recorded (the run file is what restores read). Parallel tasks share their
        folder at the same time, so no checkpoint could say which of them changed what: their
        run has one pair around all of them instead (:meth:`_run_mode`)."""
        recorded = self._record and self.request.mode != "parallel"
        if not recorded or self._cancel.is_set() or index in self.request.reused:
            return await self._run_unrecorded_step(index, step, task)
        notice = await self._checkpoints.before(index, step.cwd)
        finished = await self._run_unrecorded_step(index, step, task)
        changes = await self._checkpoints.after(index)
        for said in (notice, changes):
            self._said(index, said)
        return finished

    def _said(self, index: int | None, said: StepChanges | str | None) -> None:
        """A checkpoint's changes as an event, or its notice as a warning."""
        if isinstance(said, str):
            self._emit(Log(run_id=self.run_id, step=index, level="warning", message=said))
        elif said is not None:
            self._emit(said.model_copy(update={"ts": self._clock.now()}))

    async def _run_unrecorded_step(self, index: int, step: PreparedStep, task: str) -> StepFinished:
        if self._cancel.is_set():
            return self._recording.step_finished(
                index, "aborted", "", "cancelled before it started"
            )
        reused = self.request.reused.get(index)
        if reused is not None:
            return self._replay(index, step, task, reused)
        ctx = StepContext(
            run_id=self.run_id,
            step=index,
            agent=step.agent,
            task=task,
            cwd=step.cwd,
            model=step.model,
            tools=step.agent.allowed_tools,
            settings=self.settings,
            approvals=self.gate,
            clock=self._clock,
            scrub=self._recording.scrub,
            redactor=self._recording.redactor,
            budget=self.budget,
            continues=step.spec.continues,
            checkout_trust=step.checkout_trust,
            trace_environment=(
                self._traces.step_environment(self.run_id, index) if self._traces else {}
            ),
            project_trusted=step.project_trusted,
            project_trust=step.project_trust,
            prompt_trust=step.prompt_trust,
            mcp=self.mcp,
        )
        self._emit_step_started(index, step, task)
        if step.spec.continues is not None:  # the follow-up, shown as said
            self._emit(ctx.make(UserMessage, text=task, delivery="continue"))
        outcome: list[StepFinished] = []
        try:
            backend = self._backend_factory(step.backend)
        except (UnknownBackendError, BackendError, ImportError) as error:
            return self._recording.step_finished(index, "error", "", str(error))
        task_handle = asyncio.create_task(
            consume(backend, ctx, self._emit, self._check_cli_budget, outcome)
        )
        self._running[index] = ctx
        try:
            stop = await supervise(
                task_handle,
                ctx,
                self._cancel,
                timeout_s=self.settings.limits.step_timeout_s,
                grace_s=backend.cancel_grace_s,
            )
        finally:
            del self._running[index]
            ctx.inbox.close()
        self._recording.close_open_calls(index)
        if outcome and stop is None:
            result = with_structure(step.agent.output, outcome[0])
            if result.status == "ok" and step.agent.output_file:
                self._write_output_file(index, step, result.output)
            return self._recording.step_finished(
                index, result.status, result.output, result.error, result.structured, result.session
            )
        if outcome and outcome[0].status == "aborted" and stop == "cancelled":
            return self._recording.step_finished(index, "aborted", outcome[0].output, "cancelled")
        self._recording.settle(index)
        partial = self._recording.state.steps[index].text_since_last_tool_call()
        if stop == "cancelled":
            return self._recording.step_finished(index, "aborted", partial, "cancelled")
        if stop == "timeout":
            limit = self.settings.limits.step_timeout_s
            return self._recording.step_finished(
                index, "error", partial, f"the step ran longer than its {limit:g} s time limit"
            )
        return self._recording.step_finished(
            index, "error", partial, f"the {step.backend} backend ended without a result"
        )

    def _write_output_file(self, index: int, step: PreparedStep, answer: str) -> None:
        """``output: <file name>``: the answer also goes to that file in the step's folder,
        before the step's closing checkpoint (so its changes show the file). Failing to write
        it is said, not fatal: the answer itself is in the run."""
        name = step.agent.output_file or ""
        try:
            written = write_step_output(step.cwd, name, answer)
        except OutputFileError as error:
            event = OutputFileWritten(
                run_id=self.run_id,
                step=index,
                ts=self._clock.now(),
                path=str(step.cwd / name),
                error=str(error),
            )
        else:
            event = OutputFileWritten(
                run_id=self.run_id, step=index, ts=self._clock.now(), path=str(written)
            )
        self._emit(event)

    async def _check_cli_budget(self, ctx: StepContext) -> None:
        if self.budget is not None:
            await self.budget.check(ctx.step)

    def _replay(
        self, index: int, step: PreparedStep, task: str, saved: StepFinished
    ) -> StepFinished:
        """A step reused from the parent run: its answer shown and handed on as saved, with
        no request and no cost in this run; marked so the pane and the run file say so. In a
        graph run its ending names its node, iteration and branch like any other's (the
        transcript and the graph read them from the ending)."""
        source = self.request.lineage.run_id if self.request.lineage else None
        self._emit_step_started(index, step, task, reused_from=source)
        if saved.output:
            self._emit(
                TextDelta(run_id=self.run_id, step=index, ts=self._clock.now(), text=saved.output)
            )
        label = self._labels.get(index)
        event = StepFinished(
            run_id=self.run_id,
            step=index,
            ts=self._clock.now(),
            status="ok",
            output=saved.output,
            structured=saved.structured,
            reused_from=source,
            node=label.node if label else None,
            iteration=label.iteration if label else None,
            branch=label.branch if label else None,
        )
        self._emit(event)
        return event

    # ---------------------------------------------------------------------------- events

    def _emit(self, event: Event) -> None:
        """Through the run's recording: folded into its state, then published (redacted)."""
        self._recording.emit(event)

    def _emit_step_started(
        self, index: int, step: PreparedStep, task: str, reused_from: str | None = None
    ) -> None:
        label = self._labels.get(index)
        self._emit(
            StepStarted(
                run_id=self.run_id,
                step=index,
                ts=self._clock.now(),
                agent=step.agent.name,
                task=task,
                model=step.model,
                backend=step.backend,
                cwd=str(step.cwd),
                reused_from=reused_from,
                node=label.node if label else None,
                iteration=label.iteration if label else None,
                branch=label.branch if label else None,
            )
        )
