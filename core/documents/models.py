"""The records of the document store (architecture: "Documents") and its errors.

Exceptions::

    DocumentError            bad input or an unusable store; the message is one sentence
     ├── DocumentNotFound    no document has that id
     └── DocumentConflict    the document changed since the caller read it (``.current``)

Listings (:class:`DocumentSummary`, :class:`SearchHit`) never carry content, so a page of
results costs the same whatever the documents' lengths; :class:`Document` carries it only when
it was asked for.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.documents.search import cut_to_tokens, estimate_tokens

DocumentType = Literal["memory", "document"]
DOCUMENT_TYPES: tuple[DocumentType, ...] = ("memory", "document")


class DocumentError(ValueError):
    """Something a person or a model can fix: an empty title, content over the limit..."""


class DocumentNotFound(DocumentError):
    def __init__(self, doc_id: int) -> None:
        super().__init__(f"There is no document #{doc_id}.")
        self.doc_id = doc_id


class DocumentConflict(DocumentError):
    """Raised by an update or delete made against an older version of the document.

    ``current`` is the document as it is now (with content), so a caller can offer "keep mine"
    (update again with ``expected_version=current.version``) or "take theirs".
    """

    def __init__(self, current: Document, expected_version: int) -> None:
        super().__init__(
            f"Document #{current.id} was changed meanwhile (it is at version {current.version}; "
            f"the change was made to version {expected_version})."
        )
        self.current = current
        self.expected_version = expected_version


class DocumentProvenance(BaseModel):
    """Which run, step, agent and tool call wrote a document; all empty when a person did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = ""
    step: int | None = None
    agent: str = ""
    call_id: str = ""

    @property
    def by_person(self) -> bool:
        return not (self.run_id or self.agent or self.call_id)

    def describe(self) -> str:
        """ "a person", or the agent with its run, step and tool call: what a history shows."""
        if self.by_person:
            return "a person"
        where = [f"run {self.run_id}"] if self.run_id else []
        if self.step is not None:
            where.append(f"step {self.step + 1}")  # events count from 0, people from 1
        if self.call_id:
            where.append(f"call {self.call_id}")
        return f"{self.agent or 'an agent'} ({', '.join(where)})" if where else self.agent


class DocumentVersion(BaseModel):
    """One version of a document's history (numbered from 1, the first text), or the tombstone
    a deletion left (``deleted``: nothing to restore from it, but the versions before it)."""

    model_config = ConfigDict(frozen=True)

    doc_id: int
    version: int
    type: DocumentType
    title: str
    tags: list[str]
    content: str
    written_by: DocumentProvenance
    """Who wrote this version: a person (all empty) or a run's step and tool call."""
    written: datetime
    deleted: bool = False
    current: bool = False
    """The version the document has now (False for every version of a deleted document)."""


class DocumentSummary(BaseModel):
    """A document without its content: what listings show."""

    model_config = ConfigDict(frozen=True)

    id: int
    type: DocumentType
    title: str
    summary: str
    """The first 200 characters and ``...`` when the content is longer, else empty."""
    tags: list[str]
    chars: int
    """Length of the content in characters."""
    provenance: DocumentProvenance
    created: datetime
    updated: datetime
    version: int
    """1 when created, +1 on every change: the optimistic-concurrency check of updates."""


class Document(DocumentSummary):
    content: str | None = None
    """The whole content, or None when it was not asked for (``get(id, full=False)``)."""


class SearchHit(DocumentSummary):
    snippet: str
    """Text around the matches with each match between the markers (``[登录]``)."""
    score: float
    """bm25 rank: lower is better (SQLite's convention)."""


ItemT = TypeVar("ItemT", bound=DocumentSummary)


class Page(BaseModel, Generic[ItemT]):
    items: list[ItemT]
    page: int
    page_size: int
    total: int
    exact: bool = True
    """False when a search stopped counting: there are at least ``total`` matches."""

    @property
    def total_text(self) -> str:
        """``1,234`` or ``10,000+``: the total as a person should read it."""
        return f"{self.total:,}" if self.exact else f"{self.total:,}+"

    @property
    def total_words(self) -> str:
        """``1 document``, ``1,234 documents``, ``10,000+ documents``."""
        return "1 document" if self.total == 1 and self.exact else f"{self.total_text} documents"

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size))


class DocumentRead(BaseModel):
    """What a reader (an agent, ``baton docs show``) gets: text within a token budget."""

    document: DocumentSummary
    text: str
    full: bool
    offset: int = 0
    omitted_chars: int = 0
    """Characters of the content not in ``text`` (after it, or all but the summary)."""
    note: str = ""
    """Says what was left out and how to read it; empty when nothing was."""


class NewDocument(BaseModel):
    """One document to create in bulk (``import_jsonl``). Extra keys are ignored, so a line of
    ``export`` (which has ``id``, ``version``...) imports as a new document."""

    model_config = ConfigDict(extra="ignore")

    title: str
    content: str = ""
    type: DocumentType = "document"
    tags: list[str] = Field(default_factory=list)
    provenance: DocumentProvenance = Field(default_factory=DocumentProvenance)
    created: datetime | None = None
    updated: datetime | None = None

    @field_validator("created", "updated")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None or value.tzinfo is not None:
            return value
        return value.replace(tzinfo=UTC)


# ---- what a valid record is ------------------------------------------------------------

SUMMARY_CHARS = 200
TITLE_MAX = 300
TAG_MAX = 64
TAGS_MAX = 32


def summarize(content: str) -> str:
    """The first 200 characters and ``...`` when the content is longer, else empty."""
    return content[:SUMMARY_CHARS] + "..." if len(content) > SUMMARY_CHARS else ""


def check_content(content: str, limit: int) -> str:
    if len(content) > limit:
        raise DocumentError(
            f"The content is {len(content):,} characters; the limit is {limit:,} "
            f"(limits.document_max_chars in the settings)."
        )
    return content


def check_title(title: str) -> str:
    """Whitespace runs (line breaks too) become one space: a title is one line."""
    title = " ".join(title.split())
    if not title:
        raise DocumentError("The title must not be empty.")
    if len(title) > TITLE_MAX:
        raise DocumentError(f"The title is {len(title)} characters; at most {TITLE_MAX}.")
    return title


def check_type(doc_type: str) -> DocumentType:
    for known in DOCUMENT_TYPES:
        if doc_type == known:
            return known
    raise DocumentError(f"The type must be 'memory' or 'document', not {doc_type!r}.")


def check_tags(tags: Iterable[str]) -> list[str]:
    """Stripped, empty ones dropped, duplicates (ignoring case) removed, order kept."""
    if isinstance(tags, str):
        raise DocumentError("Tags must be a list of strings, not one string.")
    clean: list[str] = []
    seen: set[str] = set()
    for tag in tags:
        if not isinstance(tag, str):
            raise DocumentError(f"Tags must be strings, not {tag!r}.")
        tag = " ".join(tag.split())
        if not tag or tag.casefold() in seen:
            continue
        if len(tag) > TAG_MAX:
            raise DocumentError(f"The tag {tag[:20]!r}... is longer than {TAG_MAX} characters.")
        seen.add(tag.casefold())
        clean.append(tag)
    if len(clean) > TAGS_MAX:
        raise DocumentError(f"A document can have at most {TAGS_MAX} tags, not {len(clean)}.")
    return clean


# ---- rows and reads ----------------------------------------------------------------------


def fields_from_row(row: sqlite3.Row) -> dict[str, Any]:
    """The :class:`DocumentSummary` fields of a ``documents`` row."""
    return {
        "id": row["id"],
        "type": row["type"],
        "title": row["title"],
        "summary": row["summary"],
        "tags": json.loads(row["tags"]),
        "chars": row["chars"],
        "provenance": DocumentProvenance(
            run_id=row["run_id"], step=row["step"], agent=row["agent"], call_id=row["call_id"]
        ),
        "created": datetime.fromisoformat(row["created"]),
        "updated": datetime.fromisoformat(row["updated"]),
        "version": row["version"],
    }


def budgeted_read(document: Document, full: bool, offset: int, budget: int) -> DocumentRead:
    """The summary (or the whole content when it has none, being short), or with ``full`` the
    content from ``offset``, cut to ``budget`` tokens with a note saying how much was left out
    and how to read on (:func:`core.documents.search.estimate_tokens`)."""
    content = document.content or ""
    meta = DocumentSummary(**document.model_dump(exclude={"content"}))
    if not full and document.summary:
        left = len(content) - SUMMARY_CHARS
        return DocumentRead(
            document=meta,
            text=cut_to_tokens(document.summary, budget),
            full=False,
            omitted_chars=left,
            note=f"[Summary only: {left:,} more characters; read with full=true for all.]",
        )
    if offset < 0 or offset > len(content):
        raise DocumentError(
            f"The offset {offset} is outside document #{document.id} "
            f"(it has {len(content):,} characters)."
        )
    rest = content[offset:]
    text = cut_to_tokens(rest, budget)
    omitted = len(rest) - len(text)
    note = ""
    if omitted:
        note = (
            f"[Cut at the read budget of {budget:,} tokens: {omitted:,} more characters "
            f"(~{estimate_tokens(rest[len(text) :]):,} tokens) not shown; read with "
            f"offset={offset + len(text)} to continue.]"
        )
    return DocumentRead(
        document=meta, text=text, full=True, offset=offset, omitted_chars=omitted, note=note
    )
