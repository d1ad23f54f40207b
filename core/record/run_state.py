"""Folding an event stream into the state of a run: steps, their items, status and usage.

One reducer serves every consumer that needs "what does this run look like now": the GUI's
view model (which keeps all items here and only the visible ones as widgets), the Markdown
export, and the run history. Applying the events of a saved file gives exactly the state the
live run had, which is what makes replay instant and faithful.

Items of a step, in order: text blocks, thinking blocks and tool calls. Consecutive deltas of
the same kind extend the last block; a tool call or a retry starts a new one. A ``retry``
marks the blocks of the failed attempt as superseded instead of dropping them.

Streamed text and tool output grow in a :class:`~core.record.text_buffer.TextBuffer` (pieces joined
only when the whole is read), never by ``+=``: a 5 MB output in 80-byte chunks folds in linear
time, and views read only what is new (:meth:`TextBuffer.since`) or the tail. Items are
slotted dataclasses: a long run holds tens of thousands of them.
"""

from __future__ import annotations

import json
from dataclasses import InitVar, dataclass, field
from typing import Any, Literal

from core.model.budget import BUDGET_STOP, budget_answer_text
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    BudgetAnswered,
    BudgetAsked,
    ContextLoaded,
    Event,
    Log,
    OutputFileWritten,
    Retry,
    RunFinished,
    RunStarted,
    StepChanges,
    StepFinished,
    StepSkipped,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolAttachment,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    UsageStats,
    UserMessage,
)
from core.record.run_names import RunOrigin
from core.record.text_buffer import TextBuffer
from core.tools.approval_describe import resolution_text

StepPhase = Literal["pending", "running", "waiting", "ok", "error", "aborted", "not_run"]


@dataclass(slots=True)
class TextBlock:
    kind: Literal["text", "thinking"]
    initial: InitVar[str] = ""
    superseded: bool = False
    message_id: str | None = None
    content: TextBuffer = field(init=False)
    """The text as it grew; read :attr:`text` for the whole, ``content`` for parts of it."""

    def __post_init__(self, initial: str) -> None:
        self.content = TextBuffer(initial)

    @property
    def text(self) -> str:
        return self.content.text


@dataclass(slots=True)
class ToolCall:
    call_id: str
    tool: str
    arguments: dict[str, object]
    started: float
    streamed: TextBuffer = field(default_factory=TextBuffer)
    """Output streamed while the call ran (bash); :attr:`output` is the whole of it."""
    status: Literal["running", "ok", "error", "aborted"] = "running"
    result: str = ""
    duration_ms: float | None = None
    superseded: bool = False
    awaiting_approval: bool = False
    """An approval request for this call is open (the step is ``waiting``)."""
    parent_call_id: str | None = None
    """The sub-agent call (Claude Code's Task) this call was made in; None: the step's agent."""
    attachments: list[ToolAttachment] = field(default_factory=list)
    """What the result holds beyond text (an MCP tool's images, structured content)."""

    @property
    def output(self) -> str:
        return self.streamed.text

    @property
    def key_argument(self) -> str:
        """The one argument that says what the call does, for a one-line summary."""
        for name in ("command", "path", "file_path", "pattern", "query", "action", "url"):
            value = self.arguments.get(name)
            if isinstance(value, str) and value:
                return value
        return _delegation(self.arguments) or next(
            (str(v) for v in self.arguments.values() if isinstance(v, str)),
            json.dumps(self.arguments, ensure_ascii=False) if self.arguments else "",
        )


def _delegation(arguments: dict[str, object]) -> str:
    """What a sub-agent call delegates: pi's ``subagent`` (``agent``/``task``, ``tasks`` or
    ``chain``) and Claude Code's ``Task`` (``subagent_type``/``description``)."""

    def one(item: object) -> str:
        if not isinstance(item, dict):
            return ""
        who = item.get("agent") or item.get("subagent_type")
        what = item.get("task") or item.get("description")
        return f"{who}: {what}" if isinstance(who, str) and isinstance(what, str) else ""

    if summary := one(arguments):
        return summary
    for name, joint in (("tasks", "; "), ("chain", " → ")):
        items = arguments.get(name)
        if isinstance(items, list) and items:
            return joint.join(part for item in items if (part := one(item)))
    return ""


@dataclass(slots=True)
class Notice:
    """A retry, an approval, a log line or what a person said to the step, shown inline in
    the step's stream."""

    kind: Literal["retry", "approval", "budget", "log", "message"]
    text: str
    level: str = "info"


Item = TextBlock | ToolCall | Notice


@dataclass
class StepState:
    index: int
    agent: str
    task: str = ""
    model: str | None = None
    backend: str = ""
    folder: str = ""
    reused_from: str | None = None
    """The run this step's answer was copied from (resume, re-run from a step)."""
    node: str | None = None
    """The graph node this step ran (graph runs; architecture: "Graph pipelines")."""
    iteration: int | None = None
    branch: str | None = None
    structured: dict[str, Any] | None = None
    """The step's validated JSON result, if its agent declares ``output:``."""
    changes: StepChanges | None = None
    """What the step changed in its folder (:mod:`core.workspace.checkpoints`), once it is
    recorded."""
    output_file: OutputFileWritten | None = None
    """The file its answer was also written to (``output: <file name>``), or why not."""
    context: ContextLoaded | None = None
    """The project context files and skills Baton's loop put in its system prompt."""
    """The step's working folder when it is not the run's ("" when it is)."""
    phase: StepPhase = "pending"
    items: list[Item] = field(default_factory=list)
    usage: UsageStats = field(default_factory=UsageStats)
    output: str = ""
    error: str | None = None
    started: float | None = None
    finished: float | None = None
    pending_approvals: set[str] = field(default_factory=set)
    approval_requests: dict[str, ApprovalRequested] = field(default_factory=dict)
    """Pending approval requests by id: which tool call each one holds up."""
    calls: dict[str, ToolCall] = field(default_factory=dict, repr=False)
    """Tool calls by id (the newest of a reused id): output chunks find theirs at once."""
    subagents: dict[tuple[str, str], UsageStats] = field(default_factory=dict)
    """Usage of the sub-agents this step's agent ran, by (starting call id, name or "")
    (:mod:`core.history.subagents` reads them as rows)."""
    subagent_tool_calls: dict[tuple[str, str], int] = field(default_factory=dict)
    """Tool-call counts the backend reported for those sub-agents (pi)."""

    def open_calls(self) -> list[ToolCall]:
        return [i for i in self.items if isinstance(i, ToolCall) and i.status == "running"]

    def text_since_last_tool_call(self) -> str:
        """The answer so far: text after the last tool call, superseded attempts left out
        (what a step cut short hands on as its output)."""
        parts: list[str] = []
        for item in reversed(self.items):
            if isinstance(item, ToolCall):
                break
            if isinstance(item, TextBlock) and item.kind == "text" and not item.superseded:
                parts.append(item.text)
        return "".join(reversed(parts))

    def tool_call(self, call_id: str) -> ToolCall | None:
        return self.calls.get(call_id)


@dataclass
class RunState:
    run_id: str = ""
    mode: str = "single"
    preset: str | None = None
    args: list[str] = field(default_factory=list)
    params: dict[str, str | int | float | bool] = field(default_factory=dict)
    cwd: str = ""
    started_at: str = ""
    origin: str = ""
    """Where the run came from, in words ("resumed from run X, at step 2"), if anywhere."""
    status: Literal["running", "ok", "error", "aborted", "interrupted"] = "running"
    error: str | None = None
    usage: UsageStats = field(default_factory=UsageStats)
    steps: list[StepState] = field(default_factory=list)
    elapsed: float = 0.0
    events: int = 0
    checkpoints: list[StepChanges] = field(default_factory=list)
    """Every ``step_changes`` in order, restores included: the last is the folder's latest
    recorded state."""

    def progress_line(self) -> str:
        """``2/3 done, 1 running`` — the parallel progress line (architecture: "Runner")."""
        done = sum(s.phase in ("ok", "error", "aborted") for s in self.steps)
        running = sum(s.phase in ("running", "waiting") for s in self.steps)
        line = f"{done}/{len(self.steps)} done"
        return f"{line}, {running} running" if running else line

    def usage_by_agent(self) -> dict[str, UsageStats]:
        """Usage summed per agent (the index keeps it for History's charts)."""
        totals: dict[str, UsageStats] = {}
        for step in self.steps:
            totals[step.agent] = totals.get(step.agent, UsageStats()) + step.usage
        return totals

    def stopped_at_budget(self) -> bool:
        """The run failed only because a step reached a cap that was not raised — what the
        budget (and the person, when asked) chose, not something that went wrong."""
        failed = [s for s in self.steps if s.phase == "error"]
        return (
            self.status == "error"
            and bool(failed)
            and all((s.error or "").startswith(BUDGET_STOP) for s in failed)
        )

    def step(self, index: int | None) -> StepState | None:
        if index is None or not 0 <= index < len(self.steps):
            return None
        return self.steps[index]

    def apply(self, event: Event) -> StepState | None:
        """Fold one event in; returns the step it changed (None for run-level changes)."""
        self.events += 1
        if event.ts > self.elapsed:
            self.elapsed = event.ts
        if isinstance(event, STREAMED_EVENTS):
            # Appended without walking the chain of isinstance tests below (half the cost of
            # folding one).
            step = self.step(event.step)
            if step is not None:
                _append_streamed(step, event)
            return step
        if isinstance(event, RunStarted):
            self._start(event)
            return None
        if isinstance(event, RunFinished):
            self.status = event.status
            self.error = event.error
            self.usage = event.usage
            for step in self.steps:
                if step.phase == "pending":
                    step.phase = "not_run"
            return None
        if isinstance(event, StepChanges):
            self.checkpoints.append(event)
        if isinstance(event, StepStarted | StepSkipped | StepFinished) and event.step is not None:
            self._grow_to(event.step, event)
        changed = self.step(event.step)
        if changed is None:
            return None
        _apply_to_step(changed, event)
        if isinstance(event, Usage):
            part = event.usage if event.parent_call_id is None else event.usage.without_latest()
            self.usage = self.usage + part
        return changed

    def _grow_to(self, index: int, event: StepStarted | StepSkipped | StepFinished) -> None:
        """A graph run adds a step per loop iteration and per best-of attempt beyond the
        planned ones: the first event of such a step makes its place."""
        node = event.node
        planned = next((s for s in self.steps if s.node is not None and s.node == node), None)
        agent = event.agent if isinstance(event, StepStarted) else ""
        while len(self.steps) <= index:
            state = StepState(index=len(self.steps), agent=agent)
            if planned is not None:  # an iteration or attempt of a planned node: its agent
                state.agent = agent or planned.agent
                state.task, state.model, state.backend = (
                    planned.task,
                    planned.model,
                    planned.backend,
                )
                state.folder = planned.folder
            self.steps.append(state)

    def _start(self, event: RunStarted) -> None:
        self.run_id = event.run_id
        self.mode = event.mode
        self.preset = event.preset
        self.args = list(event.args)
        self.params = dict(event.params)
        self.cwd = event.cwd
        self.started_at = event.started_at
        origin = RunOrigin.of(event)
        self.origin = origin.describe() if origin is not None else ""
        self.steps = [
            StepState(
                index=i,
                agent=s.agent,
                task=s.task,
                model=s.model,
                backend=s.backend,
                folder="" if s.cwd == event.cwd else s.cwd,
                node=s.node,
            )
            for i, s in enumerate(event.steps)
        ]


STREAMED_EVENTS = (TextDelta, ThinkingDelta, ToolCallOutput)
"""Pieces of a step's words or of a call's output: nine events in ten. Each changes its step's
items and nothing else (no phase, no graph node), which lets the fold and the views that follow
it take them on a short path."""


def _append_streamed(step: StepState, event: TextDelta | ThinkingDelta | ToolCallOutput) -> None:
    """A piece joins the text or output it continues, or opens a block of its own."""
    if isinstance(event, ToolCallOutput):
        call = step.calls.get(event.call_id)
        if call is None:
            return
        if event.replace:
            call.streamed.replace(event.chunk)
        else:
            call.streamed.append(event.chunk)
        return
    if event.parent_call_id is not None:  # a sub-agent's words: the live output of its call
        parent = step.calls.get(event.parent_call_id)
        if parent is not None and isinstance(event, TextDelta):
            parent.streamed.append(event.text)
        return
    kind: Literal["text", "thinking"] = "text" if isinstance(event, TextDelta) else "thinking"
    items = step.items
    last = items[-1] if items else None
    if (
        type(last) is TextBlock
        and last.kind == kind
        and not last.superseded
        and last.message_id == event.message_id
    ):
        last.content.append(event.text)
    else:
        items.append(TextBlock(kind, event.text, message_id=event.message_id))


def _apply_to_step(step: StepState, event: Event) -> None:
    if isinstance(event, StepStarted):
        step.phase = "running"
        step.task = event.task
        step.model = event.model or step.model
        step.backend = event.backend
        step.started = event.ts
        step.reused_from = event.reused_from
        step.agent = event.agent or step.agent
        step.node, step.iteration, step.branch = event.node, event.iteration, event.branch
    elif isinstance(event, ToolCallStarted):
        started = ToolCall(event.call_id, event.tool, dict(event.arguments), event.ts)
        started.parent_call_id = event.parent_call_id
        step.items.append(started)
        step.calls[event.call_id] = started
    elif isinstance(event, ToolCallFinished):
        call = step.tool_call(event.call_id)
        if call is not None:
            call.status = event.status
            call.result = event.result
            call.attachments = list(event.attachments)
            call.duration_ms = (
                event.duration_ms
                if event.duration_ms is not None
                else round((event.ts - call.started) * 1000, 1)
            )
    elif isinstance(event, ApprovalRequested):
        step.pending_approvals.add(event.request_id)
        step.approval_requests[event.request_id] = event
        call = step.tool_call(event.call_id)
        if call is not None:
            call.awaiting_approval = True
        step.phase = "waiting"
    elif isinstance(event, ApprovalResolved):
        step.pending_approvals.discard(event.request_id)
        if not step.pending_approvals and step.phase == "waiting":
            step.phase = "running"
        request = step.approval_requests.pop(event.request_id, None)
        subject = request.tool if request is not None else event.tool or event.request_id
        call_id = request.call_id if request is not None else event.call_id
        call = step.tool_call(call_id) if call_id is not None else None
        if call is not None:
            call.awaiting_approval = False
            if event.updated_arguments is not None:  # what actually ran
                call.arguments = dict(event.updated_arguments)
        level = "error" if event.decision == "deny" else "info"
        text = f"{subject} — {resolution_text(event)}"
        step.items.append(Notice("approval", text, level))
    elif isinstance(event, BudgetAsked):
        step.phase = "waiting"
        step.items.append(Notice("budget", f"budget reached: {event.reason}", "warning"))
    elif isinstance(event, BudgetAnswered):
        if step.phase == "waiting":
            step.phase = "running"
        step.items.append(Notice("budget", budget_answer_text(event), "info"))
    elif isinstance(event, Retry):
        _supersede_current_attempt(step)
        limit = f"/{event.max_attempts}" if event.max_attempts else ""
        step.items.append(
            Notice("retry", f"retry {event.attempt}{limit}: {event.error}", "warning")
        )
    elif isinstance(event, Usage) and event.parent_call_id is not None:
        step.usage = step.usage + event.usage.without_latest()
        key = (event.parent_call_id, event.subagent or "")
        step.subagents[key] = step.subagents.get(key, UsageStats()) + event.usage
        if event.tool_calls is not None:
            step.subagent_tool_calls[key] = event.tool_calls
    elif isinstance(event, Usage):
        step.usage = step.usage + event.usage
        step.model = event.usage.model or step.model
    elif isinstance(event, StepSkipped):
        step.phase = "not_run"
        step.node, step.iteration = event.node, event.iteration
        condition = f" ({event.condition})" if event.condition else ""
        step.error = f"skipped: {event.reason}{condition}"
    elif isinstance(event, StepFinished):
        step.phase = event.status
        step.output = _one_copy(step, event.output)
        step.structured = event.structured
        step.error = event.error
        step.usage = event.usage if event.usage.turns or not step.usage.turns else step.usage
        step.finished = event.ts
        step.pending_approvals.clear()
        for request in step.approval_requests.values():
            if (call := step.tool_call(request.call_id)) is not None:
                call.awaiting_approval = False
        step.approval_requests.clear()
    elif isinstance(event, UserMessage):
        step.items.append(Notice("message", event.text))
    elif isinstance(event, StepChanges) and event.kind == "step":
        step.changes = event
    elif isinstance(event, OutputFileWritten):
        step.output_file = event
    elif isinstance(event, ContextLoaded):
        step.context = event
    elif isinstance(event, Log) and event.level != "debug":
        # Debug lines (events a backend recognised but does not map, say) stay in the run
        # file for diagnosis; a person watching the run does not need them.
        step.items.append(Notice("log", event.message, event.level))


def _one_copy(step: StepState, output: str) -> str:
    """The step's answer, as one copy: it is usually its last text block word for word, and
    a 2 MB answer would otherwise be held twice (the streamed block and the ending's output).
    The lengths are compared first; the block is joined only when they match."""
    last = step.items[-1] if step.items else None
    if (
        output
        and isinstance(last, TextBlock)
        and last.kind == "text"
        and len(last.content) == len(output)
        and last.text == output
    ):
        return last.text
    return output


def _supersede_current_attempt(step: StepState) -> None:
    """Mark everything since the last finished tool call or notice as a failed attempt."""
    for item in reversed(step.items):
        if isinstance(item, Notice) or (isinstance(item, ToolCall) and item.status != "running"):
            break
        if isinstance(item, TextBlock | ToolCall):
            item.superseded = True


def fold(events: list[Event]) -> RunState:
    state = RunState()
    for event in events:
        state.apply(event)
    return state
