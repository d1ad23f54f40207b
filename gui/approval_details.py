"""What the approval dialog shows for a request, decided apart from the widgets.

A person approves a *change*, not a JSON blob: a command and the folder it runs in for
``bash``, a unified diff against the file on disk for ``edit``/``write``
(:func:`core.tools.diffs.preview_diff`, the same preview the terminal prompt prints), the
document and what would happen to it for ``document``, and pretty JSON for anything else.

Plain Python on purpose (no widgets): the dialog only lays out what :func:`present` returns.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.approvals import ApprovalRequest
from core.tools.diffs import preview_diff

Kind = Literal["command", "diff", "document", "json"]


@dataclass(frozen=True)
class Presentation:
    """The parts of the dialog for one request; only the ones of its ``kind`` are set."""

    kind: Kind
    headline: str
    """One line saying who wants to do what (``planner wants to run a command``)."""
    command: str = ""
    folder: str = ""
    diff: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)
    """(label, value) rows: the document's id, title, type, tags…"""
    json: str = ""


def present(request: ApprovalRequest) -> Presentation:
    """What to show for ``request``; never raises for odd arguments."""
    args = request.arguments
    who = request.agent or "The agent"
    if request.tool == "bash":
        return Presentation(
            kind="command",
            headline=f"{who} wants to run a command",
            command=str(args.get("command", "")),
            folder=request.cwd,
        )
    if request.tool in ("edit", "write"):
        path = str(args.get("path", "")) or "a file"
        verb = "edit" if request.tool == "edit" else "write"
        diff = preview_diff(request.tool, args, Path(request.cwd)) or ""
        return Presentation(
            kind="diff",
            headline=f"{who} wants to {verb} {path}",
            diff=diff,
            folder=request.cwd,
        )
    if request.tool == "document":
        return _document(request, who)
    return Presentation(
        kind="json",
        headline=f"{who} wants to use {request.tool}",
        json=json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True),
        folder=request.cwd,
    )


# -- documents --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredDocument:
    """What the dialog needs of a stored document (looked up by :func:`lookup_document`)."""

    title: str
    type: str
    tags: list[str]
    content: str


def lookup_document(doc_id: int) -> StoredDocument | None:
    """The stored document ``doc_id``, or None when it is missing or the store is unreadable.

    The dialog must open whatever the store's state: a failure here only means the person
    sees the arguments without the stored version beside them.
    """
    try:
        from core.documents import DocumentStore

        document = DocumentStore.default().get(doc_id, full=True)
    except Exception:
        return None
    return StoredDocument(
        title=document.title,
        type=str(document.type),
        tags=list(document.tags),
        content=document.content or "",
    )


def _document(request: ApprovalRequest, who: str) -> Presentation:
    args: dict[str, Any] = request.arguments
    action = str(args.get("action") or request.action or "")  # the policy key may be finer
    doc_id = args.get("id")
    stored = lookup_document(doc_id) if isinstance(doc_id, int) else None
    label = f"document #{doc_id}" if doc_id is not None else "a document"
    facts: list[tuple[str, str]] = []
    if doc_id is not None:
        facts.append(("Document", f"#{doc_id}"))
    if stored is not None:
        facts += [("Title", stored.title), ("Type", stored.type)]
        if stored.tags:
            facts.append(("Tags", ", ".join(stored.tags)))
    elif doc_id is not None:
        facts.append(("Stored", "not found in the document store"))
    diff = ""
    if action == "delete":
        headline = f"{who} wants to delete {label}"
        facts.append(("Change", "the document and its content are removed"))
        if stored is not None and stored.content:
            diff = _text_diff(stored.content, "", f"a/{label}", "/dev/null")
    elif action == "update":
        headline = f"{who} wants to change {label}"
        facts += _changes(args, stored)
        if args.get("content") is not None:
            old = stored.content if stored is not None else ""
            diff = _text_diff(old, str(args["content"]), f"a/{label}", f"b/{label}")
    elif action == "create":
        headline = f"{who} wants to create a document"
        facts += [
            ("Title", str(args.get("title", ""))),
            ("Type", str(args.get("type") or "document")),
        ]
        diff = _text_diff("", str(args.get("content") or ""), "/dev/null", "b/new document")
    else:
        headline = f"{who} wants to use document ({action or 'no action'})"
        facts.append(("Arguments", json.dumps(args, ensure_ascii=False, sort_keys=True)))
    return Presentation(kind="document", headline=headline, facts=facts, diff=diff)


def _changes(args: dict[str, Any], stored: StoredDocument | None) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if args.get("title") is not None:
        before = f"{stored.title} → " if stored is not None else ""
        rows.append(("New title", f"{before}{args['title']}"))
    if args.get("type") is not None:
        before = f"{stored.type} → " if stored is not None else ""
        rows.append(("New type", f"{before}{args['type']}"))
    if args.get("tags") is not None:
        tags = args["tags"] if isinstance(args["tags"], list) else [args["tags"]]
        rows.append(("New tags", ", ".join(str(t) for t in tags) or "(none)"))
    if args.get("content") is not None:
        rows.append(("Content", "replaced (see the difference below)"))
    return rows


def _text_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    if old == new:
        return "(no change: the new content is identical)"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
