"""The typed event stream: the one language spoken between backends, runs, the CLI and the GUI.

A live run, a saved run (``runs/<id>.jsonl``) and an imported pi or Claude Code transcript are
all sequences of these events, so one view model renders all three and a saved run reopens
by replaying its file.

Every event carries ``run_id``, ``step`` (the 0-based step index, ``None`` for run-level
events) and ``ts``: seconds since the run started, taken from a monotonic clock. The wall
clock appears once, in ``run_started.started_at``; that keeps timestamps ordered even when the
system clock jumps, and keeps replays meaningful (the architecture's "Events" asks for "a monotonic
timestamp";
an offset from the run's start is that, and survives being saved).

JSON round-trips are exact: ``event_from_json(event_to_json(e)) == e``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

RunMode = Literal["single", "parallel", "chain", "graph"]
Isolation = Literal["none", "worktree"]
StepStatus = Literal["ok", "error", "aborted"]
RunStatus = Literal["ok", "error", "aborted", "interrupted"]
"""``interrupted``: the process running the run ended first (written when the run is next read,
see :mod:`core.record.run_files`)."""


def compact_number(n: float) -> str:
    """``850`` → ``850``, ``1234`` → ``1.2k``, ``12345`` → ``12k``, ``2.5e6`` → ``2.5M``."""
    for limit, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= limit:
            value = n / limit
            text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
            return text.removesuffix(".0") + suffix
    return f"{n:.0f}"


class UsageStats(BaseModel):
    """Token and cost figures of one model response, a step, or a whole run.

    ``context_tokens`` and ``model`` describe the latest response, so adding keeps the newer
    value instead of summing. ``priced`` is False when some of the usage could not be priced
    (a model in no price table, :mod:`core.config.pricing`): ``cost`` then covers only the rest.
    """

    model_config = ConfigDict(frozen=True)

    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    model: str | None = None
    priced: bool = True

    def __add__(self, other: UsageStats) -> UsageStats:
        return UsageStats(
            turns=self.turns + other.turns,
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            cost=round(self.cost + other.cost, 10),
            context_tokens=other.context_tokens or self.context_tokens,
            model=other.model or self.model,
            priced=self.priced and other.priced,
        )

    def without_latest(self) -> UsageStats:
        """These figures as a part of someone else's total: counted, but not becoming the
        total's latest model or context size (a sub-agent's usage inside its step's)."""
        return self.model_copy(update={"model": None, "context_tokens": 0})

    def line(self) -> str:
        """The usage line (architecture: "Runner"): ``3 turns ↑1.2k ↓850 R12k W2.1k $0.0123 ctx:8.4k
        model``.

        Parts that are zero are left out, so a fresh step reads as nothing rather than noise.
        """
        parts: list[str] = []
        if self.turns:
            parts.append(f"{self.turns} turn{'s' if self.turns != 1 else ''}")
        if self.input:
            parts.append(f"↑{compact_number(self.input)}")
        if self.output:
            parts.append(f"↓{compact_number(self.output)}")
        if self.cache_read:
            parts.append(f"R{compact_number(self.cache_read)}")
        if self.cache_write:
            parts.append(f"W{compact_number(self.cache_write)}")
        if not self.priced:
            parts.append(f"≥${self.cost:.4f}" if self.cost else "$—")
        elif self.cost:
            parts.append(f"${self.cost:.4f}")
        if self.context_tokens:
            parts.append(f"ctx:{compact_number(self.context_tokens)}")
        if self.model:
            parts.append(self.model)
        return " ".join(parts)


class PlannedStep(BaseModel):
    """A step as the runner plans it before anything starts (tasks already substituted,
    except ``{previous}``, which only exists once the step before has finished)."""

    model_config = ConfigDict(frozen=True)

    agent: str
    task: str
    model: str | None = None
    backend: str = "openai"
    cwd: str
    node: str | None = None
    """The graph node this step is (``mode: graph``; architecture: "Graph pipelines")."""


class Lineage(BaseModel):
    """Where a resumed or re-run run comes from: the parent run and the first step this run
    requested again (0-based); the steps before it were reused from the parent, not requested."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    step: int
    kind: Literal["resume", "rerun", "continue", "follow_up"]
    """``continue``: the run's one step goes on with the conversation of the parent's ``step``.
    ``follow_up``: a new step acting on review comments (:mod:`core.run.review_comments`)."""


class WorktreeInfo(BaseModel):
    """Where an isolated run worked (kept in its ``run_started`` event)."""

    model_config = ConfigDict(frozen=True)

    path: str
    """The worktree's top folder."""
    branch: str
    base: str
    """The commit the branch started from."""
    repo: str
    """The person's checkout (the repository's main working folder)."""


class RunCaps(BaseModel):
    """The budget a run was started with, as its run file keeps it, so a resumed or re-run run
    keeps the caps (see :mod:`core.model.budget`, which owns the live ``Budget``); None: no cap."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_max_cost: float | None = None
    run_max_tokens: int | None = None
    step_max_cost: float | None = None
    step_max_tokens: int | None = None


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    step: int | None = None
    ts: float = 0.0


class RunStarted(_Event):
    type: Literal["run_started"] = "run_started"
    mode: RunMode
    preset: str | None = None
    args: list[str] = Field(default_factory=list)
    steps: list[PlannedStep]
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """The typed parameter values the run used (``N.name`` where steps differ)."""
    cwd: str
    started_at: str
    """Wall-clock start, ISO 8601 with timezone."""
    batch_id: str | None = None
    """The batch this run is one item of (``baton batch``, :mod:`core.batch`), if any."""
    batch_item: int | None = None
    """The item's 0-based row in the batch's inputs."""
    parent_run: str | None = None
    """The run whose step started this one (an agent typed ``baton run``), if any."""
    parent_step: int | None = None
    lineage: Lineage | None = None
    """Set on a resumed or re-run run (``baton runs resume|rerun``, the window's Resume)."""
    worktree: WorktreeInfo | None = None
    """Set when the run worked in its own git worktree (:mod:`core.workspace.worktrees`)."""
    budget: RunCaps | None = None
    graph: dict[str, Any] | None = None
    """A graph run's shape (``PipelineGraph.model_dump()``), so a saved run draws as it ran
    even after its preset file changed."""
    graph_steps: list[dict[str, Any]] | None = None
    """A graph run's steps and loops as the preset wrote them (``{"steps": …, "loops": …}``
    entries), so resume and re-run repeat the same graph."""
    graph_loops: list[dict[str, Any]] | None = None
    """The caps the run started with (absent: none, or a run saved before caps were kept)."""


class StepStarted(_Event):
    type: Literal["step_started"] = "step_started"
    agent: str
    task: str
    model: str | None = None
    backend: str = "openai"
    cwd: str
    reused_from: str | None = None
    node: str | None = None
    """The graph node this step runs (graph runs only)."""
    iteration: int | None = None
    """1-based iteration of the node's loop, when it is in one."""
    branch: str | None = None
    """Which attempt of a ``best_of`` node (``attempt#2``)."""
    """The run this step's result was copied from (no request was sent), if any."""


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str
    message_id: str | None = None
    """The model message this text belongs to, where the backend knows it: text of another
    message starts a new block instead of being glued to the last one."""
    parent_call_id: str | None = None
    """Set when a sub-agent wrote this (Claude Code's Task tool): the call that started it."""


class ThinkingDelta(_Event):
    type: Literal["thinking_delta"] = "thinking_delta"
    text: str
    message_id: str | None = None
    parent_call_id: str | None = None


class ToolCallStarted(_Event):
    type: Literal["tool_call_started"] = "tool_call_started"
    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parent_call_id: str | None = None
    """Set when a sub-agent makes this call: the call that started the sub-agent."""


class ToolCallOutput(_Event):
    """A streamed piece of a running tool's output (bash). ``replace`` means the chunk is the
    whole output so far (pi's cumulative ``partialResult``), not an addition."""

    type: Literal["tool_call_output"] = "tool_call_output"
    call_id: str
    chunk: str
    replace: bool = False


class ToolCallFinished(_Event):
    """``result`` is the full text as the model saw it; views truncate for display."""

    type: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    status: Literal["ok", "error", "aborted"]
    result: str = ""
    duration_ms: float | None = None


Decider = Literal["person", "rule", "policy", "run", "setting", "no_one", "cancel"]
"""Who decided an approval: a person; a named rule; a policy entry; an earlier "approve for
this run"; the run's approval setting (``--approve all|deny``); the no-terminal default (no
one to ask); the run being cancelled."""


class ApprovalRequested(_Event):
    type: Literal["approval_requested"] = "approval_requested"
    request_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    agent: str
    cwd: str
    rule: str | None = None
    """The rule that asked (``ask Bash(git push:*)``); None when the tool's policy asked."""


class ApprovalResolved(_Event):
    """How a call that needed a decision was decided, and by whom (the audit trail).

    A rule's or a policy entry's decision is recorded even though nobody was asked (then no
    ``approval_requested`` precedes it, and ``tool`` / ``call_id`` say which call it was)."""

    type: Literal["approval_resolved"] = "approval_resolved"
    request_id: str
    decision: Literal["approve", "approve_run", "deny"]
    reason: str | None = None
    automatic: bool = False
    """True when the policy or an earlier "approve for this run" answered, not a person."""
    decided_by: Decider | None = None
    rule: str | None = None
    """The rule or policy entry that decided (``allow Bash(git diff:*)``, ``policy bash``)."""
    updated_arguments: dict[str, Any] | None = None
    """The arguments as the person edited them: what actually ran."""
    added_rule: str | None = None
    """An "always allow in this project" rule the person added with this answer."""
    tool: str | None = None
    call_id: str | None = None


class Retry(_Event):
    """The model call failed and will be retried: what streamed since the last completed
    response belongs to a superseded attempt."""

    type: Literal["retry"] = "retry"
    attempt: int
    max_attempts: int | None = None
    delay_ms: float | None = None
    error: str


class Usage(_Event):
    """Usage of one model response (normally ``turns == 1``); steps and runs add them up."""

    type: Literal["usage"] = "usage"
    usage: UsageStats
    parent_call_id: str | None = None
    """Set for a sub-agent's usage: the call that started it (Claude Code's Task tool, pi's
    ``subagent`` tool). It counts in the step's total, but is not the step's model."""
    subagent: str | None = None
    """The sub-agent's name, where the backend says it (pi's subagent tool results)."""
    tool_calls: int | None = None
    """How many tool calls the sub-agent made, where the backend reports only a summary (pi);
    None: count the calls that carry ``parent_call_id`` (Claude Code)."""


class BudgetAsked(_Event):
    """A cap was reached before a request: the step waits for a person's answer (or, with
    nobody to ask, stops at once). See :mod:`core.model.budget`."""

    type: Literal["budget_asked"] = "budget_asked"
    scope: Literal["run", "step"]
    kind: Literal["cost", "tokens"]
    reason: str


class BudgetAnswered(_Event):
    """The answer to :class:`BudgetAsked`: the raised caps of that scope, or stopped."""

    type: Literal["budget_answered"] = "budget_answered"
    stopped: bool
    max_cost: float | None = None
    max_tokens: int | None = None


class StepFinished(_Event):
    type: Literal["step_finished"] = "step_finished"
    status: StepStatus
    output: str = ""
    """The step's final output: the last text block of the last assistant message."""
    error: str | None = None
    usage: UsageStats = Field(default_factory=UsageStats)
    structured: dict[str, Any] | None = None
    """The validated JSON result of an agent that declares ``output:``
    (:mod:`core.definitions.structured`)."""
    reused_from: str | None = None
    node: str | None = None
    """The graph node this step runs (graph runs only)."""
    iteration: int | None = None
    """1-based iteration of the node's loop, when it is in one."""
    branch: str | None = None
    """Which attempt of a ``best_of`` node (``attempt#2``)."""
    """The run this result was copied from, byte for byte (see :class:`Lineage`)."""
    session: str | None = None
    """The CLI's record of the conversation (Claude Code's session id, pi's session file), so
    it can be continued."""


class OutputFileWritten(_Event):
    """The step's final answer was also written to the file its agent names (``output: <file
    name>``, the pi-subagents meaning), or could not be (``error``)."""

    type: Literal["output_file_written"] = "output_file_written"
    path: str
    """Absolute: the working folder joined with the name the agent gave."""
    error: str | None = None


class FileChange(BaseModel):
    """One file a step (or a restore) changed. ``added`` / ``removed`` are line counts, None
    for a binary file."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Relative to :attr:`StepChanges.work_tree`, with forward slashes."""
    status: Literal["added", "modified", "deleted"]
    added: int | None = None
    removed: int | None = None


class StepChanges(_Event):
    """What a step changed in its folder, between two checkpoints
    (:mod:`core.workspace.checkpoints`):
    commits under ``refs/baton/<run>/...`` in the folder's repository (or Baton's shadow
    repository for a folder outside git). ``kind="restore"`` records a restore made after the
    run (appended to its file); ``step`` is then the step restored to the start of.
    ``kind="run"`` (``step`` None) is a parallel run's one pair for the whole run: its tasks
    share the folder at the same time, so their changes cannot be told apart."""

    type: Literal["step_changes"] = "step_changes"
    kind: Literal["step", "restore", "run"] = "step"
    before: str
    """The checkpoint commit before the step."""
    after: str
    """The checkpoint commit after the step."""
    head: str | None = None
    """The repository's HEAD commit when ``after`` was taken (None outside git)."""
    git_dir: str
    work_tree: str
    shadow: bool = False
    files: list[FileChange] = Field(default_factory=list)


class RunFinished(_Event):
    type: Literal["run_finished"] = "run_finished"
    status: RunStatus
    usage: UsageStats = Field(default_factory=UsageStats)
    error: str | None = None


class UserMessage(_Event):
    """What a person typed to a step while it ran (or to continue it once finished).

    Recorded when the runner hands it to the step, which is where it shows in the stream; the
    backend delivers it at the agent's next turn boundary, so nothing running is cancelled."""

    type: Literal["user_message"] = "user_message"
    text: str
    delivery: Literal["steer", "continue"] = "steer"
    """``steer``: to a running step, before its next model request (Baton's loop), through
    pi's RPC ``steer`` or on Claude Code's stream-json input; ``continue``: the task of a new
    step that continues a finished step's conversation."""


class MessagesDelivered(_Event):
    """Baton's own loop added the step's ``count`` oldest undelivered messages to the
    conversation here, just before a request: where they sit in it, so Continue rebuilds the
    conversation exactly (:mod:`core.run.continuation`). Not shown; the CLIs need none."""

    type: Literal["messages_delivered"] = "messages_delivered"
    count: int


class Log(_Event):
    """Something worth keeping that is not part of the conversation: a backend's stderr, a
    line a parser could not read, a diagnostic."""

    type: Literal["log"] = "log"
    level: Literal["debug", "info", "warning", "error"] = "info"
    message: str


class StepSkipped(_Event):
    """A graph node that did not run because its ``when:`` condition was false (or a step
    it needed did not run); ``step`` is the index it would have had."""

    type: Literal["step_skipped"] = "step_skipped"
    node: str
    condition: str | None = None
    reason: str
    iteration: int | None = None


class LoopIterationStarted(_Event):
    type: Literal["loop_iteration_started"] = "loop_iteration_started"
    loop: str
    iteration: int


LoopStatus = Literal["converged", "max_iterations", "error", "aborted"]


class LoopFinished(_Event):
    """A loop ended: its ``until`` held (``converged``), or it reached its bound — a status
    of the loop, not a failure of a step (``summary``: "stopped after 3 iterations: 1
    critical left")."""

    type: Literal["loop_finished"] = "loop_finished"
    loop: str
    iterations: int
    status: LoopStatus
    summary: str


GateDecision = Literal["continue", "edit", "send_back", "stop"]
GateDecider = Literal["person", "timeout", "default"]


class GateWaiting(_Event):
    """A person's checkpoint before ``node``: ``handoff`` is what would be handed on;
    ``options`` the decisions offered (``continue``, ``edit``, ``send_back``, ``stop``, or
    a best-of's attempt names when the person picks the winner). ``step`` is the index the
    gated step will run as (for a best-of pick, the node's first attempt)."""

    type: Literal["gate_waiting"] = "gate_waiting"
    gate_id: str
    node: str
    question: str
    handoff: str = ""
    timeout_s: float | None = None
    default: GateDecision = "stop"
    options: list[str] = Field(default_factory=list)


class GateDecided(_Event):
    """How a gate was answered. ``text`` is the hand-off as the person edited it (or a
    best-of winner picked); ``note`` what a send-back says to the step sent back to."""

    type: Literal["gate_decided"] = "gate_decided"
    gate_id: str
    decision: GateDecision
    text: str | None = None
    note: str | None = None
    by: GateDecider = "person"


class BestOfPicked(_Event):
    """Which attempt of a ``best_of`` node won (its changes are kept, the others' removed)."""

    type: Literal["best_of_picked"] = "best_of_picked"
    node: str
    winner: str
    by: Literal["judge", "person", "default"]


Event = Annotated[
    RunStarted
    | StepStarted
    | TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | ToolCallOutput
    | ToolCallFinished
    | ApprovalRequested
    | ApprovalResolved
    | Retry
    | Usage
    | BudgetAsked
    | BudgetAnswered
    | StepFinished
    | StepChanges
    | OutputFileWritten
    | RunFinished
    | UserMessage
    | MessagesDelivered
    | StepSkipped
    | LoopIterationStarted
    | LoopFinished
    | GateWaiting
    | GateDecided
    | BestOfPicked
    | Log,
    Field(discriminator="type"),
]

_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def event_to_json(event: Event) -> str:
    """One line of NDJSON (no trailing newline), non-ASCII kept readable."""
    return event.model_dump_json()


def event_from_json(line: str | bytes) -> Event:
    """Parse one line; raises ``pydantic.ValidationError`` on anything that is not an event."""
    return _EVENT_ADAPTER.validate_json(line)


def event_from_dict(data: dict[str, Any]) -> Event:
    return _EVENT_ADAPTER.validate_python(data)
