"""Streamed text and tool output accumulate in linear time (copies counted, not timed)."""

from __future__ import annotations

from core.model.events import (
    PlannedStep,
    RunStarted,
    StepStarted,
    TextDelta,
    ToolCallOutput,
    ToolCallStarted,
)
from core.record.run_state import RunState, TextBlock
from core.record.text_buffer import TextBuffer

RUN = "r1"
CHUNKS = 5_000


def _started_run() -> RunState:
    state = RunState()
    state.apply(
        RunStarted(
            run_id=RUN,
            mode="single",
            steps=[PlannedStep(agent="worker", task="t", cwd="/w")],
            cwd="/w",
            started_at="2026-12-03T10:00:00+00:00",
        )
    )
    state.apply(StepStarted(run_id=RUN, step=0, ts=0.1, agent="worker", task="t", cwd="/w"))
    return state


def test_folding_many_output_chunks_copies_the_output_about_once() -> None:
    state = _started_run()
    state.apply(ToolCallStarted(run_id=RUN, step=0, ts=0.2, call_id="c", tool="bash", arguments={}))
    chunk = "x" * 79 + "\n"
    for _ in range(CHUNKS):
        state.apply(ToolCallOutput(run_id=RUN, step=0, ts=0.3, call_id="c", chunk=chunk))
    call = state.steps[0].calls["c"]
    assert call.streamed.copied == 0  # folding alone joins nothing
    assert call.output == chunk * CHUNKS
    assert call.output == chunk * CHUNKS  # the join is cached
    assert (call.streamed.joins, call.streamed.copied) == (1, len(chunk) * CHUNKS)
    assert call.streamed.newlines == CHUNKS


def test_a_reader_following_the_text_copies_only_what_is_new() -> None:
    state = _started_run()
    seen = 0
    shown: list[str] = []
    for number in range(CHUNKS):
        state.apply(TextDelta(run_id=RUN, step=0, ts=0.2, text=f"w{number} "))
        block = state.steps[0].items[-1]
        assert isinstance(block, TextBlock)
        shown.append(block.content.since(seen))  # what a live view appends each update
        seen = len(block.content)
    block = state.steps[0].items[-1]
    assert isinstance(block, TextBlock)
    assert block.content.copied == 0
    assert "".join(shown) == block.text == "".join(f"w{n} " for n in range(CHUNKS))


def test_since_and_tail_cut_across_pieces_and_replace_starts_over() -> None:
    buffer = TextBuffer("abc")
    for piece in ("de", "", "fgh", "i\nj"):
        buffer.append(piece)
    assert (len(buffer), buffer.newlines) == (11, 1)
    assert [buffer.since(n) for n in (0, 2, 3, 4, 10, 11, 12)] == [
        "abcdefghi\nj",
        "cdefghi\nj",
        "defghi\nj",
        "efghi\nj",
        "j",
        "",
        "",
    ]
    assert (buffer.tail(4), buffer.tail(50)) == ("hi\nj", "abcdefghi\nj")
    buffer.replace("new\n")
    assert (buffer.text, len(buffer), buffer.newlines, bool(TextBuffer())) == ("new\n", 4, 1, False)


def test_slices_match_the_joined_text() -> None:
    buffer = TextBuffer()
    for piece in ("ab", "cde", "f", "ghij"):
        buffer.append(piece)
    whole = "abcdefghij"
    assert buffer.slice(1, 9) == whole[1:9]
    assert buffer.copied == 0  # a part never joins the whole
    for start in range(-1, 12):
        for end in range(-1, 12):
            assert buffer.slice(start, end) == whole[max(0, start) : max(0, end)], (start, end)
