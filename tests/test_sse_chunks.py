"""A streamed answer's chunks as the own loop reads them (``core.backends.sse``): read with
pydantic's JSON parser, and exactly as the standard library would where the two differ."""

from __future__ import annotations

import json

import pytest

from core.backends.sse import MalformedStreamError, ResponseAccumulator


def _chunk(content: str) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": {"content": content}}]})


def test_chunks_add_up_to_the_answer() -> None:
    answer = ResponseAccumulator()
    pieces = [p for text in ("## Files Re", "trieved ✓") for p in answer.feed_payload(_chunk(text))]
    assert pieces == [("text", "## Files Re"), ("text", "trieved ✓")]
    assert answer.text == "## Files Retrieved ✓"


def test_a_lone_surrogate_from_a_hostile_model_is_read_not_refused() -> None:
    """pydantic's parser refuses ``\\ud800``; the chunk is still read as before (redaction and
    the run file then deal with the character)."""
    answer = ResponseAccumulator()
    assert answer.feed_payload(_chunk("a\ud800b")) == [("text", "a\ud800b")]


@pytest.mark.parametrize("payload", ['{"choices": [', "[1, 2]", '{"a": 1} trailing', ""])
def test_what_is_not_one_json_object_is_a_malformed_stream(payload: str) -> None:
    with pytest.raises(MalformedStreamError):
        ResponseAccumulator().feed_payload(payload)
