"""A run's events folded into OpenTelemetry spans, following the GenAI semantic conventions.

One :class:`TraceBuilder` per run consumes the typed event stream (live, as a subscriber of the
run's publisher, or from a saved run file) and returns each span as it ends:

* the run: ``invoke_workflow`` (root), with the run's mode, status and usage;
* each step: ``invoke_agent {agent}`` (agent, model, backend, usage), linked to the step whose
  answer it was handed (a chain's ``{previous}``);
* each model response: ``chat {model}`` with the GenAI usage attributes, from the step's
  previous boundary (its start, the last response, the last tool result) to its ``usage``;
* each tool call: ``execute_tool {tool}`` (name, call id, the decision and who decided);
  approvals are events on it, budget questions and retries events on the step.

A graph run's own events sit on the workflow span, since a gate waits before its step starts
and a skipped step never does: a gate's wait and decision (``baton.gate.*``; the edited
hand-off and a send-back's note as their lengths, their text only with ``capture_content``),
skipped steps with the condition that was false, loop iterations and ends, and a best-of's
pick. Each step span says which node, iteration and attempt (branch) it ran.

Times come from the events (``started_at`` plus each event's ``ts``), ids from
:mod:`core.telemetry.trace_ids`, so a run replays into the same trace. Events reach the builder
redacted (the publisher, or ``redact_all`` for a saved file); ``scrub`` is applied again to
every text the builder copies. Message content is copied only with ``capture_content``.

The OpenTelemetry SDK is imported by the first builder (:func:`load_sdk`), not by importing
this module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    BestOfPicked,
    BudgetAnswered,
    BudgetAsked,
    Event,
    GateDecided,
    GateWaiting,
    Log,
    LoopFinished,
    LoopIterationStarted,
    Retry,
    RunFinished,
    RunStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
    UserMessage,
)
from core.telemetry.trace_ids import run_span_id, span_id, step_span_id, trace_id

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event as SpanEvent
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags


def load_sdk() -> None:
    """Bind the SDK's names in this module (once; the first builder does it).

    Every core module must import on a machine without the extras (tests/test_layering.py),
    and this one is imported only when traces are on, so the SDK is imported here rather
    than at the top; the names above are for the type checker."""
    if "ReadableSpan" in globals():
        return
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event as SpanEvent
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    globals().update(
        Resource=Resource,
        SpanEvent=SpanEvent,
        ReadableSpan=ReadableSpan,
        InstrumentationScope=InstrumentationScope,
        gen_ai=gen_ai,
        Link=Link,
        SpanContext=SpanContext,
        SpanKind=SpanKind,
        Status=Status,
        StatusCode=StatusCode,
        TraceFlags=TraceFlags,
    )


Attributes = dict[str, str | bool | int | float]
MAX_TEXT = 16_000
"""Characters of one copied text at most (a tool's whole output is the run file's job)."""
SCOPE_NAME = "baton"
BATON_BACKEND = "baton.backend"
BATON_COST = "baton.usage.cost_usd"
BATON_DECISION = "baton.approval.decision"
BATON_DECIDED_BY = "baton.approval.decided_by"
BATON_RULE = "baton.approval.rule"
BATON_LINK = "baton.link.kind"
BATON_STEP = "baton.step.index"
"""The step's 0-based index (``baton.step.*`` is a namespace: the name is not itself one)."""
BATON_NODE = "baton.step.node"
BATON_ITERATION = "baton.step.iteration"
BATON_BRANCH = "baton.step.branch"


def gen_ai_attributes_used() -> tuple[str, ...]:
    """Every ``gen_ai.*`` attribute this module sets (a test checks them against the
    package)."""
    load_sdk()
    return (
        gen_ai.GEN_AI_OPERATION_NAME,
        gen_ai.GEN_AI_WORKFLOW_NAME,
        gen_ai.GEN_AI_AGENT_NAME,
        gen_ai.GEN_AI_REQUEST_MODEL,
        gen_ai.GEN_AI_RESPONSE_MODEL,
        gen_ai.GEN_AI_CONVERSATION_ID,
        gen_ai.GEN_AI_USAGE_INPUT_TOKENS,
        gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS,
        gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        gen_ai.GEN_AI_TOOL_NAME,
        gen_ai.GEN_AI_TOOL_CALL_ID,
        gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS,
        gen_ai.GEN_AI_TOOL_CALL_RESULT,
        gen_ai.GEN_AI_INPUT_MESSAGES,
        gen_ai.GEN_AI_OUTPUT_MESSAGES,
    )


def _resource() -> Resource:
    from importlib.metadata import PackageNotFoundError, version

    try:
        baton_version = version("baton")
    except PackageNotFoundError:
        baton_version = "dev"
    # OTEL_RESOURCE_ATTRIBUTES is merged in by the SDK; OTEL_SERVICE_NAME names the service.
    name = os.environ.get("OTEL_SERVICE_NAME") or "baton"
    return Resource.create({"service.name": name, "service.version": baton_version})


def _messages(role: str, text: str, finish: str | None = None) -> str:
    """One message in the conventions' JSON form (``gen_ai.input.messages``)."""
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text}]}
    if finish is not None:
        message["finish_reason"] = finish
    return json.dumps([message], ensure_ascii=False)


def _why(status: str, attributes: Attributes) -> str:
    """A failed tool call's status line: who denied it, when it was denied."""
    if attributes.get(BATON_DECISION) == "deny":
        return f"denied by {attributes.get(BATON_DECIDED_BY, 'the gate')}"
    return status


def _set(attributes: Mapping[str, str | bool | int | float | None]) -> Attributes:
    """``attributes`` without those that are None (OpenTelemetry has no null)."""
    return {name: value for name, value in attributes.items() if value is not None}


def _graph_attributes(node: str | None, iteration: int | None, branch: str | None) -> Attributes:
    """Where in a graph a step ran or was skipped: a loop runs one node several times and a
    best-of in several attempts, so the node alone does not tell the spans apart."""
    return _set({BATON_NODE: node, BATON_ITERATION: iteration, BATON_BRANCH: branch})


def _usage_attributes(usage: UsageStats) -> Attributes:
    """The conventions count cached input in ``input_tokens`` (Baton's ``input`` leaves it out,
    as Anthropic reports it), and name the cached parts apart."""
    attributes: Attributes = {
        gen_ai.GEN_AI_USAGE_INPUT_TOKENS: usage.input + usage.cache_read + usage.cache_write,
        gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output,
    }
    if usage.cache_read:
        attributes[gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read
    if usage.cache_write:
        attributes[gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write
    if usage.cost and usage.priced:
        attributes[BATON_COST] = usage.cost
    return attributes


@dataclass
class _Tool:
    tool: str
    start: float
    arguments: dict[str, Any]
    attributes: Attributes = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)


@dataclass
class _Step:
    number: int
    start: float
    agent: str
    model: str | None
    backend: str
    task: str
    boundary: float
    """Where the next ``chat`` span starts: the step's start, the last response or tool result."""
    graph: Attributes = field(default_factory=dict)
    """Which node, iteration and attempt this step ran (graph runs only)."""
    text: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    """What the next request carries besides tool results (the task, steering messages)."""
    chats: int = 0
    tools: dict[str, _Tool] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)


class TraceBuilder:
    """Folds one run's events into spans (see the module docstring). Not thread-safe."""

    def __init__(
        self,
        *,
        capture_content: bool = False,
        scrub: Callable[[str], str] = lambda text: text,
        resource: Resource | None = None,
    ) -> None:
        load_sdk()
        self.capture_content = capture_content
        self._scrub = scrub
        self._resource = resource if resource is not None else _resource()
        self._start: RunStarted | None = None
        self._trace = 0
        """The run's trace id (derived once: every span needs it)."""
        self._origin_ns = 0
        self._last_ts = 0.0
        self._steps: dict[int, _Step] = {}
        self._finished_steps: set[int] = set()
        self._calls_of_requests: dict[str, str] = {}
        self._waiting: dict[str, list[tuple[Attributes, SpanEvent]]] = {}
        """Decisions about calls not started yet (a gate may answer before the call shows)."""
        self._run_events: list[SpanEvent] = []
        self._gates: dict[str, GateWaiting] = {}
        """Gates waiting, by id: their decision names the node and may pick an option."""
        self._handlers: dict[str, Callable[[Any], list[ReadableSpan]]] = {
            "run_started": self._run_started,
            "step_started": self._step_started,
            "tool_call_started": self._tool_started,
            "tool_call_finished": self._tool_finished,
            "approval_requested": self._approval_requested,
            "approval_resolved": self._approval_resolved,
            "usage": self._usage,
            "retry": self._retry,
            "budget_asked": self._budget,
            "budget_answered": self._budget,
            "user_message": self._user_message,
            "log": self._log,
            "step_finished": self._step_finished,
            "run_finished": self._run_finished,
            "gate_waiting": self._gate_waiting,
            "gate_decided": self._gate_decided,
            "step_skipped": self._step_skipped,
            "loop_iteration_started": self._loop_iteration,
            "loop_finished": self._loop_finished,
            "best_of_picked": self._best_of_picked,
        }
        if capture_content:  # text is kept only to be copied; without content it costs nothing
            self._handlers["text_delta"] = self._text

    # ---------------------------------------------------------------------------- public API

    @property
    def trace_id(self) -> int | None:
        return trace_id(self._start.run_id) if self._start is not None else None

    def feed(self, event: Event) -> Sequence[ReadableSpan]:
        """The spans ``event`` ends (most events end none). Called for every event of a live
        run, so the events that matter nothing here (deltas, tool output) cost one lookup."""
        handler = self._handlers.get(event.type)
        if handler is None or (self._start is None and event.type != "run_started"):
            return ()
        if event.ts > self._last_ts:
            self._last_ts = event.ts
        return handler(event)

    def close(self) -> list[ReadableSpan]:
        """End whatever is still open at the last event's time (a run whose file stops
        early: its process died). Returns those spans, the run's last."""
        if self._start is None:
            return []
        spans: list[ReadableSpan] = []
        for number in list(self._steps):
            ended = StepFinished(
                run_id=self._start.run_id,
                step=number,
                ts=self._last_ts,
                status="error",
                error="the run's record ends here (interrupted)",
            )
            spans += self._step_finished(ended)
        ending = RunFinished(
            run_id=self._start.run_id, ts=self._last_ts, status="interrupted", error=None
        )
        return spans + self._run_finished(ending)

    # ---------------------------------------------------------------------------- helpers

    def _ns(self, ts: float) -> int:
        return self._origin_ns + int(ts * 1e9)

    def _text(self, event: TextDelta) -> list[ReadableSpan]:
        if event.parent_call_id is None and event.step in self._steps:
            self._steps[event.step].text.append(event.text)
        return []

    def _copy(self, text: str) -> str:
        return self._scrub(text[:MAX_TEXT])

    def _context(self, span: int) -> SpanContext:
        return SpanContext(
            self._trace,
            span,
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )

    def _span(
        self,
        name: str,
        span: int,
        parent: int | None,
        start: float,
        end: float,
        attributes: Attributes,
        *,
        events: Sequence[SpanEvent] = (),
        links: Sequence[Link] = (),
        status: Status | None = None,
    ) -> ReadableSpan:
        return ReadableSpan(
            name=name,
            context=self._context(span),
            parent=self._context(parent) if parent is not None else None,
            resource=self._resource,
            attributes=attributes,
            events=events,
            links=links,
            kind=SpanKind.INTERNAL if parent is None else SpanKind.CLIENT,
            status=status if status is not None else Status(StatusCode.UNSET),
            start_time=self._ns(start),
            end_time=self._ns(max(end, start)),
            instrumentation_scope=InstrumentationScope(SCOPE_NAME),
        )

    def _event(self, name: str, ts: float, attributes: Attributes) -> SpanEvent:
        return SpanEvent(name, attributes, timestamp=self._ns(ts))

    # ---------------------------------------------------------------------------- the run

    def _run_started(self, event: RunStarted) -> list[ReadableSpan]:
        self._start = event
        self._trace = trace_id(event.run_id)
        try:
            origin = datetime.fromisoformat(event.started_at).timestamp()
        except ValueError:
            origin = 0.0
        self._origin_ns = int(origin * 1e9)
        return []

    def _run_finished(self, event: RunFinished) -> list[ReadableSpan]:
        start = self._start
        assert start is not None
        workflow = start.preset or start.mode
        attributes: Attributes = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_WORKFLOW.value,
            gen_ai.GEN_AI_WORKFLOW_NAME: workflow,
            "baton.run_id": start.run_id,
            "baton.mode": start.mode,
            "baton.status": event.status,
            "baton.steps": len(start.steps),
            **_usage_attributes(event.usage),
        }
        if start.batch_id is not None:
            attributes["baton.batch_id"] = start.batch_id
        links: list[Link] = []
        if start.lineage is not None:  # another trace: the run this one resumes or re-runs
            parent = start.lineage.run_id
            context = SpanContext(trace_id(parent), run_span_id(parent), is_remote=True)
            links.append(Link(context, {BATON_LINK: start.lineage.kind}))
        if start.parent_run is not None and start.parent_step is not None:
            parent = start.parent_run
            context = SpanContext(
                trace_id(parent), step_span_id(parent, start.parent_step), is_remote=True
            )
            links.append(Link(context, {BATON_LINK: "started_by_step"}))
        status = None
        if event.status != "ok":
            status = Status(StatusCode.ERROR, self._copy(event.error or event.status))
        span = self._span(
            f"invoke_workflow {workflow}",
            run_span_id(start.run_id),
            None,
            0.0,
            event.ts,
            attributes,
            events=self._run_events,
            links=links,
            status=status,
        )
        self._start = None
        return [span]

    # ---------------------------------------------------------------------------- steps

    def _step_started(self, event: StepStarted) -> list[ReadableSpan]:
        if event.step is None:
            return []
        step = _Step(
            event.step,
            event.ts,
            event.agent,
            event.model,
            event.backend,
            event.task,
            event.ts,
            said=[event.task],
            graph=_graph_attributes(event.node, event.iteration, event.branch),
        )
        self._steps[event.step] = step
        return []

    def _step_of(self, event: Event) -> _Step | None:
        return self._steps.get(event.step) if event.step is not None else None

    def _step_finished(self, event: StepFinished) -> list[ReadableSpan]:
        step = self._steps.pop(event.step, None) if event.step is not None else None
        if step is None:
            return []
        assert self._start is not None
        run_id = self._start.run_id
        spans = [
            self._tool_span(step, call_id, tool, event.ts, "aborted", "")
            for call_id, tool in list(step.tools.items())
        ]
        step.tools.clear()
        attributes: Attributes = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
            gen_ai.GEN_AI_AGENT_NAME: step.agent,
            BATON_BACKEND: step.backend,
            BATON_STEP: step.number,
            **step.graph,
            "baton.status": event.status,
            **_usage_attributes(event.usage),
        }
        model = step.model or event.usage.model
        if model:
            attributes[gen_ai.GEN_AI_REQUEST_MODEL] = model
        if event.session:
            attributes[gen_ai.GEN_AI_CONVERSATION_ID] = self._copy(event.session)
        if event.reused_from:
            attributes["baton.reused_from"] = event.reused_from
        if self.capture_content:
            attributes[gen_ai.GEN_AI_INPUT_MESSAGES] = _messages("user", self._copy(step.task))
            attributes[gen_ai.GEN_AI_OUTPUT_MESSAGES] = _messages(
                "assistant", self._copy(event.output)
            )
        links: list[Link] = []
        previous = step.number - 1
        if self._start.mode == "chain" and previous in self._finished_steps:
            # The chain handed the previous step's answer to this one ({previous}).
            context = self._context(step_span_id(run_id, previous))
            links.append(Link(context, {BATON_LINK: "handoff"}))
        self._finished_steps.add(step.number)
        status = None
        if event.status != "ok":
            status = Status(StatusCode.ERROR, self._copy(event.error or event.status))
        spans.append(
            self._span(
                f"invoke_agent {step.agent}",
                step_span_id(run_id, step.number),
                run_span_id(run_id),
                step.start,
                event.ts,
                attributes,
                events=step.events,
                links=links,
                status=status,
            )
        )
        return spans

    def _user_message(self, event: UserMessage) -> list[ReadableSpan]:
        step = self._step_of(event)
        if step is not None:
            if event.delivery == "steer":
                step.said.append(event.text)
            attributes: Attributes = {"baton.delivery": event.delivery}
            if self.capture_content:
                attributes["baton.message"] = self._copy(event.text)
            step.events.append(self._event("baton.user_message", event.ts, attributes))
        return []

    def _retry(self, event: Retry) -> list[ReadableSpan]:
        step = self._step_of(event)
        if step is not None:
            attributes: Attributes = {"baton.attempt": event.attempt}
            attributes["baton.error"] = self._copy(event.error)
            step.events.append(self._event("baton.retry", event.ts, attributes))
        return []

    def _budget(self, event: BudgetAsked | BudgetAnswered) -> list[ReadableSpan]:
        if isinstance(event, BudgetAsked):
            attributes: Attributes = {
                "baton.budget.scope": event.scope,
                "baton.budget.kind": event.kind,
                "baton.budget.reason": self._copy(event.reason),
            }
        else:
            attributes = {"baton.budget.stopped": event.stopped}
            if event.max_cost is not None:
                attributes["baton.budget.max_cost"] = event.max_cost
            if event.max_tokens is not None:
                attributes["baton.budget.max_tokens"] = event.max_tokens
        step = self._step_of(event)
        where = step.events if step is not None else self._run_events
        where.append(self._event(f"baton.{event.type}", event.ts, attributes))
        return []

    def _log(self, event: Log) -> list[ReadableSpan]:
        if event.level in ("warning", "error"):
            step = self._step_of(event)
            where = step.events if step is not None else self._run_events
            attributes: Attributes = {"baton.level": event.level}
            attributes["baton.message"] = self._copy(event.message[:1_000])
            where.append(self._event("baton.log", event.ts, attributes))
        return []

    # ---------------------------------------------------------------------------- graph runs

    def _on_run(self, name: str, event: Event, attributes: Attributes) -> list[ReadableSpan]:
        """A graph event on the workflow span: a gate waits before its step starts, and a
        skipped step never starts, so no step span could hold them."""
        self._run_events.append(self._event(name, event.ts, attributes))
        return []

    def _gate_waiting(self, event: GateWaiting) -> list[ReadableSpan]:
        self._gates[event.gate_id] = event
        attributes = _set(
            {
                "baton.gate.id": event.gate_id,
                "baton.gate.node": event.node,
                "baton.gate.default": event.default,
                "baton.gate.handoff_length": len(event.handoff),
                BATON_STEP: event.step,
                "baton.gate.timeout_s": event.timeout_s,
            }
        )
        if self.capture_content:  # the question may quote what the steps said
            attributes["baton.gate.question"] = self._copy(event.question)
        return self._on_run("baton.gate.waiting", event, attributes)

    def _gate_decided(self, event: GateDecided) -> list[ReadableSpan]:
        waiting = self._gates.pop(event.gate_id, None)
        attributes = _set(
            {
                "baton.gate.id": event.gate_id,
                "baton.gate.decision": event.decision,
                "baton.gate.decided_by": event.by,
                "baton.gate.node": waiting.node if waiting is not None else None,
                BATON_STEP: event.step,
            }
        )
        options = waiting.options if waiting is not None else []
        if event.decision == "continue" and event.text is not None and event.text in options:
            attributes["baton.gate.picked"] = self._scrub(event.text)  # an attempt's name
        elif event.text is not None:
            attributes.update(self._person_text("baton.gate.edit", event.text))
        if event.note is not None:
            attributes.update(self._person_text("baton.gate.note", event.note))
        return self._on_run("baton.gate.decided", event, attributes)

    def _person_text(self, name: str, text: str) -> Attributes:
        """What a person wrote at a gate: its length always, the text itself only as message
        content (an edited hand-off is the next step's prompt)."""
        attributes: Attributes = {f"{name}_length": len(text)}
        if self.capture_content:
            attributes[name] = self._copy(text)
        return attributes

    def _step_skipped(self, event: StepSkipped) -> list[ReadableSpan]:
        condition = event.condition  # the preset's own expression, not message content
        attributes = _set(
            {
                **_graph_attributes(event.node, event.iteration, None),
                "baton.skip.reason": self._copy(event.reason),
                BATON_STEP: event.step,
                "baton.skip.condition": self._copy(condition) if condition is not None else None,
            }
        )
        return self._on_run("baton.step.skipped", event, attributes)

    def _loop_iteration(self, event: LoopIterationStarted) -> list[ReadableSpan]:
        attributes: Attributes = {
            "baton.loop.name": event.loop,
            "baton.loop.iteration": event.iteration,
        }
        return self._on_run("baton.loop.iteration", event, attributes)

    def _loop_finished(self, event: LoopFinished) -> list[ReadableSpan]:
        attributes: Attributes = {
            "baton.loop.name": event.loop,
            "baton.loop.iterations": event.iterations,
            "baton.loop.status": event.status,
            "baton.loop.summary": self._copy(event.summary),
        }
        return self._on_run("baton.loop.finished", event, attributes)

    def _best_of_picked(self, event: BestOfPicked) -> list[ReadableSpan]:
        attributes: Attributes = {
            "baton.best_of.node": event.node,
            "baton.best_of.winner": event.winner,
            "baton.best_of.picked_by": event.by,
        }
        return self._on_run("baton.best_of.picked", event, attributes)

    # ---------------------------------------------------------------------------- requests

    def _usage(self, event: Usage) -> list[ReadableSpan]:
        step = self._step_of(event)
        if step is None or event.parent_call_id is not None:
            return []  # a sub-agent's usage counts in the step's total, not as its request
        assert self._start is not None
        model = event.usage.model or step.model
        attributes: Attributes = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.CHAT.value,
            BATON_BACKEND: step.backend,
            **_usage_attributes(event.usage),
        }
        if step.model or model:
            attributes[gen_ai.GEN_AI_REQUEST_MODEL] = step.model or model or ""
        if event.usage.model:
            attributes[gen_ai.GEN_AI_RESPONSE_MODEL] = event.usage.model
        if self.capture_content:
            if step.said:
                said = "\n\n".join(step.said)
                attributes[gen_ai.GEN_AI_INPUT_MESSAGES] = _messages("user", self._copy(said))
            attributes[gen_ai.GEN_AI_OUTPUT_MESSAGES] = _messages(
                "assistant", self._copy("".join(step.text))
            )
        step.said, step.text = [], []
        chat = step.chats
        step.chats += 1
        span = self._span(
            f"chat {model}" if model else "chat",
            span_id(self._start.run_id, "chat", step.number, chat),
            step_span_id(self._start.run_id, step.number),
            step.boundary,
            event.ts,
            attributes,
        )
        step.boundary = event.ts
        return [span]

    # ---------------------------------------------------------------------------- tool calls

    def _tool_started(self, event: ToolCallStarted) -> list[ReadableSpan]:
        step = self._step_of(event)
        if step is None or event.parent_call_id is not None:
            return []
        tool = _Tool(event.tool, event.ts, event.arguments)
        for attributes, span_event in self._waiting.pop(event.call_id, []):
            tool.attributes.update(attributes)
            tool.events.append(span_event)
        step.tools[event.call_id] = tool
        return []

    def _tool_finished(self, event: ToolCallFinished) -> list[ReadableSpan]:
        step = self._step_of(event)
        if step is None:
            return []
        tool = step.tools.pop(event.call_id, None)
        if tool is None:
            return []
        step.boundary = max(step.boundary, event.ts)
        return [self._tool_span(step, event.call_id, tool, event.ts, event.status, event.result)]

    def _tool_span(
        self, step: _Step, call_id: str, tool: _Tool, end: float, status: str, result: str
    ) -> ReadableSpan:
        assert self._start is not None
        attributes: Attributes = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_NAME: tool.tool,
            gen_ai.GEN_AI_TOOL_CALL_ID: call_id,
            "baton.status": status,
            **tool.attributes,
        }
        if self.capture_content:
            arguments = json.dumps(tool.arguments, ensure_ascii=False, default=str)
            attributes[gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS] = self._copy(arguments)
            attributes[gen_ai.GEN_AI_TOOL_CALL_RESULT] = self._copy(result)
        return self._span(
            f"execute_tool {tool.tool}",
            span_id(self._start.run_id, "tool", step.number, call_id),
            step_span_id(self._start.run_id, step.number),
            tool.start,
            end,
            attributes,
            events=tool.events,
            status=Status(StatusCode.ERROR, _why(status, attributes)) if status != "ok" else None,
        )

    def _decided(self, event: Event, call_id: str | None, attrs: Attributes, name: str) -> None:
        """Put a gate's event (and its attributes) on the call's span, wherever it is."""
        span_event = self._event(name, event.ts, {k: v for k, v in attrs.items()})
        step = self._step_of(event)
        if call_id is not None and step is not None and call_id in step.tools:
            tool = step.tools[call_id]
            tool.attributes.update(attrs)
            tool.events.append(span_event)
        elif call_id is not None:
            self._waiting.setdefault(call_id, []).append((attrs, span_event))
        else:
            (step.events if step is not None else self._run_events).append(span_event)

    def _approval_requested(self, event: ApprovalRequested) -> list[ReadableSpan]:
        self._calls_of_requests[event.request_id] = event.call_id
        attributes: Attributes = {"baton.approval.asked": True}
        if event.rule:  # a rule quotes a command line, which may hold a token
            attributes[BATON_RULE] = self._scrub(event.rule)
        self._decided(event, event.call_id, attributes, "baton.approval.requested")
        return []

    def _approval_resolved(self, event: ApprovalResolved) -> list[ReadableSpan]:
        call_id = event.call_id or self._calls_of_requests.pop(event.request_id, None)
        attributes: Attributes = {BATON_DECISION: event.decision}
        if event.decided_by is not None:
            attributes[BATON_DECIDED_BY] = event.decided_by
        if event.rule:
            attributes[BATON_RULE] = self._scrub(event.rule)
        if event.added_rule:
            attributes["baton.approval.added_rule"] = self._scrub(event.added_rule)
        if event.reason and self.capture_content:
            attributes["baton.approval.reason"] = self._copy(event.reason)
        self._decided(event, call_id, attributes, "baton.approval.resolved")
        return []


def spans_of_run(
    events: Sequence[Event] | Any,
    *,
    capture_content: bool = False,
    scrub: Callable[[str], str] = lambda text: text,
) -> list[ReadableSpan]:
    """Every span of a saved run (what the live export sent, when it was on)."""
    builder = TraceBuilder(capture_content=capture_content, scrub=scrub)
    spans: list[ReadableSpan] = []
    for event in events:
        spans.extend(builder.feed(event))
    return spans + builder.close()
