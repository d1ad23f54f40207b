"""Search every saved run: prompts, outputs, tool arguments and tool results.

The index is a sibling of the history's ``runs.sqlite``: ``run_search.sqlite`` in the data
folder, a cache that can be deleted at any time and is rebuilt from the run files. Each run is
cut into *passages* — a step's task, its answer, each tool call's arguments and its result —
and every passage is indexed the way documents are (:mod:`core.documents.search`, the same
functions, not a copy): a word index over :func:`~core.documents.search.segment`-ed text
(words, prefixes, CJK unigrams and bigrams) and a trigram index for exact substrings, both
answering a plan made by :func:`~core.documents.search.plan_query`. So ``登录``, ``auth``,
``"user_id"`` and ``C++`` mean here exactly what they mean in the Documents search box.

When runs are indexed: as ``baton run`` (or ``runs resume``/``rerun``) ends, that run
(:func:`index_ended_run`); after a run ends in the window, on a worker thread; and before each
search, :meth:`RunSearch.update` catches up with every ended run not indexed yet (recorded
before this index existed, by an older Baton, imported) or indexed in the history again since
(an import over an older copy), oldest first, and drops runs deleted from the history. Results
come in reverse indexing order — newest run first for runs indexed as they end — which a
``rowid`` order gives without sorting every match.

Unlike the documents' word index, this one keeps one-letter prefixes only, not two-letter
ones: both made the catch-up of 1,000 runs 2.4× slower (45 s against 18 s) and the file a third
larger; the one-letter index alone costs little (+14 % size) and takes a one-letter search from
7 ms to 2 ms at 300 runs, while two letters are already narrow (``benchmarks/run_search.py``).

Passages are cut at :data:`PASSAGE_CHARS` characters: a 5 MB bash log is found by its first
64 KB, which keeps indexing a run and building a snippet bounded.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.config import paths
from core.documents.search import join_parts, plan_query, segment, snippet_parts
from core.history.run_reading import fold_run
from core.record.run_files import RunIndex, read_events
from core.record.run_state import RunState, TextBlock, ToolCall

_log = logging.getLogger(__name__)

PassageKind = Literal["task", "output", "arguments", "result"]
KIND_WORDS: dict[str, str] = {
    "task": "task",
    "output": "output",
    "arguments": "tool call",
    "result": "tool result",
}
"""How a passage kind is named to a person (CLI and History)."""

PASSAGE_CHARS = 65_536
"""Characters of one passage that are indexed (the head of a longer one)."""
DEFAULT_LIMIT = 20
COMMIT_EVERY = 100
"""Runs indexed per transaction in a catch-up (see :meth:`RunSearch.update`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS indexed_runs (
    run_id TEXT PRIMARY KEY,
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    call_id TEXT,
    tool TEXT,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_by_run ON passages (run_id);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_tri USING fts5(
    text, content='passages', content_rowid='id', tokenize='trigram');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_seg USING fts5(
    text, content='', tokenize='unicode61 remove_diacritics 0', prefix='1');
"""


_STALE_RUNS = """
SELECT r.path, r.finished_at FROM history.runs r LEFT JOIN indexed_runs i ON i.run_id = r.id
WHERE r.status != 'running' AND r.finished_at IS NOT NULL
  AND (i.finished_at IS NULL OR i.finished_at != r.finished_at)
ORDER BY r.started_at, r.id
"""
"""Ended runs of the history (:class:`core.record.run_files.RunIndex`'s table) not indexed as they
are
now: new, or indexed again in the history since (an import over an older copy)."""
_GONE_RUNS = "SELECT run_id FROM indexed_runs WHERE run_id NOT IN (SELECT id FROM history.runs)"


@dataclass(frozen=True)
class Passage:
    step: int
    kind: PassageKind
    text: str
    call_id: str | None = None
    tool: str | None = None


@dataclass(frozen=True)
class SearchHit:
    """One matching passage: where it is (run, step, tool call) and a snippet around it."""

    run_id: str
    step: int
    kind: PassageKind
    snippet: str
    """About 80 characters around the match, each match wrapped in ``[`` ``]`` (for a
    terminal)."""
    call_id: str | None = None
    tool: str | None = None
    parts: tuple[tuple[str, bool], ...] = ()
    """The same snippet as ``(text, is_match)`` parts, so a view marks exactly the matches
    (a ``[`` in the run's own text is not one)."""

    def where(self) -> str:
        """``step 2 · tool result (bash)``, steps counted from 1."""
        tool = f" ({self.tool})" if self.tool else ""
        return f"step {self.step + 1} · {KIND_WORDS[self.kind]}{tool}"


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    patterns: tuple[str, ...]
    """Regular expressions (case-insensitive) that find the matched text again: a view
    highlights with them."""


def passages(state: RunState) -> Iterator[Passage]:
    """What a run is searched by, step by step: task, answer, each tool call's arguments and
    result (superseded attempts left out: they are not what the step did)."""
    for step in state.steps:
        if step.task:
            yield Passage(step.index, "task", step.task)
        answer = "\n\n".join(
            item.text
            for item in step.items
            if isinstance(item, TextBlock) and item.kind == "text" and not item.superseded
        )
        if answer or step.output:
            yield Passage(step.index, "output", answer or step.output)
        for item in step.items:
            if not isinstance(item, ToolCall) or item.superseded:
                continue
            if item.arguments:
                arguments = json.dumps(item.arguments, ensure_ascii=False, indent=1)
                yield Passage(step.index, "arguments", arguments, item.call_id, item.tool)
            result = item.result or item.output
            if result:
                yield Passage(step.index, "result", result, item.call_id, item.tool)


class RunSearch:
    """The run search index. Each call opens its own connection, so any thread may use it
    (the GUI uses it from a worker thread only); SQLite's WAL serialises writers."""

    def __init__(self, path: Path | None = None, history: RunIndex | None = None) -> None:
        self.path = path or self.default_path()
        self.history = history or RunIndex()
        with self._connect() as db:
            db.executescript(_SCHEMA)

    @staticmethod
    def default_path() -> Path:
        return paths.data_dir() / "run_search.sqlite"

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a cache: losing the last write is fine
            with db:
                yield db

    # -- indexing ---------------------------------------------------------------------------

    def update(self) -> int:
        """Index every ended run not indexed yet, drop deleted ones; returns how many runs
        were (re)indexed. A run file that cannot be read is skipped (and tried again later).

        What changed is found by SQLite itself, joining the history's ``runs`` table (attached,
        only read) to :data:`indexed_runs`: nothing changed costs one query, under a
        millisecond at 1,000 runs, where reading both lists into Python cost 3-8 ms on every
        search. One connection, committed every :data:`COMMIT_EVERY` runs: each FTS5 commit
        writes a new index segment, so a catch-up of a thousand runs committed one by one spent
        most of its time merging segments."""
        with self._connect() as db:
            db.execute("ATTACH DATABASE ? AS history", (str(self.history.path),))
            stale = db.execute(_STALE_RUNS).fetchall()
            gone = [row[0] for row in db.execute(_GONE_RUNS)]
            db.commit()
            db.execute("DETACH DATABASE history")
            for run_id in gone:
                self._forget(db, run_id)
            count = 0
            for path, finished_at in stale:
                if self._index(db, Path(path), finished_at):
                    count += 1
                    if count % COMMIT_EVERY == 0:
                        db.commit()
        return count

    def index_file(self, path: Path, finished_at: str) -> bool:
        """(Re)index the run saved at ``path``; False when it cannot be read."""
        with self._connect() as db:
            return self._index(db, path, finished_at)

    def _index(self, db: sqlite3.Connection, path: Path, finished_at: str) -> bool:
        try:
            state = fold_run(read_events(path)).state
        except OSError:
            return False
        if not state.run_id:
            return False
        self._forget(db, state.run_id)
        for p in passages(state):
            text = p.text[:PASSAGE_CHARS]
            rowid = db.execute(
                "INSERT INTO passages (run_id, step, kind, call_id, tool, text)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (state.run_id, p.step, p.kind, p.call_id, p.tool, text),
            ).lastrowid
            db.execute("INSERT INTO passages_tri (rowid, text) VALUES (?, ?)", (rowid, text))
            db.execute(
                "INSERT INTO passages_seg (rowid, text) VALUES (?, ?)", (rowid, segment(text))
            )
        db.execute(
            "INSERT OR REPLACE INTO indexed_runs (run_id, finished_at) VALUES (?, ?)",
            (state.run_id, finished_at),
        )
        return True

    def index_run(self, run_id: str) -> bool:
        """Index one run that has just ended (the rest wait for :meth:`update`)."""
        record = self.history.get(run_id)
        if record is None or record.finished_at is None or record.status == "running":
            return False
        return self.index_file(Path(record.path), record.finished_at)

    @staticmethod
    def _forget(db: sqlite3.Connection, run_id: str) -> None:
        """Remove a run's passages. Both FTS tables are told the old text: the trigram one is
        external-content, the word one contentless (deleted from by re-tokenizing)."""
        old = db.execute("SELECT id, text FROM passages WHERE run_id = ?", (run_id,)).fetchall()
        for rowid, text in old:
            db.execute(
                "INSERT INTO passages_tri (passages_tri, rowid, text) VALUES ('delete', ?, ?)",
                (rowid, text),
            )
            db.execute(
                "INSERT INTO passages_seg (passages_seg, rowid, text) VALUES ('delete', ?, ?)",
                (rowid, segment(text)),
            )
        db.execute("DELETE FROM passages WHERE run_id = ?", (run_id,))
        db.execute("DELETE FROM indexed_runs WHERE run_id = ?", (run_id,))

    # -- searching --------------------------------------------------------------------------

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, *, update: bool = True
    ) -> SearchResult:
        """Passages matching every term of ``query``, newest run first (``update``: catch the
        index up first). Query syntax as in Documents (:mod:`core.documents.search`)."""
        if update:
            self.update()
        plan = plan_query(query)
        if plan.empty:
            return SearchResult([], plan.patterns)
        if plan.segmented:
            match = "SELECT rowid FROM passages_seg WHERE passages_seg MATCH ?"
            args = [plan.segmented]
            if plan.trigram:
                match += " AND rowid IN (SELECT rowid FROM passages_tri WHERE passages_tri MATCH ?)"
                args.append(plan.trigram)
        else:
            match = "SELECT rowid FROM passages_tri WHERE passages_tri MATCH ?"
            args = [plan.trigram]
        with self._connect() as db:
            # The newest ``limit`` matches in the index's own rowid order: a word found in
            # every run is never sorted as a whole.
            rows = db.execute(
                "SELECT p.run_id, p.step, p.kind, p.call_id, p.tool, p.text FROM passages p"
                f" JOIN ({match} ORDER BY rowid DESC LIMIT ?) m ON p.id = m.rowid"
                " ORDER BY p.id DESC",
                (*args, limit),
            ).fetchall()
        hits: list[SearchHit] = []
        for run_id, step, kind, call_id, tool, text in rows:
            parts = tuple(snippet_parts(text, plan.patterns))
            hits.append(
                SearchHit(
                    run_id=run_id,
                    step=step,
                    kind=kind,
                    snippet=join_parts(parts),
                    call_id=call_id,
                    tool=tool,
                    parts=parts,
                )
            )
        return SearchResult(hits, plan.patterns)


def index_ended_run(run_id: str) -> None:
    """Index a run ``baton run`` just finished, so a search finds it without a catch-up. A
    failure is only logged: the next search indexes the run anyway."""
    try:
        RunSearch().index_run(run_id)
    except (sqlite3.Error, OSError) as error:
        _log.warning("could not add run %s to the search index: %s", run_id, error)
