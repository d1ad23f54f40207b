"""Approvals on a terminal (``baton run --approve prompt``): the dialog's information and its
choices, as text.

The question renders the same :class:`core.tools.approval_describe.Description` the GUI dialog
renders — the command and folder for ``bash``, a unified diff for ``edit``/``write``, the
document for ``document``, the arguments for anything else, and the rule that asked — then
reads one of: approve once, approve this tool for this run, always allow the suggested rule
in this project, deny (with an optional reason the model will read). Describing and reading
stdin happen in worker threads so the event loop (other parallel steps, Ctrl+C) keeps running
while the person thinks.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TextIO

from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.tools.approval_describe import as_text, describe

_CHOICES = "[o]nce  [r] approve this tool for this run  [d]eny"


def describe_request(request: ApprovalRequest) -> str:
    """What the person needs to decide, as plain text (the dialog shows the same parts)."""
    return as_text(describe(request))


class TerminalApprover:
    """A responder for :class:`core.safety.approvals.ApprovalGate` that asks on a terminal."""

    def __init__(
        self,
        out: TextIO | None = None,
        read_line: Callable[[str], str] = input,
    ) -> None:
        self._out = out or sys.stderr
        self._read_line = read_line
        self._lock = asyncio.Lock()  # one question at a time, even with parallel steps

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        async with self._lock:
            text = await asyncio.to_thread(describe_request, request)
            self._out.write("\n" + text + "\n")
            self._out.flush()
            rule = request.suggested_rule
            choices = f"{_CHOICES}  [a]lways allow {rule} here" if rule else _CHOICES
            while True:
                answer = await asyncio.to_thread(self._ask, f"Approve? {choices}: ")
                if answer is None:
                    return ApprovalAnswer(
                        decision="deny",
                        reason="Denied: no answer (the terminal's input was closed)",
                        decided_by="no_one",
                    )
                choice = answer.lower()
                if choice in ("o", "once", "y", "yes"):
                    return ApprovalAnswer(decision="approve")
                if choice in ("r", "run"):
                    return ApprovalAnswer(decision="approve_run")
                if rule and choice in ("a", "always"):
                    return ApprovalAnswer(decision="approve", remember_rule=rule)
                if choice in ("d", "deny", "n", "no"):
                    reason = await asyncio.to_thread(self._ask, "Reason for the agent (optional): ")
                    return ApprovalAnswer(decision="deny", reason=reason or None)

    def _ask(self, prompt: str) -> str | None:
        try:
            return self._read_line(prompt).strip()
        except EOFError:
            return None
