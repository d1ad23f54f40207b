"""Bringing runs from elsewhere into the history: Baton's own run files (from another machine
or a backup) and transcripts of agent CLIs (see :mod:`core.history.run_import.formats`).

Either way the result is an ordinary saved run — a file in ``<data>/runs`` and a row in the
index — so it opens, exports and re-runs like any other. Imported events are redacted like
live ones, since a transcript may well contain a key.
"""

from __future__ import annotations

from pathlib import Path

from core.history.run_import.formats import import_transcript
from core.model.events import Event, RunStarted
from core.record.run_files import RunIndex, RunRecord, RunWriter, read_events
from core.safety.redaction import Redactor, redact_all


def load_any(path: Path) -> list[Event]:
    """Events of a Baton run file or of a recognised transcript; ``ValueError`` otherwise."""
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    first = next(read_events(path), None)
    if isinstance(first, RunStarted):
        return list(read_events(path))
    return import_transcript(path)


def import_run(path: Path, index: RunIndex | None = None) -> RunRecord:
    """Save the run in ``path`` into the history; returns its index record."""
    events = load_any(path)
    start = events[0]
    if not isinstance(start, RunStarted):  # load_any guarantees it; keeps mypy and readers sure
        raise ValueError(f"{path} does not start with a run")
    index = index or RunIndex()
    if index.get(start.run_id) is not None:
        raise ValueError(f"run {start.run_id} is already in the history")
    writer = RunWriter(start.run_id)
    try:
        for event in redact_all(events, Redactor.from_environment()):
            writer.append(event)
        writer.flush()
    finally:
        writer.close()
    return index.add_file(writer.path)
