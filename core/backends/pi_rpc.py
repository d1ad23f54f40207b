"""pi's RPC conversation for one step: Baton's approval gate inside pi (architecture: "Backends"
and "Tools, approvals and trust").

pi runs its own tools, so Baton gates them from inside: pi starts in RPC mode with only
Baton's extension loaded (``resources/pi/baton-gate.js``; ``--no-extensions`` keeps the user's
and pi's built-in ones out). That extension stops every ``tool_call`` and asks over pi's
extension-UI sub-protocol: an ``extension_ui_request`` (method ``input``, title
:data:`GATE_TITLE`) on stdout, answered by an ``extension_ui_response`` on stdin. Baton answers
with :meth:`ApprovalGate.check` — the same policy, rules, dialog and terminal prompt as its own
loop, edited arguments and deny reasons included.

The conversation, per step::

    → {"type": "get_commands"}          ← response: Baton's "baton-gate" command is there
    → {"type": "prompt", "message": "Task: …"}
    ← events …, extension_ui_request(s) → extension_ui_response(s) …
    → {"type": "steer", "message": …}    (a person's message, while the agent runs)
    ← agent_end → {"type": "get_state"} ← response: idle, no retry started → stdin closed

* **Baton's folders** are refused to every file tool before the policy is asked
  (:mod:`core.backends.cli_paths`).
* **Fail closed.** The task is sent only once ``get_commands`` shows the gate loaded; the
  extension blocks a call it gets no readable answer for.
* **Reading never waits for a person.** Each question is answered by its own task while
  stdout is read on; cancelling the step cancels the tasks (the gate records a denial).
* **When the step is over.** pi's ``prompt`` response only says the task was accepted, and a
  retry or an overflow compaction may follow an ``agent_end``. So after each ``agent_end``
  that does not announce a retry (1.x ``willRetry``) Baton asks ``get_state``: pi writes
  ``auto_retry_start`` in the same tick as ``agent_end``, so a retry shows before the answer.
  Idle with no retry seen → done; 1.x also says so directly with ``agent_settled``. Baton then
  closes stdin and pi exits by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from core.backends.base import StepContext
from core.backends.cli_paths import protected_refusal
from core.config.resources import builtin_dir
from core.model.events import Event, Log

GATE_TITLE = "baton-gate/1"
"""The title of the gate's question; also its protocol version."""
GATE_COMMAND = "baton-gate"
"""The command the extension registers so Baton can see it was loaded."""
NOT_LOADED = (
    "pi did not load Baton's approval gate, so its tools would run unchecked; the step "
    "was not started"
)

Send = Callable[[dict[str, Any]], Awaitable[None]]


def gate_extension() -> Path:
    """The extension file pi loads with ``-e`` (a real file in a checkout, wheel or bundle)."""
    return builtin_dir("pi") / "baton-gate.js"


class PiRpcSession:
    """The RPC side of one pi step. :meth:`handle` sees every stdout object first; what it
    does not consume (``None``) is one of pi's agent events, for the event parser."""

    def __init__(self, ctx: StepContext, send: Send, close_input: Callable[[], Awaitable[None]]):
        self.ctx = ctx
        self._send = send
        self._close_input = close_input
        self.failure: str | None = None
        """Why the step failed before or outside pi's events (gate missing, prompt refused)."""
        self.session_file: str | None = None
        """pi's session file for this step (from ``get_state``), for Continue."""
        self.done = False
        self._settle_id: str | None = None
        self._settle_count = 0
        self._retry_seen = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._task_text = ""

    async def start(self, task_text: str) -> None:
        """Ask for pi's commands; the task follows once the gate is seen there."""
        self._task_text = task_text
        self._spawn(self._forward_messages())
        await self._send({"type": "get_commands", "id": "baton-commands"})

    def handle(self, data: dict[str, Any]) -> list[Event] | None:
        """Events for one RPC object, or ``None``: not RPC, an agent event for the parser.

        Agent events that matter to the conversation (``agent_end``, retries) are noted here
        and still returned as ``None``.
        """
        kind = data.get("type")
        if kind == "response":
            return self._response(data)
        if kind == "extension_ui_request":
            return self._ui_request(data)
        if kind == "extension_error":
            where = data.get("extensionPath") or "an extension"
            message = f"pi extension error ({where}): {data.get('error')}"
            return [self.ctx.make(Log, level="warning", message=message)]
        if kind in ("auto_retry_start", "compaction_start"):
            self._retry_seen = True
        elif kind == "agent_start":
            self.ctx.inbox.open()
        elif kind == "agent_end" and data.get("willRetry") is not True:
            self.ctx.inbox.close()  # pi would keep a steering message queued, unread
            self._settle_count += 1
            self._settle_id = f"baton-settle-{self._settle_count}"
            self._retry_seen = False
            self._spawn(self._send({"type": "get_state", "id": self._settle_id}))
        elif kind == "agent_settled":
            self._finish()
        return None

    async def close(self) -> None:
        """Cancel the questions still open (their requests resolve as denied)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------------ responses

    def _response(self, data: dict[str, Any]) -> list[Event]:
        request_id = data.get("id")
        if request_id == "baton-commands":
            commands = (data.get("data") or {}).get("commands") if data.get("success") else None
            names = {c.get("name") for c in commands or () if isinstance(c, dict)}
            if GATE_COMMAND in names:
                message = {"type": "prompt", "id": "baton-prompt", "message": self._task_text}
                self._spawn(self._send({"type": "get_state", "id": "baton-session"}))
                self._spawn(self._send(message))
            else:
                self._fail(NOT_LOADED)
        elif request_id == "baton-session":
            path = (data.get("data") or {}).get("sessionFile")
            self.session_file = path if isinstance(path, str) and path else None
        elif request_id == "baton-prompt" and data.get("success") is False:
            self._fail(f"pi refused the task: {data.get('error') or 'no reason given'}")
        elif str(request_id).startswith("baton-steer-") and data.get("success") is False:
            reason = data.get("error") or "no reason given"
            return [self.ctx.make(Log, level="warning", message=f"pi refused a message: {reason}")]
        elif request_id is not None and request_id == self._settle_id:
            state = data.get("data") or {}
            busy = state.get("isStreaming") is True or state.get("isCompacting") is True
            if not busy and not self._retry_seen:
                self._finish()
        return []

    def _fail(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
        self._finish()

    def _finish(self) -> None:
        if not self.done:
            self.done = True
            self._spawn(self._close_input())

    async def _forward_messages(self) -> None:
        """A person's messages, as RPC ``steer``: pi adds each after its running tool calls,
        before its next model call."""
        count = 0
        async for text in self.ctx.inbox.stream():
            count += 1
            await self._send({"type": "steer", "id": f"baton-steer-{count}", "message": text})

    # ------------------------------------------------------------------------ questions

    def _ui_request(self, data: dict[str, Any]) -> list[Event]:
        request_id = str(data.get("id") or "")
        method = data.get("method")
        if method == "input" and data.get("title") == GATE_TITLE:
            self._spawn(self._answer(request_id, str(data.get("placeholder") or "")))
        elif method in ("select", "confirm", "input", "editor"):
            # Only Baton's gate is loaded; anything else asking is refused, never left waiting.
            reply = {"type": "extension_ui_response", "id": request_id, "cancelled": True}
            self._spawn(self._send(reply))
        return []  # notify, setStatus … are fire-and-forget

    async def _answer(self, request_id: str, question: str) -> None:
        try:
            call = json.loads(question)
        except ValueError:
            call = None
        answer: dict[str, Any] = {"allow": False, "reason": "Baton could not read the call."}
        if isinstance(call, dict):
            try:
                answer = await self._decide(call)
            except Exception as error:  # a failing responder must not leave pi waiting
                answer = {"allow": False, "reason": f"The approval failed: {error}"}
        value = json.dumps(answer, ensure_ascii=False)
        await self._send({"type": "extension_ui_response", "id": request_id, "value": value})

    async def _decide(self, call: dict[str, Any]) -> dict[str, Any]:
        arguments = call.get("input")
        arguments = arguments if isinstance(arguments, dict) else {}
        ctx = self.ctx
        refusal = protected_refusal(arguments, ctx.cwd)
        if refusal is not None:
            return {"allow": False, "reason": refusal}
        decision = await ctx.approvals.check(
            run_id=ctx.run_id,
            step=ctx.step,
            agent=ctx.agent.name,
            tool=str(call.get("toolName") or "tool"),
            call_id=str(call.get("toolCallId") or ""),
            arguments=arguments,
            cwd=str(ctx.cwd),
        )
        if not decision.approved:
            return {"allow": False, "reason": decision.denial_message()}
        if decision.updated_arguments is not None:
            return {"allow": True, "input": decision.updated_arguments}
        return {"allow": True}

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class StdinWriter:
    """pi's stdin: one JSON command a line, writes serialised; a gone pi is not an error
    (reading stdout tells the rest)."""

    def __init__(self, stream: asyncio.StreamWriter) -> None:
        self._stream = stream
        self._lock = asyncio.Lock()
        self._open = True

    async def send(self, message: dict[str, Any]) -> None:
        async with self._lock:
            if not self._open:
                return
            try:
                self._stream.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
                await self._stream.drain()
            except (BrokenPipeError, ConnectionResetError):
                self._open = False

    async def close(self) -> None:
        """End of input: pi finishes and exits. Idempotent."""
        async with self._lock:
            self._open = False
            if self._stream.is_closing():
                return
            self._stream.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await self._stream.wait_closed()
