"""Saved runs: one NDJSON file per run plus a SQLite index for the history list (DESIGN §2).

Each event is written as one line and flushed the moment it happens, so a crash loses at most
the line being written; :func:`load_run` skips a torn last line. Before a line is written, every
secret Baton knows of (provider API keys, ``*_API_KEY``/``*_TOKEN`` environment values, bearer
tokens) is replaced by ``[redacted]``: backends are not trusted to keep keys out of their
output.

The index (``runs.sqlite``) is a cache of what the files say: it can be rebuilt from them, and a
row whose run never finished (the process died) reads ``interrupted`` once its file stops
growing.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError

from core import paths
from core.events import Event, RunFinished, RunStarted, UsageStats, event_from_json

INTERRUPTED_AFTER_S = 120.0
"""A 'running' run whose file has not changed for this long is shown as interrupted."""

_SECRET_ENV = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def runs_dir() -> Path:
    folder = paths.data_dir() / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_file(run_id: str) -> Path:
    return runs_dir() / f"{run_id}.jsonl"


class Redactor:
    """Replaces known secret values in text. Short values (< 8 chars) are ignored: they would
    redact ordinary words and are no real key anyway."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)

    @classmethod
    def from_environment(cls, extra: Iterable[str] = ()) -> Redactor:
        values = [v for k, v in os.environ.items() if _SECRET_ENV.search(k)]
        return cls([*values, *extra])

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "[redacted]")
        return _BEARER.sub(r"\1[redacted]", text)


class RunWriter:
    """Appends a run's events to its file, one flushed line each."""

    def __init__(self, run_id: str, redactor: Redactor) -> None:
        self.path = run_file(run_id)
        self._redactor = redactor
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        self._file.write(self._redactor.scrub(event.model_dump_json()) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


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
_SEARCHED = (
    "lower(id || ' ' || mode || ' ' || coalesce(preset, '') || ' ' || args || ' ' || agents"
    " || ' ' || cwd || ' ' || started_at || ' ' || status || ' ' || coalesce(error, '') || ' ' ||"
    " CASE status WHEN 'ok' THEN 'completed' WHEN 'error' THEN 'failed'"
    " WHEN 'aborted' THEN 'cancelled' WHEN 'running' THEN 'interrupted' ELSE '' END)"
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

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "runs.sqlite"
        with self._connect() as db:
            db.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.row_factory = sqlite3.Row
            with db:
                yield db

    def started(self, event: RunStarted, path: Path) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs (id, mode, preset, agents, args, cwd, started_at,"
                " status, usage, path) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (
                    event.run_id,
                    event.mode,
                    event.preset,
                    json.dumps([s.agent for s in event.steps]),
                    json.dumps(event.args),
                    event.cwd,
                    event.started_at,
                    UsageStats().model_dump_json(),
                    str(path),
                ),
            )

    def finished(self, event: RunFinished, started_at: str) -> None:
        finished_at = (datetime.fromisoformat(started_at) + timedelta(seconds=event.ts)).isoformat(
            timespec="seconds"
        )
        with self._connect() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, status = ?, duration_s = ?, usage = ?,"
                " error = ? WHERE id = ?",
                (
                    finished_at,
                    event.status,
                    event.ts,
                    event.usage.model_dump_json(),
                    event.error,
                    event.run_id,
                ),
            )

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
        status = row["status"]
        if status == "running":
            try:
                idle = time.time() - Path(row["path"]).stat().st_mtime
            except OSError:
                idle = INTERRUPTED_AFTER_S
            if idle >= INTERRUPTED_AFTER_S:
                status = "interrupted"
        return RunRecord(
            id=row["id"],
            mode=row["mode"],
            preset=row["preset"],
            agents=json.loads(row["agents"]),
            args=json.loads(row["args"]),
            cwd=row["cwd"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            status=status,
            duration_s=row["duration_s"],
            usage=UsageStats.model_validate_json(row["usage"]),
            error=row["error"],
            path=row["path"],
        )

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
        order = f"{SORT_KEYS[sort]} {direction}, id {direction}"
        with self._connect() as db:
            rows = db.execute(
                f"SELECT * FROM runs{where} ORDER BY {order} LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [self._record(row) for row in rows]

    def list(self, limit: int = 500) -> list[RunRecord]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT * FROM runs ORDER BY started_at DESC LIMIT ?", (limit,)
            ).fetchall()
        return [self._record(row) for row in rows]

    def delete(self, run_id: str) -> None:
        record = self.get(run_id)
        with self._connect() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        if record is not None:
            Path(record.path).unlink(missing_ok=True)
