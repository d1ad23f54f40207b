"""What an approval request *is*, and how it was decided, described once for every screen.

The terminal prompt (:mod:`core.terminal.approval_prompt`) and the approval dialog
(:mod:`gui.approvals.approval_dialog`) both render :func:`describe`'s :class:`Description`, so they
cannot drift: a person approves a *change*, not a JSON blob — the command and folder for
``bash``, a unified diff against the file on disk for ``edit``/``write``
(:func:`core.tools.diffs.preview_diff`, the tools' own path resolution), the document and what
would happen to it for ``document``, pretty JSON for anything else — plus the rule that asked
and a narrow rule the person may keep.

:func:`describe` reads files and the document store and computes diffs: call it off the GUI
thread (the dialog's queue does, through ``asyncio.to_thread``). Diffs are capped at
:data:`MAX_DIFF_LINES` ("diff too large — N lines"), and inputs past :data:`MAX_DIFF_BYTES` are
not diffed at all, so a multi-megabyte write never stalls anything.

:func:`resolution_text` is the audit trail's wording ("Denied by you: …", "Denied: no one to
ask …", "Allowed by the project rule …"), shared by the window, the terminal and exports.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.model.events import ApprovalResolved
from core.safety.approvals import ApprovalRequest
from core.tools.base import ToolError
from core.tools.diffs import FILE_TOOLS, claude_file_path, preview_diff
from core.tools.paths import check_representable

Kind = Literal["command", "diff", "document", "json"]

MAX_DIFF_LINES = 2000
"""A longer diff is replaced by "diff too large — N lines"."""
MAX_DIFF_BYTES = 2_000_000
"""Files or contents past this are not diffed at all (difflib would take seconds)."""
MAX_WRITE_DIFF_LINES = 8000
"""A ``write`` replacing a file: old + new lines past this are not diffed. difflib is
quadratic in the lines that differ (measured: 2,000 changed lines 0.1 s, 5,000 1 s, 40,000
100 s); an ``edit`` changes little, so it is only bounded by :data:`MAX_DIFF_BYTES`."""


@dataclass(frozen=True)
class Description:
    """The parts of a request a person needs; only the ones of its ``kind`` are set."""

    kind: Kind
    headline: str
    """One line saying who wants to do what (``planner wants to run a command``)."""
    tool: str
    """The tool, with the document action (``document.delete``)."""
    step: int
    agent: str
    command: str = ""
    folder: str = ""
    diff: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)
    """(label, value) rows: the document's id, title, type, tags…"""
    json: str = ""
    rule: str | None = None
    """The rule that asked (``ask Bash(git push:*)``), when a rule, not the policy, asked."""
    suggested_rule: str | None = None
    note: str = ""
    """What the tool says about itself (an MCP server and its read-only / destructive hints)."""

    @property
    def rule_note(self) -> str:
        """``Asked by the project rule Bash(git push:*)``, or "" when the policy asked; a reason
        when Baton asks with no rule deciding (``ask: …``: a line too long to judge)."""
        if not self.rule:
            return ""
        if self.rule.startswith("ask: "):
            return f"Asked because {self.rule.removeprefix('ask: ')}"
        return f"Asked by the project rule {self.rule.removeprefix('ask ')}"


def describe(request: ApprovalRequest) -> Description:
    """What to show for ``request``; never raises for odd arguments. Blocking: see module."""
    args = request.arguments
    who = request.agent or "The agent"
    common: dict[str, Any] = {
        "tool": f"{request.tool}.{request.action}" if request.action else request.tool,
        "step": request.step,
        "agent": request.agent,
        "rule": request.rule,
        "suggested_rule": request.suggested_rule,
        "folder": request.cwd,
        "note": request.note or "",
    }
    if request.tool == "bash":
        return Description(
            kind="command",
            headline=f"{who} wants to run a command",
            command=str(args.get("command", "")),
            **common,
        )
    if request.tool in FILE_TOOLS:
        path = claude_file_path(args) or "a file"
        verb = "write" if request.tool == "write" else "edit"
        return Description(
            kind="diff",
            headline=f"{who} wants to {verb} {path}",
            diff=_file_diff(request),
            **common,
        )
    if request.tool == "document":
        return _document(request, who, common)
    if request.tool.startswith("mcp__"):
        server, _, tool = request.tool.removeprefix("mcp__").partition("__")
        return Description(
            kind="json",
            headline=f"{who} wants to use {tool} of the MCP server {server}",
            json=json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True),
            **common,
        )
    return Description(
        kind="json",
        headline=f"{who} wants to use {request.tool}",
        json=json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True),
        **common,
    )


def as_text(shown: Description) -> str:
    """The description as plain text: the terminal prompt, and the dialog's copy action."""
    lines = [f"{shown.headline} (step {shown.step + 1}, tool {shown.tool})"]
    if shown.rule_note:
        lines.append(f"  {shown.rule_note}")
    if shown.note:
        lines.append(f"  {shown.note}")
    lines += [f"  {label}: {value}" for label, value in shown.facts]
    if shown.kind == "command":
        lines += [f"  folder:  {shown.folder}", f"  command: {shown.command}"]
    if shown.diff:
        lines.append(shown.diff.rstrip("\n"))
    if shown.json:
        lines.append(shown.json)
    return "\n".join(lines)


def cap_diff(diff: str) -> str:
    """``diff`` unchanged, or "(diff too large — N lines)" past :data:`MAX_DIFF_LINES`."""
    lines = diff.count("\n")
    return f"(diff too large — {lines} lines)" if lines > MAX_DIFF_LINES else diff


def _file_diff(request: ApprovalRequest) -> str:
    args = request.arguments
    keys = ("content", "old_string", "new_string", "new_source", "edits")
    sizes = [len(str(args.get(k, ""))) for k in keys]
    try:
        check_representable(claude_file_path(args))
    except ToolError as refused:  # no file can have this name; the tool will say so too
        return f"(no preview: {refused})"
    target = Path(request.cwd) / claude_file_path(args)
    try:
        if target.is_file():
            sizes.append(target.stat().st_size)
    except OSError:
        pass
    if max(sizes) > MAX_DIFF_BYTES:
        lines = max(str(args.get("content", "")).count("\n"), _line_count(target))
        return f"(diff too large — {lines} lines)"
    if request.tool == "write" and target.is_file():
        lines = str(args.get("content", "")).count("\n") + _line_count(target)
        if lines > MAX_WRITE_DIFF_LINES:
            return f"(diff too large — {lines} lines)"
    return cap_diff(preview_diff(request.tool, args, Path(request.cwd)) or "")


def _line_count(path: Path) -> int:
    try:
        with path.open("rb") as file:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))
    except OSError:
        return 0


# -- documents --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredDocument:
    """What the description needs of a stored document (looked up by
    :func:`lookup_document`)."""

    title: str
    type: str
    tags: list[str]
    content: str


def lookup_document(doc_id: int) -> StoredDocument | None:
    """The stored document ``doc_id``, or None when it is missing or the store is unreadable.

    The request must be shown whatever the store's state: a failure here only means the
    person sees the arguments without the stored version beside them.
    """
    try:
        from core.documents.store import DocumentStore

        document = DocumentStore.default().get(doc_id, full=True)
    except Exception:
        return None
    return StoredDocument(
        title=document.title,
        type=str(document.type),
        tags=list(document.tags),
        content=document.content or "",
    )


def _document(request: ApprovalRequest, who: str, common: dict[str, Any]) -> Description:
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
    common = {**common, "folder": ""}
    return Description(kind="document", headline=headline, facts=facts, diff=diff, **common)


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
    if max(len(old), len(new)) > MAX_DIFF_BYTES:
        return f"(diff too large — {max(old.count(chr(10)), new.count(chr(10)))} lines)"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
    )
    return cap_diff("".join(line if line.endswith("\n") else line + "\n" for line in lines))


# -- the audit trail ------------------------------------------------------------------------


def resolution_text(event: ApprovalResolved) -> str:
    """How a decision reads for a person: who decided, and what ran.

    "Denied by you: <reason>" only when the person denied; a rule, a policy entry, the run's
    setting, the no-terminal default and a cancel carry their own full sentence as reason.
    """
    by = event.decided_by
    reason = (event.reason or "").strip()
    if event.decision == "deny":
        if by == "person":
            return f"Denied by you: {reason}" if reason else "Denied by you"
        if not reason or reason.startswith("Denied"):
            return reason or "Denied"
        return f"Denied: {reason}"  # a short reason, or a run saved before deciders were named
    if by == "rule":
        return f"Allowed by the project rule {(event.rule or '').removeprefix('allow ')}"
    if by == "run":
        return "Approved: already approved for this run"
    if by == "setting":
        return "Approved: this run approves every call"
    if by == "policy":
        return f"Allowed by {event.rule or 'the policy'}"
    verdict = "Approved for this run" if event.decision == "approve_run" else "Approved"
    text = f"{verdict} by you" if by == "person" else verdict
    if event.updated_arguments is not None:
        command = event.updated_arguments.get("command")
        text += f", edited to: {command}" if command is not None else ", with edited arguments"
    if event.added_rule:
        text += f"; always allowed here from now on: {event.added_rule}"
    return text
