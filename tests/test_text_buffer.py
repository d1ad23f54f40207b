"""Streamed text and tool output accumulate in linear time (copies counted, not timed)."""

from __future__ import annotations

from core.model.events import (
    PlannedStep,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallOutput,
    ToolCallStarted,
)
from core.record.run_state import RunState, TextBlock
from core.record.text_buffer import COMPACT_PIECES, TextBuffer

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


def test_small_pieces_are_held_compacted_and_read_the_same() -> None:
    """Deltas are joined in groups as they arrive: few strings held, each character copied
    once more at most, and every part reads as from the whole."""
    buffer = TextBuffer()
    pieces = [f"p{n}-" * (1 + n % 3) for n in range(1_000)]
    for piece in pieces:
        buffer.append(piece)
    whole = "".join(pieces)
    assert buffer.compacted <= len(whole)
    assert buffer.copied == 0  # compacting is not a whole-text join
    assert len(buffer._chunks) <= len(pieces) // COMPACT_PIECES + COMPACT_PIECES
    assert [buffer.since(n) for n in range(0, len(whole) + 1, 97)] == [
        whole[n:] for n in range(0, len(whole) + 1, 97)
    ]
    assert buffer.slice(5, 4_000) == whole[5:4_000]
    assert buffer.text == whole


def test_a_steps_answer_is_held_once() -> None:
    """The ending's output is the streamed answer word for word: the state keeps one string."""
    state = _started_run()
    pieces = [f"word{n} " for n in range(CHUNKS)]
    for piece in pieces:
        state.apply(TextDelta(run_id=RUN, step=0, ts=0.2, text=piece))
    answer = "".join(pieces)
    state.apply(StepFinished(run_id=RUN, step=0, ts=0.3, status="ok", output=answer))
    step = state.steps[0]
    block = step.items[-1]
    assert isinstance(block, TextBlock)
    assert step.output == answer
    assert step.output is block.text  # one copy, not two
    other = "a different final answer"
    state.apply(StepFinished(run_id=RUN, step=0, ts=0.4, status="ok", output=other))
    assert step.output == other
