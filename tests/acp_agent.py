"""A tiny ACP agent written with the SDK's agent side, for the ACP backend's tests.

It behaves like the real agents the field notes describe where that matters to Baton: tool
calls arrive **sparse** (a bare ``tool_call``, the input and diff in a later
``tool_call_update``), permission options carry agent-specific ids (choose by ``kind``), a
rejection ends the turn (as OpenCode does), and it starts a child in a process group of its own
that survives a kill of the agent (as OpenCode's and Codex's tool children do). Unlike the real
ones it uses the client's ``fs/*`` and ``terminal/*`` methods, so Baton's serving of them is
tested. Each prompt line is one instruction:

* ``READ path`` — ``fs/read_text_file`` (after asking, kind ``read``); the content is answered.
* ``WRITE path text`` — asks (kind ``edit``), then ``fs/write_text_file``; reports the diff.
* ``RUN command`` — asks (kind ``execute``), then ``terminal/create`` … ``wait_for_exit``.
* ``ENV NAME`` — says the value of NAME in its own environment.
* ``CAT path`` — ``fs/read_text_file`` without asking (a hostile agent); says what came back.
* ``TERM command`` — ``terminal/create`` without asking; says the exit code or the refusal.
* ``HANG`` — starts ``sleep 600`` in a session of its own, says ``hanging`` and waits until
  cancelled.
* anything else is echoed: ``echo: <line>`` (denial messages and steering come back this way).

``ACP_TEST_USAGE=1``: the prompt response carries token counts.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any, Literal

from acp import run_agent, update_agent_message_text, update_agent_thought_text
from acp.helpers import (
    plan_entry,
    start_tool_call,
    tool_diff_content,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
)

OPTIONS = [
    PermissionOption(option_id="proceed_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="proceed_always", name="Always", kind="allow_always"),
    PermissionOption(option_id="nope", name="Reject", kind="reject_once"),
]


class TinyAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cwd = "."
        self.calls = 0
        self.cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(load_session=False),
            agent_info=Implementation(name="tiny-acp", version="1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.cwd = cwd
        return NewSessionResponse(session_id="s-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self.cancelled.clear()
        text = "".join(getattr(block, "text", "") for block in prompt)
        say = self._say(session_id)
        await self.conn.session_update(session_id, update_agent_thought_text("considering"))
        entries = [plan_entry("do the task", status="in_progress")]
        await self.conn.session_update(session_id, update_plan(entries))
        stop: Literal["end_turn", "cancelled"] = "end_turn"
        for line in text.splitlines():
            word, _, rest = line.strip().partition(" ")
            if word == "READ":
                allowed = await self._ask(session_id, "read", f"Read {rest}", {"filePath": rest})
                if not allowed:
                    break
                read = await self.conn.read_text_file(session_id=session_id, path=rest)
                await say(f"content: {read.content}")
            elif word == "WRITE":
                path, _, content = rest.partition(" ")
                raw = {"filePath": path, "content": content}
                if not await self._ask(session_id, "edit", f"Write {path}", raw):
                    break
                await self.conn.write_text_file(session_id=session_id, path=path, content=content)
                diff = tool_diff_content(path, content, None)
                update = update_tool_call(self._id(), status="completed", content=[diff])
                await self.conn.session_update(session_id, update)
                await say(f"wrote {path}")
            elif word == "RUN":
                if not await self._ask(session_id, "execute", rest, {"command": rest}):
                    break
                made = await self.conn.create_terminal(
                    session_id=session_id, command="bash", args=["-c", rest]
                )
                done = await self.conn.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=made.terminal_id
                )
                out = await self.conn.terminal_output(
                    session_id=session_id, terminal_id=made.terminal_id
                )
                await self.conn.release_terminal(
                    session_id=session_id, terminal_id=made.terminal_id
                )
                await say(f"ran: exit {done.exit_code}: {out.output.strip()}")
            elif word == "ENV":  # what the agent's own environment holds
                await say(f"env {rest}={os.environ.get(rest)}")
            elif word == "CAT":  # the client's file method, without asking first
                try:
                    read = await self.conn.read_text_file(session_id=session_id, path=rest)
                    await say(f"content: {read.content}")
                except Exception as error:
                    await say(f"refused: {error}")
            elif word == "TERM":  # the client's terminal, without asking (a hostile agent)
                try:
                    made = await self.conn.create_terminal(session_id=session_id, command=rest)
                    done = await self.conn.wait_for_terminal_exit(
                        session_id=session_id, terminal_id=made.terminal_id
                    )
                    await say(f"term exit {done.exit_code}")
                except Exception as error:
                    await say(f"refused: {error}")
            elif word == "HANG":
                # Like OpenCode's tool children: a process group of its own.
                subprocess.Popen(["sleep", "600"], start_new_session=True)  # noqa: ASYNC220
                await say("hanging")
                await self.cancelled.wait()
                stop = "cancelled"
            elif line.strip():
                await say(f"echo: {line.strip()}")
        usage = None
        if os.environ.get("ACP_TEST_USAGE") == "1":
            usage = Usage(input_tokens=100, output_tokens=20, total_tokens=120)
        return PromptResponse(stop_reason=stop, usage=usage)

    def _id(self) -> str:
        return f"call-{self.calls}"

    def _say(self, session_id: str) -> Any:
        async def say(text: str) -> None:
            await self.conn.session_update(session_id, update_agent_message_text(text + "\n"))

        return say

    async def _ask(self, session_id: str, kind: str, title: str, raw: dict[str, Any]) -> bool:
        """Sparse announcement, details in an update, then the question."""
        self.calls += 1
        call_id = self._id()
        await self.conn.session_update(
            session_id, start_tool_call(call_id, title, status="pending")
        )
        path = raw.get("filePath")
        location = [ToolCallLocation(path=str(path))] if path else None
        update = update_tool_call(
            call_id,
            kind=kind,  # type: ignore[arg-type]
            raw_input=raw,
            locations=location,
        )
        await self.conn.session_update(session_id, update)
        answer = await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title),
            options=OPTIONS,
        )
        outcome = answer.outcome
        allowed = isinstance(outcome, AllowedOutcome) and outcome.option_id == "proceed_once"
        if not allowed:
            update = update_tool_call(call_id, status="failed", raw_output={"error": "rejected"})
            await self.conn.session_update(session_id, update)
        elif kind != "edit":
            update = update_tool_call(call_id, status="completed")
            await self.conn.session_update(session_id, update)
        return allowed


async def main() -> None:
    await run_agent(TinyAgent())  # type: ignore[arg-type]  # only the methods it needs


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
