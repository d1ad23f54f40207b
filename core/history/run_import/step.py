"""What a transcript format's reader returns: one step's events and what the run around them
needs (task, model, folder, start). :mod:`core.history.run_import.formats` wraps it into a run, so
each
reader only parses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.model.events import Event, StepFinished


@dataclass
class StepTranscript:
    body: list[Event]
    """The step's events before its :class:`StepFinished`."""
    finished: StepFinished
    task: str
    model: str | None
    cwd: str | None
    """The folder the CLI ran in, when the file says; the file's folder is used otherwise."""
    started_at: datetime | None
    """When the file says the run started; the file's modification time is used otherwise."""
