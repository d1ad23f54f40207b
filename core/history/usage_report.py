"""Usage over saved runs, grouped by agent, model or day: what ``baton usage`` prints.

The run index keeps each run's total (and, for newer runs, its per-agent totals), but not its
models or step counts, so the report folds each run's own file: every step counts under its
agent, its model and the run's start day. A run whose file is gone still counts by day from
the index's total, so deleting a file never makes the money spent vanish from the daily view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core.model.events import UsageStats
from core.record.run_files import RunIndex, RunRecord, load_run
from core.record.run_state import fold

GroupBy = Literal["agent", "model", "day"]

NO_MODEL = "(unknown)"
"""The model key of a step that never reported one (it failed before its first response)."""


@dataclass
class UsageRow:
    key: str
    runs: set[str] = field(default_factory=set)
    steps: int = 0
    usage: UsageStats = field(default_factory=UsageStats)


@dataclass
class UsageReport:
    by: GroupBy
    rows: list[UsageRow]
    unreadable: list[str]
    """Runs whose file could not be read (left out, except from the daily totals)."""


def _add(rows: dict[str, UsageRow], key: str, run_id: str, steps: int, usage: UsageStats) -> None:
    row = rows.setdefault(key, UsageRow(key))
    row.runs.add(run_id)
    row.steps += steps
    row.usage = row.usage + usage.without_latest()


def _fold_record(record: RunRecord, by: GroupBy, rows: dict[str, UsageRow]) -> bool:
    """Add one run's steps to ``rows``; False when its file cannot be read."""
    try:
        state = fold(load_run(Path(record.path)))
    except (OSError, ValueError):
        return False
    day = record.started_at[:10]
    for step in state.steps:
        if step.phase in ("pending", "not_run"):
            continue  # never started: it used nothing and is not a step that ran
        if by == "agent":
            key = step.agent
        elif by == "model":
            key = step.model or step.usage.model or NO_MODEL
        else:
            key = day
        _add(rows, key, record.id, 1, step.usage)
    if by == "day" and not state.steps:
        _add(rows, day, record.id, 0, record.usage)
    return True


def usage_report(
    by: GroupBy, since: str | None = None, index: RunIndex | None = None
) -> UsageReport:
    """Rows sorted by cost then tokens, highest first (by day: oldest day first).

    ``since`` is an ISO date (``YYYY-MM-DD``): runs started before it are left out."""
    rows: dict[str, UsageRow] = {}
    unreadable: list[str] = []
    for record in (index or RunIndex()).list(limit=1_000_000):
        if since and record.started_at[:10] < since:
            continue
        if not _fold_record(record, by, rows):
            unreadable.append(record.id)
            if by == "day":
                _add(rows, record.started_at[:10], record.id, len(record.agents), record.usage)
    ordered = list(rows.values())
    if by == "day":
        ordered.sort(key=lambda r: r.key)
    else:
        ordered.sort(key=lambda r: (-r.usage.cost, -(r.usage.input + r.usage.output), r.key))
    return UsageReport(by, ordered, unreadable)
