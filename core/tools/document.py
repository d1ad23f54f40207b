"""``document``: the agents' memory and deliverables, kept in the document store (architecture:
"Documents").

One tool with an ``action`` rather than five tools: the model sees one short declaration, and
the approval policy keys on ``document.<action>``. The tool does not ask for approval itself;
the agent loop consults the gate with :meth:`DocumentTool.approval_action` before ``run``.
Defaults (``core.config.settings.DEFAULT_POLICY``): create, read, list and updating a document this
run created run freely; ``update_other`` (a document a person or another run wrote) asks,
``retype`` (turning a document into a memory, which later runs recall as instructions, or
back) asks, ``delete`` asks. Nothing is lost either way: the store keeps every version.

What an agent writes is scrubbed of the run's known secrets before it is stored
(``ToolContext.scrub``): a key the model saw in a tool output never lands in the database.

Results are compact on purpose: ids and titles first, summaries rather than content in lists,
reads within the run's token budget with a note saying how to read on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.documents.models import check_content
from core.documents.store import (
    Document,
    DocumentError,
    DocumentProvenance,
    DocumentStore,
    DocumentSummary,
    SearchHit,
)
from core.tools.base import Provenance, Tool, ToolContext, ToolError

Action = Literal["create", "read", "update", "delete", "list"]


class DocumentParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action = Field(
        description="create | read | update | delete | list (list also searches with 'query')."
    )
    id: int | None = Field(default=None, ge=1, description="Document id (read, update, delete).")
    title: str | None = Field(default=None, description="Title (create; update renames).")
    content: str | None = Field(
        default=None, description="Markdown text (create; update replaces the whole content)."
    )
    type: Literal["memory", "document"] | None = Field(
        default=None,
        description=(
            "'memory': a note for later runs to recall; 'document': a deliverable (the default "
            "on create). On list: show only this type."
        ),
    )
    tags: list[str] | None = Field(default=None, description="Tags (create; update replaces).")
    query: str | None = Field(
        default=None,
        description=(
            "list: keywords in any language, best matches first; a word matches words starting "
            "with it (word* says so too) and punctuation around it is ignored; "
            '"quoted text" matches exactly anywhere.'
        ),
    )
    tag: str | None = Field(default=None, description="list: only documents with this tag.")
    page: int = Field(default=1, ge=1, description="list: page number.")
    full: bool = Field(default=False, description="read: the whole content instead of the summary.")
    offset: int = Field(
        default=0, ge=0, description="read with full: character to start at (to continue)."
    )

    @model_validator(mode="after")
    def _fields_of_the_action(self) -> DocumentParams:
        if self.action in ("read", "update", "delete") and self.id is None:
            raise ValueError(f"{self.action} needs 'id'")
        if self.action == "create":
            missing = [name for name in ("title", "content") if getattr(self, name) is None]
            if missing:
                raise ValueError(f"create needs {' and '.join(repr(m) for m in missing)}")
        if self.action == "update" and all(
            value is None for value in (self.title, self.content, self.tags, self.type)
        ):
            raise ValueError("update needs at least one of 'title', 'content', 'tags', 'type'")
        return self


class DocumentTool(Tool):
    name = "document"
    description = (
        "Keep memories and documents that outlast this run. Actions: create (title, content, "
        "optional type, tags), read (id; the summary unless full=true; long content comes in "
        "parts, continue with offset), update (id and the fields to change), delete (id; may "
        "need the user's approval), list (optional query, type, tag, page; shows summaries)."
    )
    Params = DocumentParams

    def __init__(self, store: DocumentStore | None = None) -> None:
        """``store`` for tests; by default the shared store in the data folder."""
        self._store = store

    def approval_action(self, params: BaseModel, caller: Provenance | None = None) -> str | None:
        """``update`` splits by risk: ``retype`` when the type changes, ``update_other`` when
        the document was not created by the calling run (or cannot be looked up: ask)."""
        if not isinstance(params, DocumentParams):
            return None
        if params.action != "update" or params.id is None:
            return params.action
        try:
            current = (self._store or DocumentStore.default()).get(params.id)
        except DocumentError:
            return "update_other"
        if params.type is not None and params.type != current.type:
            return "retype"
        run_id = caller.run_id if caller is not None else ""
        if run_id and current.provenance.run_id == run_id:
            return "update"
        return "update_other"

    async def run(self, params: DocumentParams, ctx: ToolContext) -> str:
        try:
            # The store may wait on another process's write lock: keep the loop responsive.
            return await asyncio.to_thread(self._execute, params, ctx)
        except DocumentError as error:
            raise ToolError(str(error)) from None

    def _execute(self, params: DocumentParams, ctx: ToolContext) -> str:
        store = self._store or DocumentStore.default()
        if params.content is not None:
            check_content(params.content, ctx.limits.document_max_chars)
        params = _scrubbed(params, ctx.scrub)
        who = DocumentProvenance(
            run_id=ctx.provenance.run_id,
            step=ctx.provenance.step,
            agent=ctx.provenance.agent,
            call_id=ctx.provenance.call_id,
        )
        if params.action == "create":
            assert params.title is not None and params.content is not None
            doc = store.create(
                params.title,
                params.content,
                type=params.type or "document",
                tags=params.tags or [],
                provenance=who,
            )
            return f"Created {_label(doc)} ({_facts(doc)})."
        if params.action == "list":
            return self._list(store, params, ctx)
        assert params.id is not None
        if params.action == "read":
            read = store.read(
                params.id,
                full=params.full,
                offset=params.offset,
                token_budget=ctx.limits.document_read_tokens,
            )
            header = f"{_label(read.document)} ({_facts(read.document)}, {_origin(read.document)})"
            return "\n\n".join(part for part in (header, read.text, read.note) if part)
        if params.action == "update":
            before = store.get(params.id)
            doc = store.update(
                params.id,
                title=params.title,
                content=params.content,
                tags=params.tags,
                type=params.type,
                author=who,
            )
            if doc.version == before.version:
                return f"No change: {_label(doc)} already had these values."
            given = [
                f for f in ("title", "content", "tags", "type") if getattr(params, f) is not None
            ]
            return f"Updated {_label(doc)}: {', '.join(given)} (now version {doc.version})."
        deleted = store.delete(params.id, author=who)
        return f"Deleted {_label(deleted)}."

    @staticmethod
    def _list(store: DocumentStore, params: DocumentParams, ctx: ToolContext) -> str:
        size = ctx.limits.document_page_size
        page = (
            store.search(
                params.query, type=params.type, tag=params.tag, page=params.page, page_size=size
            )
            if params.query and params.query.strip()
            else store.list(type=params.type, tag=params.tag, page=params.page, page_size=size)
        )
        criteria = ", ".join(
            f"{name}={value!r}"
            for name, value in (("query", params.query), ("type", params.type), ("tag", params.tag))
            if value
        )
        where = f" matching {criteria}" if criteria else ""
        if page.total == 0:
            return f"No documents{where}."
        if not page.items:
            return (
                f"Page {page.page} is past the end: {page.total_words}{where}, {page.pages} pages."
            )
        lines = [f"Page {page.page} of {page.pages} ({page.total_words}{where}):"]
        for item in page.items:
            text = item.snippet if isinstance(item, SearchHit) else item.summary
            tags = f" [{', '.join(item.tags)}]" if item.tags else ""
            lines.append(f"- {_label(item)} {item.type}{tags}, {item.updated:%Y-%m-%d}")
            if text:
                lines.append(f"  {' '.join(text.split())}")
        if page.page < page.pages:
            lines.append(f"More: page={page.page + 1}.")
        return "\n".join(lines)


def _scrubbed(params: DocumentParams, scrub: Callable[[str], str]) -> DocumentParams:
    """The call with every text it would store passed through the run's redactor."""
    changes: dict[str, object] = {}
    for name in ("title", "content"):
        value = getattr(params, name)
        if value is not None:
            changes[name] = scrub(value)
    if params.tags is not None:
        changes["tags"] = [scrub(tag) for tag in params.tags]
    return params.model_copy(update=changes)


def _count(n: int) -> str:
    return "1 document" if n == 1 else f"{n:,} documents"


def _label(doc: DocumentSummary) -> str:
    return f"#{doc.id} {doc.title!r}"


def _facts(doc: DocumentSummary | Document) -> str:
    tags = f", tags: {', '.join(doc.tags)}" if doc.tags else ""
    return f"{doc.type}, {doc.chars:,} chars{tags}, version {doc.version}"


def _origin(doc: DocumentSummary) -> str:
    who = doc.provenance
    if who.by_person:
        by = "written by a person"
    else:
        step = f", step {who.step}" if who.step is not None else ""
        by = f"by {who.agent or 'an agent'} (run {who.run_id}{step})"
    return f"updated {doc.updated:%Y-%m-%d %H:%M} UTC, {by}"
