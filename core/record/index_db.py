"""Connections to the run index (``runs.sqlite``), kept open per thread.

Every run writes its index row twice (started, finished) and a batch item twice more, and
opening a connection for each — the file, the WAL set-up pragmas, the close that checkpoints
the log — cost more than the rows (benchmarks/batch.py). A thread keeps one connection per
index file and reuses it; each ``with`` block is still one transaction, committed at its end
(WAL with ``synchronous=NORMAL``: a commit appends to the log without an fsync, so a crash can
lose the last rows of this cache of the run files, never corrupt it).

A connection is only reused while its file is the one at the path (same device and inode): an
index deleted or replaced meanwhile (a reset, a test's fresh data folder) gets a new one.

**Group commit.** The rows a run and a batch item write as they go (started, finished: four
a batch item) can be queued with :func:`write_soon` instead: every write queued during one
turn of the thread's event loop is committed in one transaction at the turn's end, as the run
files are flushed (:mod:`core.record.publisher`) — 64 items ending together make one commit,
not 128. A read of the index on the same thread commits what is queued first, so a thread
always reads its own writes; another thread or process sees them one loop turn later. What a
kill -9 loses is the queued rows of that turn: the run files still say how each run ended, and
a row left ``running`` by a dead owner is repaired from its file
(:meth:`core.record.run_files.RunIndex.get`). Queued writes left when the interpreter exits
(a loop stopped before its turn ended) are committed then.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

MAX_OPEN = 8
"""Index files a thread keeps connections to (more: the oldest is closed)."""

IndexWrite = Callable[[sqlite3.Connection], object]
"""Statements to run in a transaction of the index (queued by :func:`write_soon`)."""

WriteDone = Callable[[Exception | None], None]
"""Told once a queued write is committed (``None``) or has failed (the error)."""

_local = threading.local()
_log = logging.getLogger(__name__)


@contextmanager
def index_transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` (rows as :class:`sqlite3.Row`, foreign keys on), in one
    transaction committed when the block ends (rolled back when it raises). What this thread
    queued for ``path`` with :func:`write_soon` is committed first, so it reads its writes."""
    _pending().commit(path)
    db = _connection(path)
    with db:
        yield db


def write_soon(path: Path, write: IndexWrite, done: WriteDone | None = None) -> None:
    """Run ``write`` in the transaction that commits this loop turn's writes to ``path``
    (see the module's docstring); with no event loop running, in its own transaction now.
    ``done`` is told the outcome after the commit; errors go there, never to the caller."""
    pending = _pending()
    pending.add(path, write, done)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        pending.commit(path)
        return
    pending.schedule(loop)


class _PendingWrites:
    """One thread's queued writes, per index file, in the order they were asked for."""

    def __init__(self) -> None:
        self._queued: dict[Path, list[tuple[IndexWrite, WriteDone | None]]] = {}
        self._scheduled_on: asyncio.AbstractEventLoop | None = None
        """The loop a commit is scheduled on: a loop stopped and closed before its turn
        ended (a test's, an app quitting) never runs it, and the next loop must."""
        self._lock = threading.Lock()  # the exit hook commits from another thread

    def add(self, path: Path, write: IndexWrite, done: WriteDone | None) -> None:
        with self._lock:
            self._queued.setdefault(path, []).append((write, done))

    def schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._scheduled_on is not loop:
            self._scheduled_on = loop
            loop.call_soon(self.commit_all)

    def commit_all(self) -> None:
        self._scheduled_on = None
        with self._lock:
            paths = list(self._queued)
        for path in paths:
            self.commit(path)

    def commit(self, path: Path) -> None:
        with self._lock:
            writes = self._queued.pop(path, None)
        if writes:
            _commit(path, writes)


def _commit(path: Path, writes: list[tuple[IndexWrite, WriteDone | None]]) -> None:
    """All of ``writes`` in one transaction; when that fails, each in its own (one bad or
    refused write must not cost the others), each ``done`` told its own outcome."""
    try:
        db = _connection(path)
        with db:
            for write, _ in writes:
                write(db)
    except Exception:  # retried one by one below, which reports each outcome
        outcomes = [_commit_one(path, write) for write, _ in writes]
    else:
        outcomes = [None] * len(writes)
    for (_, done), outcome in zip(writes, outcomes, strict=True):
        if done is not None:
            try:
                done(outcome)
            except Exception:
                _log.exception("a callback after an index write failed")
        elif outcome is not None:
            _log.error("could not write to the run index %s: %s", path, outcome)


def _commit_one(path: Path, write: IndexWrite) -> Exception | None:
    try:
        db = _connection(path)
        with db:
            write(db)
    except Exception as error:  # a bug in a write is reported as its outcome, not raised
        return error
    return None


_every_thread: weakref.WeakSet[_PendingWrites] = weakref.WeakSet()


def _pending() -> _PendingWrites:
    pending: _PendingWrites | None = getattr(_local, "pending", None)
    if pending is None:
        pending = _local.pending = _PendingWrites()
        _every_thread.add(pending)
    return pending


@atexit.register
def _commit_at_exit() -> None:
    """Writes queued on a loop that stopped before its turn ended (an app quitting)."""
    for pending in list(_every_thread):
        pending.commit_all()


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
