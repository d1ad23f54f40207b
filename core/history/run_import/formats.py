"""Which agent CLI wrote a transcript, and the transcript as a complete one-step run.

A transcript becomes ``run_started``, ``step_started``, the mapped events, ``step_finished``,
``run_finished`` — with a new run id, so the run view, the run file and the history treat it
exactly like a run Baton made itself.

Formats are recognised from a file's first lines by the entries of :data:`DETECTORS`, tried in
order. A new format is one more :class:`TranscriptFormat` appended there, with a reader that
returns a :class:`~core.history.run_import.step.StepTranscript`; the wrapping is done here for all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.history.run_import.claude import looks_like_claude, read_claude_transcript
from core.history.run_import.pi import looks_like_pi, read_pi_transcript
from core.history.run_import.step import StepTranscript
from core.model.events import (
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from core.run.runner import new_run_id

HEAD_LINES = 5
"""Non-empty lines a detector sees."""
HEAD_LINE_BYTES = 1_000_000
"""Longest line read for detection (longer ones are cut; detectors only look at the start)."""


@dataclass(frozen=True)
class TranscriptFormat:
    """A transcript format: ``detect`` gets the first lines of the file, each parsed as JSON
    (``None`` when a line is not JSON); ``read`` gets the file's lines and the new run id.
    ``name`` is both the step's agent and its backend."""

    name: str
    description: str
    detect: Callable[[list[Any]], bool]
    read: Callable[[Iterable[bytes], str], StepTranscript]


DETECTORS: list[TranscriptFormat] = [
    TranscriptFormat("pi", "the output of `pi --mode json`", looks_like_pi, read_pi_transcript),
    TranscriptFormat(
        "claude",
        "the output of `claude -p --output-format stream-json --verbose`",
        looks_like_claude,
        read_claude_transcript,
    ),
]


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
                return _read(transcript_format, path)
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    known = "; ".join(f"{f.name}: {f.description}" for f in DETECTORS)
    raise ValueError(f"{path} is not a transcript Baton can read (known formats: {known})")


def _read(transcript_format: TranscriptFormat, path: Path) -> list[Event]:
    run_id = new_run_id()
    with path.open("rb") as handle:
        transcript = transcript_format.read(handle, run_id)
    started = transcript.started_at or datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return one_step_run(
        run_id=run_id,
        agent=transcript_format.name,
        task=transcript.task,
        model=transcript.model,
        backend=transcript_format.name,
        cwd=transcript.cwd if transcript.cwd is not None else str(path.parent),
        started_at=started.isoformat(timespec="seconds"),
        body=transcript.body,
        finished=transcript.finished,
    )


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
