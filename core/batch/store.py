"""The batch record: what a batch runs and how far each item got, kept beside the runs index.

Two tables in ``runs.sqlite`` (the runs index's database, so one file holds the history):
``batches`` (id, what to run as a :class:`BatchSpec`, when) and ``batch_items`` (one row per
input row: its arguments and parameters, the run id of its latest attempt, that attempt's
status). Every item is an ordinary run as well, indexed in ``runs`` with a ``batch_id`` column,
so History can group and the run file stays the source of truth for what happened.

An item still ``running`` whose run's owner is gone (the process was killed) reads as that
run's repaired status (``interrupted``, see :mod:`core.record.run_files`), so resume picks it up.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from core.batch.inputs import BatchItem
from core.config import paths
from core.definitions.agents import Scope
from core.model.events import UsageStats
from core.record.index_db import index_transaction, write_soon
from core.record.run_files import RunIndex

ItemStatus = Literal["pending", "running", "ok", "error", "aborted", "interrupted"]
"""``pending``: not started yet (or cancelled before it started); the rest as a run's."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    inputs TEXT NOT NULL,
    created_at TEXT NOT NULL,
    placement TEXT
);
CREATE TABLE IF NOT EXISTS batch_items (
    batch_id TEXT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    item INTEGER NOT NULL,
    args TEXT NOT NULL,
    params TEXT NOT NULL,
    run_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    PRIMARY KEY (batch_id, item)
);
"""
_ITEM_COLUMNS_ADDED = {"outcome": "TEXT"}
"""Columns newer than the first batch store: added to an older file when it is opened."""


class BatchSpec(BaseModel):
    """What every item of a batch runs: the preset and ``baton run``'s options. Plain data
    (JSON, picklable), so it travels to a remote worker as it is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    preset: str
    cwd: str
    scope: Scope = "both"
    model: str | None = None
    backend: str | None = None
    trust_project: bool = False


class BatchPlacement(BaseModel):
    """Where and how a batch's items run (``--executor``, ``--ray-address``, ``--concurrency``,
    ``--repo``/``--ref``), as it was started: a resume runs the rest the same way unless told
    otherwise. Stays on the supervising machine (it is not part of what a worker runs)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    executor: str = "local"
    address: str | None = None
    concurrency: int = 4
    repo: str | None = None
    ref: str = "HEAD"


class StoredOutcome(BaseModel):
    """How an item's latest attempt ended, kept with the item: what ``batch status|export``
    and the batch view show, without reading the run's index row or its file again."""

    model_config = ConfigDict(frozen=True)

    usage: UsageStats = UsageStats()
    duration_s: float | None = None
    output: str = ""
    """The last step's final output."""
    structured: dict[str, Any] | None = None
    """The last step's structured result, when its agent declares one."""
    error: str | None = None


class ItemRecord(BaseModel):
    """One item of a batch as recorded: its input row and its latest attempt."""

    index: int
    """0-based row of the inputs."""
    item: BatchItem
    run_id: str | None = None
    status: ItemStatus = "pending"
    outcome: StoredOutcome | None = None
    """Kept when the attempt ended here (None: running, pending, or recorded before
    outcomes were kept)."""


class BatchRecord(BaseModel):
    id: str
    spec: BatchSpec
    inputs: str
    """Where the items came from (the inputs file's name), for people."""
    created_at: str
    items: list[ItemRecord]
    placement: BatchPlacement | None = None
    """None for a batch recorded before placements were kept (a resume then uses defaults)."""

    def counts(self) -> dict[str, int]:
        """Items per status, in a stable order (only statuses that occur)."""
        counts: dict[str, int] = {}
        for status in ("ok", "error", "aborted", "interrupted", "running", "pending"):
            number = sum(1 for item in self.items if item.status == status)
            if number:
                counts[status] = number
        return counts

    def unfinished(self) -> list[ItemRecord]:
        """The items a resume runs again: every one that did not finish ``ok`` and is not
        running now (in another process: a dead one's items read ``interrupted``)."""
        return [item for item in self.items if item.status not in ("ok", "running")]


def new_batch_id() -> str:
    return f"batch-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class BatchStore:
    """Batch records in ``runs.sqlite``. Each thread uses its own kept-open connection
    (:mod:`core.record.index_db`), so the store may be used from any thread."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "runs.sqlite"
        self._runs = RunIndex(self.path)  # also adds the runs.batch_id column to old files
        with self._connect() as db:
            db.executescript(_SCHEMA)
            columns = {row["name"] for row in db.execute("PRAGMA table_info(batches)")}
            if "placement" not in columns:  # a file from before placements were kept
                db.execute("ALTER TABLE batches ADD COLUMN placement TEXT")
            have = {row["name"] for row in db.execute("PRAGMA table_info(batch_items)")}
            for column, kind in _ITEM_COLUMNS_ADDED.items():
                if column not in have:
                    db.execute(f"ALTER TABLE batch_items ADD COLUMN {column} {kind}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with index_transaction(self.path) as db:  # as the runs index: kept open per thread
            yield db

    def create(
        self,
        spec: BatchSpec,
        items: Sequence[BatchItem],
        inputs: str,
        placement: BatchPlacement | None = None,
    ) -> BatchRecord:
        """Record a new batch with every item ``pending``."""
        batch_id = new_batch_id()
        created = datetime.now(UTC).isoformat(timespec="seconds")
        where = placement.model_dump_json() if placement is not None else None
        with self._connect() as db:
            db.execute(
                "INSERT INTO batches (id, spec, inputs, created_at, placement) "
                "VALUES (?, ?, ?, ?, ?)",
                (batch_id, spec.model_dump_json(), inputs, created, where),
            )
            db.executemany(
                "INSERT INTO batch_items (batch_id, item, args, params) VALUES (?, ?, ?, ?)",
                [
                    (batch_id, index, json.dumps(item.args), json.dumps(item.params))
                    for index, item in enumerate(items)
                ],
            )
        record = self.get(batch_id)
        assert record is not None
        return record

    def get(self, batch_id: str) -> BatchRecord | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM batches WHERE id = ?", (batch_id,)).fetchone()
            if row is None:
                return None
            rows = db.execute(
                "SELECT * FROM batch_items WHERE batch_id = ? ORDER BY item", (batch_id,)
            ).fetchall()
        return BatchRecord(
            id=row["id"],
            spec=BatchSpec.model_validate_json(row["spec"]),
            inputs=row["inputs"],
            created_at=row["created_at"],
            items=[self._item(batch_id, item) for item in rows],
            placement=(
                BatchPlacement.model_validate_json(row["placement"]) if row["placement"] else None
            ),
        )

    def place(self, batch_id: str, placement: BatchPlacement) -> None:
        """Remember how the batch runs now (a resume given other flags), for the next."""
        with self._connect() as db:
            db.execute(
                "UPDATE batches SET placement = ? WHERE id = ?",
                (placement.model_dump_json(), batch_id),
            )

    def list(self, limit: int = 100) -> list[BatchRecord]:
        """The newest batches first."""
        with self._connect() as db:
            ids = [
                row["id"]
                for row in db.execute(
                    "SELECT id FROM batches ORDER BY created_at DESC, id DESC LIMIT ?", (limit,)
                )
            ]
        return [record for batch_id in ids if (record := self.get(batch_id)) is not None]

    def delete(self, batch_id: str) -> None:
        """Forget a batch record (its items' runs stay in the history)."""
        with self._connect() as db:
            db.execute("DELETE FROM batch_items WHERE batch_id = ?", (batch_id,))
            db.execute("DELETE FROM batches WHERE id = ?", (batch_id,))

    def started(self, batch_id: str, index: int, run_id: str) -> None:
        self._set(batch_id, index, run_id, "running")

    def finished(
        self,
        batch_id: str,
        index: int,
        run_id: str,
        status: ItemStatus,
        outcome: StoredOutcome | None = None,
    ) -> None:
        """Record the item's ending, with its ``outcome`` when known (kept, so nothing has
        to read the run back to show it)."""
        self._set(batch_id, index, run_id, status, outcome)

    def _set(
        self,
        batch_id: str,
        index: int,
        run_id: str,
        status: ItemStatus,
        outcome: StoredOutcome | None = None,
    ) -> None:
        row = (
            run_id,
            status,
            outcome.model_dump_json() if outcome is not None else None,
            batch_id,
            index,
        )
        # In the loop turn's group commit, with the items' runs' rows. A failure is logged: a
        # row left "running" reads as its run ended (see _item), as a dead owner's does.
        write_soon(
            self.path,
            lambda db: db.execute(
                "UPDATE batch_items SET run_id = ?, status = ?, outcome = ?"
                " WHERE batch_id = ? AND item = ?",
                row,
            ),
        )

    def _item(self, batch_id: str, row: sqlite3.Row) -> ItemRecord:
        status: ItemStatus = row["status"]
        stored = row["outcome"]
        if status == "running" and row["run_id"]:
            run = self._runs.get(row["run_id"])  # repairs a run whose owner died
            if run is None:
                status = "pending"  # the run never got as far as its first line
            elif run.status != "running":
                status = run.status  # type: ignore[assignment]
                self._set(batch_id, row["item"], row["run_id"], status)
        return ItemRecord(
            index=row["item"],
            item=BatchItem(args=json.loads(row["args"]), params=json.loads(row["params"])),
            run_id=row["run_id"],
            status=status,
            outcome=StoredOutcome.model_validate_json(stored) if stored else None,
        )
