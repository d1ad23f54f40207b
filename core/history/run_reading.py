"""A saved run or transcript read and folded in one call, ready to show.

Opening a run shows its *state*, not its events: the window replays nothing at recorded speed
and keeps no event list. Reading and folding 100,000 events takes about a second of CPU, so
the GUI calls :func:`read_folded` on a worker thread and only takes the finished
:class:`FoldedRun` on its own (the state is handed over, never shared while it is built).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.history.run_import import load_any
from core.model.events import Event, RunStarted
from core.record.run_files import read_events
from core.record.run_state import RunState


@dataclass
class FoldedRun:
    state: RunState
    started: RunStarted | None
    """The run's first event when it is a ``run_started`` (a re-run and the history need it)."""


YIELD_EVERY = 200
"""Events folded between two offers of the GIL to other threads (see :func:`fold_run`)."""


def fold_run(events: Iterable[Event], *, share_gil: bool = False) -> FoldedRun:
    """Fold ``events``. With ``share_gil`` (on a worker thread beside the GUI) the GIL is
    offered every :data:`YIELD_EVERY` events: left to itself, a busy Python thread keeps it
    for up to 150 ms at a time (measured), and the GUI thread cannot paint meanwhile."""
    state = RunState()
    started: RunStarted | None = None
    for count, event in enumerate(events):
        if state.events == 0 and isinstance(event, RunStarted):
            started = event
        state.apply(event)
        if share_gil and count % YIELD_EVERY == 0:
            time.sleep(0)
    return FoldedRun(state, started)


def read_folded(path: Path) -> FoldedRun:
    """The folded run in ``path`` (a Baton run file or a transcript); ``ValueError`` or
    ``OSError`` when it cannot be read, ``ValueError`` when it holds no events.

    A run file is folded as it is read, one event at a time: no list of 100,000 events is
    built only to be thrown away (freeing it in one go would hold the GIL for a long moment,
    which the GUI thread would feel)."""
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    first = next(read_events(path), None)
    events = read_events(path) if isinstance(first, RunStarted) else load_any(path)
    folded = fold_run(events, share_gil=True)
    if not folded.state.events:
        raise ValueError(f"{path.name} holds no events")
    return folded
