"""Approvals on a terminal (``baton run --approve prompt``): the dialog's information and its
three choices, as text.

The question shows what the GUI dialog shows — the command and folder for ``bash``, a unified
diff for ``edit``/``write``, the arguments for anything else — then reads one of: approve
once, approve this tool for this run, deny (with an optional reason the model will read).
Reading stdin happens in a worker thread so the event loop (other parallel steps, Ctrl+C)
keeps running while the person thinks.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from core.approvals import ApprovalAnswer, ApprovalRequest
from core.tools.diffs import preview_diff

_CHOICES = "[o]nce  [r] approve this tool for this run  [d]eny"


def describe_request(request: ApprovalRequest) -> str:
    """What the person needs to decide, as plain text (also used by the GUI's copy action)."""
    lines = [f"{request.agent} (step {request.step + 1}) wants to use {request.tool}"]
    if request.tool == "bash":
        lines += [f"  folder:  {request.cwd}", f"  command: {request.arguments.get('command')}"]
    else:
        diff = preview_diff(request.tool, request.arguments, Path(request.cwd))
        if diff:
            lines.append(diff.rstrip("\n"))
        else:
            lines.append(json.dumps(request.arguments, indent=2, ensure_ascii=False))
    return "\n".join(lines)


class TerminalApprover:
    """A responder for :class:`core.approvals.ApprovalGate` that asks on a terminal."""

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
            self._out.write("\n" + describe_request(request) + "\n")
            self._out.flush()
            while True:
                answer = await asyncio.to_thread(self._ask, f"Approve? {_CHOICES}: ")
                if answer is None:
                    return ApprovalAnswer(decision="deny", reason="No answer (input closed).")
                choice = answer.lower()
                if choice in ("o", "once", "y", "yes"):
                    return ApprovalAnswer(decision="approve")
                if choice in ("r", "run"):
                    return ApprovalAnswer(decision="approve_run")
                if choice in ("d", "deny", "n", "no"):
                    reason = await asyncio.to_thread(self._ask, "Reason for the agent (optional): ")
                    return ApprovalAnswer(decision="deny", reason=reason or None)

    def _ask(self, prompt: str) -> str | None:
        try:
            return self._read_line(prompt).strip()
        except EOFError:
            return None
