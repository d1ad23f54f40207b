"""Saved Claude Code output as one step (:mod:`core.history.run_import.formats` wraps it into a
run);
:class:`ClaudeEventParser` (the live backend's parser) maps the events.

Two forms are read, both one JSON object a line:

* the CLI's stdout of ``claude -p --output-format stream-json --verbose`` (``system/init``
  first); the task is not in it (it was an argument), so it stays empty;
* the two-way ``*.conversation.jsonl`` form (``{"t", "dir", "msg"}`` lines, as in
  ``reference/claude/``): Baton's side adds the task, and each ``can_use_tool`` request with the
  host's answer becomes ``approval_requested`` / ``approval_resolved``.

Times: the conversation form's ``t`` (seconds), else the ISO ``timestamp`` that 2.x puts on
message lines, counted from the first one; lines without either keep the latest time seen.
The step ends at the ``result``'s ``duration_ms`` when that is later; without any time in the
file (1.0.x), tool durations are unknown (``None``), not 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from core.backends.claude_events import ClaudeEventParser, baton_tool_name
from core.backends.cli_output import content_text
from core.history.run_import.step import StepTranscript
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    StepFinished,
    ToolCallFinished,
)


def looks_like_claude(head: list[Any]) -> bool:
    """For :data:`core.history.run_import.formats.DETECTORS`: the first lines (parsed JSON, ``None``
    when not JSON) hold Claude Code's ``system/init`` line, or are the conversation form."""
    for line in head:
        if not isinstance(line, dict):
            continue
        if line.get("type") == "system" and line.get("subtype") == "init":
            return "session_id" in line and "tools" in line
        if line.get("dir") in ("host->cli", "cli->host") and isinstance(line.get("msg"), dict):
            return True
    return False


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.origin: datetime | None = None

    def see(self, data: dict[str, Any]) -> None:
        stamp = data.get("timestamp")
        if not isinstance(stamp, str):
            return
        try:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return
        if self.origin is None:
            self.origin = moment
        self.now = max(self.now, round((moment - self.origin).total_seconds(), 6))


def read_claude_transcript(
    lines: Iterable[str | bytes], run_id: str, step: int = 0
) -> StepTranscript:
    """The step in ``lines``; ``started_at`` is the first ``timestamp`` in the file, if any."""
    clock = _Clock()
    parser = ClaudeEventParser(run_id, step, clock=lambda: clock.now)
    body: list[Event] = []
    asked: set[str] = set()
    task = ""
    for raw in lines:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        try:
            data = json.loads(text) if text.strip() else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            body += parser.feed(text)
            continue
        if not ("dir" in data and isinstance(data.get("msg"), dict)):
            clock.see(data)
            body += parser.feed_object(data)
            continue
        if isinstance(data.get("t"), int | float):
            clock.now = float(data["t"])
        message: dict[str, Any] = data["msg"]
        request = message.get("request") or {}
        if data["dir"] == "cli->host" and request.get("subtype") == "can_use_tool":
            body += _asked(parser, message, clock.now, asked)
        elif data["dir"] == "cli->host":
            body += parser.feed_object(message)
        elif message.get("type") == "user" and not task:
            task = content_text((message.get("message") or {}).get("content"))
        elif message.get("type") == "control_response":
            body += _answered(parser, message, clock.now, asked)
    *closing, finished = parser.finish(None)
    assert isinstance(finished, StepFinished)
    body += closing
    took = (parser.result or {}).get("duration_ms")
    if isinstance(took, int | float) and took / 1000 > finished.ts:
        # The run's own measure; message timestamps (2.x only) miss the work after the last.
        finished = finished.model_copy(update={"ts": round(took / 1000, 3)})
    if clock.origin is None and not clock.now:
        # No time in the file at all (1.0.x stdout): a call's duration is unknown, not 0 ms.
        body = [_unmeasured(e) for e in body]
    return StepTranscript(
        body=body,
        finished=finished,
        task=task,
        model=parser.model,
        cwd=parser.cwd or None,
        started_at=clock.origin,
    )


def _unmeasured(event: Event) -> Event:
    if isinstance(event, ToolCallFinished):
        return event.model_copy(update={"duration_ms": None})
    return event


def transcript_to_events(
    lines: Iterable[str | bytes], run_id: str = "imported", step: int = 0
) -> list[Event]:
    """The step's events, ending with its ``step_finished``."""
    transcript = read_claude_transcript(lines, run_id, step)
    return [*transcript.body, transcript.finished]


def _asked(
    parser: ClaudeEventParser, message: dict[str, Any], now: float, asked: set[str]
) -> list[Event]:
    request = message["request"]
    call_id = str(request.get("tool_use_id") or "")
    tool = str(request.get("tool_name") or "tool")
    request_id = str(message.get("request_id"))
    asked.add(request_id)
    arguments = request.get("input")
    events = parser.announce(call_id, tool, arguments)
    events.append(
        ApprovalRequested(
            run_id=parser.run_id,
            step=parser.step,
            ts=now,
            request_id=request_id,
            call_id=call_id or request_id,
            tool=baton_tool_name(tool),
            arguments=arguments if isinstance(arguments, dict) else {},
            agent="claude",
            cwd=parser.cwd or "",
        )
    )
    return events


def _answered(
    parser: ClaudeEventParser, message: dict[str, Any], now: float, asked: set[str]
) -> list[Event]:
    response = message.get("response") or {}
    request_id = str(response.get("request_id"))
    answer = response.get("response") or {}
    if request_id not in asked or answer.get("behavior") not in ("allow", "deny"):
        return []
    reason = answer.get("message")
    return [
        ApprovalResolved(
            run_id=parser.run_id,
            step=parser.step,
            ts=now,
            request_id=request_id,
            decision="approve" if answer["behavior"] == "allow" else "deny",
            reason=reason if isinstance(reason, str) else None,
        )
    ]
