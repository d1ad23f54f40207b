"""Baton as the ACP client of one step: what the agent may ask of Baton, answered.

The SDK (``agent-client-protocol``) calls these methods when the agent sends a request or a
notification (architecture: "Backends"):

* ``session/update`` → :class:`~core.backends.acp_events.AcpEventTranslator`, events put on the
  step's queue.
* ``session/request_permission`` → Baton's gate (:meth:`ApprovalGate.check`: policy, project
  rules, the dialog or the terminal, who decided recorded), after Baton's own folders are
  refused. The answer is the option of the right **kind** (``allow_once`` / ``reject_once``):
  option ids differ per agent. Baton never picks ``allow_always``, so the agent keeps asking
  and Baton's rules stay the only memory. The protocol has no field for a reason: a denial's
  message is queued (:attr:`AcpClient.denials`) and sent as the next prompt. Nor can a client
  change a call's input: a command a person edited before approving is refused, and the next
  prompt says what was approved instead.
* ``fs/read_text_file`` / ``fs/write_text_file`` → Baton's file rules
  (:mod:`core.tools.paths`, :mod:`core.tools.files`): inside the working folder, never Baton's
  folders, never through a symlink out.
* ``terminal/*`` → :class:`~core.backends.acp_terminals.AcpTerminals` (Baton's sandboxed bash).
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from core.backends.acp_events import AcpEventTranslator
from core.backends.acp_terminals import AcpTerminals
from core.backends.base import StepContext
from core.backends.cli_paths import protected_refusal
from core.model.events import Event
from core.tools.base import ToolContext, ToolError
from core.tools.files import off_loop, open_regular
from core.tools.paths import display_path, resolve_in_cwd, working_root
from core.tools.write import WriteParams, WriteTool

MAX_READ_BYTES = 10 * 1024 * 1024

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")


def choose_option(options: list[PermissionOption], approved: bool) -> str | None:
    """The id of the option whose kind says what Baton decided (once before always), or None
    when the agent offered none of that kind (Baton then answers ``cancelled``)."""
    for kind in ALLOW_KINDS if approved else REJECT_KINDS:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


class AcpClient:
    """The ``acp.Client`` of one step (see the module docstring)."""

    def __init__(
        self,
        ctx: StepContext,
        translator: AcpEventTranslator,
        emit: asyncio.Queue[Event | asyncio.Future[None] | None],
        tool_context: ToolContext,
    ) -> None:
        self.ctx = ctx
        self.translator = translator
        self._queue = emit
        self.terminals = AcpTerminals(tool_context)
        self._tool_context = tool_context
        self.denials: list[str] = []
        """What denials said, for the next prompt (the protocol carries no reason)."""
        self.cancelled = False
        self.replaying = False
        """While ``session/load`` runs: the agent replays the conversation, which is not news."""
        self.on_tool_call: list[Any] = []
        """Called (no arguments) at every tool call: the backend refreshes its process tree."""

    def _put(self, events: list[Event]) -> None:
        for event in events:
            self._queue.put_nowait(event)

    async def _delivered(self) -> None:
        """Wait until what was put so far has left the step's stream: a question's row (and
        the calls before it) must be recorded before the gate records the question."""
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(marker)
        await marker

    def on_connect(self, conn: Any) -> None:
        return None

    # ------------------------------------------------------------------ session/update

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.replaying:  # session/load replays the history: already in the earlier run
            return
        self._put(self.translator.feed(update))
        if getattr(update, "session_update", "") in ("tool_call", "tool_call_update"):
            for refresh in self.on_tool_call:
                refresh()

    # ------------------------------------------------------------------ permissions

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self._put(self.translator.merge_call(tool_call, announce=True))
        await self._delivered()
        if self.cancelled:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        call = self.translator.calls[tool_call.tool_call_id]
        arguments = call.arguments()
        refusal = next(
            (
                r
                for path in call.paths()
                if (r := protected_refusal({"path": path}, self.ctx.cwd)) is not None
            ),
            None,
        )
        if refusal is not None:
            return self._deny(options, refusal)
        answer = await self.ctx.approvals.check(
            run_id=self.ctx.run_id,
            step=self.ctx.step,
            agent=self.ctx.agent.name,
            tool=call.tool,
            call_id=call.call_id,
            arguments=arguments,
            cwd=str(self.ctx.cwd),
        )
        if not answer.approved:
            message = f"Your {call.tool} call was refused. {answer.denial_message()}"
            return self._deny(options, message)
        edited = answer.updated_arguments
        if edited is not None and edited != arguments:
            # ACP cannot change a call's input: refuse this one, say what was approved instead.
            changes = {k: v for k, v in edited.items() if arguments.get(k) != v}
            message = (
                f"The user changed your {call.tool} call before approving it; it was not run "
                f"as you wrote it. Run it again with these values instead: {changes}"
            )
            return self._deny(options, message)
        option = choose_option(options, approved=True)
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return _selected(option)

    def _deny(self, options: list[PermissionOption], message: str) -> RequestPermissionResponse:
        self.denials.append(message)
        option = choose_option(options, approved=False)
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return _selected(option)

    def _refuse_if_denied(self, tool: str, what: str) -> None:
        """The client's own methods honour a policy that denies the tool outright; asking is
        left to the agent's permission request, which came before (the gate's *deny* is the
        one answer that never depends on the call)."""
        if self.ctx.approvals.policy_for(tool) == "deny":
            reason = f"the user's policy denies {tool}"
            raise _refused(reason, {"target": what})

    # ------------------------------------------------------------------ fs/*

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self._refuse_if_denied("read", path)
        try:
            resolved = resolve_in_cwd(path, self.ctx.cwd)
            shown = display_path(resolved, self.ctx.cwd)
            text = await off_loop(_read_text, resolved, shown, working_root(self.ctx.cwd))
        except ToolError as error:
            raise _refused(str(error), {"path": path}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = None if limit is None else start + max(limit, 0)
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self._refuse_if_denied("write", path)
        try:
            await WriteTool().run(WriteParams(path=path, content=content), self._tool_context)
        except ToolError as error:
            raise _refused(str(error), {"path": path}) from None
        return WriteTextFileResponse()

    # ------------------------------------------------------------------ terminal/*

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self._refuse_if_denied("bash", command)
        if cwd is not None:
            try:
                inside = resolve_in_cwd(cwd, self.ctx.cwd)
            except ToolError as error:
                raise _refused(str(error), {"cwd": cwd}) from None
            if inside != working_root(self.ctx.cwd):
                command = f"cd {shlex.quote(str(inside))} && {command}"
        variables = {item.name: item.value for item in env or []}
        try:
            terminal_id = self.terminals.create(command, args, variables, output_byte_limit)
        except ValueError as error:
            raise _refused(str(error), {}) from None
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        state = self._terminal(terminal_id)
        status = (
            TerminalExitStatus(exit_code=state.exit_code, signal=state.signal)
            if state.finished
            else None
        )
        return TerminalOutputResponse(
            output=state.output, truncated=state.truncated, exit_status=status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self._terminal(terminal_id)
        state = await self.terminals.wait(terminal_id)
        return WaitForTerminalExitResponse(exit_code=state.exit_code, signal=state.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        self._terminal(terminal_id)
        await self.terminals.kill(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        await self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    def _terminal(self, terminal_id: str) -> Any:
        try:
            return self.terminals.state(terminal_id)
        except KeyError as error:
            raise _refused(str(error), {"terminalId": terminal_id}) from None

    # ------------------------------------------------------------------ the rest

    async def create_elicitation(
        self, message: str, mode: Any, **kwargs: Any
    ) -> CreateElicitationResponse:
        """Questions outside a tool call have no place in a step: declined."""
        return DeclineElicitationResponse(action="decline")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def _refused(reason: str, data: dict[str, Any]) -> RequestError:
    """An error whose message is the reason (agents pass the message on to their model)."""
    return RequestError(-32602, reason, {**data, "reason": reason})


def _selected(option: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option))


def _read_text(path: Any, shown: str, root: Any) -> str:
    with open_regular(path, shown, root) as handle:
        data = handle.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise ToolError(f"{shown} is larger than {MAX_READ_BYTES} bytes.")
    return data.decode("utf-8", errors="replace")
