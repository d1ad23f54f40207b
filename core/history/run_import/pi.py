"""pi's saved output (``pi --mode json``) as one step: :class:`PiEventParser` (the live
backend's parser) maps the events, this module only recognises the file and reads the run's
facts (task, model, folder, start) from the parser afterwards."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from core.backends.pi_events import PiEventParser
from core.history.run_import.step import StepTranscript
from core.model.events import Event, StepFinished


def looks_like_pi(head: list[Any]) -> bool:
    """pi writes its ``session`` line first, even with ``--no-session``; a stray line of
    stderr mixed in before it is tolerated."""
    return any(
        isinstance(line, dict)
        and line.get("type") == "session"
        and "cwd" in line
        and ("version" in line or "id" in line)
        for line in head
    )


def read_pi_transcript(lines: Iterable[bytes], run_id: str) -> StepTranscript:
    """``lines`` as a file yields them (a last line without its newline is an unfinished one,
    as when pi was killed while writing)."""
    parser = PiEventParser(run_id, 0)
    body: list[Event] = []
    for raw in lines:
        body += parser.feed(raw, complete=raw.endswith(b"\n"))
    *closing, finished = parser.finish(None)
    assert isinstance(finished, StepFinished)
    cwd = parser.session.get("cwd")
    started_ms = parser.started_at_ms
    return StepTranscript(
        body=body + closing,
        finished=finished,
        task=parser.prompt or "",
        model=parser.model,
        cwd=cwd if isinstance(cwd, str) else None,
        started_at=(
            datetime.fromtimestamp(started_ms / 1000, UTC) if started_ms is not None else None
        ),
    )
