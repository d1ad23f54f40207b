"""Folding events into run state, and the Markdown export built on it."""

from __future__ import annotations

import time

import pytest

from core.history.run_export import run_to_markdown
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    PlannedStep,
    Retry,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    UsageStats,
    event_from_json,
    event_to_json,
)
from core.record.run_state import Notice, TextBlock, ToolCall, fold

RUN = "r1"


def sample_run() -> list[Event]:
    plan = [
        PlannedStep(agent="scout", task="find", cwd="/w"),
        PlannedStep(agent="worker", task="do", cwd="/w"),
    ]
    return [
        RunStarted(
            run_id=RUN,
            mode="chain",
            preset="implement",
            args=["x"],
            steps=plan,
            cwd="/w",
            started_at="2026-12-03T10:00:00+00:00",
        ),
        StepStarted(run_id=RUN, step=0, ts=0.1, agent="scout", task="find", model="m", cwd="/w"),
        ThinkingDelta(run_id=RUN, step=0, ts=0.2, text="hmm "),
        ThinkingDelta(run_id=RUN, step=0, ts=0.3, text="ok"),
        TextDelta(run_id=RUN, step=0, ts=0.4, text="Looking"),
        Retry(run_id=RUN, step=0, ts=0.5, attempt=1, max_attempts=3, error="HTTP 500"),
        TextDelta(run_id=RUN, step=0, ts=0.6, text="Let me look."),
        ToolCallStarted(
            run_id=RUN, step=0, ts=0.7, call_id="c1", tool="bash", arguments={"command": "ls -la"}
        ),
        ApprovalRequested(
            run_id=RUN,
            step=0,
            ts=0.7,
            request_id="a1",
            call_id="c1",
            tool="bash",
            arguments={"command": "ls -la"},
            agent="scout",
            cwd="/w",
        ),
        ApprovalResolved(run_id=RUN, step=0, ts=0.8, request_id="a1", decision="approve"),
        ToolCallOutput(run_id=RUN, step=0, ts=0.9, call_id="c1", chunk="a\n"),
        ToolCallOutput(run_id=RUN, step=0, ts=1.0, call_id="c1", chunk="b\n"),
        ToolCallFinished(run_id=RUN, step=0, ts=1.2, call_id="c1", status="ok", result="a\nb\n"),
        TextDelta(run_id=RUN, step=0, ts=1.3, text="## Found\n\n`a` and `b`"),
        Usage(
            run_id=RUN,
            step=0,
            ts=1.4,
            usage=UsageStats(turns=2, input=1200, output=850, cost=0.0123, model="m"),
        ),
        StepFinished(
            run_id=RUN,
            step=0,
            ts=1.5,
            status="ok",
            output="## Found\n\n`a` and `b`",
            usage=UsageStats(turns=2, input=1200, output=850, cost=0.0123, model="m"),
        ),
        StepStarted(run_id=RUN, step=1, ts=1.6, agent="worker", task="do", cwd="/w"),
        StepFinished(run_id=RUN, step=1, ts=1.7, status="error", error="boom"),
        RunFinished(
            run_id=RUN,
            ts=1.8,
            status="error",
            error="Chain stopped at step 2 (worker): boom",
            usage=UsageStats(turns=2, input=1200, output=850, cost=0.0123, model="m"),
        ),
    ]


def test_every_event_round_trips_through_json_exactly() -> None:
    for event in sample_run():
        assert event_from_json(event_to_json(event)) == event


def test_fold_builds_steps_items_and_phases() -> None:
    state = fold(sample_run())
    scout, worker = state.steps
    assert (scout.phase, worker.phase, state.status) == ("ok", "error", "error")
    kinds = [type(item).__name__ for item in scout.items]
    assert kinds == [
        "TextBlock",
        "TextBlock",
        "Notice",
        "TextBlock",
        "ToolCall",
        "Notice",
        "TextBlock",
    ]
    thinking, superseded = scout.items[0], scout.items[1]
    assert isinstance(thinking, TextBlock) and thinking.text == "hmm ok"
    assert isinstance(superseded, TextBlock) and superseded.superseded
    call = scout.items[4]
    assert isinstance(call, ToolCall)
    assert (call.output, call.status, call.key_argument) == ("a\nb\n", "ok", "ls -la")
    assert call.duration_ms == 500.0
    assert scout.usage.line() == "2 turns ↑1.2k ↓850 $0.0123 m"
    assert state.usage.turns == 2


def test_waiting_phase_while_an_approval_is_pending() -> None:
    events = sample_run()
    state = fold(events[:9])
    phases = [state.steps[0].phase]
    state.apply(events[9])
    phases.append(state.steps[0].phase)
    assert phases == ["waiting", "running"]
    assert isinstance(state.steps[0].items[-1], Notice)


def test_cumulative_output_replaces() -> None:
    events = [
        *sample_run()[:8],
        ToolCallOutput(run_id=RUN, step=0, ts=1, call_id="c1", chunk="line 1", replace=True),
        ToolCallOutput(
            run_id=RUN, step=0, ts=1, call_id="c1", chunk="line 1\nline 2", replace=True
        ),
    ]
    call = fold(events).steps[0].items[-1]
    assert isinstance(call, ToolCall) and call.output == "line 1\nline 2"


def test_streamed_pieces_join_their_block_or_open_a_new_one() -> None:
    """Answers' words are the fold's most frequent events (folded on a short path): each
    joins the block it continues, or opens one — a new message, after thinking, after a
    superseded attempt; a sub-agent's words are its call's output; a piece for a call or
    step that does not exist changes nothing."""
    plan = [PlannedStep(agent="scout", task="find", cwd="/w")]

    def text(words: str, message: str | None = "m1", parent: str | None = None) -> TextDelta:
        return TextDelta(
            run_id=RUN, step=0, ts=2, text=words, message_id=message, parent_call_id=parent
        )

    events: list[Event] = [
        RunStarted(
            run_id=RUN, mode="chain", steps=plan, cwd="/w", started_at="2026-12-03T10:00:00Z"
        ),
        StepStarted(run_id=RUN, step=0, ts=1, agent="scout", task="find", model="m", cwd="/w"),
        text("Hello "),
        text("world"),
        ThinkingDelta(run_id=RUN, step=0, ts=2, text="hmm", message_id="m1"),
        text("After thinking"),
        text("Second message", message="m2"),
        Retry(run_id=RUN, step=0, ts=3, attempt=2, error="overloaded"),
        text(" again", message="m2"),
        ToolCallStarted(
            run_id=RUN, step=0, ts=4, call_id="c1", tool="subagent", arguments={"agent": "x"}
        ),
        text("sub-agent words", parent="c1"),
        text("words of a call that never started", parent="c9"),
        ToolCallOutput(run_id=RUN, step=0, ts=5, call_id="c9", chunk="nobody's output"),
        TextDelta(run_id=RUN, step=7, ts=5, text="a step that does not exist"),
    ]
    state = fold(events)

    blocks = [
        (i.kind, i.text, i.superseded) for i in state.steps[0].items if isinstance(i, TextBlock)
    ]
    assert blocks == [  # a retry supersedes the whole attempt before it
        ("text", "Hello world", True),
        ("thinking", "hmm", True),
        ("text", "After thinking", True),
        ("text", "Second message", True),
        ("text", " again", False),
    ]
    call = state.steps[0].calls["c1"]
    assert call.output == "sub-agent words"
    assert state.events == len(events) and state.elapsed == 5


def test_parallel_progress_line() -> None:
    plan = [PlannedStep(agent="a", task="t", cwd="/") for _ in range(3)]
    state = fold(
        [
            RunStarted(run_id=RUN, mode="parallel", steps=plan, cwd="/", started_at="x"),
            StepStarted(run_id=RUN, step=0, agent="a", task="t", cwd="/"),
            StepStarted(run_id=RUN, step=1, agent="a", task="t", cwd="/"),
            StepFinished(run_id=RUN, step=0, status="ok"),
            StepFinished(run_id=RUN, step=1, status="error"),
            StepStarted(run_id=RUN, step=2, agent="a", task="t", cwd="/"),
        ]
    )
    assert state.progress_line() == "2/3 done, 1 running"


def test_markdown_export_shows_steps_tools_and_errors() -> None:
    text = run_to_markdown(sample_run())
    assert text.startswith("# implement x\n")
    assert "## Step 1: scout — ok" in text
    assert "- ✓ **bash** `ls -la` (500 ms)" in text
    assert "## Found" in text
    assert "Looking" not in text  # the superseded attempt is not part of the answer
    assert "## Step 2: worker — error" in text and "**Error:** boom" in text
    assert "Chain stopped at step 2 (worker): boom" in text


def test_debug_logs_stay_in_the_file_but_not_in_the_view() -> None:
    events = [
        *sample_run()[:2],
        Log(run_id=RUN, step=0, level="debug", message="unmapped event 'status'"),
        Log(run_id=RUN, step=0, level="warning", message="stderr: rate limited"),
    ]
    notices = [item for item in fold(events).steps[0].items if isinstance(item, Notice)]
    assert [n.text for n in notices] == ["stderr: rate limited"]


def test_folding_on_a_worker_offers_the_gil_as_it_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Left alone, the folding thread kept the GIL for up to 150 ms and the window froze."""
    from core.history import run_reading

    offered: list[float] = []
    monkeypatch.setattr(time, "sleep", offered.append)  # run_reading's way to offer the GIL
    events = sample_run() * 300
    run_reading.fold_run(events, share_gil=True)
    assert len(offered) == -(-len(events) // run_reading.YIELD_EVERY)
    offered.clear()
    run_reading.fold_run(events)
    assert offered == []
