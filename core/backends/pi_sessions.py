"""Where pi keeps the conversations of Baton's steps, and their deletion with the run.

Every pi step runs with ``--session-dir`` set to :func:`sessions_dir`, inside Baton's private
data folder: never in the working folder (where the agent, or a commit, could read or ship
them) nor pi's own ``~/.pi/agent/sessions``. A step's ``step_finished.session`` names its file,
so Continue can fork it; the files stay until the run is deleted, when :func:`prune_sessions`
removes them (as :func:`core.workspace.checkpoints.prune_run` removes the run's checkpoint refs).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.config.paths import data_dir
from core.model.events import Event, StepFinished


def sessions_dir() -> Path:
    """Where pi keeps the sessions of Baton's steps (private, inside Baton's data folder, so
    out of every tool's reach): what Continue forks."""
    path = data_dir() / "pi-sessions"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def prune_sessions(events: Iterable[Event]) -> int:
    """Delete the pi session files the run's own steps wrote; returns how many.

    A run file is data, possibly imported or edited, so only a ``.jsonl`` file directly in
    :func:`sessions_dir` is ever deleted (a symlink is left alone); a step reused from a parent
    run names the parent's file, which stays with the parent."""
    folder = sessions_dir().resolve()
    deleted = 0
    for event in events:
        if not isinstance(event, StepFinished) or not event.session or event.reused_from:
            continue
        path = Path(event.session)
        if not path.is_absolute() or path.suffix != ".jsonl" or path.is_symlink():
            continue
        if path.parent.resolve() != folder or not path.is_file():
            continue
        path.unlink(missing_ok=True)
        deleted += 1
    return deleted
