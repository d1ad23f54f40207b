"""pi's ``--mode json`` lines → Baton events (core.backends.pi_events), and pi transcript
import (core.history.run_import).

The transcripts in ``tests/fixtures/pi/`` (``tests/fixtures/record.py``) are real pi output of
four scenarios
for each wire generation (0.73.1 and 1.6.0); both must give the same Baton events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from core.backends.pi_events import PiEventParser, readable_error
from core.history.run_import.formats import DETECTORS, import_transcript
from core.model.events import (
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
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    event_from_json,
    event_to_json,
)

VERSIONS = ("pi-0.73.1", "pi-1.6.0")
SCENARIOS = ("simple", "rich", "bashfail", "error500-retry")
ERROR_500 = "500 fake upstream exploded (scripted 500)"


def transcript(fixtures: Path, version: str, scenario: str) -> Path:
    return fixtures / "pi" / version / f"{scenario}.jsonl"


def parse_lines(
    lines: Iterable[str | bytes], exit_code: int | None = 0, **finish: Any
) -> list[Event]:
    parser = PiEventParser("run-1", 0)
    events: list[Event] = []
    for line in lines:
        events += parser.feed(line)
    events += parser.finish(exit_code, **finish)
    return events


def parse_file(path: Path) -> list[Event]:
    exit_file = path.with_suffix(".exitcode")
    exit_code = int(exit_file.read_text()) if exit_file.exists() else 0
    with path.open("rb") as handle:
        return parse_lines(handle, exit_code)


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def finished(events: list[Event]) -> StepFinished:
    assert isinstance(events[-1], StepFinished)
    assert len(of(events, StepFinished)) == 1
    return events[-1]


def text(events: list[Event]) -> str:
    return "".join(e.text for e in of(events, TextDelta))


def calls(events: list[Event]) -> dict[str, dict[str, Any]]:
    """Per call id: tool, arguments, streamed chunks, status, result."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, ToolCallStarted):
            found[event.call_id] = {
                "tool": event.tool,
                "arguments": event.arguments,
                "chunks": [],
                "status": None,
            }
        elif isinstance(event, ToolCallOutput):
            assert event.replace  # pi's partialResult is cumulative
            found[event.call_id]["chunks"].append(event.chunk)
        elif isinstance(event, ToolCallFinished):
            found[event.call_id]["status"] = event.status
            found[event.call_id]["result"] = event.result
            found[event.call_id]["duration_ms"] = event.duration_ms
    return found


# ------------------------------------------------------------------------------ every transcript


def test_every_reference_transcript_is_read_cleanly(fixtures_dir: Path) -> None:
    paths = sorted((fixtures_dir / "pi").glob("*/*.jsonl"))
    assert {(p.parent.name, p.stem) for p in paths} >= {(v, s) for v in VERSIONS for s in SCENARIOS}
    for path in paths:
        events = parse_file(path)
        assert not [e for e in of(events, Log) if e.level != "debug"], path
        step = finished(events)
        assert step.usage.turns == len(of(events, Usage)) >= 1, path
        assert step.usage.model == "fake-model"
        # every call that started also finished, with a status
        assert all(c["status"] in ("ok", "error") for c in calls(events).values()), path
        # timestamps follow the transcript's clock: from 0, never backwards
        stamps = [e.ts for e in events]
        assert stamps[0] >= 0 and stamps == sorted(stamps), path


@pytest.mark.parametrize("version", VERSIONS)
def test_simple_read_then_markdown(fixtures_dir: Path, version: str) -> None:
    events = parse_file(transcript(fixtures_dir, version, "simple"))
    step = finished(events)
    assert step.status == "ok" and step.error is None
    found = calls(events)
    duration = found["call_read_1"].pop("duration_ms")
    assert (duration is not None) == (version == "pi-1.6.0")  # only 1.6.0 reports it
    assert found == {
        "call_read_1": {
            "tool": "read",
            "arguments": {"path": "hello.txt"},
            "chunks": [],
            "status": "ok",
            "result": "Hello from the fixture file.\nSecond line.\n",
        }
    }
    assert step.output.startswith("## Summary\n\n`hello.txt` contains **two lines**")
    assert text(events) == step.output  # built from deltas, nothing doubled
    assert [type(e).__name__ for e in events[:3]] == [
        "Usage",
        "ToolCallStarted",
        "ToolCallFinished",
    ]
    usage = step.usage
    assert (usage.turns, usage.input, usage.output, usage.cache_read, usage.cache_write) == (
        2,
        300,
        85,
        2200,
        0,
    )
    assert usage.cost == pytest.approx(0.001275 + 0.00156)
    assert usage.context_tokens == 1360  # the last message's totalTokens


@pytest.mark.parametrize("version", VERSIONS)
def test_rich_thinking_text_parallel_tools_and_streamed_bash(
    fixtures_dir: Path, version: str
) -> None:
    events = parse_file(transcript(fixtures_dir, version, "rich"))
    step = finished(events)
    thinking = "".join(e.text for e in of(events, ThinkingDelta))
    assert thinking == "The user wants a quick tour. I will list, read, and run bash."
    first_turn_text = "".join(
        e.text
        for e in events[: events.index(of(events, ToolCallStarted)[0])]
        if isinstance(e, TextDelta)
    )
    assert first_turn_text == "Let me look around first."
    found = calls(events)
    assert [e.call_id for e in of(events, ToolCallStarted)] == [
        "call_ls_1",
        "call_read_2",
        "call_bash_3",
    ]
    assert found["call_ls_1"]["status"] == "ok" and found["call_ls_1"]["result"] == "hello.txt"
    assert found["call_read_2"]["status"] == "error"
    assert found["call_read_2"]["result"].startswith("ENOENT: no such file or directory")
    assert found["call_bash_3"]["arguments"] == {"command": "echo one; sleep 0.4; echo two"}
    assert found["call_bash_3"]["chunks"] == ["one\n", "one\ntwo\n"]  # cumulative, replaced
    assert found["call_bash_3"]["status"] == "ok"
    assert found["call_bash_3"]["result"] == "one\ntwo\n"
    assert step.status == "ok"
    assert step.output.startswith("## Findings\n\n| check | result |")
    assert step.output.endswith("Done. See the **tool results** above.\n")
    assert text(events) == "Let me look around first." + step.output
    assert step.usage.turns == 2


@pytest.mark.parametrize("version", VERSIONS)
def test_bash_failure_and_truncated_output(fixtures_dir: Path, version: str) -> None:
    events = parse_file(transcript(fixtures_dir, version, "bashfail"))
    found = calls(events)
    failed = found["call_bash_fail"]
    assert failed["status"] == "error"
    assert failed["result"].startswith("to-stdout\nto-stderr\n")
    assert failed["result"].endswith("Command exited with code 3")
    assert failed["chunks"] == ["to-stdout\n", "to-stdout\nto-stderr\n"]
    big = found["call_bash_big"]
    assert big["status"] == "ok"
    body, notice = big["result"].rsplit("\n\n", 1)
    assert re.fullmatch(
        r"\[Showing lines 300[12]-500[01] of 500[01]\. Full output: .+\.log\]", notice
    )
    assert body.strip().splitlines()[-1] == "5000"
    assert len(body.strip().splitlines()) in (1999, 2000)  # pi keeps the last 2,000 lines
    assert big["chunks"][-1].rstrip().endswith("5000")
    step = finished(events)
    assert step.status == "ok"  # a failing tool is not a failing step
    assert step.output == "One command failed with exit code 3."


@pytest.mark.parametrize("version", VERSIONS)
def test_error500_retries_then_fails_the_step(fixtures_dir: Path, version: str) -> None:
    events = parse_file(transcript(fixtures_dir, version, "error500-retry"))
    retries = of(events, Retry)
    assert [(r.attempt, r.max_attempts, r.delay_ms, r.error) for r in retries] == [
        (1, 2, 200.0, ERROR_500),
        (2, 2, 400.0, ERROR_500),
    ]
    # each failed attempt (its usage) comes before the retry that supersedes it
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Usage", "Retry", "Usage", "Retry", "Usage", "StepFinished"]
    step = finished(events)
    assert step.status == "error"  # pi itself exited 0
    assert step.error == ERROR_500
    assert step.output == ""
    assert step.usage.turns == 3


# ------------------------------------------------------------------------------ both generations


_CAPTURE_DIR = re.compile(r"/tmp/pi-capture-[\d.]+/")
_TRUNCATED = re.compile(r"\n+\[Showing lines \d+-\d+ of \d+\. Full output: [^\]]+\]$")


def _normal_text(value: str) -> str:
    """What legitimately differs between the two captures: the capture folder, and pi's bash
    truncation window — 0.73.1 counts the output's trailing newline as one more (empty) line,
    so it shows lines 3002-5001 of 5001 where 1.6.0 shows 3001-5000 of 5000, and its notice
    has one more blank line before it. Compared: the last 1,999 lines and the notice's form."""
    value = _CAPTURE_DIR.sub("/CAPTURE/", value)
    if _TRUNCATED.search(value):
        body = _TRUNCATED.sub("", value).strip().splitlines()[-1999:]
        return "\n".join(body) + "\n[Showing lines …]"
    if value.count("\n") > 1990:  # a streamed chunk of the same truncated output
        return "\n".join(value.strip().splitlines()[-1999:])
    return value


def _normalised(events: list[Event]) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """Events without timestamps and durations; tool events grouped per call, because
    concurrent calls finish in whatever order they finish (differently in the captures)."""
    sequence: list[dict[str, Any]] = []
    per_call: dict[str, list[Any]] = {}
    for event in events:
        data = event.model_dump(exclude={"ts", "run_id", "step", "duration_ms"})
        for key in ("result", "chunk", "error", "output", "text"):
            if isinstance(data.get(key), str):
                data[key] = _normal_text(data[key])
        if isinstance(event, ToolCallOutput | ToolCallFinished):
            per_call.setdefault(event.call_id, []).append(data)
        else:
            sequence.append(data)
    return sequence, per_call


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_both_generations_give_the_same_events(fixtures_dir: Path, scenario: str) -> None:
    old = _normalised(parse_file(transcript(fixtures_dir, "pi-0.73.1", scenario)))
    new = _normalised(parse_file(transcript(fixtures_dir, "pi-1.6.0", scenario)))
    assert old[0] == new[0]
    assert old[1] == new[1]


def test_the_quick_read_of_huge_updates_changes_nothing(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.73.1's message_update lines are read without decoding their snapshots; the result
    must equal a full parse, line for line."""
    for path in sorted((fixtures_dir / "pi").glob("*/*.jsonl")):
        quick = parse_file(path)
        with monkeypatch.context() as patch:
            patch.setattr(PiEventParser, "fast_updates", False)
            full = parse_file(path)
        assert quick == full, path


def test_quick_read_falls_back_on_anything_unexpected() -> None:
    prefix = (
        '{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0'
    )
    odd = [
        prefix + ',"delta":"a\\u00e9\\n","partial":{}}}',  # escapes are decoded
        prefix + ',"partial":{},"delta":"b"}}',  # another key order
        prefix + ',"delta":"c',  # broken JSON: logged by the full parse
    ]
    events = parse_lines([_start(), *odd])
    assert [e.text for e in of(events, TextDelta)] == ["a\u00e9\n", "b"]
    assert len(of(events, Log)) == 1


# ------------------------------------------------------------------------------ bad input


def _message(role: str, content: list[dict[str, Any]], **extra: Any) -> str:
    message = {"role": role, "content": content, "model": "m1", **extra}
    return json.dumps({"type": "message_end", "message": message})


def _assistant_end(text_: str, stop: str = "stop", **extra: Any) -> str:
    usage = {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {"total": 0.001},
    }
    return _message(
        "assistant",
        [{"type": "text", "text": text_}] if text_ else [],
        stopReason=stop,
        usage=usage,
        **extra,
    )


def _start() -> str:
    return json.dumps({"type": "message_start", "message": {"role": "assistant", "content": []}})


def _delta(kind: str, value: str, index: int = 0) -> str:
    return json.dumps(
        {
            "type": "message_update",
            "assistantMessageEvent": {"type": kind, "contentIndex": index, "delta": value},
        }
    )


SESSION = json.dumps(
    {
        "type": "session",
        "version": 3,
        "id": "s1",
        "cwd": "/work/x",
        "timestamp": "2026-12-03T06:53:42.987Z",
    }
)


def test_garbage_non_utf8_and_partial_lines_are_logged_not_fatal() -> None:
    parser = PiEventParser("r", 0)
    events: list[Event] = []
    events += parser.feed(SESSION)
    events += parser.feed("this is not json\n")
    events += parser.feed("[1, 2, 3]\n")
    events += parser.feed('{"no_type": true}\n')
    events += parser.feed(b"\xff\xfe garbage \xc3\x28\n")
    events += parser.feed(_start())
    events += parser.feed(_delta("text_delta", "caf\u00e9 ok"))
    events += parser.feed(_assistant_end("caf\u00e9 ok"))
    events += parser.feed('{"type": "message_end", "mess', complete=False)
    events += parser.finish(0)
    logs = of(events, Log)
    assert len(logs) == 6
    assert all(log.level == "warning" for log in logs)
    assert "not a pi event: this is not json" in logs[0].message
    assert "not UTF-8" in logs[3].message
    assert "incomplete last line" in logs[5].message
    step = finished(events)
    assert (step.status, step.output) == ("ok", "caf\u00e9 ok")


def test_unknown_event_types_are_noted_once_at_debug_level() -> None:
    events = parse_lines(
        [
            json.dumps({"type": "auto_compaction_start"}),
            json.dumps({"type": "auto_compaction_start"}),
            _assistant_end("hi"),
        ]
    )
    logs = of(events, Log)
    assert [(log.level, "auto_compaction_start" in log.message) for log in logs] == [
        ("debug", True)
    ]


def test_a_broken_event_shape_is_logged() -> None:
    events = parse_lines(
        [
            json.dumps(
                {
                    "type": "message_end",
                    "message": {"role": "assistant", "content": 7, "usage": {"cost": 5}},
                }
            ),
        ]
    )
    step = finished(events)
    assert step.status == "ok"  # an odd but readable message: no text, usage of zero


def test_killed_mid_step_closes_open_calls_as_aborted() -> None:
    lines = [
        SESSION,
        _start(),
        _delta("text_delta", "Working"),
        json.dumps(
            {
                "type": "tool_execution_start",
                "toolCallId": "c1",
                "toolName": "bash",
                "args": {"command": "sleep 100"},
            }
        ),
    ]
    events = parse_lines(lines, 143)
    closed = of(events, ToolCallFinished)
    assert [(c.call_id, c.status) for c in closed] == [("c1", "aborted")]
    step = finished(events)
    assert step.status == "aborted"
    assert "SIGTERM" in (step.error or "")
    assert finished(parse_lines(lines, -9)).error == "pi was stopped by SIGKILL before it finished"
    assert finished(parse_lines(lines, 130)).status == "aborted"


def test_output_cut_mid_message() -> None:
    lines = [SESSION, _start(), _delta("text_delta", "half an ans")]
    live = finished(parse_lines(lines, 0))
    assert (live.status, live.error) == ("error", "pi's output ended in the middle of a message")
    saved = finished(parse_lines(lines, None))
    assert saved.status == "aborted"


def test_non_zero_exit_shows_stderr_tail() -> None:
    tail = "\n".join(f"line {n}" for n in range(100)) + "\nError: No API key found for local"
    step = finished(parse_lines([SESSION], 1, stderr_tail=tail))
    assert step.status == "error"
    assert step.error is not None
    assert step.error.startswith("pi exited with status 1: ")
    assert step.error.endswith("Error: No API key found for local")
    assert len(step.error) < 1600
    quiet = finished(parse_lines([SESSION], 2))
    assert quiet.error == "pi exited with status 2 and printed no reason"


def test_exit_zero_with_failed_or_missing_answer() -> None:
    error = finished(parse_lines([_assistant_end("", "error", errorMessage="401 bad key")]))
    assert (error.status, error.error) == ("error", "401 bad key")
    aborted = finished(parse_lines([_assistant_end("partial", "aborted")]))
    assert aborted.status == "aborted"
    assert aborted.output == ""  # an aborted message is not a final answer
    nothing = finished(parse_lines([SESSION]))
    assert (nothing.status, nothing.error) == (
        "error",
        "pi finished without an answer from the model",
    )
    settled = finished(
        parse_lines([_assistant_end("ok"), json.dumps({"type": "agent_settled", "aborted": True})])
    )
    assert settled.status == "aborted"


def test_length_stop_warns_and_keeps_the_text() -> None:
    events = parse_lines([_assistant_end("cut here", "length")])
    assert finished(events).output == "cut here"
    assert any("output limit" in log.message for log in of(events, Log))


def test_a_retry_that_succeeds() -> None:
    events = parse_lines(
        [
            _start(),
            _delta("text_delta", "I will"),
            _assistant_end("I will", "error", errorMessage='503: {"error": {"message": "busy"}}'),
            json.dumps(
                {
                    "type": "auto_retry_start",
                    "attempt": 1,
                    "maxAttempts": 3,
                    "delayMs": 2000,
                    "errorMessage": '503: {"error": {"message": "busy"}}',
                }
            ),
            _start(),
            _delta("text_delta", "Done."),
            _assistant_end("Done."),
            json.dumps({"type": "auto_retry_end", "success": True, "attempt": 1}),
        ]
    )
    (retry,) = of(events, Retry)
    assert (retry.attempt, retry.max_attempts, retry.delay_ms, retry.error) == (
        1,
        3,
        2000.0,
        "503 busy",
    )
    # the superseded attempt's text comes before the retry; the answer after it
    index = events.index(retry)
    assert text(events[:index]) == "I will" and text(events[index:]) == "Done."
    step = finished(events)
    assert (step.status, step.output, step.usage.turns) == ("ok", "Done.", 2)


def test_final_texts_complete_or_contradict_the_stream() -> None:
    end = json.dumps(
        {
            "type": "message_update",
            "assistantMessageEvent": {
                "type": "text_end",
                "contentIndex": 0,
                "content": "Hello world",
            },
        }
    )
    events = parse_lines(
        [_start(), _delta("text_delta", "Hello"), end, _assistant_end("Hello world")]
    )
    assert [e.text for e in of(events, TextDelta)] == ["Hello", " world"]
    assert not of(events, Log)
    # a message that arrives without any delta still shows its text and thinking
    thinking = _message(
        "assistant",
        [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Whole"}],
        stopReason="stop",
    )
    events = parse_lines([_start(), thinking])
    assert [type(e).__name__ for e in events[:2]] == ["ThinkingDelta", "TextDelta"]
    assert text(events) == "Whole" and finished(events).output == "Whole"
    # a final text that contradicts the stream is logged; the output is pi's final text
    events = parse_lines([_start(), _delta("text_delta", "Helo"), _assistant_end("Hello")])
    assert text(events) == "Helo"
    assert any("differs" in log.message for log in of(events, Log))
    assert finished(events).output == "Hello"


def test_final_output_is_the_first_text_part_of_the_last_message_with_text() -> None:
    two_parts = _message(
        "assistant",
        [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        stopReason="stop",
    )
    tool_only = _message(
        "assistant",
        [{"type": "toolCall", "id": "c", "name": "ls", "arguments": {}}],
        stopReason="toolUse",
    )
    assert finished(parse_lines([two_parts, tool_only])).output == "first"


def test_tool_events_without_a_start_and_measured_durations() -> None:
    now = [10.0]
    parser = PiEventParser("r", 2, clock=lambda: now[0])
    start = parser.feed(
        json.dumps(
            {
                "type": "tool_execution_start",
                "toolCallId": "a",
                "toolName": "read",
                "args": {"path": "x"},
            }
        )
    )
    now[0] = 11.25
    end = parser.feed(
        json.dumps(
            {
                "type": "tool_execution_end",
                "toolCallId": "a",
                "result": {"content": [{"type": "text", "text": "X"}]},
                "isError": False,
            }
        )
    )
    assert isinstance(start[0], ToolCallStarted) and (start[0].step, start[0].ts) == (2, 10.0)
    assert isinstance(end[0], ToolCallFinished)
    assert end[0].duration_ms == 1250.0
    orphan = parser.feed(
        json.dumps(
            {
                "type": "tool_execution_end",
                "toolCallId": "b",
                "toolName": "ls",
                "result": {"content": []},
                "isError": True,
            }
        )
    )
    assert [type(e).__name__ for e in orphan] == ["ToolCallStarted", "ToolCallFinished"]


@pytest.mark.parametrize(
    ("raw", "readable"),
    [
        ('500: {"message":"boom","type":"server_error"}', "500 boom"),
        ('429: {"error": {"message": "slow down", "code": 1}}', "429 slow down"),
        ("500 already fine", "500 already fine"),
        ("500: {not json}", "500: {not json}"),
        ('400: {"detail": "x"}', '400: {"detail": "x"}'),
    ],
)
def test_readable_errors(raw: str, readable: str) -> None:
    assert readable_error(raw) == readable


# ------------------------------------------------------------------------------ import


@pytest.mark.parametrize("version", VERSIONS)
def test_import_a_transcript_as_a_one_step_run(fixtures_dir: Path, version: str) -> None:
    path = transcript(fixtures_dir, version, "rich")
    events = import_transcript(path)
    start, step_start = events[0], events[1]
    assert isinstance(start, RunStarted) and isinstance(step_start, StepStarted)
    assert start.mode == "single" and len(start.steps) == 1
    assert start.cwd == f"/tmp/pi-capture-{version.removeprefix('pi-')}/work"
    assert start.steps[0].backend == "pi" and start.steps[0].agent == "pi"
    session = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    recorded = datetime.fromisoformat(session["timestamp"].replace("Z", "+00:00"))
    assert abs((datetime.fromisoformat(start.started_at) - recorded).total_seconds()) < 1
    assert step_start.task == "Task: Give me a quick tour"
    assert step_start.model == "fake-model" and step_start.step == 0
    step, run = events[-2], events[-1]
    assert isinstance(step, StepFinished) and isinstance(run, RunFinished)
    assert (step.status, run.status) == ("ok", "ok")
    assert run.usage == step.usage and run.usage.turns == 2
    assert {e.run_id for e in events} == {start.run_id}
    assert all(e.step == 0 for e in events[1:-1]) and run.step is None
    assert len(of(events, ToolCallStarted)) == 3
    # a run imported twice is two runs
    assert import_transcript(path)[0].run_id != start.run_id
    # the events survive the run file's JSON round trip
    assert [event_from_json(event_to_json(e)) for e in events] == events


def test_import_failed_run_and_error_totals(fixtures_dir: Path) -> None:
    events = import_transcript(transcript(fixtures_dir, "pi-1.6.0", "error500-retry"))
    run = events[-1]
    assert isinstance(run, RunFinished)
    assert (run.status, run.error, run.usage.turns) == ("error", ERROR_500, 3)


def test_import_detects_the_format_and_refuses_others(tmp_path: Path) -> None:
    assert [d.name for d in DETECTORS][:1] == ["pi"]
    saved = tmp_path / "run.jsonl"
    saved.write_text(
        "\n".join([SESSION, _start(), _delta("text_delta", "hi"), _assistant_end("hi")]) + "\n",
        encoding="utf-8",
    )
    events = import_transcript(saved)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "ok"
    assert events[0].cwd == "/work/x"  # type: ignore[union-attr]
    # a stderr line mixed in before the session line does not hide the format
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("Warning: something\n" + saved.read_text(), encoding="utf-8")
    assert isinstance(import_transcript(mixed)[-1], RunFinished)
    for name, content in [
        ("empty.jsonl", ""),
        ("notes.md", "# just notes\n"),
        ("other.jsonl", '{"type": "something_else"}\n'),
    ]:
        other = tmp_path / name
        other.write_text(content, encoding="utf-8")
        with pytest.raises(ValueError, match="not a transcript Baton can read"):
            import_transcript(other)
    with pytest.raises(ValueError, match="cannot read"):
        import_transcript(tmp_path / "missing.jsonl")
