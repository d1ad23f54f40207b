"""Connections to the run index (``runs.sqlite``), kept open per thread.

Every run writes its index row twice (started, finished) and a batch item twice more, and
opening a connection for each — the file, the WAL set-up pragmas, the close that checkpoints
the log — cost more than the rows (benchmarks/batch.py). A thread keeps one connection per
index file and reuses it; each ``with`` block is still one transaction, committed at its end
(WAL with ``synchronous=NORMAL``: a commit appends to the log without an fsync, so a crash can
lose the last rows of this cache of the run files, never corrupt it).

A connection is only reused while its file is the one at the path (same device and inode): an
index deleted or replaced meanwhile (a reset, a test's fresh data folder) gets a new one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MAX_OPEN = 8
"""Index files a thread keeps connections to (more: the oldest is closed)."""

_local = threading.local()


@contextmanager
def index_transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` (rows as :class:`sqlite3.Row`, foreign keys on), in one
    transaction committed when the block ends (rolled back when it raises)."""
    db = _connection(path)
    with db:
        yield db


def _connection(path: Path) -> sqlite3.Connection:
    held: dict[Path, tuple[sqlite3.Connection, tuple[int, int]]] = _local.__dict__.setdefault(
        "held", {}
    )
    known = held.get(path)
    if known is not None:
        if known[1] == _identity(path):
            return known[0]
        del held[path]
        known[0].close()
    db = sqlite3.connect(path, timeout=10)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.row_factory = sqlite3.Row
        identity = _identity(path)
    except BaseException:
        db.close()
        raise
    if identity is not None:
        held[path] = (db, identity)
        while len(held) > MAX_OPEN:
            oldest = next(iter(held))
            held.pop(oldest)[0].close()
    return db


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def close_index_connections() -> None:
    """Close this thread's kept connections (a test or a reset that removes the files)."""
    held: dict[Path, tuple[sqlite3.Connection, tuple[int, int]]] = _local.__dict__.pop("held", {})
    for db, _ in held.values():
        db.close()
