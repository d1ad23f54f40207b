"""The document store: memories and deliverables agents write and people review (architecture:
"Documents").

One SQLite file, ``<data>/documents.sqlite``, in WAL mode (schema, migrations and durability:
:mod:`core.documents.schema`; search: :mod:`core.documents.search`; version history:
:mod:`core.documents.history`; records and errors: :mod:`core.documents.models`, re-exported
here).

Nothing written is lost: every update, delete and restore first copies the version it replaces
into the history, in the same transaction, recording who wrote each version (``author``: a
person when None, else the run, step, agent and tool call).

Concurrency. The GUI, running agents and ``baton docs`` in another process use the store at the
same time. Each thread gets its own connection (SQLite connections are not shared between
threads); processes are kept apart by WAL and the busy timeout. Every write is one
``BEGIN IMMEDIATE`` transaction, so it either happens whole or not at all, and an edit made to
an older version than the stored one is refused with :class:`DocumentConflict`
(``expected_version``) instead of silently overwriting an agent's change.

The API is synchronous: SQLite answers in milliseconds. Code on the asyncio loop that must not
block while another process holds the write lock calls it through ``asyncio.to_thread`` (the
connection-per-thread design makes that safe). :meth:`DocumentStore.change_token` lets a GUI
poll cheaply for writes made by anyone else.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from core.config import paths
from core.config.settings import Limits, SettingsError, load_settings
from core.config.validation import format_validation_error
from core.documents import history
from core.documents.models import (
    Document,
    DocumentConflict,
    DocumentError,
    DocumentNotFound,
    DocumentProvenance,
    DocumentRead,
    DocumentSummary,
    DocumentVersion,
    NewDocument,
    Page,
    SearchHit,
    budgeted_read,
    check_content,
    check_tags,
    check_title,
    check_type,
    fields_from_row,
    summarize,
)
from core.documents.schema import ConnectionPool
from core.documents.search import (
    find_matches,
    make_snippet,
    plan_query,
)

__all__ = [
    "Document",
    "DocumentConflict",
    "DocumentError",
    "DocumentNotFound",
    "DocumentProvenance",
    "DocumentRead",
    "DocumentStore",
    "DocumentSummary",
    "DocumentVersion",
    "NewDocument",
    "Page",
    "SearchHit",
]

_COLUMNS = (
    "d.id, d.type, d.title, d.summary, d.tags, d.chars, d.run_id, d.step, d.agent, d.call_id, "
    "d.created, d.updated, d.version"
)


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    """Fixed-width UTC text, so ordering by the column is ordering by time."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class DocumentStore:
    """Memories and documents in one SQLite file; see the module docstring for concurrency."""

    _defaults: ClassVar[dict[Path, DocumentStore]] = {}
    _defaults_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: Path | None = None, *, limits: Limits | None = None) -> None:
        """Open (creating and migrating if needed) the store; a bad file fails here."""
        self.path = Path(path) if path else paths.data_dir() / "documents.sqlite"
        self.limits = limits or Limits()
        self._db = ConnectionPool(self.path)
        self._transaction = self._db.transaction
        self._db.connection()

    @classmethod
    def default(cls) -> DocumentStore:
        """The process-wide store in the data folder, with the limits from the settings.

        Shared because agents' tools, the GUI and the CLI of one process should not each keep
        connections open; settings that cannot be read leave the default limits.
        """
        path = paths.data_dir() / "documents.sqlite"
        with cls._defaults_lock:
            store = cls._defaults.get(path)
            if store is None or store.closed:
                try:
                    limits = load_settings().limits
                except SettingsError:
                    limits = Limits()
                store = cls._defaults[path] = cls(path, limits=limits)
            return store

    def close(self) -> None:
        """Close every connection this store opened, in any thread. Call when no thread is
        using the store any more."""
        self._db.close()

    @property
    def closed(self) -> bool:
        return self._db.closed

    def __enter__(self) -> DocumentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def change_token(self) -> tuple[int, int]:
        """Changes whenever any connection (this one, another thread's, another process's) has
        committed a write since the last call; compare with ``!=``. Costs no table read:
        ``PRAGMA data_version`` counts other connections' commits, ``total_changes`` our own."""
        connection = self._db.connection()
        version = int(connection.execute("PRAGMA data_version").fetchone()[0])
        return version, connection.total_changes

    # ---- validation --------------------------------------------------------------------

    def _check_content(self, content: str) -> str:
        return check_content(content, self.limits.document_max_chars)

    # ---- rows → records ----------------------------------------------------------------

    def _fetch(self, connection: sqlite3.Connection, doc_id: int, *, full: bool) -> Document:
        extra = ", d.content" if full else ""
        row = connection.execute(
            f"SELECT {_COLUMNS}{extra} FROM documents d WHERE d.id = ?", (doc_id,)
        ).fetchone()
        if row is None:
            raise DocumentNotFound(doc_id)
        return Document(**fields_from_row(row), content=row["content"] if full else None)

    # ---- writes ------------------------------------------------------------------------

    def create(
        self,
        title: str,
        content: str = "",
        *,
        type: str = "document",
        tags: Iterable[str] = (),
        provenance: DocumentProvenance | None = None,
    ) -> Document:
        """Store a new document and return it (with content)."""
        new = NewDocument.model_construct(
            title=title,
            content=content,
            type=check_type(type),
            tags=check_tags(tags),
            provenance=provenance or DocumentProvenance(),
            created=None,
            updated=None,
        )
        with self._transaction(write=True) as connection:
            doc_id = self._insert(connection, new)
            return self._fetch(connection, doc_id, full=True)

    def create_many(self, documents: Iterable[NewDocument]) -> builtins.list[int]:
        """Store many documents in one transaction: all of them, or none when one is invalid."""
        with self._transaction(write=True) as connection:
            return [self._insert(connection, new) for new in documents]

    def _insert(self, connection: sqlite3.Connection, new: NewDocument) -> int:
        title = check_title(new.title)
        content = self._check_content(new.content)
        tags = check_tags(new.tags)
        created = new.created or _now()
        updated = new.updated or created
        doc_id = history.next_id(connection)
        connection.execute(
            "INSERT INTO documents (id, type, title, summary, tags, chars, run_id, step, agent, "
            "call_id, created, updated, version, written_by, content) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (
                doc_id,
                check_type(new.type),
                title,
                summarize(content),
                json.dumps(tags, ensure_ascii=False),
                len(content),
                new.provenance.run_id,
                new.provenance.step,
                new.provenance.agent,
                new.provenance.call_id,
                _iso(created),
                _iso(updated),
                history.author_json(new.provenance),
                content,
            ),
        )
        return doc_id

    def update(
        self,
        doc_id: int,
        *,
        title: str | None = None,
        content: str | None = None,
        tags: Iterable[str] | None = None,
        type: str | None = None,
        expected_version: int | None = None,
        author: DocumentProvenance | None = None,
    ) -> Document:
        """Change the given fields and return the document (with content).

        The version replaced goes to the history, recorded as written by whoever wrote it;
        ``author`` is who writes the new one (None: a person). With ``expected_version``, the
        change applies only if the document is still at that version; otherwise
        :class:`DocumentConflict` carries the current one. A call that changes nothing writes
        nothing and keeps the version.
        """
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = check_title(title)
        if content is not None:
            changes["content"] = self._check_content(content)
        if tags is not None:
            changes["tags"] = json.dumps(check_tags(tags), ensure_ascii=False)
        if type is not None:
            changes["type"] = check_type(type)
        with self._transaction(write=True) as connection:
            current = self._fetch(connection, doc_id, full=True)
            if expected_version is not None and current.version != expected_version:
                raise DocumentConflict(current, expected_version)
            return self._apply(connection, current, changes, author)

    def _apply(
        self,
        connection: sqlite3.Connection,
        current: Document,
        changes: dict[str, Any],
        author: DocumentProvenance | None,
    ) -> Document:
        stored = {
            "title": current.title,
            "content": current.content,
            "tags": json.dumps(current.tags, ensure_ascii=False),
            "type": current.type,
        }
        changes = {key: value for key, value in changes.items() if stored[key] != value}
        if not changes:
            return current
        history.archive(connection, current.id)
        if "content" in changes:
            changes["summary"] = summarize(changes["content"])
            changes["chars"] = len(changes["content"])
        changes["updated"] = _iso(_now())
        changes["written_by"] = history.author_json(author)
        assignments = ", ".join(f"{column} = ?" for column in changes)
        connection.execute(
            f"UPDATE documents SET {assignments}, version = version + 1 WHERE id = ?",
            (*changes.values(), current.id),
        )
        return self._fetch(connection, current.id, full=True)

    def delete(
        self,
        doc_id: int,
        *,
        expected_version: int | None = None,
        author: DocumentProvenance | None = None,
    ) -> DocumentSummary:
        """Delete a document, keeping its history and a tombstone saying who deleted it (so
        :meth:`restore` can bring it back); returns what it was (for "deleted #3 'title'")."""
        with self._transaction(write=True) as connection:
            current = self._fetch(connection, doc_id, full=True)
            if expected_version is not None and current.version != expected_version:
                raise DocumentConflict(current, expected_version)
            row = history.archive(connection, doc_id)
            history.tombstone(connection, row, author, _iso(_now()))
            connection.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        return DocumentSummary(**current.model_dump(exclude={"content"}))

    def history(self, doc_id: int) -> builtins.list[DocumentVersion]:
        """Every version of a document, deleted or not, oldest (version 1) first."""
        with self._transaction(write=False) as connection:
            return history.versions(connection, doc_id)

    def restore(
        self, doc_id: int, version: int, *, author: DocumentProvenance | None = None
    ) -> Document:
        """Make ``version`` the current text again, as a new version (nothing is lost: the one
        replaced goes to the history too). A deleted document comes back under its own id."""
        with self._transaction(write=True) as connection:
            versions = history.versions(connection, doc_id)
            old = history.pick(versions, version)
            changes: dict[str, Any] = {
                "title": old.title,
                "content": old.content,
                "tags": json.dumps(old.tags, ensure_ascii=False),
                "type": old.type,
            }
            if versions[-1].current:
                current = self._fetch(connection, doc_id, full=True)
                return self._apply(connection, current, changes, author)
            first = versions[0]
            connection.execute(
                "INSERT INTO documents (id, type, title, summary, tags, chars, run_id, step, "
                "agent, call_id, created, updated, version, written_by, content) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc_id,
                    old.type,
                    old.title,
                    summarize(old.content),
                    changes["tags"],
                    len(old.content),
                    first.written_by.run_id,
                    first.written_by.step,
                    first.written_by.agent,
                    first.written_by.call_id,
                    _iso(first.written),
                    _iso(_now()),
                    versions[-1].version + 1,
                    history.author_json(author),
                    old.content,
                ),
            )
            return self._fetch(connection, doc_id, full=True)

    def import_jsonl(self, path: Path) -> builtins.list[int]:
        """Create a document per line of a JSON-lines file (the format :meth:`export` writes;
        ids in it are ignored). All or nothing: one bad line imports none."""
        try:
            lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise DocumentError(f"Cannot read {path}: {error}.") from None
        documents: builtins.list[NewDocument] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                new = NewDocument.model_validate_json(line)
                check_title(new.title)
                self._check_content(new.content)
                check_tags(new.tags)
            except ValidationError as error:
                raise DocumentError(f"{path}:{number}: {format_validation_error(error)}") from None
            except DocumentError as error:
                raise DocumentError(f"{path}:{number}: {error}") from None
            documents.append(new)
        return self.create_many(documents)

    # ---- reads -------------------------------------------------------------------------

    def get(self, doc_id: int, *, full: bool = False) -> Document:
        """The document; its content only with ``full`` (then whole, never cut: an editor must
        never save a cut text back). Budgeted reading is :meth:`read`."""
        with self._transaction(write=False) as connection:
            return self._fetch(connection, doc_id, full=full)

    def read(
        self, doc_id: int, *, full: bool = False, offset: int = 0, token_budget: int | None = None
    ) -> DocumentRead:
        """What an agent reads: the summary (or the whole content when it has no summary, being
        short), or with ``full`` the content from ``offset``, cut to the token budget with a
        note saying how much was left out and how to read on."""
        document = self.get(doc_id, full=True)
        return budgeted_read(
            document, full, offset, token_budget or self.limits.document_read_tokens
        )

    def _page_bounds(self, page: int, page_size: int | None) -> tuple[int, int]:
        if page < 1:
            raise DocumentError(f"The page must be 1 or more, not {page}.")
        size = min(page_size or self.limits.document_page_size, self.limits.document_page_size)
        return max(1, size), (page - 1) * max(1, size)

    @staticmethod
    def _filters(doc_type: str | None, tag: str | None) -> tuple[str, builtins.list[Any]]:
        sql = ""
        args: builtins.list[Any] = []
        if doc_type is not None:
            sql += " AND d.type = ?"
            args.append(check_type(doc_type))
        if tag is not None:
            sql += " AND d.id IN (SELECT doc_id FROM document_tags WHERE tag = ?)"
            args.append(" ".join(tag.split()))
        return sql, args

    def list(
        self,
        *,
        type: str | None = None,
        tag: str | None = None,
        page: int = 1,
        page_size: int | None = None,
    ) -> Page[DocumentSummary]:
        """Documents newest change first, a page at a time (size capped by the limits)."""
        size, offset = self._page_bounds(page, page_size)
        where, args = self._filters(type, tag)
        with self._transaction(write=False) as connection:
            total = connection.execute(
                f"SELECT count(*) FROM documents d WHERE 1{where}", args
            ).fetchone()[0]
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM documents d WHERE 1{where} "
                "ORDER BY d.updated DESC, d.id DESC LIMIT ? OFFSET ?",
                (*args, size, offset),
            ).fetchall()
        items = [DocumentSummary(**fields_from_row(row)) for row in rows]
        return Page[DocumentSummary](items=items, page=page, page_size=size, total=total)

    def tags(self, *, type: str | None = None) -> builtins.list[tuple[str, int]]:
        """Every tag in use with how many documents (of ``type``, when given) carry it, most
        used first: what a tag filter offers. Tags differing only in case count as one.

        Without ``type`` only the tag index is read (~20 ms at 100,000 documents with four
        tags each); with it, every tagged row is checked (~40 ms): callers cache the answer
        until :meth:`change_token` moves."""
        if type is None:
            sql = "SELECT min(tag) AS tag, count(*) AS uses FROM document_tags GROUP BY tag"
            args: builtins.list[Any] = []
        else:
            sql = (
                "SELECT min(t.tag) AS tag, count(*) AS uses FROM document_tags t "
                "JOIN documents d ON d.id = t.doc_id WHERE d.type = ? GROUP BY t.tag"
            )
            args = [check_type(type)]
        with self._transaction(write=False) as connection:
            rows = connection.execute(sql, args).fetchall()
        counted = [(str(row["tag"]), int(row["uses"])) for row in rows]
        return sorted(counted, key=lambda item: (-item[1], item[0].casefold()))

    def search(
        self,
        query: str,
        *,
        type: str | None = None,
        tag: str | None = None,
        page: int = 1,
        page_size: int | None = None,
        markers: tuple[str, str] = ("[", "]"),
    ) -> Page[SearchHit]:
        """Documents matching every term of ``query`` (any language, see
        :mod:`core.documents.search`), best bm25 rank first, each with a highlighted snippet.

        A blank query lists like :meth:`list`; a query with nothing searchable in it (only one-
        or two-character punctuation) matches nothing. Never raises on what a person typed.
        """
        size, offset = self._page_bounds(page, page_size)
        if not query.strip():
            listing = self.list(type=type, tag=tag, page=page, page_size=size)
            hits = [SearchHit(**item.model_dump(), snippet="", score=0.0) for item in listing.items]
            return Page[SearchHit](items=hits, page=page, page_size=size, total=listing.total)
        plan = plan_query(query)
        if plan.empty:
            return Page[SearchHit](items=[], page=page, page_size=size, total=0)
        with self._transaction(write=False) as connection:
            matches, total, exact = find_matches(
                connection,
                plan,
                doc_type=None if type is None else check_type(type),
                tag=None if tag is None else " ".join(tag.split()),
                limit=size,
                offset=offset,
            )
            marks = ",".join("?" * len(matches))
            found = {
                row["id"]: row
                for row in connection.execute(
                    f"SELECT {_COLUMNS}, d.content FROM documents d WHERE d.id IN ({marks})",
                    [doc_id for doc_id, _ in matches],
                )
            }
        hits = [
            SearchHit(
                **fields_from_row(found[doc_id]),
                snippet=make_snippet(found[doc_id]["content"], plan.patterns, markers=markers),
                score=rank,
            )
            for doc_id, rank in matches
        ]
        return Page[SearchHit](items=hits, page=page, page_size=size, total=total, exact=exact)

    def export(self) -> Iterator[Document]:
        """Every document with content, oldest id first, read in batches (constant memory)."""
        last = 0
        while True:
            with self._transaction(write=False) as connection:
                rows = connection.execute(
                    f"SELECT {_COLUMNS}, d.content FROM documents d WHERE d.id > ? "
                    "ORDER BY d.id LIMIT 500",
                    (last,),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield Document(**fields_from_row(row), content=row["content"])
            last = rows[-1]["id"]
