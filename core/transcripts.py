"""Import transcripts of agent CLIs run elsewhere as Baton runs (``baton runs import FILE``,
``baton open FILE``, the GUI's "Open pi transcript…").

A transcript becomes a complete one-step run — ``run_started``, ``step_started``, the mapped
events, ``step_finished``, ``run_finished`` — with a new run id, so the run view, the run file
and the history treat it exactly like a run Baton made itself.

Formats are recognised from a file's first lines by the entries of :data:`DETECTORS`, tried in
order. A new format (Claude Code's stream-json, say) is one more :class:`TranscriptFormat`
appended there; :func:`one_step_run` does the wrapping for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.backends.claude_transcript import looks_like_claude, read_claude_transcript
from core.backends.pi_events import PiEventParser
from core.events import (
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from core.runner import new_run_id

HEAD_LINES = 5
"""Non-empty lines a detector sees."""
HEAD_LINE_BYTES = 1_000_000
"""Longest line read for detection (longer ones are cut; detectors only look at the start)."""


@dataclass(frozen=True)
class TranscriptFormat:
    """A transcript format: ``detect`` gets the first lines of the file, each parsed as JSON
    (``None`` when a line is not JSON); ``read`` turns the file into a run's events."""

    name: str
    description: str
    detect: Callable[[list[Any]], bool]
    read: Callable[[Path, str], list[Event]]
    """``(path, run_id) -> events`` of the whole run."""


def one_step_run(
    *,
    run_id: str,
    agent: str,
    task: str,
    model: str | None,
    backend: str,
    cwd: str,
    started_at: str,
    body: list[Event],
    finished: StepFinished,
) -> list[Event]:
    """Wrap one step's events (``step == 0``) into a complete single-mode run."""
    start = RunStarted(
        run_id=run_id,
        mode="single",
        steps=[PlannedStep(agent=agent, task=task, model=model, backend=backend, cwd=cwd)],
        cwd=cwd,
        started_at=started_at,
    )
    step = StepStarted(
        run_id=run_id, step=0, agent=agent, task=task, model=model, backend=backend, cwd=cwd
    )
    end = RunFinished(
        run_id=run_id,
        ts=finished.ts,
        status=finished.status,
        usage=finished.usage,
        error=finished.error,
    )
    return [start, step, *body, finished, end]


# ------------------------------------------------------------------------------------ pi


def _is_pi(head: list[Any]) -> bool:
    """pi writes its ``session`` line first, even with ``--no-session``; a stray line of
    stderr mixed in before it is tolerated."""
    return any(
        isinstance(line, dict)
        and line.get("type") == "session"
        and "cwd" in line
        and ("version" in line or "id" in line)
        for line in head
    )


def _read_pi(path: Path, run_id: str) -> list[Event]:
    parser = PiEventParser(run_id, 0)
    body: list[Event] = []
    with path.open("rb") as handle:
        for raw in handle:
            body += parser.feed(raw, complete=raw.endswith(b"\n"))
    *closing, finished = parser.finish(None)
    assert isinstance(finished, StepFinished)
    session = parser.session
    cwd = session.get("cwd") if isinstance(session.get("cwd"), str) else str(path.parent)
    started_ms = parser.started_at_ms
    started = (
        datetime.fromtimestamp(started_ms / 1000, UTC)
        if started_ms is not None
        else datetime.fromtimestamp(path.stat().st_mtime, UTC)
    )
    return one_step_run(
        run_id=run_id,
        agent="pi",
        task=parser.prompt or "",
        model=parser.model,
        backend="pi",
        cwd=str(cwd),
        started_at=started.isoformat(timespec="seconds"),
        body=body + closing,
        finished=finished,
    )


# ------------------------------------------------------------------------------ Claude Code


def _read_claude(path: Path, run_id: str) -> list[Event]:
    with path.open("rb") as handle:
        transcript = read_claude_transcript(handle, run_id)
    started = transcript.started_at or datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return one_step_run(
        run_id=run_id,
        agent="claude",
        task=transcript.task,
        model=transcript.model,
        backend="claude",
        cwd=transcript.cwd or str(path.parent),
        started_at=started.isoformat(timespec="seconds"),
        body=transcript.body,
        finished=transcript.finished,
    )


DETECTORS: list[TranscriptFormat] = [
    TranscriptFormat("pi", "the output of `pi --mode json`", _is_pi, _read_pi),
    TranscriptFormat(
        "claude",
        "the output of `claude -p --output-format stream-json --verbose`",
        looks_like_claude,
        _read_claude,
    ),
]


# ------------------------------------------------------------------------------------ entry


def _head(path: Path) -> list[Any]:
    lines: list[Any] = []
    with path.open("rb") as handle:
        while len(lines) < HEAD_LINES:
            raw = handle.readline(HEAD_LINE_BYTES)
            if not raw:
                break
            if not raw.strip():
                continue
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append(None)
    return lines


def import_transcript(path: Path) -> list[Event]:
    """Read a saved transcript as a complete one-step run with a new run id.

    Raises ``ValueError`` with one clear sentence when the file cannot be read or is in no
    known format.
    """
    path = Path(path)
    try:
        head = _head(path)
        for transcript_format in DETECTORS:
            if transcript_format.detect(head):
                return transcript_format.read(path, new_run_id())
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    known = "; ".join(f"{f.name}: {f.description}" for f in DETECTORS)
    raise ValueError(f"{path} is not a transcript Baton can read (known formats: {known})")
