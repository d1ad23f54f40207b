"""Runs: single, parallel and chain, with DESIGN §4's semantics.

A :class:`Runner` takes a :class:`RunRequest`, checks everything that can be checked before a
single request is sent (agents exist, parallel limit, working folders, project trust), then
drives one backend per step and publishes every event through a
:class:`~core.publisher.EventPublisher` (redaction, the run file on its writer thread, the
subscribers: CLI printer, GUI view model — each isolated from the others).

* **single** — one step.
* **parallel** — at most 8 tasks, at most 4 at once; a failing task does not stop the others.
* **chain** — steps in order, ``{previous}`` = the previous step's final output, capped by
  :func:`core.handoff.hand_off`; the first step that fails or is aborted stops the chain with
  ``Chain stopped at step N (agent): <error>``.

Tasks are templates filled in one pass (:func:`core.presets.expand_template`): arguments, the
agents' typed parameters (checked against their ``params:`` before anything is sent, defaults
applied; also substituted into the agent's system prompt) and ``{previous}``. A step's folder
outside the run's folder needs :attr:`RunRequest.allow_outside_folder`; an agent whose file
has an error-level diagnostic is refused with that diagnostic.

Cancel (:meth:`Runner.cancel`) reaches every running step (see :mod:`core.backends.base` for
the two stages); the run then ends ``aborted`` and whatever was received stays in the run file.
An optional per-step time limit (``limits.step_timeout_s``) ends a step the same way, as an
error that says so. Tool calls still open when a step ends are closed as aborted here, so no
backend has to.

A recorded run holds a liveness lock (:mod:`core.liveness`) until its ending is indexed, so a
run whose process died reads ``interrupted``, never ``running`` forever. A run file that cannot
be written (disk full) stops the run: it ends ``error`` with the reason, in the index too.

Steps never get a tool to start other agents: sub-agents cannot launch sub-agents.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import sqlite3
import traceback
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from core.agents import AgentCatalog, AgentDefinition, discover_agents
from core.approvals import ApprovalGate, Responder, deny_all
from core.backends.base import Backend, BackendError, RunClock, StepContext
from core.backends.registry import UnknownBackendError, backend_for, create_backend
from core.budget import (
    BudgetAsker,
    BudgetGuard,
    BudgetQuestion,
    BudgetReached,
    Caps,
    stop_at_cap,
)
from core.checkpoints import RunCheckpoints
from core.errors import RunError
from core.events import (
    BudgetAnswered,
    BudgetAsked,
    Event,
    Log,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepChanges,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    Usage,
    UsageStats,
    UserMessage,
    WorktreeInfo,
)
from core.handoff import hand_off
from core.liveness import LivenessLock
from core.model_choice import configured_model
from core.nesting import check_depth, current_parent
from core.params import ParamsError, params_shown, run_params, step_params
from core.presets import (
    MAX_PARALLEL_TASKS,
    Preset,
    PresetCatalog,
    discover_presets,
    expand_template,
)
from core.publisher import EventListener, EventPublisher, RunFileSink
from core.redaction import Redactor
from core.rule_store import RuleStore
from core.run_request import RunRequest, StepSpec
from core.run_state import RunState
from core.runs import RunIndex, RunWriter, run_file
from core.settings import Settings, load_settings
from core.steering import SteerError
from core.structured import as_handoff, with_structure
from core.trust import TrustStore, UntrustedProjectError, project_files
from core.worktrees import WorktreeError, check_repository, create_worktree

MAX_CONCURRENT_STEPS = 4

_log = logging.getLogger(__name__)


@dataclass
class _PreparedStep:
    spec: StepSpec
    agent: AgentDefinition
    """With its parameters substituted into the system prompt."""
    backend: str
    model: str | None
    cwd: Path
    params: dict[str, Any]
    """The values the task template is filled with (this step's over the run's)."""
    task: str
    """The task as planned: filled in, except ``{previous}``."""

    def task_with(self, previous: str | None) -> str:
        """The task sent, filled in one pass from the template (never the planned text)."""
        return expand_template(
            self.spec.task, args=self.spec.args, params=self.params, previous=previous
        )


def new_run_id() -> str:
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


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
    ) -> None:
        self.request = request
        self.settings = settings if settings is not None else load_settings()
        self.run_id = run_id or new_run_id()
        self._parent = current_parent()
        self.budget = (
            BudgetGuard(request.budget, self._usage_of, self._recorded(budget_asker), self.run_id)
            if request.budget is not None
            else None
        )
        """The step of another run that started this process (an agent ran `baton run`)."""
        self.listeners = list(listeners)
        self._record = record
        self._agents = agents
        self._presets = presets
        self._backend_factory = backend_factory
        self._clock = RunClock()
        self._cancel = asyncio.Event()
        self._steps: list[_PreparedStep] | None = None
        self._publisher = EventPublisher(listeners=self.listeners)
        self._redactor: Redactor | None = None
        """The run's secrets (set when publishing starts); tools scrub what they store."""
        self._lock: LivenessLock | None = None
        self._write_error: str | None = None
        """Why the run file could not be written, once that happened (the run stops)."""
        self._state = RunState()
        """Everything the run emitted, folded: per-step usage, open tool calls, partial text."""
        self._running: dict[int, StepContext] = {}
        """The steps whose backend is running, for :meth:`steer`."""
        self.gate = ApprovalGate(
            self.settings.effective_policy(),
            responder,
            self._emit,
            self._clock.now,
            rules=RuleStore(),
        )
        self.result: RunFinished | None = None
        self._checkpoints = RunCheckpoints(self.run_id, self.settings.checkpoints)

    # ---------------------------------------------------------------------------- public API

    def prepare(self) -> None:
        """Check the request; raises :class:`RunError` (or its trust subclass) when it cannot
        run. Idempotent; :meth:`run` calls it if you did not."""
        if self._steps is not None:
            return
        request = self.request
        check_depth(self._parent)
        if not request.cwd.is_dir():
            raise RunError(f"working folder {request.cwd} does not exist")
        if not request.steps:
            raise RunError("nothing to run: no steps")
        if request.mode == "single" and len(request.steps) != 1:
            raise RunError("a single run has exactly one step")
        if request.mode == "parallel" and len(request.steps) > MAX_PARALLEL_TASKS:
            raise RunError(
                f"too many parallel tasks ({len(request.steps)}); the limit is {MAX_PARALLEL_TASKS}"
            )
        agents = self._agents or discover_agents(request.cwd, request.scope)
        self._agents = agents
        self._check_trust(agents)
        if request.isolation == "worktree":
            check_repository(request.cwd)
        chosen = [
            self._runnable_agent(agents, number, spec)
            for number, spec in enumerate(request.steps, 1)
        ]
        try:
            run_values = run_params(chosen, request.params)
        except ParamsError as error:
            raise RunError(str(error)) from None
        steps = []
        for number, (spec, agent) in enumerate(zip(request.steps, chosen, strict=True), 1):
            where = f"step {number} ({agent.name})"
            cwd = self._step_folder(where, spec)
            backend = backend_for(agent, request.backend, self.settings)
            try:
                own = step_params(agent, spec.params, run_values)
            except ParamsError as error:
                raise RunError(f"{where}: {error}") from None
            values = {**run_values, **own}
            body = expand_template(agent.system_prompt, params=own)
            agent = agent.model_copy(update={"system_prompt": body})
            model = self._model_for(spec, agent, backend)
            prepared = _PreparedStep(spec, agent, backend, model, cwd, values, "")
            prepared.task = prepared.task_with(None)
            steps.append(prepared)
        self._steps = steps

    def cancel(self) -> None:
        """Stop every running step; the run ends ``aborted``. Safe to call more than once."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def steer(self, step: int, text: str) -> UserMessage:
        """Say ``text`` to running step ``step`` (0-based): it reaches the agent at its next
        turn boundary, cancelling nothing (:mod:`core.steering`). Recorded as a
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

    async def run(self) -> RunFinished:
        """Run to the end and return the ``run_finished`` event (also published)."""
        self.prepare()
        assert self._steps is not None
        worktree, refused = await self._isolate(self._steps)
        index = self._start_publishing()
        start = RunStarted(
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
                )
                for s in self._steps
            ],
            params=params_shown([(s.agent, s.params) for s in self._steps]),
            cwd=str(self.request.cwd.resolve()),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            batch_id=self.request.batch_id,
            batch_item=self.request.batch_item,
            parent_run=self._parent.run_id if self._parent else None,
            parent_step=self._parent.step if self._parent else None,
            lineage=self.request.lineage,
            worktree=worktree,
        )
        if index is not None and self._publisher.sink is not None:
            try:
                index.started(self._publisher.redacted(start), self._publisher.sink.writer.path)
            except sqlite3.Error:
                self._publisher.close()
                self._release_lock()
                raise
        self._emit(start)
        if refused is not None:
            return self._finish("error", refused, index, start)
        try:
            status, error = await self._run_mode(self._steps)
        except asyncio.CancelledError:
            self._finish("aborted", "the run was cancelled", index, start)
            raise
        except Exception as bug:
            self._finish("error", f"internal error: {bug!r}", index, start)
            raise
        return self._finish(status, error, index, start)

    async def _isolate(self, steps: list[_PreparedStep]) -> tuple[WorktreeInfo | None, str | None]:
        """Move the run into its own git worktree when it asks for one (core.worktrees);
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

    # ---------------------------------------------------------------------------- modes

    async def _run_mode(
        self, steps: list[_PreparedStep]
    ) -> tuple[Literal["ok", "error", "aborted"], str | None]:
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
                folder=self.request.cwd.resolve(),
                run_id=self.run_id,
                step_number=index + 1,
                run_file=run_file(self.run_id) if self._record else None,
            )
        return "ok", None

    async def _run_parallel(
        self, steps: list[_PreparedStep]
    ) -> tuple[Literal["ok", "error", "aborted"], str | None]:
        slots = asyncio.Semaphore(MAX_CONCURRENT_STEPS)

        async def one(index: int, step: _PreparedStep) -> StepFinished:
            async with slots:
                if self._cancel.is_set():
                    return self._emit_step_finished(index, "aborted", "", "cancelled")
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

    async def _run_step(self, index: int, step: _PreparedStep, task: str) -> StepFinished:
        """The step between two checkpoints of its folder (:mod:`core.checkpoints`), when the
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

    async def _run_unrecorded_step(
        self, index: int, step: _PreparedStep, task: str
    ) -> StepFinished:
        if self._cancel.is_set():
            return self._emit_step_finished(index, "aborted", "", "cancelled before it started")
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
            scrub=self._redactor.scrub if self._redactor is not None else (lambda text: text),
            budget=self.budget,
            continues=step.spec.continues,
        )
        self._emit_step_started(index, step, task)
        if step.spec.continues is not None:  # the follow-up, shown as said
            self._emit(ctx.make(UserMessage, text=task, delivery="continue"))
        outcome: list[StepFinished] = []
        try:
            backend = self._backend_factory(step.backend)
        except (UnknownBackendError, BackendError, ImportError) as error:
            return self._emit_step_finished(index, "error", "", str(error))
        task_handle = asyncio.create_task(self._consume(backend, ctx, outcome))
        self._running[index] = ctx
        try:
            stop = await self._supervise(task_handle, ctx, backend.cancel_grace_s)
        finally:
            del self._running[index]
            ctx.inbox.close()
        self._close_open_calls(index)
        if outcome and stop is None:
            result = with_structure(step.agent.output, outcome[0])
            return self._emit_step_finished(
                index, result.status, result.output, result.error, result.structured, result.session
            )
        if outcome and outcome[0].status == "aborted" and stop == "cancelled":
            return self._emit_step_finished(index, "aborted", outcome[0].output, "cancelled")
        partial = self._state.steps[index].text_since_last_tool_call()
        if stop == "cancelled":
            return self._emit_step_finished(index, "aborted", partial, "cancelled")
        if stop == "timeout":
            limit = self.settings.limits.step_timeout_s
            return self._emit_step_finished(
                index, "error", partial, f"the step ran longer than its {limit:g} s time limit"
            )
        return self._emit_step_finished(
            index, "error", partial, f"the {step.backend} backend ended without a result"
        )

    async def _consume(
        self, backend: Backend, ctx: StepContext, outcome: list[StepFinished]
    ) -> None:
        try:
            events = backend.run(ctx)
            try:
                async for event in events:
                    if isinstance(event, StepFinished):
                        ctx.inbox.close()  # at once: a message now would reach no one
                        outcome.append(event)
                        return
                    self._emit(event)
                    if isinstance(event, Usage) and backend.name != "openai":
                        await self._check_cli_budget(ctx)  # the CLI asks its model itself
            finally:
                # A backend left suspended after its StepFinished (or abandoned on cancel)
                # releases its stream or process now, not whenever it is garbage-collected.
                await events.aclose()
        except (BackendError, BudgetReached) as error:
            outcome.append(ctx.make(StepFinished, status="error", error=str(error)))
        except Exception as error:  # a bug in a backend must not take the run down
            self._emit(ctx.make(Log, level="error", message=traceback.format_exc()))
            outcome.append(
                ctx.make(
                    StepFinished,
                    status="error",
                    error=f"internal error in the {backend.name} backend: {error!r}",
                )
            )

    def _recorded(self, ask: BudgetAsker) -> BudgetAsker:
        """``ask``, with the question and its answer in the run: the run file keeps who spent
        more, and the step shows "waiting for you" while a person decides."""

        async def recorded(question: BudgetQuestion) -> Caps | None:
            asked = BudgetAsked(
                run_id=self.run_id,
                step=question.step,
                ts=self._clock.now(),
                scope="run" if question.scope == "run" else "step",
                kind=question.kind,
                reason=question.reason,
            )
            self._emit(asked)
            answer: Caps | None = None
            try:
                answer = await ask(question)
            finally:
                self._emit(
                    BudgetAnswered(
                        run_id=self.run_id,
                        step=question.step,
                        ts=self._clock.now(),
                        stopped=answer is None,
                        max_cost=answer.max_cost if answer is not None else None,
                        max_tokens=answer.max_tokens if answer is not None else None,
                    )
                )
            return answer

        return recorded

    async def _check_cli_budget(self, ctx: StepContext) -> None:
        if self.budget is not None:
            await self.budget.check(ctx.step)

    def _usage_of(self, step: int) -> tuple[UsageStats, UsageStats]:
        return self._state.usage, self._state.steps[step].usage

    async def _supervise(
        self, task: asyncio.Task[None], ctx: StepContext, grace_s: float
    ) -> Literal["cancelled", "timeout"] | None:
        """Wait for the step; on cancel or time limit stop it in two stages (see base.py)."""
        cancel_wait = asyncio.create_task(self._cancel.wait())
        try:
            await asyncio.wait(
                {task, cancel_wait},
                timeout=self.settings.limits.step_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except asyncio.CancelledError:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            raise
        finally:
            cancel_wait.cancel()
        if task.done():
            return None
        reason: Literal["cancelled", "timeout"] = (
            "cancelled" if self._cancel.is_set() else "timeout"
        )
        ctx.cancelled.set()
        if grace_s > 0:
            await asyncio.wait({task}, timeout=grace_s)
        if not task.done():
            task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        return reason

    # ---------------------------------------------------------------------------- events

    def _start_publishing(self) -> RunIndex | None:
        """Open the run file (with its writer thread and liveness lock) and the index."""
        self._redactor = Redactor.for_settings(self.settings)
        self._publisher = EventPublisher(self._redactor, None, self.listeners)
        if not self._record:
            return None
        writer = RunWriter(self.run_id)  # the publisher redacts before the writer sees events
        self._lock = LivenessLock(writer.path)
        loop = asyncio.get_running_loop()

        def failed(error: OSError) -> None:  # on the writer thread
            loop.call_soon_threadsafe(self._recording_failed, writer.path, error)

        self._publisher.sink = RunFileSink(writer, failed)
        return RunIndex()

    def _recording_failed(self, path: Path, error: OSError) -> None:
        if self._write_error is None:
            self._write_error = (
                f"the run file {path} could not be written ({error.strerror or error}); "
                "the run was stopped"
            )
            self.cancel()

    def _emit(self, event: Event) -> None:
        """Fold the event into the run's own state, then publish it (redacted) to the run
        file and the subscribers; see :mod:`core.publisher`."""
        self._state.apply(event)
        self._publisher.publish(event)

    def _close_open_calls(self, step: int) -> None:
        for call in self._state.steps[step].open_calls():
            self._emit(
                ToolCallFinished(
                    run_id=self.run_id,
                    step=step,
                    ts=self._clock.now(),
                    call_id=call.call_id,
                    status="aborted",
                    result="(aborted: the step ended before this call did)",
                )
            )

    def _replay(
        self, index: int, step: _PreparedStep, task: str, saved: StepFinished
    ) -> StepFinished:
        """A step reused from the parent run: its answer shown and handed on as saved, with
        no request and no cost in this run; marked so the pane and the run file say so."""
        source = self.request.lineage.run_id if self.request.lineage else None
        self._emit_step_started(index, step, task, reused_from=source)
        if saved.output:
            self._emit(
                TextDelta(run_id=self.run_id, step=index, ts=self._clock.now(), text=saved.output)
            )
        event = StepFinished(
            run_id=self.run_id,
            step=index,
            ts=self._clock.now(),
            status="ok",
            output=saved.output,
            structured=saved.structured,
            reused_from=source,
        )
        self._emit(event)
        return event

    def _emit_step_started(
        self, index: int, step: _PreparedStep, task: str, reused_from: str | None = None
    ) -> None:
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
            )
        )

    def _emit_step_finished(
        self,
        index: int,
        status: Literal["ok", "error", "aborted"],
        output: str,
        error: str | None,
        structured: dict[str, Any] | None = None,
        session: str | None = None,
    ) -> StepFinished:
        event = StepFinished(
            run_id=self.run_id,
            step=index,
            ts=self._clock.now(),
            status=status,
            output=output,
            error=error,
            usage=self._state.steps[index].usage,
            structured=structured,
            session=session,
        )
        self._emit(event)
        return event

    def _finish(
        self,
        status: Literal["ok", "error", "aborted"],
        error: str | None,
        index: RunIndex | None,
        start: RunStarted,
    ) -> RunFinished:
        if self._write_error is not None:
            status, error = "error", self._write_error
        finished = RunFinished(
            run_id=self.run_id,
            ts=self._clock.now(),
            status=status,
            usage=self._state.usage,
            error=error,
        )
        self._emit(finished)
        finished = self._publisher.redacted(finished)
        self.result = finished
        write_error = self._publisher.close()
        if write_error is not None and self._write_error is None:  # the very last lines
            assert self._publisher.sink is not None
            self._recording_failed(self._publisher.sink.writer.path, write_error)
            finished = finished.model_copy(update={"status": "error", "error": self._write_error})
        if index is not None:
            try:
                index.finished(finished, start.started_at, by_agent=self._state.usage_by_agent())
            except sqlite3.Error as failure:
                # The lock goes below, so the row then reads "interrupted", not "running".
                _log.error("could not record the end of run %s: %s", self.run_id, failure)
        self._release_lock()
        return finished

    def _release_lock(self) -> None:
        """The run's ending is recorded (or never will be): it no longer has a live owner."""
        if self._lock is not None:
            self._lock.release()

    # ---------------------------------------------------------------------------- helpers

    def _model_for(self, spec: StepSpec, agent: AgentDefinition, backend: str) -> str | None:
        """The configured model (:mod:`core.model_choice`, the launch dialog's rule too); None
        lets a CLI use its default, or Baton's loop ask the provider for its only model."""
        return configured_model(
            backend,
            self.settings,
            run_model=self.request.model,
            step_model=spec.model,
            agent_model=agent.model,
        ).model

    def _runnable_agent(self, agents: AgentCatalog, number: int, spec: StepSpec) -> AgentDefinition:
        """The step's agent; refuses an unknown one, or one whose file has an error."""
        preset = self.request.preset
        where = f"preset '{preset}', step {number}" if preset else f"step {number}"
        agent = agents.get(spec.agent)
        if agent is None:
            raise RunError(
                f"{where}: unknown agent '{spec.agent}' "
                f"(available: {', '.join(agents.names()) or 'none'})"
            )
        problem = agent.error
        if problem is not None:
            raise RunError(
                f"{where}: agent '{agent.name}' cannot run: {problem.location}: {problem.message}"
            )
        return agent

    def _step_folder(self, where: str, spec: StepSpec) -> Path:
        """The step's working folder; one outside the run's needs the person's consent."""
        root = self.request.cwd.resolve()
        cwd = (root / spec.cwd).resolve() if spec.cwd else root
        if not cwd.is_dir():
            raise RunError(f"{where}: folder {cwd} does not exist")
        if not cwd.is_relative_to(root) and not self.request.allow_outside_folder:
            raise RunError(
                f"{where}: folder {cwd} is outside the run's folder {root}; "
                "allow it on purpose with --allow-outside-folder"
            )
        return cwd

    def _check_trust(self, agents: AgentCatalog) -> None:
        if self.request.trust_project or self.request.scope == "user":
            return
        uses_project = any(
            (a := agents.get(s.agent)) is not None and a.source == "project"
            for s in self.request.steps
        )
        preset = self._preset()
        if preset is not None and preset.source == "project":
            uses_project = True
        if not uses_project:
            return
        root = agents.project_root
        if preset is not None and preset.source == "project" and preset.path:
            root = Path(preset.path).parents[2]
        if root is None:
            return
        if not TrustStore().is_trusted(root):
            raise UntrustedProjectError(root, project_files(root))

    def _preset(self) -> Preset | None:
        if self.request.preset is None:
            return None
        presets = self._presets or discover_presets(self.request.cwd, self.request.scope)
        return presets.get(self.request.preset)
