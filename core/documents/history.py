"""Document history: every version a document had, and who wrote each.

A document's current version lives in ``documents`` (its writer in ``written_by``); every
earlier one, and a tombstone for each deletion, in ``document_versions``
(:mod:`core.documents.schema`). An update or delete first copies the current row there
(:func:`archive`), inside the same transaction as the change, so no write can lose a version.

Versions are numbered from 1, the first text; the document's ``version`` column is the number
of its current version. A deleted document keeps its history, and :meth:`DocumentStore.restore`
brings it back under its own id (:func:`next_id` never hands out an id a history still uses).
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from datetime import datetime

from core.documents.models import (
    DocumentError,
    DocumentNotFound,
    DocumentProvenance,
    DocumentVersion,
)


def author_json(author: DocumentProvenance | None) -> str:
    """How ``written_by`` is stored: the provenance as JSON; a person is ``{}``."""
    if author is None or author.by_person:
        return "{}"
    return author.model_dump_json(exclude_defaults=True)


def author_from(text: str, fallback: DocumentProvenance) -> DocumentProvenance:
    """``written_by`` read back; empty (a row written before history existed) means the
    document's creator, the only writer the old schema knew of."""
    if not text:
        return fallback
    return DocumentProvenance.model_validate_json(text)


def creator(row: sqlite3.Row) -> DocumentProvenance:
    return DocumentProvenance(
        run_id=row["run_id"], step=row["step"], agent=row["agent"], call_id=row["call_id"]
    )


def archive(connection: sqlite3.Connection, doc_id: int) -> sqlite3.Row:
    """Copy the current version of ``doc_id`` into the history; returns the row copied."""
    row: sqlite3.Row | None = connection.execute(
        "SELECT id, type, title, tags, content, written_by, updated, version, run_id, step, "
        "agent, call_id FROM documents WHERE id = ?",
        (doc_id,),
    ).fetchone()
    if row is None:
        raise DocumentNotFound(doc_id)
    connection.execute(
        "INSERT INTO document_versions (doc_id, version, type, title, tags, written_by, written, "
        "content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            doc_id,
            row["version"],
            row["type"],
            row["title"],
            row["tags"],
            author_json(author_from(row["written_by"], creator(row))),
            row["updated"],
            row["content"],
        ),
    )
    return row


def tombstone(
    connection: sqlite3.Connection, row: sqlite3.Row, author: DocumentProvenance | None, when: str
) -> None:
    """Record a deletion as the version after ``row`` (the archived current version)."""
    connection.execute(
        "INSERT INTO document_versions (doc_id, version, type, title, tags, written_by, written, "
        "deleted, content) VALUES (?, ?, ?, ?, ?, ?, ?, 1, '')",
        (
            row["id"],
            row["version"] + 1,
            row["type"],
            row["title"],
            row["tags"],
            author_json(author),
            when,
        ),
    )


def next_id(connection: sqlite3.Connection) -> int:
    """An id no document and no history uses: SQLite alone would reuse the id of the newest
    document once it is deleted, and its history would then seem to belong to the new one."""
    row = connection.execute(
        "SELECT max(coalesce((SELECT max(id) FROM documents), 0), "
        "coalesce((SELECT max(doc_id) FROM document_versions), 0))"
    ).fetchone()
    return int(row[0]) + 1


def versions(connection: sqlite3.Connection, doc_id: int) -> list[DocumentVersion]:
    """Every version of ``doc_id``, oldest first, the current one (if not deleted) last."""
    history = [
        _version(
            row,
            DocumentProvenance.model_validate_json(row["written_by"]),
            row["written"],
            deleted=bool(row["deleted"]),
        )
        for row in connection.execute(
            "SELECT * FROM document_versions WHERE doc_id = ? ORDER BY version", (doc_id,)
        )
    ]
    row = connection.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
    if row is not None:
        author = author_from(row["written_by"], creator(row))
        history.append(_version(row, author, row["updated"], current=True))
    if not history:
        raise DocumentNotFound(doc_id)
    return history


def _version(
    row: sqlite3.Row, author: DocumentProvenance, written: str, **flags: bool
) -> DocumentVersion:
    """A version from a ``document_versions`` or ``documents`` row (same column names)."""
    keys = row.keys()
    return DocumentVersion(
        doc_id=row["doc_id"] if "doc_id" in keys else row["id"],
        version=row["version"],
        type=row["type"],
        title=row["title"],
        tags=json.loads(row["tags"]),
        content=row["content"],
        written_by=author,
        written=datetime.fromisoformat(written),
        **flags,
    )


def diff(old: DocumentVersion | None, new: DocumentVersion) -> str:
    """What ``new`` changed since ``old`` (None: since nothing), as a unified diff of the text
    with a header line per changed field — the history's and the approval dialog's view."""
    label = f"#{new.doc_id}"
    if new.deleted:
        return f"deleted by {new.written_by.describe()}\n"
    before = old if old is not None and not old.deleted else None
    head: list[str] = []
    for name in ("title", "type", "tags"):
        was = getattr(before, name) if before is not None else None
        now = getattr(new, name)
        if before is not None and was != now:
            head.append(f"{name}: {_shown(was)} → {_shown(now)}\n")
    lines = difflib.unified_diff(
        (before.content if before is not None else "").splitlines(keepends=True),
        new.content.splitlines(keepends=True),
        f"a/{label} v{before.version}" if before is not None else "/dev/null",
        f"b/{label} v{new.version}",
    )
    body = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return "".join(head) + body


def _shown(value: object) -> str:
    return ", ".join(value) or "(none)" if isinstance(value, list) else str(value)


def pick(history: list[DocumentVersion], version: int) -> DocumentVersion:
    """The version to restore, refusing what cannot be restored with a sentence saying why."""
    doc_id = history[-1].doc_id
    for entry in history:
        if entry.version == version:
            if entry.deleted:
                raise DocumentError(
                    f"Version {version} of document #{doc_id} is its deletion; restore a "
                    f"version before it (see `baton docs history {doc_id}`)."
                )
            return entry
    raise DocumentError(
        f"Document #{doc_id} has no version {version} (it has 1 to {history[-1].version})."
    )
