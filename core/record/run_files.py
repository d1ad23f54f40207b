"""Saved runs: one NDJSON file per run plus a SQLite index for the history list (architecture:
"File formats").

Each event is written as one line as it happens, and the file flushed at the end of the event
loop's turn (:mod:`core.record.publisher`), so a crash loses at most that turn's lines;
:func:`load_run` skips a torn last line. Events arrive already redacted
(:mod:`core.safety.redaction`).

The index (``runs.sqlite``) is a cache of what the files say: it can be rebuilt from them. A row
still ``running`` whose owner process is gone (:mod:`core.record.liveness`: killed, crashed) is
repaired the first time it is read: indexed as ``interrupted``, and a ``run_finished`` with that
status appended to its file, so the History, ``baton runs list`` and the file all agree.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, ClassVar

from pydantic import BaseModel, ValidationError

from core.backends.pi_sessions import prune_sessions
from core.config import paths
from core.config.handoff_files import remove_handoff
from core.model.events import Event, RunFinished, RunStarted, Usage, UsageStats, event_from_json
from core.record.index_db import WriteDone, index_transaction, write_soon
from core.record.liveness import lock_path, owner_alive
from core.record.run_names import STATUS_WORDS, RunOrigin
from core.safety.redaction import (
    Redactor as Redactor,  # also known as core.record.run_files.Redactor
)
from core.workspace.checkpoints import prune_run

_NO_USAGE = UsageStats().model_dump_json()
INTERRUPTED_ERROR = "the process running it ended before the run did (killed or crashed)"


def runs_dir() -> Path:
    return paths.made_folder(runs_path())


def runs_path() -> Path:
    """Where :func:`runs_dir` is, not made (see :func:`core.config.paths.config_path`)."""
    return paths.data_path() / "runs"


def run_file(run_id: str, *, made: bool = True) -> Path:
    """Where run ``run_id`` is recorded; ``made``: with its folder made when missing (False: a
    writer that makes it when creating the file fails, instead of looking first)."""
    folder = runs_dir() if made else runs_path()
    return folder / f"{run_id}.jsonl"


class RunWriter:
    """Appends a run's events to its file. Not thread-safe: one thread writes (the
    publisher's, or the caller when importing). Write errors propagate.

    Events that went through the publisher (or :func:`core.safety.redaction.redact_all`) are
    redacted
    already; a ``redactor`` scrubs each line once more, for events from anywhere else."""

    def __init__(self, run_id: str, redactor: Redactor | None = None) -> None:
        self.path = run_file(run_id, made=False)
        self._redactor = redactor
        try:  # the folder is there but for the first run (or one removed meanwhile)
            file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        except FileNotFoundError:
            paths.made_folder(self.path.parent)
            file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._file: IO[str] | None = file

    def write(self, event: Event) -> None:
        """Append one line and flush it."""
        self.append(event)
        self.flush()

    def append(self, event: Event, line: str | None = None) -> None:
        """Append one line, buffered until :meth:`flush` (``line``: the event's JSON, when
        the caller made it already)."""
        if self._file is not None:
            if line is None:
                line = event.model_dump_json()
            if self._redactor is not None:
                line = self._redactor.scrub(line)
            self._file.write(line + "\n")

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()


def read_events(path: Path) -> Iterator[Event]:
    """Events of a run file in order. Lines that are not events (a torn last line after a
    crash, a hand edit) are skipped rather than failing the whole run."""
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            if line.strip():
                try:
                    yield event_from_json(line)
                except ValidationError:
                    continue


def load_run(path: Path) -> list[Event]:
    return list(read_events(path))


# --------------------------------------------------------------------------------------------
# Index


class RunRecord(BaseModel):
    id: str
    mode: str
    preset: str | None
    agents: list[str]
    args: list[str]
    cwd: str
    started_at: str
    finished_at: str | None
    status: str
    duration_s: float | None
    usage: UsageStats
    error: str | None
    path: str
    origin: RunOrigin | None = None
    """Where the run came from: resumed or re-run from another, or started by a step."""
    batch_id: str | None = None
    """The batch this run is an item of (:mod:`core.batch`)."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    preset TEXT,
    agents TEXT NOT NULL,
    args TEXT NOT NULL,
    cwd TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    duration_s REAL,
    usage TEXT NOT NULL,
    error TEXT,
    path TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at DESC);
"""
_COLUMNS_ADDED = {"origin": "TEXT", "agent_usage": "TEXT", "batch_id": "TEXT"}
"""Columns newer than the first index: added to an older ``runs.sqlite`` when it is opened."""

SORT_KEYS = {
    "started": "started_at",
    "run": "lower(coalesce(preset, '') || ' ' || args || ' ' || agents)",
    "status": "status",
    "duration": "coalesce(duration_s, -1)",
    "tokens": "coalesce(json_extract(usage, '$.input'), 0)"
    " + coalesce(json_extract(usage, '$.output'), 0)",
    "cost": "coalesce(json_extract(usage, '$.cost'), 0)",
}
"""What :meth:`RunIndex.page` can sort by, as SQL over the ``runs`` table."""
_STATUS_WORDS_SQL = " ".join(
    f"WHEN '{status}' THEN '{word}'" for status, word in STATUS_WORDS.items() if "'" not in word
)
_SEARCHED = (
    "lower(id || ' ' || mode || ' ' || coalesce(preset, '') || ' ' || args || ' ' || agents"
    " || ' ' || cwd || ' ' || started_at || ' ' || status || ' ' || coalesce(error, '') || ' ' ||"
    f" CASE status {_STATUS_WORDS_SQL} ELSE '' END)"
)
"""The text a history filter word is looked for in (the words the table shows included)."""


def _filter_clause(words: Sequence[str]) -> tuple[str, list[str]]:
    """`` WHERE`` every word occurs in :data:`_SEARCHED` (``instr``: no LIKE wildcards)."""
    terms = [word.casefold() for word in words if word]
    if not terms:
        return "", []
    return " WHERE " + " AND ".join(f"instr({_SEARCHED}, ?) > 0" for _ in terms), terms


class RunIndex:
    """``runs.sqlite``: one row per run, written at start and at finish."""

    _ready: ClassVar[set[Path]] = set()
    """Index files whose schema this process has already brought up to date."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "runs.sqlite"
        if self.path in RunIndex._ready and self.path.exists():
            return  # every run opens an index: check the schema once per process, not each time
        with self._connect() as db:
            db.executescript(_SCHEMA)
            have = {row["name"] for row in db.execute("PRAGMA table_info(runs)")}
            for column, kind in _COLUMNS_ADDED.items():
                if column not in have:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
        RunIndex._ready.add(self.path)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # A cache of the run files: a power cut may lose its last rows (rebuilt from the
        # files), never corrupt it; no fsync per row and a connection kept open per thread
        # (core.record.index_db) keep a 64-item batch cheap.
        with index_transaction(self.path) as db:
            yield db

    def started(self, event: RunStarted, path: Path) -> None:
        """Index the run as ``running`` now (errors raise)."""
        with self._connect() as db:
            db.execute(*_started_row(event, path))

    def started_soon(self, event: RunStarted, path: Path, done: WriteDone | None = None) -> None:
        """:meth:`started` in this loop turn's group commit
        (:func:`core.record.index_db.write_soon`); ``done`` is told the outcome."""
        statement, row = _started_row(event, path)
        write_soon(self.path, lambda db: db.execute(statement, row), done)

    def finished(
        self,
        event: RunFinished,
        started_at: str,
        *,
        if_running: bool = False,
        by_agent: dict[str, UsageStats] | None = None,
    ) -> bool:
        """Record the run's ending (and, when known, its usage per agent, for History's
        charts); ``if_running``: only over a row still ``running``. Returns whether a row
        changed."""
        statement, row = _finished_row(event, started_at, if_running, by_agent)
        with self._connect() as db:
            return bool(db.execute(statement, row).rowcount)

    def finished_soon(
        self,
        event: RunFinished,
        started_at: str,
        *,
        by_agent: dict[str, UsageStats] | None = None,
        done: WriteDone | None = None,
    ) -> None:
        """:meth:`finished` in this loop turn's group commit; ``done`` is told the outcome
        (a recording releases its liveness lock then: not before the row says how the run
        ended)."""
        statement, row = _finished_row(event, started_at, False, by_agent)
        write_soon(self.path, lambda db: db.execute(statement, row), done)

    def usage_by_agent(self) -> dict[str, UsageStats]:
        """Every recorded run's usage, summed per agent (runs from before this was kept
        count under their only agent, when they had one)."""
        totals: dict[str, UsageStats] = {}
        with self._connect() as db:
            rows = db.execute("SELECT agents, usage, agent_usage FROM runs").fetchall()
        for row in rows:
            if row["agent_usage"]:
                parts = {
                    name: UsageStats.model_validate(value)
                    for name, value in json.loads(row["agent_usage"]).items()
                }
            else:
                names = set(json.loads(row["agents"]))
                if len(names) != 1:
                    continue
                parts = {names.pop(): UsageStats.model_validate_json(row["usage"])}
            for name, usage in parts.items():
                totals[name] = totals.get(name, UsageStats()) + usage
        return totals

    def usage_of_preset(self, preset: str, limit: int = 20) -> list[UsageStats]:
        """The usage of the latest ``limit`` runs of ``preset`` that finished ok (a failed or
        cancelled run says little about what a whole run costs), newest first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT usage FROM runs WHERE preset = ? AND status = 'ok'"
                " ORDER BY started_at DESC, rowid DESC LIMIT ?",
                (preset, limit),
            ).fetchall()
        return [UsageStats.model_validate_json(row["usage"]) for row in rows]

    def usage_by_day(self, days: int = 30) -> list[tuple[str, UsageStats]]:
        """(YYYY-MM-DD, usage) for the last ``days`` days that had runs, oldest first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT substr(started_at, 1, 10) AS day, usage FROM runs"
                " WHERE started_at >= date('now', ?) ORDER BY started_at",
                (f"-{days} days",),
            ).fetchall()
        totals: dict[str, UsageStats] = {}
        for row in rows:
            totals[row["day"]] = totals.get(row["day"], UsageStats()) + (
                UsageStats.model_validate_json(row["usage"])
            )
        return list(totals.items())

    def add_file(self, path: Path) -> RunRecord:
        """Index a run file written elsewhere (an import, a copy from another machine)."""
        events = load_run(path)
        start = next((e for e in events if isinstance(e, RunStarted)), None)
        if start is None:
            raise ValueError(f"{path} is not a Baton run file (no run_started event)")
        self.started(start, path)
        end = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
        if end is not None:
            self.finished(end, start.started_at)
        record = self.get(start.run_id)
        if record is None:  # pragma: no cover - written just above
            raise ValueError(f"{path} could not be indexed")
        return record

    def _record(self, row: sqlite3.Row) -> RunRecord:
        if row["status"] == "running" and not owner_alive(Path(row["path"])):
            row = self._interrupted(row)
        return RunRecord(
            id=row["id"],
            mode=row["mode"],
            preset=row["preset"],
            agents=json.loads(row["agents"]),
            args=json.loads(row["args"]),
            cwd=row["cwd"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            status=row["status"],
            duration_s=row["duration_s"],
            usage=UsageStats.model_validate_json(row["usage"]),
            error=row["error"],
            path=row["path"],
            origin=RunOrigin.model_validate_json(row["origin"]) if row["origin"] else None,
            batch_id=row["batch_id"],
        )

    def _interrupted(self, row: sqlite3.Row) -> sqlite3.Row:
        """Record a run whose owner is gone as its file says it ended — ``interrupted``
        (appended to the file too) when the file has no ending: the owner died before its
        ending was written, or after it but before the index's group commit.

        The update only applies to a row still ``running``, so an owner that finished after
        the row was read keeps its own ending, and only one reader appends to the file."""
        path = Path(row["path"])
        finished, from_file = _ending_in_file(row["id"], path)
        claimed = self.finished(finished, row["started_at"], if_running=True)
        with self._connect() as db:
            fresh = db.execute("SELECT * FROM runs WHERE id = ?", (row["id"],)).fetchone()
        if claimed:
            if not from_file:
                _append_line(path, finished.model_dump_json())
            lock_path(path).unlink(missing_ok=True)  # the dead owner's, no longer held
        return fresh if fresh is not None else row

    def get(self, run_id: str) -> RunRecord | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None else self._record(row)

    def count(self, words: Sequence[str] = ()) -> int:
        """How many runs match every word of ``words`` (see :meth:`page`)."""
        where, params = _filter_clause(words)
        with self._connect() as db:
            row = db.execute(f"SELECT count(*) FROM runs{where}", params).fetchone()
        return int(row[0])

    def page(
        self,
        offset: int,
        limit: int,
        words: Sequence[str] = (),
        sort: str = "started",
        descending: bool = True,
    ) -> list[RunRecord]:
        """One page of the history, filtered and sorted by SQLite (the History table pages
        through every run this way instead of loading them all).

        ``words``: each must occur (case-insensitively) in the run's id, mode, preset,
        arguments, agents, folder, start time, status (also as the word the table shows:
        "completed", "failed", …) or error. ``sort``: one of :data:`SORT_KEYS`.
        """
        where, params = _filter_clause(words)
        direction = "DESC" if descending else "ASC"
        order = f"{SORT_KEYS[sort]} {direction}, rowid {direction}"
        with self._connect() as db:
            rows = db.execute(
                f"SELECT * FROM runs{where} ORDER BY {order} LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [self._record(row) for row in rows]

    def list(self, limit: int = 500) -> list[RunRecord]:
        """The latest ``limit`` runs, newest first. Start times are kept to the second, so
        runs begun in the same second keep the order they were recorded in (``rowid``)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,)
            ).fetchall()
        return [self._record(row) for row in rows]

    def delete(self, run_id: str) -> None:
        """Forget the run: its row, its file, its checkpoint refs
        (:mod:`core.workspace.checkpoints`), its
        pi session files (:mod:`core.backends.pi_sessions`) and its hand-off copies
        (:mod:`core.run.handoff`)."""
        record = self.get(run_id)
        with self._connect() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        if record is not None:
            if Path(record.path).is_file():
                prune_run(run_id, read_events(Path(record.path)))
                prune_sessions(read_events(Path(record.path)))
            Path(record.path).unlink(missing_ok=True)
        remove_handoff(run_id)


def _finished_at(started_at: str, elapsed: float) -> str:
    return (datetime.fromisoformat(started_at) + timedelta(seconds=elapsed)).isoformat(
        timespec="seconds"
    )


def _started_row(event: RunStarted, path: Path) -> tuple[str, tuple[object, ...]]:
    """The statement and values that index ``event``'s run as ``running``."""
    return (
        "INSERT OR REPLACE INTO runs (id, mode, preset, agents, args, cwd, started_at,"
        " status, usage, path, origin, batch_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
        (
            event.run_id,
            event.mode,
            event.preset,
            json.dumps([s.agent for s in event.steps]),
            json.dumps(event.args),
            event.cwd,
            event.started_at,
            _NO_USAGE,
            str(path),
            origin.model_dump_json() if (origin := RunOrigin.of(event)) else None,
            event.batch_id,
        ),
    )


def _finished_row(
    event: RunFinished,
    started_at: str,
    if_running: bool,
    by_agent: dict[str, UsageStats] | None,
) -> tuple[str, tuple[object, ...]]:
    """The statement and values that record ``event`` in its run's row."""
    condition = " AND status = 'running'" if if_running else ""
    agents = (
        json.dumps({name: usage.model_dump() for name, usage in by_agent.items()})
        if by_agent
        else None
    )
    return (
        "UPDATE runs SET finished_at = ?, status = ?, duration_s = ?, usage = ?,"
        f" error = ?, agent_usage = coalesce(?, agent_usage) WHERE id = ?{condition}",
        (
            _finished_at(started_at, event.ts),
            event.status,
            event.ts,
            event.usage.model_dump_json(),
            event.error,
            agents,
            event.run_id,
        ),
    )


def _ending_in_file(run_id: str, path: Path) -> tuple[RunFinished, bool]:
    """The ``run_finished`` the file ends with (and ``True``), or the one an interrupted run
    gets: its usage so far, at its last event (and ``False``)."""
    usage, ts, ending = UsageStats(), 0.0, None
    try:
        for event in read_events(path):
            ts = max(ts, event.ts)
            if isinstance(event, Usage):
                usage = usage + event.usage
            elif isinstance(event, RunFinished):
                ending = event
            elif isinstance(event, RunStarted):
                ending = None  # a file resumed into: the ending of its last start counts
    except OSError:
        pass
    if ending is not None:
        return ending, True
    interrupted = RunFinished(
        run_id=run_id, ts=ts, status="interrupted", usage=usage, error=INTERRUPTED_ERROR
    )
    return interrupted, False


def append_event(path: Path, event: Event) -> None:
    """Add an event to a finished run's file (a restore made afterwards, say)."""
    _append_line(path, event.model_dump_json())


def _append_line(path: Path, line: str) -> None:
    """Append a line after whatever is there, starting a new line after a torn one."""
    try:
        with open(path, "a+b") as file:
            file.seek(0, 2)
            torn = False
            if file.tell():
                file.seek(-1, 2)
                torn = file.read(1) != b"\n"
            file.write((b"\n" if torn else b"") + line.encode() + b"\n")
    except OSError:
        pass  # a read-only or vanished file: the index still says interrupted
