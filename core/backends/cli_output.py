"""Small readers shared by the parsers of agent CLIs' JSON output (pi, Claude Code).

Both CLIs describe tool results as a string or a list of content parts, send numbers that may
be missing or null, and occasionally print lines nobody can parse, which Baton quotes in a log
event without flooding it.
"""

from __future__ import annotations

import json
from typing import Any

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
