"""Small readers shared by the parsers of agent CLIs' JSON output (pi, Claude Code).

Both CLIs describe tool results as a string or a list of content parts, send numbers that may
be missing or null, and occasionally print lines nobody can parse, which Baton quotes in a log
event without flooding it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

PREVIEW_CHARS = 200
"""How much of an unreadable line a ``log`` event quotes."""
ERROR_TAIL_CHARS = 1_500
"""How much of stderr's tail a failed step's error text shows."""


def content_text(content: Any) -> str:
    """The text of a tool result: a string, or a list of text (and image) parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif part.get("type") == "image":
            mime = part.get("mimeType")
            parts.append(f"[image {mime}]" if mime else "[image]")
    return "\n".join(parts)


def as_int(value: Any) -> int:
    """A token count from JSON: numbers as they are, anything else (null, text, bools) as 0."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def preview(text: str) -> str:
    """One line, cut at :data:`PREVIEW_CHARS`, for quoting unreadable output in a log event."""
    text = text.rstrip("\r\n")
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"


def json_object(line: bytes | str) -> dict[str, Any] | None:
    """One line as a JSON object; ``None`` when it is not JSON or not an object."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


READ_CHUNK = 256 * 1024
"""How much of a child's output is read at a time."""


@dataclass(frozen=True)
class Line:
    """One line of a child's output. ``kind``: ``line`` (ended by a newline), ``partial``
    (the stream ended first) or ``overflow`` (longer than the limit: ``data`` is empty and
    ``size`` says how long it was)."""

    data: bytes
    kind: Literal["line", "partial", "overflow"]
    size: int


async def read_lines(stream: asyncio.StreamReader, max_line: int) -> AsyncIterator[Line]:
    """Split a stream into lines without ever holding more than ``max_line`` bytes of one.

    ``StreamReader.readline`` cannot do this: past its limit it raises and throws the buffer
    away mid-line, so the line's tail would then arrive as a bogus line of its own.
    """
    buffer = bytearray()
    skipped = 0  # bytes of an over-long line thrown away so far; 0: not skipping
    while chunk := await stream.read(READ_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start : end + 1]
            start = end + 1
            if skipped or len(buffer) + len(piece) > max_line:
                yield Line(b"", "overflow", skipped + len(buffer) + len(piece))
                skipped = 0
                buffer.clear()
                continue
            buffer += piece
            yield Line(bytes(buffer), "line", len(buffer))
            buffer.clear()
        rest = chunk[start:]
        if skipped:
            skipped += len(rest)
        elif len(buffer) + len(rest) > max_line:
            skipped = len(buffer) + len(rest)
            buffer.clear()
        else:
            buffer += rest
    if skipped:
        yield Line(b"", "overflow", skipped)
    elif buffer:
        yield Line(bytes(buffer), "partial", len(buffer))


STDERR_TAIL_BYTES = 8 * 1024
"""How much of a CLI's standard error a step keeps to explain a failure (the end of it)."""


async def keep_stderr_tail(stream: asyncio.StreamReader, tail: bytearray) -> None:
    """Read ``stream`` to its end, keeping only its last :data:`STDERR_TAIL_BYTES` in ``tail``:
    a chatty CLI never fills the pipe (and stalls) nor the memory."""
    while chunk := await stream.read(65536):
        tail += chunk
        del tail[:-STDERR_TAIL_BYTES]
