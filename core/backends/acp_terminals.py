"""The ACP client's ``terminal/*`` methods, served by Baton's own sandboxed ``bash``.

An agent that asks the client to run a command (``terminal/create``) gets it run the way
Baton's own agents' commands run (:class:`~core.tools.bash.BashTool`: bubblewrap where
available, a scrubbed environment, nothing outliving the command, the configured timeout). The
command and its arguments are quoted into one shell line, so the agent's words are arguments,
never shell syntax. Output is collected as it arrives (up to the agent's byte limit, keeping the
end); ``wait_for_exit`` waits for the command, ``kill`` stops its process tree and ``release``
forgets it. Whether the command may run at all was asked before, through the permission the
agent requested for its tool call (architecture: "Tools, approvals and trust").
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
import shlex
from dataclasses import dataclass, field

from core.tools.base import ToolContext, ToolError
from core.tools.bash import BashParams, BashTool

DEFAULT_OUTPUT_LIMIT = 1_000_000
_EXIT = re.compile(r"(?:Exit code|failed with exit code) (-?\d+)\.?\s*$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIGNAL = re.compile(r"killed by signal (\d+)\.?\s*$")


@dataclass
class _Terminal:
    task: asyncio.Task[str]
    limit: int
    output: str = ""
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, chunk: str) -> None:
        self.output += chunk
        encoded = self.output.encode("utf-8")
        if len(encoded) > self.limit:
            self.output = encoded[-self.limit :].decode("utf-8", errors="ignore")
            self.truncated = True


@dataclass(frozen=True)
class TerminalState:
    output: str
    truncated: bool
    finished: bool
    exit_code: int | None
    signal: str | None


class AcpTerminals:
    """The terminals of one session; ``make_context`` builds each command's tool context."""

    def __init__(self, tool_context: ToolContext) -> None:
        self._context = tool_context
        self._terminals: dict[str, _Terminal] = {}
        self._ids = itertools.count(1)

    def create(
        self,
        command: str,
        args: list[str] | None,
        env: dict[str, str],
        limit: int | None,
    ) -> str:
        line = shlex.join([command, *(args or [])]) if args else command
        if env:
            bad = [name for name in env if not _NAME.fullmatch(name)]
            if bad:
                raise ValueError(f"not an environment variable name: {bad[0]!r}")
            line = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + line
        terminal_id = f"term-{next(self._ids)}"
        holder: list[_Terminal] = []
        context = dataclasses.replace(self._context, emit_output=lambda chunk: holder[0].add(chunk))
        task = asyncio.create_task(BashTool().run(BashParams(command=line), context))
        terminal = _Terminal(task, limit or DEFAULT_OUTPUT_LIMIT)
        holder.append(terminal)
        task.add_done_callback(lambda _: self._finished(terminal))
        self._terminals[terminal_id] = terminal
        return terminal_id

    def _finished(self, terminal: _Terminal) -> None:
        task = terminal.task
        if task.cancelled():
            terminal.signal = "SIGKILL"
        else:
            error = task.exception()
            text = str(error) if error is not None else task.result()
            if isinstance(error, ToolError) or error is None:
                exit_match, signal_match = _EXIT.search(text), _SIGNAL.search(text)
                if exit_match:
                    terminal.exit_code = int(exit_match.group(1))
                elif signal_match:
                    terminal.signal = f"signal {signal_match.group(1)}"
                else:
                    terminal.exit_code = 0 if error is None else 1
            else:
                terminal.exit_code = 1
            if not terminal.output.strip() and text:
                terminal.add(text)
        terminal.done.set()

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise KeyError(f"no terminal '{terminal_id}'")
        return terminal

    def state(self, terminal_id: str) -> TerminalState:
        t = self._get(terminal_id)
        return TerminalState(t.output, t.truncated, t.done.is_set(), t.exit_code, t.signal)

    async def wait(self, terminal_id: str) -> TerminalState:
        await self._get(terminal_id).done.wait()
        return self.state(terminal_id)

    async def kill(self, terminal_id: str) -> None:
        terminal = self._get(terminal_id)
        terminal.task.cancel()  # bash stops the whole process tree as it unwinds
        await terminal.done.wait()

    async def release(self, terminal_id: str) -> None:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            return
        if not terminal.done.is_set():
            await self.kill(terminal_id)
        del self._terminals[terminal_id]

    async def close(self) -> None:
        for terminal_id in list(self._terminals):
            await self.release(terminal_id)
