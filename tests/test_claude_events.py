"""The stream-json parser over every real Claude Code transcript in ``tests/fixtures/claude/``
(recorded by ``tests/fixtures/record.py``) and over crafted lines for what the captures lack
(two results, retries, subagents, garbage)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from core.backends.claude_events import ClaudeEventParser, baton_tool_name, usage_of_result
from core.history.run_export import run_to_markdown
from core.history.run_import.claude import looks_like_claude, transcript_to_events
from core.history.run_import.formats import import_transcript, one_step_run
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    Retry,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
    event_from_json,
    event_to_json,
)
from core.record.run_state import StepState, TextBlock, ToolCall, fold
from tests.fake_claude import assistant, init, result, stream, streamed_text, tool_result, tool_use


def _transcripts(fixtures: Path) -> list[Path]:
    files = sorted((fixtures / "claude").glob("*/*.jsonl"))
    assert files, "tests/fixtures/claude holds no transcripts"
    return files


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _result_line(path: Path) -> dict[str, Any]:
    """The last ``result`` the CLI printed (conversation files wrap it in ``msg``)."""
    found: dict[str, Any] | None = None
    for line in _lines(path):
        data = json.loads(line)
        data = data.get("msg", data)
        if data.get("type") == "result":
            found = data
    assert found is not None
    return found


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def _total(events: list[Event]) -> UsageStats:
    total = UsageStats()
    for event in _of(events, Usage):
        total = total + event.usage
    return total


def _text(events: list[Event]) -> str:
    return "".join(e.text for e in _of(events, TextDelta))


def one_step(events: list[Event]) -> list[Event]:
    end = StepFinished(run_id="r", step=0, ts=0, status="ok", output="")
    return one_step_run(
        run_id="r",
        agent="claude",
        task="t",
        model=None,
        backend="claude",
        cwd="/w",
        started_at="2026-12-01T00:00:00",
        body=events,
        finished=end,
    )


def fold_step(events: list[Event]) -> StepState:
    return fold(one_step(events)).steps[0]


def _feed(parser: ClaudeEventParser, lines: list[dict[str, Any]]) -> list[Event]:
    events: list[Event] = []
    for line in lines:
        events += parser.feed(json.dumps(line))
    return events


def _load(fixtures: Path, name: str) -> list[Event]:
    return transcript_to_events(_lines(fixtures / "claude" / name))


# ------------------------------------------------------------------------------- every capture


def test_every_transcript_ends_as_its_result_says(fixtures_dir: Path) -> None:
    for path in _transcripts(fixtures_dir):
        events = transcript_to_events(_lines(path))
        final = _result_line(path)
        finished = events[-1]
        assert isinstance(finished, StepFinished), path
        assert _of(events, StepFinished) == [finished], path
        # 2.0.76 ends a turn-limited run with is_error false: still an error, never an answer
        failed = final["is_error"] or final["subtype"] == "error_max_turns"
        assert finished.status == ("error" if failed else "ok"), path
        if not failed:
            assert finished.output == final["result"], path
        # Usage events add up to the result's totals exactly (cost, cache, turns).
        total = _total(events)
        expected = usage_of_result(final, None)
        figures = ("turns", "input", "output", "cache_read", "cache_write")
        for name in figures:
            assert getattr(total, name) == getattr(expected, name), (path, name)
        assert total.cost == pytest.approx(expected.cost, abs=1e-9), path
        assert finished.usage == total, path
        # Every started call is finished; every event survives a JSON round trip.
        started = {e.call_id for e in _of(events, ToolCallStarted)}
        assert started == {e.call_id for e in _of(events, ToolCallFinished)}, path
        for event in events:
            assert event_from_json(event_to_json(event)) == event


def test_every_transcript_imports_as_a_claude_run(fixtures_dir: Path) -> None:
    for path in _transcripts(fixtures_dir):
        events = import_transcript(path)
        start, step, finished, end = events[0], events[1], events[-2], events[-1]
        assert isinstance(start, RunStarted) and start.mode == "single", path
        assert isinstance(step, StepStarted), path
        assert (step.agent, step.backend) == ("claude", "claude"), path
        assert isinstance(finished, StepFinished) and isinstance(end, RunFinished), path
        assert end.status == finished.status, path
        assert len({e.run_id for e in events}) == 1, path


def test_conversation_import_has_the_task_and_its_own_times(fixtures_dir: Path) -> None:
    path = fixtures_dir / "claude/claude-2.1.332/host-deny.conversation.jsonl"
    events = import_transcript(path)
    step = events[1]
    assert isinstance(step, StepStarted)
    assert step.task == "Copy hello.txt to copy.txt"
    assert step.model == "claude-sonnet-4-5"
    assert step.cwd == "/tmp/claude-capture-2.1.332/work"
    last = json.loads(_lines(path)[-1])
    times = [e.ts for e in events[2:]]
    assert times == sorted(times) and times[-1] == pytest.approx(last["t"])  # its own clock


def test_stdout_import_takes_times_from_message_timestamps(fixtures_dir: Path) -> None:
    path = fixtures_dir / "claude/claude-2.1.332/read.jsonl"
    events = import_transcript(path)
    stamped = [json.loads(line) for line in _lines(path) if '"timestamp"' in line]
    first = datetime.fromisoformat(stamped[0]["timestamp"].replace("Z", "+00:00"))
    answered = datetime.fromisoformat(stamped[-1]["timestamp"].replace("Z", "+00:00"))
    start = events[0]
    assert isinstance(start, RunStarted)
    assert start.started_at == first.replace(microsecond=0).isoformat()
    answer = [e for e in events if isinstance(e, TextDelta)][-1]
    assert answer.ts == pytest.approx((answered - first).total_seconds(), abs=1e-3)


def test_detection_needs_claude_lines() -> None:
    assert looks_like_claude([None, init()])
    assert looks_like_claude([{"t": 0.0, "dir": "host->cli", "msg": {"type": "user"}}])
    assert not looks_like_claude([{"type": "session", "cwd": "/", "version": 3}])
    assert not looks_like_claude([{"type": "system", "subtype": "init"}, None])


def test_read_transcript_shows_text_tool_call_and_answer(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.1.332/read.jsonl")
    started = _of(events, ToolCallStarted)
    assert [(s.tool, list(s.arguments)) for s in started] == [("read", ["file_path"])]
    finished = _of(events, ToolCallFinished)
    assert finished[0].status == "ok"
    assert "Hello from the fixture file." in finished[0].result
    assert _text(events).startswith("I'll read the file first.## Summary")
    usage = _of(events, Usage)
    assert usage[0].usage.model == "claude-sonnet-4-5"
    assert usage[0].usage.turns == 1
    result = _result_line(fixtures_dir / "claude" / "claude-2.1.332" / "read.jsonl")
    assert _total(events).cost == pytest.approx(result["total_cost_usd"])


def test_the_older_cli_counts_turns_from_the_result(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.0.76/read.jsonl")
    result = _result_line(fixtures_dir / "claude" / "claude-2.0.76" / "read.jsonl")
    assert _total(events).turns == result["num_turns"] == 2  # two API messages
    assert events[-1].status == "ok"  # type: ignore[union-attr]


def test_api_error_500_is_a_retry_then_a_failed_step(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.1.332/error500.jsonl")
    retries = _of(events, Retry)
    assert [(r.attempt, r.max_attempts) for r in retries] == [(1, 1)]
    assert retries[0].delay_ms is not None and retries[0].delay_ms > 0  # the CLI's own jitter
    assert "500" in retries[0].error
    finished = events[-1]
    assert isinstance(finished, StepFinished)
    assert finished.status == "error"
    assert finished.error is not None and finished.error.startswith("API Error: 500")
    assert _text(events) == ""  # the CLI's synthetic error message is not the model's text


def test_max_turns_fails_with_the_cli_reason(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.1.332/max-turns-1.jsonl")
    finished = events[-1]
    assert isinstance(finished, StepFinished)
    assert (finished.status, finished.error) == ("error", "Reached maximum number of turns (1)")


def test_partial_messages_stream_thinking_and_text_once(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.1.332/thinking-partial.jsonl")
    thinking = "".join(e.text for e in _of(events, ThinkingDelta))
    assert thinking == "The user wants a greeting. Keep it short."
    assert _text(events) == "Hello! **Thinking** done."
    assert len(_of(events, ThinkingDelta)) > 1  # streamed, not the whole block at once
    usage = _of(events, Usage)[0].usage
    assert usage.output == 16  # message_delta's real count, not the assistant line's 1
    debug = [e.message for e in _of(events, Log) if e.level == "debug"]
    assert sum("thinking_tokens" in m for m in debug) == 1  # unknown events: logged once


def test_denied_approval_in_a_conversation_capture(fixtures_dir: Path) -> None:
    path = fixtures_dir / "claude" / "claude-2.1.332" / "host-deny.conversation.jsonl"
    asked = [
        line["msg"]["request"]
        for line in map(json.loads, _lines(path))
        if (line["msg"].get("request") or {}).get("subtype") == "can_use_tool"
    ]
    events = _load(fixtures_dir, "claude-2.1.332/host-deny.conversation.jsonl")
    requested = _of(events, ApprovalRequested)
    resolved = _of(events, ApprovalResolved)
    assert [(r.tool, r.call_id) for r in requested] == [("bash", asked[0]["tool_use_id"])]
    assert requested[0].arguments["command"] == "cp hello.txt copy.txt && echo copied"
    assert [(r.decision, r.reason) for r in resolved] == [
        ("deny", "Denied by the Baton approval dialog (test)")
    ]
    kinds = [
        type(e).__name__
        for e in events
        if isinstance(e, ToolCallStarted | ApprovalRequested | ApprovalResolved | ToolCallFinished)
    ]
    assert kinds == [
        "ToolCallStarted",
        "ApprovalRequested",
        "ApprovalResolved",
        "ToolCallFinished",
    ]
    finished = _of(events, ToolCallFinished)[0]
    assert (finished.status, finished.result) == (
        "error",
        "Denied by the Baton approval dialog (test)",
    )
    assert finished.duration_ms is not None and finished.duration_ms >= 0  # the capture's clock
    assert events[-1].status == "ok"  # type: ignore[union-attr]


def test_denied_by_the_cli_itself_is_an_error_result(fixtures_dir: Path) -> None:
    events = _load(fixtures_dir, "claude-2.1.332/bash-default.jsonl")
    assert [e.status for e in _of(events, ToolCallFinished)] == ["error"]
    assert any("needs approval" in e.message for e in _of(events, Log))


# ------------------------------------------------------------------------------- crafted lines


def test_two_results_the_last_wins_and_usage_matches_it() -> None:
    parser = ClaudeEventParser("r", 0)
    events = _feed(
        parser,
        [
            init(),
            *streamed_text("m1", ["one"], output_tokens=4),
            result("first", num_turns=1, cost=0.01),
            init(),
            result(
                "background failed",
                is_error=True,
                num_turns=2,
                cost=0.03,
                usage={"input_tokens": 25, "output_tokens": 9},
            ),
        ],
    )
    events += parser.finish(0)
    finished = events[-1]
    assert isinstance(finished, StepFinished)
    assert (finished.status, finished.error) == ("error", "background failed")
    total = _total(events)
    assert (total.turns, total.input, total.output, total.cost) == (2, 25, 9, 0.03)
    assert any("last one counts" in e.message for e in _of(events, Log))


def test_streamed_tool_input_is_assembled_and_announced_once() -> None:
    parser = ClaudeEventParser("r", 0)
    start = {"id": "m1", "model": "claude-x", "usage": {"input_tokens": 3}}
    block = {"type": "tool_use", "id": "toolu_9", "name": "Glob", "input": {}}
    pieces = ['{"pat', 'tern": "*.py', '"}']
    lines = [
        stream({"type": "message_start", "message": start}),
        stream({"type": "content_block_start", "index": 0, "content_block": block}),
        *(
            stream(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
            )
            for p in pieces
        ),
        stream({"type": "content_block_stop", "index": 0}),
        tool_use("m1", "toolu_9", "Glob", {"pattern": "*.py"}),
        stream({"type": "message_delta", "usage": {"output_tokens": 8}}),
        stream({"type": "message_stop"}),
        tool_result("toolu_9", [{"type": "text", "text": "a.py"}]),
    ]
    events = _feed(parser, lines)
    started = _of(events, ToolCallStarted)
    assert [(s.call_id, s.tool, s.arguments) for s in started] == [
        ("toolu_9", "find", {"pattern": "*.py"})
    ]
    assert [(f.status, f.result) for f in _of(events, ToolCallFinished)] == [("ok", "a.py")]
    assert [u.usage.output for u in _of(events, Usage)] == [8]


def test_a_permission_question_announces_an_unseen_call_once() -> None:
    parser = ClaudeEventParser("r", 0)
    first = _of(parser.announce("toolu_1", "Bash", {"command": "ls"}), ToolCallStarted)
    assert [(e.tool, e.arguments) for e in first] == [("bash", {"command": "ls"})]
    later = _feed(parser, [tool_use("m", "toolu_1", "Bash", {"command": "ls"})])
    assert not _of(later, ToolCallStarted)
    assert parser.announce("toolu_1", "Bash", {}) == []


def test_retry_drops_the_superseded_stream() -> None:
    parser = ClaudeEventParser("r", 0)
    start = {"id": "m1", "model": "claude-x", "usage": {}}
    events = _feed(
        parser,
        [
            stream({"type": "message_start", "message": start}),
            stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
            {
                "type": "system",
                "subtype": "api_retry",
                "attempt": 2,
                "max_retries": 10,
                "retry_delay_ms": 1200,
                "error_status": 529,
                "error": "overloaded_error",
            },
            stream({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}),
        ],
    )
    retry = _of(events, Retry)
    assert [(r.attempt, r.max_attempts, r.error) for r in retry] == [
        (2, 10, "529 overloaded_error")
    ]
    assert any("outside a message" in e.message for e in _of(events, Log))


def test_a_subagent_s_text_and_calls_belong_to_its_task_call() -> None:
    """Claude Code's Task tool: the sub-agent's lines carry ``parent_tool_use_id``."""
    parser = ClaudeEventParser("r", 0)
    task_args = {"subagent_type": "scout", "description": "Find it", "prompt": "Look around"}

    def sub(line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "parent_tool_use_id": "toolu_task"}

    read_args = {"file_path": "/w/a.txt"}
    lines = [
        *streamed_text("m1", ["Delegating."]),
        tool_use("m1", "toolu_task", "Task", task_args),
        sub(assistant("s1", {"type": "text", "text": "Sub-agent looking."})),
        sub(tool_use("s1", "toolu_read", "Read", read_args)),
        sub(tool_result("toolu_read", "a")),
        tool_result("toolu_task", "Found it in a.txt"),
        *streamed_text("m2", ["Main answer."]),
    ]
    events = _feed(parser, lines)
    texts = [(e.text, e.parent_call_id) for e in _of(events, TextDelta)]
    assert texts == [
        ("Delegating.", None),
        ("Sub-agent looking.", "toolu_task"),
        ("Main answer.", None),
    ]
    calls = [(e.tool, e.parent_call_id) for e in _of(events, ToolCallStarted)]
    assert calls == [("Task", None), ("read", "toolu_task")]
    state = fold_step(events)
    task, read = [i for i in state.items if isinstance(i, ToolCall)]
    assert task.output == "Sub-agent looking." and task.result == "Found it in a.txt"
    assert task.key_argument == "scout: Find it"
    assert read.parent_call_id == "toolu_task"
    blocks = [i.text for i in state.items if isinstance(i, TextBlock)]
    assert blocks == ["Delegating.", "Main answer."]  # the sub-agent's words are not the answer
    markdown = run_to_markdown(one_step(events))
    assert "**read** `/w/a.txt`" in markdown and "*(in the sub-agent)*" in markdown
    assert "Sub-agent looking.\n  \n  Found it in a.txt" in markdown


def test_two_separate_main_answers_are_two_blocks() -> None:
    """2.1.x background work: a second answer after the first result is not glued to it."""
    parser = ClaudeEventParser("r", 0)
    events = _feed(parser, [*streamed_text("m1", ["First."]), *streamed_text("m2", ["Second."])])
    blocks = [i.text for i in fold_step(events).items if isinstance(i, TextBlock)]
    assert blocks == ["First.", "Second."]


def test_garbage_and_unknown_types_are_logged_never_fatal() -> None:
    parser = ClaudeEventParser("r", 0)
    events = parser.feed("not json at all")
    events += parser.feed(b"[1, 2]")
    events += parser.feed("")
    events += _feed(parser, [{"type": "tool_progress"}, {"type": "tool_progress"}])
    events += _feed(parser, [{"type": "system", "subtype": "brand_new"}])
    events += _feed(parser, [{"type": "assistant", "message": {"content": "oops"}}])
    logs = _of(events, Log)
    assert [log.level for log in logs[:2]] == ["warning", "warning"]
    assert sum("tool_progress" in log.message for log in logs) == 1
    assert any("brand_new" in log.message for log in logs)


def test_without_a_result_the_exit_decides() -> None:
    cases = [
        (143, "", "aborted", "SIGTERM"),
        (-9, "", "aborted", "SIGKILL"),
        (1, "Error: invalid API key\n", "error", "invalid API key"),
        (0, "", "error", "without a result"),
        (None, "", "aborted", "transcript ends"),
    ]
    for exit_code, stderr, status, reason in cases:
        parser = ClaudeEventParser("r", 0)
        events = _feed(parser, [init(), tool_use("m1", "toolu_1", "Bash", {"command": "x"})])
        events += parser.finish(exit_code, stderr)
        finished = events[-1]
        assert isinstance(finished, StepFinished)
        assert finished.status == status, exit_code
        assert finished.error is not None and reason in finished.error, exit_code
        closed = _of(events, ToolCallFinished)
        assert [c.status for c in closed] == ["aborted"]


def test_cancelled_step_is_aborted_even_with_a_clean_result() -> None:
    parser = ClaudeEventParser("r", 0)
    _feed(parser, [init(), result(None, subtype="error_during_execution")])
    finished = parser.finish(0, cancelled=True)[-1]
    assert isinstance(finished, StepFinished)
    assert finished.status == "aborted"


def test_claude_tool_names_map_to_baton_names() -> None:
    assert [baton_tool_name(n) for n in ("Bash", "Read", "Glob", "MultiEdit", "Task")] == [
        "bash",
        "read",
        "find",
        "edit",
        "Task",
    ]


def _with_result(fixtures: Path, name: str, **changes: Any) -> StepFinished:
    """A 2.1.332 transcript imported with its final ``result`` changed (``None``: removed)."""
    lines = _lines(fixtures / "claude" / "claude-2.1.332" / name)
    last = json.loads(lines[-1])
    assert last["type"] == "result"
    last.update(changes)
    last = {key: value for key, value in last.items() if value is not None}
    finished = transcript_to_events([*lines[:-1], json.dumps(last)])[-1]
    assert isinstance(finished, StepFinished)
    return finished


def test_max_turns_with_is_error_false_is_still_an_error(fixtures_dir: Path) -> None:
    """2.0.76 and 1.0.128 write the 2.1.332 result below with ``is_error: false`` and no
    ``errors``: a turn-limited run must never pass as an answer."""
    finished = _with_result(fixtures_dir, "max-turns-1.jsonl", is_error=False, errors=None)
    assert (finished.status, finished.error) == (
        "error",
        "Claude Code stopped at the turn limit (2 turns)",
    )


@pytest.mark.parametrize("is_error", [False, True])
def test_an_interrupted_transcript_imports_as_aborted(fixtures_dir: Path, is_error: bool) -> None:
    """SIGINT / Esc: ``error_during_execution`` with ``terminal_reason: aborted_tools``."""
    finished = _with_result(
        fixtures_dir,
        "bash-default.jsonl",
        subtype="error_during_execution",
        is_error=is_error,
        terminal_reason="aborted_tools",
        result=None,
    )
    assert (finished.status, finished.error) == (
        "aborted",
        "interrupted: Claude Code was stopped while tools were running",
    )


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({"agent": "scout", "task": "find auth"}, "scout: find auth"),
        (
            {"tasks": [{"agent": "scout", "task": "a"}, {"agent": "planner", "task": "b"}]},
            "scout: a; planner: b",
        ),
        ({"chain": [{"agent": "scout", "task": "a"}, {"agent": "worker", "task": "{previous}"}]},
         "scout: a → worker: {previous}"),
        ({"limit": 3}, '{"limit": 3}'),
    ],
)  # fmt: skip
def test_md_export_names_what_a_pi_subagent_call_delegates(
    arguments: dict[str, Any], shown: str
) -> None:
    """pi's ``subagent`` tool (single, parallel ``tasks``, ``chain``): never "**subagent** ``"."""
    start = ToolCallStarted(
        run_id="r", step=0, ts=0, call_id="c", tool="subagent", arguments=arguments
    )
    markdown = run_to_markdown(one_step([start]))
    assert f"**subagent** `{shown}`" in markdown


@pytest.mark.parametrize(
    ("name", "timed_tools"),
    [("claude-2.0.76/read.jsonl", False), ("claude-2.1.332/read.jsonl", True)],
)
def test_imported_durations_come_from_the_transcript(
    fixtures_dir: Path, name: str, timed_tools: bool
) -> None:
    """The result's ``duration_ms`` times the run (not the last timestamp); 2.0.76 has no
    timestamps, so its tools have no duration."""
    path = fixtures_dir / "claude" / name
    events = import_transcript(path)
    assert events[-1].ts == pytest.approx(_result_line(path)["duration_ms"] / 1000)
    durations = [e.duration_ms for e in _of(events, ToolCallFinished)]
    assert len(durations) == 1
    assert (durations[0] is not None) == timed_tools
