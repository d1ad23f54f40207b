"""The document store's SQLite schema, its migrations, and how every connection is set up.

The schema version is ``PRAGMA user_version``: migration *n* (1-based) takes a database from
version *n-1* to *n*. All pending steps run in one ``BEGIN IMMEDIATE`` transaction, so two
processes opening a fresh file at once migrate it exactly once, and a failed step leaves the
file as it was. A file newer than this code refuses to open rather than being misread.

Durability: WAL with ``synchronous=FULL``. ``NORMAL`` would already survive a killed process
(a commit is in the WAL, in the OS's hands, before ``COMMIT`` returns), but it may lose the last
commits on power loss; ``FULL`` syncs the WAL at every commit, so an acknowledged write (the
agent was told "saved #12") survives that too. Writes here are a few per agent step or a
person's edit, where one fsync per commit costs nothing noticeable; bulk imports commit once.

Every connection registers ``baton_segment`` and ``baton_tag_tokens``
(:func:`core.documents.search.segment`, :func:`~core.documents.search.tag_tokens`), which the
FTS triggers call: a connection opened without it (the ``sqlite3`` shell) can read the store but
its writes fail loudly instead of leaving the search index out of step.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.documents.models import DocumentError
from core.documents.search import segment, tag_tokens

BUSY_TIMEOUT_S = 10.0
"""How long a writer waits for another connection's transaction before giving up."""
CACHE_KIB = 32_768
"""Page cache per connection, filled only as pages are read: FTS5 merges its index segments in
page-heavy passes, and a cache this size builds a large store ~20% faster than SQLite's 2 MB
default (measured with ``benchmarks/documents.py``)."""

_DOCUMENTS = """
CREATE TABLE documents (
    id       INTEGER PRIMARY KEY,
    type     TEXT    NOT NULL CHECK (type IN ('memory', 'document')),
    title    TEXT    NOT NULL CHECK (length(trim(title)) > 0),
    summary  TEXT    NOT NULL DEFAULT '',
    tags     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    chars    INTEGER NOT NULL DEFAULT 0,
    run_id   TEXT    NOT NULL DEFAULT '',
    step     INTEGER,
    agent    TEXT    NOT NULL DEFAULT '',
    call_id  TEXT    NOT NULL DEFAULT '',
    created  TEXT    NOT NULL,
    updated  TEXT    NOT NULL,
    version  INTEGER NOT NULL DEFAULT 1,
    -- Last, so reading a listing's columns never touches a long text's overflow pages.
    content  TEXT    NOT NULL DEFAULT ''
)
"""

_TAGS = """
CREATE TABLE document_tags (
    tag    TEXT    NOT NULL COLLATE NOCASE,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (tag, doc_id)
) WITHOUT ROWID
"""

_INSERT_INDEXES = """
    INSERT INTO documents_tri(rowid, title, content, tags)
        VALUES (new.id, new.title, new.content, new.tags);
    INSERT INTO documents_seg(rowid, title, content, tags)
        VALUES (new.id, baton_segment(new.title), baton_segment(new.content),
                baton_segment(new.tags));
"""

_DELETE_INDEXES = """
    INSERT INTO documents_tri(documents_tri, rowid, title, content, tags)
        VALUES ('delete', old.id, old.title, old.content, old.tags);
    INSERT INTO documents_seg(documents_seg, rowid, title, content, tags)
        VALUES ('delete', old.id, baton_segment(old.title), baton_segment(old.content),
                baton_segment(old.tags));
"""

_INSERT_TAGS = """
    INSERT OR IGNORE INTO document_tags(tag, doc_id) SELECT value, new.id FROM json_each(new.tags);
"""

_VERSIONS = """
CREATE TABLE document_versions (
    doc_id     INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    tags       TEXT    NOT NULL,
    written_by TEXT    NOT NULL,
    written    TEXT    NOT NULL,
    deleted    INTEGER NOT NULL DEFAULT 0,
    content    TEXT    NOT NULL,
    PRIMARY KEY (doc_id, version)
)
"""
"""Every version a document had before its current one, and a tombstone (``deleted = 1``) for
each deletion. No foreign key: the history outlives the document, so a deleted document can be
restored under its own id."""

_SEGMENTED_V2 = (
    "CREATE VIRTUAL TABLE documents_seg USING fts5("
    "title, content, tags, kind, tagset, content='', "
    "tokenize='unicode61 remove_diacritics 0', prefix='1 2')"
)
"""``kind`` (the type) and ``tagset`` (one opaque token per tag, :func:`tag_tokens`) let a type
or tag filter be part of the MATCH, answered by the index instead of a row lookup per match;
``prefix='1 2'`` stores one- and two-character prefixes, so ``a``/``qu`` are one lookup."""

_INSERT_SEG = """
    INSERT INTO documents_seg(rowid, title, content, tags, kind, tagset)
        VALUES (new.id, baton_segment(new.title), baton_segment(new.content),
                baton_segment(new.tags), new.type, baton_tag_tokens(new.tags));
"""

_DELETE_SEG = """
    INSERT INTO documents_seg(documents_seg, rowid, title, content, tags, kind, tagset)
        VALUES ('delete', old.id, baton_segment(old.title), baton_segment(old.content),
                baton_segment(old.tags), old.type, baton_tag_tokens(old.tags));
"""

_INSERT_TRI = """
    INSERT INTO documents_tri(rowid, title, content, tags)
        VALUES (new.id, new.title, new.content, new.tags);
"""

_DELETE_TRI = """
    INSERT INTO documents_tri(documents_tri, rowid, title, content, tags)
        VALUES ('delete', old.id, old.title, old.content, old.tags);
"""

MIGRATIONS: list[list[str]] = [
    # 1: documents, tag lookup, the two search indexes and the triggers keeping them in step.
    [
        _DOCUMENTS,
        "CREATE INDEX documents_by_updated ON documents(updated DESC, id DESC)",
        "CREATE INDEX documents_by_type ON documents(type, updated DESC, id DESC)",
        "CREATE INDEX documents_by_run ON documents(run_id) WHERE run_id <> ''",
        _TAGS,
        "CREATE INDEX document_tags_by_doc ON document_tags(doc_id)",
        "CREATE VIRTUAL TABLE documents_tri USING fts5("
        "title, content, tags, content='documents', content_rowid='id', tokenize='trigram')",
        "CREATE VIRTUAL TABLE documents_seg USING fts5("
        "title, content, tags, content='', tokenize='unicode61 remove_diacritics 0')",
        f"CREATE TRIGGER documents_after_insert AFTER INSERT ON documents BEGIN"
        f"{_INSERT_INDEXES}{_INSERT_TAGS}END",
        f"CREATE TRIGGER documents_after_delete AFTER DELETE ON documents BEGIN"
        f"{_DELETE_INDEXES}END",
        f"CREATE TRIGGER documents_after_update AFTER UPDATE OF title, content, tags ON documents "
        f"BEGIN{_DELETE_INDEXES}{_INSERT_INDEXES}"
        f"    DELETE FROM document_tags WHERE doc_id = old.id;{_INSERT_TAGS}END",
    ],
    # 2: version history and a word index that answers short prefixes and filters.
    [
        _VERSIONS,
        "ALTER TABLE documents ADD COLUMN written_by TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX documents_type_by_id ON documents(id, type)",
        "DROP TRIGGER documents_after_insert",
        "DROP TRIGGER documents_after_delete",
        "DROP TRIGGER documents_after_update",
        "DROP TABLE documents_seg",
        _SEGMENTED_V2,
        "INSERT INTO documents_seg(rowid, title, content, tags, kind, tagset) "
        "SELECT id, baton_segment(title), baton_segment(content), baton_segment(tags), type, "
        "baton_tag_tokens(tags) FROM documents",
        f"CREATE TRIGGER documents_after_insert AFTER INSERT ON documents BEGIN"
        f"{_INSERT_TRI}{_INSERT_SEG}{_INSERT_TAGS}END",
        f"CREATE TRIGGER documents_after_delete AFTER DELETE ON documents BEGIN"
        f"{_DELETE_TRI}{_DELETE_SEG}END",
        f"CREATE TRIGGER documents_after_update_text AFTER UPDATE OF title, content, tags "
        f"ON documents BEGIN{_DELETE_TRI}{_INSERT_TRI}"
        f"    DELETE FROM document_tags WHERE doc_id = old.id;{_INSERT_TAGS}END",
        f"CREATE TRIGGER documents_after_update_words AFTER UPDATE OF title, content, tags, type "
        f"ON documents BEGIN{_DELETE_SEG}{_INSERT_SEG}END",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The file cannot be used as a document store; the message says why."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection configured as every store connection must be (see the module docstring).

    Autocommit mode (``isolation_level=None``): the store issues ``BEGIN`` itself, so a read of
    a listing and its total see one snapshot and a write takes the lock up front.
    ``check_same_thread`` is off only so :meth:`DocumentStore.close` can close connections
    made by other threads; each connection is still used by the thread that made it.
    """
    connection = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise SchemaError(f"{path}: cannot switch the database to WAL mode (got {mode}).")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        connection.create_function("baton_segment", 1, segment, deterministic=True)
        connection.create_function("baton_tag_tokens", 1, tag_tokens, deterministic=True)
    except BaseException:
        connection.close()
        raise
    return connection


def migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` (no-op when it is there already)."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another process may have migrated meanwhile.
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"{path} was written by a newer Baton (schema {version}, this one knows up to "
                f"{SCHEMA_VERSION}); update Baton to open it."
            )
        for step in MIGRATIONS[version:]:
            for statement in step:
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


_BUSY = "The document store is busy (another program is writing to it); try again."


class ConnectionPool:
    """One connection per thread to one store file, opened (and migrated) on first use.

    SQLite connections must not be used by two threads at once; giving each thread its own
    makes the store usable from the GUI thread and from ``asyncio.to_thread`` workers alike.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.closed = False

    def connection(self) -> sqlite3.Connection:
        """This thread's connection; every problem opening the file is a :class:`DocumentError`."""
        if self.closed:
            raise DocumentError("The document store was closed.")
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._open()
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = connect(self.path)
            try:
                migrate(connection, self.path)
            except BaseException:
                connection.close()
                raise
        except SchemaError as error:
            raise DocumentError(str(error)) from None
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise DocumentError(_BUSY) from None
            raise DocumentError(f"Cannot open the document store {self.path}: {error}.") from None
        except sqlite3.DatabaseError as error:
            raise DocumentError(f"{self.path} is not a usable document store: {error}.") from None
        except OSError as error:
            raise DocumentError(f"Cannot open the document store {self.path}: {error}.") from None
        connection.row_factory = sqlite3.Row
        return connection

    def close(self) -> None:
        """Close every connection, whichever thread opened it (hence ``check_same_thread``
        off in :func:`connect`). The caller makes sure no thread still uses them."""
        with self._lock:
            self.closed = True
            for connection in self._connections:
                connection.close()
            self._connections.clear()

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """A write takes the lock up front (no upgrade deadlock between two writers that both
        read first); a read sees one snapshot (a page and its total agree)."""
        connection = self.connection()
        try:
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.OperationalError as error:
            raise DocumentError(_BUSY) from error
        try:
            yield connection
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        try:
            connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise DocumentError(_BUSY) from error
