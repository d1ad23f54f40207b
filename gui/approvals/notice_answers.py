"""Answering an approval from its desktop notification: which buttons it gets, and what a
press means (architecture: "Tools, approvals and trust").

A press is the person's answer, recorded like one given in the dialog (``decided_by`` the
person; Approve is "approve once", never "for the run", never a new rule, never an edited
command). What the dialog shows with a warning or asks the person to read closely gets no
one-click Approve: its notification offers "Review…" (open the dialog) and Deny instead.
That is:

* a ``bash`` command while bash is **not sandboxed** (the dialog's red sandbox note);
* any request a **rule asked** about (``Bash(git push:*)`` set to ask, or a line too long or too
  odd to judge) — the dialog's "Asked by …" line;
* a command the notification cannot show whole (several lines, or longer than
  :data:`MAX_ONE_CLICK_COMMAND`): a person must see what they approve;
* deleting a document (the one destructive action of the ``document`` tool).

Deny is always one click: refusing can do no harm the person did not choose.
"""

from __future__ import annotations

from core.safety.approvals import ApprovalAnswer
from core.tools.approval_describe import Description
from gui.widgets.desktop_notices import NoticeAction

MAX_ONE_CLICK_COMMAND = 160
"""Characters of a command a notification body shows in full on common servers."""

APPROVE = NoticeAction("approve", "Approve")
DENY = NoticeAction("deny", "Deny")
REVIEW = NoticeAction("open", "Review…")


def closer_look(shown: Description, sandboxed: bool) -> str | None:
    """Why this request must be answered in the dialog, or None when one click may do."""
    if shown.kind == "command" and not sandboxed:
        return "bash is not sandboxed here"
    if shown.rule:
        return shown.rule_note or "a rule asked"
    if shown.kind == "command" and (
        "\n" in shown.command.strip() or len(shown.command) > MAX_ONE_CLICK_COMMAND
    ):
        return "the command is too long to show here"
    if shown.tool == "document.delete":
        return "it deletes a document"
    return None


def notice_actions(shown: Description, sandboxed: bool) -> tuple[NoticeAction, ...]:
    return (REVIEW, DENY) if closer_look(shown, sandboxed) else (APPROVE, DENY)


def notice_body(shown: Description, sandboxed: bool) -> str:
    """What the notification says: who wants what, the command, and why it needs a look."""
    lines = [shown.headline]
    if shown.kind == "command":
        command = shown.command.strip()
        if len(command) > MAX_ONE_CLICK_COMMAND or "\n" in command:
            command = command.splitlines()[0][:MAX_ONE_CLICK_COMMAND] + " …"
        lines.append(f"$ {command}")
    why = closer_look(shown, sandboxed)
    if why:
        lines.append(f"Review it in Baton: {why}.")
    return "\n".join(lines)


def notice_answer(key: str, shown: Description, sandboxed: bool) -> ApprovalAnswer | None:
    """The person's answer for the button ``key``; None for "Review…" — and for an Approve
    the rules above do not allow (a press can only come for buttons that were offered, but
    the notification server is not Baton's to trust)."""
    if key == DENY.key:
        return ApprovalAnswer(decision="deny", decided_by="person")
    if key == APPROVE.key and closer_look(shown, sandboxed) is None:
        return ApprovalAnswer(decision="approve", decided_by="person")
    return None
