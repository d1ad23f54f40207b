"""The Claude Code backend: one step = one ``claude -p`` process spoken to over stdio.

Users of Claude Code have their agents in ``.claude/agents`` and are logged in already; this
backend runs their steps through the CLI and — unlike wrappers that pass
``--dangerously-skip-permissions`` — routes every permission question to Baton's own approval
gate (same policy, dialog and headless ``--approve`` behaviour as Baton's own loop).

The process (``reference/claude/PROTOCOL.md``)::

    claude -p --output-format stream-json --verbose --include-partial-messages
           --input-format stream-json --permission-prompt-tool stdio
           --permission-mode default [--disallowedTools=…] --settings=<ask/deny rules>
           [--model M] [--tools a,b] [--max-turns N]
           [--setting-sources user --strict-mcp-config]
           [--append-system-prompt-file <0600 file in a 0700 temp folder>]

(the policy's part: :mod:`core.backends.claude_permissions`)

* **Nothing from the checkout runs untrusted.** A folder's ``.claude/settings*.json`` and
  ``.mcp.json`` can make the CLI run hooks, an ``apiKeyHelper`` and MCP servers by itself,
  before any tool call Baton could gate. Unless the person trusted them (and they did not
  change since: :meth:`StepContext.checkout_trusted`), ``--setting-sources user`` loads only
  the person's own settings and ``--strict-mcp-config`` (with no ``--mcp-config``) no MCP
  server at all; Baton's ``--settings`` still applies. Once trusted, what they run is listed
  in the step (:mod:`core.safety.checkout_programs`). Both flags exist in 2.0.76 and 2.1.x.
* **The agent's prompt is not on the command line**, where ``ps`` shows it to every user: it
  goes in a 0600 file (``--append-system-prompt-file``, accepted by 2.0.76 though hidden from
  its ``--help``, and by 2.1.x), removed when the step ends.

runs in the step's folder (there is no ``--cwd``). Baton writes the ``initialize`` control
request and the task as a stream-json user message, then keeps stdin open: the CLI asks about
tool calls with ``can_use_tool`` control requests, and a cancel is an ``interrupt`` request.

* **Reading never waits for a person.** Each ``can_use_tool`` is answered by its own task
  (``ApprovalGate.check`` → ``allow`` with ``updatedInput`` or ``deny`` with the reason) while
  stdout is read on; a ``control_cancel_request`` (the CLI gave up on a question, e.g. after an
  interrupt) cancels that task, which resolves the dialog as denied. The call is announced
  (``tool_call_started``) before the question, so the dialog belongs to a row.
* **Talking to the step.** What a person types while the step runs (``ctx.inbox``,
  :mod:`core.backends.steering`) goes in as one more user message; the CLI adds it to its next
  request
  (2.0.76 after the tool result as "the user sent the following message", then answers it in a
  turn of its own; 2.1.x only the former), so nothing running is aborted.
* **When stdin closes.** In stream-json input mode the CLI waits for the next user message
  until stdin ends. Baton sends its messages while the step runs, so stdin is closed at the
  first ``result`` (no more messages are taken from then on): the CLI then finishes what is
  still running (2.1.x background subagents, which may print a second ``result``) and exits;
  stdout is read until then and the last ``result`` wins.
  Keeping stdin open for background work instead would hang every step whose CLI waits for
  input. The cost: a background subagent that asks for permission after the first ``result``
  cannot be asked (it is logged, and the CLI treats the closed channel as a refusal).
* **Cancel.** When ``ctx.cancelled`` is set: the ``interrupt`` request (the CLI answers with a
  ``result`` and exits once stdin closes); if it is still alive after
  :attr:`ClaudeBackend.interrupt_grace_s`, SIGTERM to its process tree, SIGKILL after
  :attr:`ClaudeBackend.terminate_grace_s` more; the step ends ``aborted``. If the runner
  cancels the iterating task (hard stop), ``finally`` does the SIGTERM/SIGKILL and reaps.
  Claude runs its bash in a session of its own, so the tree is remembered while the CLI is
  alive (:class:`~core.tools.process_tree.ProcessTree`, refreshed at every tool call and at the
  cancel) and tagged through the environment: what the CLI left behind, re-parented to Baton,
  is still found and ended after it exited.
* **Clean before the end.** The runner stops iterating at ``step_finished`` without closing the
  generator, so the process is reaped and every helper task finished *before* it is yielded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

from core.backends.base import BackendError, StepContext
from core.backends.claude_events import ClaudeEventParser, baton_tool_name
from core.backends.claude_permissions import denied_tools, permission_args
from core.backends.cli_output import json_object, keep_stderr_tail
from core.backends.cli_paths import protected_refusal
from core.backends.prompt_file import write_private_prompt
from core.backends.system_prompt import changed_context_note
from core.config.looks import one_look
from core.config.program_locations import locate_program
from core.model.events import Event, Log, StepFinished
from core.safety.checkout_programs import checkout_programs
from core.safety.environment import CLAUDE_PROVIDER_KEYS, cli_environment
from core.safety.nesting import step_process
from core.tools.process_tree import TAG_VARIABLE, ProcessTree, become_subreaper, new_tag

INSTALL_HINT = (
    "install it with `npm install -g @anthropic-ai/claude-code` and log in by running "
    "`claude` once, or set claude_path in the settings"
)

#: Baton's tool names as Claude Code calls them (Claude Code 2.x has no LS tool: Glob lists).
BATON_TO_CLAUDE: dict[str, str] = {
    "read": "Read",
    "grep": "Grep",
    "find": "Glob",
    "ls": "Glob",
    "bash": "Bash",
    "edit": "Edit",
    "write": "Write",
}
#: Baton tools Claude Code has no equivalent of; dropped from ``--tools``.
BATON_ONLY_TOOLS = frozenset({"document"})

MAX_LINE_BYTES = 32 * 1024 * 1024
"""Longest stdout line read (a tool result with a whole file in it can be megabytes)."""
STDERR_DRAIN_S = 2.0
"""After the CLI exits, how long stderr may stay open (held by a grandchild) before Baton
stops reading it."""


def claude_tools(declared: tuple[str, ...]) -> list[str]:
    """An agent file's ``tools:`` as ``--tools`` values: Claude Code names pass unchanged,
    Baton names map back (``read`` → ``Read``, ``find`` → ``Glob``), duplicates go."""
    tools: list[str] = []
    for name in declared:
        if name in BATON_ONLY_TOOLS:
            continue
        mapped = BATON_TO_CLAUDE.get(name, name)
        if mapped not in tools:
            tools.append(mapped)
    return tools


def find_claude(configured: str | None) -> str:
    """The executable to run; :class:`BackendError` saying how to install it when missing."""
    located = locate_program("claude", configured)
    if located is not None:
        return located.path
    if configured:
        raise BackendError(f"Claude Code was not found at '{configured}': {INSTALL_HINT}.")
    raise BackendError(f"Claude Code ('claude') is not installed or not on PATH: {INSTALL_HINT}.")


def build_command(executable: str, ctx: StepContext, prompt_file: Path | None = None) -> list[str]:
    """The CLI's argv; ``prompt_file`` holds the agent's system prompt (never the argv)."""
    argv = [
        executable,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--input-format",
        "stream-json",
        "--permission-prompt-tool",
        "stdio",
    ]
    policy = ctx.settings.effective_policy()
    argv += permission_args(ctx.approvals, policy)
    if ctx.model:
        argv += ["--model", ctx.model]
    if ctx.continues is not None and ctx.continues.session:
        # Continue: a fork of the finished session, which itself stays as it was.
        argv += ["--resume", ctx.continues.session, "--fork-session"]
    if ctx.agent.declared_tools is not None:
        denied = denied_tools(ctx.approvals, policy)
        offered = [t for t in claude_tools(ctx.agent.declared_tools) if t not in denied]
        # "=" form: a list-valued flag would swallow the arguments after it.
        argv.append("--tools=" + ",".join(offered))
    argv += ["--max-turns", str(ctx.settings.limits.max_turns)]
    if not ctx.checkout_trusted() or ctx.project_context_changed():
        # The person's own settings only; no MCP server from the project (or anywhere), and
        # no project CLAUDE.md or skill (one an earlier step rewrote included).
        argv += ["--setting-sources", "user", "--strict-mcp-config"]
    if prompt_file is not None:
        # `systemPromptMode: replace`: the body is the whole system prompt instead of an
        # addition to Claude Code's (both versions read either flag's file).
        replace = ctx.agent.system_prompt_mode == "replace"
        flag = "--system-prompt-file" if replace else "--append-system-prompt-file"
        argv += [flag, str(prompt_file)]
    return argv


def checkout_notice(ctx: StepContext) -> Log | None:
    """What the trusted project's settings make Claude Code run, shown in the step; or the
    note that they are not loaded."""
    if ctx.project_context_changed():  # nothing of the project's loaded: say why
        return changed_context_note(ctx)
    programs = checkout_programs(ctx.cwd, "claude")
    if not programs:
        return None
    if not ctx.checkout_trusted():
        return ctx.make(
            Log,
            level="warning",
            message="not loaded (the project is not trusted): "
            + "; ".join(program.line() for program in programs),
        )
    lines = "\n".join(f"  {program.line()}" for program in programs)
    # A warning, so the terminal shows it too: these run unsandboxed and without asking.
    return ctx.make(Log, level="warning", message=f"the trusted project's settings run:\n{lines}")


class ClaudeBackend:
    """See the module docstring. The grace periods are attributes so tests can shorten them."""

    name: ClassVar[str] = "claude"
    cancel_grace_s: ClassVar[float] = 11.0
    """Longer than interrupt + SIGTERM graces: the backend stops the CLI itself."""
    interrupt_grace_s: float = 5.0
    terminate_grace_s: float = 5.0

    async def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        executable = find_claude(ctx.settings.claude_path)
        folder = Path(tempfile.mkdtemp(prefix="baton-claude-"))
        try:
            prompt = ctx.agent.system_prompt.strip()
            prompt_file = write_private_prompt(folder, prompt + "\n") if prompt else None
            with one_look():  # one comparison of the checkout for the command and the notice
                argv = build_command(executable, ctx, prompt_file)
                notice = checkout_notice(ctx)
            tag = new_tag()
            become_subreaper()  # what Claude's bash leaves behind is re-parented to Baton
            env = cli_environment(CLAUDE_PROVIDER_KEYS, ctx.agent.env) | ctx.trace_environment
            env[TAG_VARIABLE] = tag
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=ctx.cwd,
                    env=env,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                    limit=MAX_LINE_BYTES,
                )
            except OSError as error:
                raise BackendError(
                    f"Claude Code could not be started ({argv[0]}): {error.strerror or error}"
                ) from None
            if notice is not None:
                yield notice
            session = _Session(self, ctx, proc, ProcessTree(proc.pid, tag))
            try:
                with step_process(proc.pid, ctx.run_id, ctx.step, ctx.agent.name):
                    async for event in session.events():
                        yield event
            finally:
                await session.close()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class _Session:
    """One running CLI: its stdin writer, approval tasks, cancel watcher and stderr tail."""

    def __init__(
        self,
        backend: ClaudeBackend,
        ctx: StepContext,
        proc: asyncio.subprocess.Process,
        tree: ProcessTree,
    ) -> None:
        self.backend = backend
        self.ctx = ctx
        self.proc = proc
        self.tree = tree
        self.parser = ClaudeEventParser(ctx.run_id, ctx.step, ctx.clock.now)
        self.stderr_tail = bytearray()
        self.interrupted = False
        self._stdin_open = True
        self._write_lock = asyncio.Lock()
        self._approvals: dict[str, asyncio.Task[None]] = {}
        self._helpers: list[asyncio.Task[None]] = []
        self._stderr_task: asyncio.Task[None] | None = None
        self._closed = False

    async def events(self) -> AsyncIterator[Event]:
        assert self.proc.stdout is not None
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        self._helpers.append(asyncio.create_task(self._watch_cancel()))
        init = {"subtype": "initialize", "hooks": None}
        await self._send({"type": "control_request", "request_id": "baton_init", "request": init})
        await self._send_user_message(self.ctx.task)
        self.ctx.inbox.open()
        self._helpers.append(asyncio.create_task(self._forward_messages()))
        while True:
            try:
                line = await self.proc.stdout.readline()
            except ValueError:  # longer than MAX_LINE_BYTES; asyncio dropped it
                yield self.ctx.make(Log, level="warning", message="skipped an over-long line")
                continue
            if not line:
                break
            data = json_object(line)
            kind = data.get("type") if data else None
            if data is None:
                for event in self.parser.feed(line):
                    yield event
            elif kind == "control_request":
                self.tree.refresh()  # a tool may start processes: know them while Claude lives
                for event in self._control_request(data):
                    yield event
                # Started only now: the call's row was delivered before the question.
                self._start_approval(data)
            elif kind == "control_cancel_request":
                task = self._approvals.get(str(data.get("request_id")))
                if task is not None:
                    task.cancel()
            elif kind == "control_response":
                response = data.get("response") or {}
                if response.get("subtype") == "error":
                    yield self.ctx.make(
                        Log,
                        level="warning",
                        message=f"Claude Code refused a control request: {response.get('error')}",
                    )
            else:
                if kind in ("assistant", "user"):  # tool calls and results: processes change
                    self.tree.refresh()
                for event in self.parser.feed_object(data):
                    yield event
                if kind == "result":
                    self.ctx.inbox.close()
                    await self._close_stdin()
        # stdout ended: the CLI is exiting (or a cancel is stopping it).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), self.backend.terminate_grace_s)
        await self.close()
        stderr = self.stderr_tail.decode("utf-8", errors="replace")
        for event in self.parser.finish(self.proc.returncode, stderr, cancelled=self.interrupted):
            if isinstance(event, StepFinished):  # the session, so Continue can resume it
                event = event.model_copy(update={"session": self.parser.session_id})
            yield event

    async def _send_user_message(self, text: str) -> None:
        message = {"role": "user", "content": text}
        await self._send(
            {"type": "user", "session_id": "", "parent_tool_use_id": None, "message": message}
        )

    async def _forward_messages(self) -> None:
        """A person's messages, as they come: the CLI holds each until its next turn boundary
        (it joins the next request, after the running tool's result)."""
        async for text in self.ctx.inbox.stream():
            await self._send_user_message(text)

    # ------------------------------------------------------------------------ approvals

    def _control_request(self, data: dict[str, Any]) -> list[Event]:
        request = data.get("request") or {}
        if request.get("subtype") != "can_use_tool":
            return []
        tool = str(request.get("tool_name") or "tool")
        if not self._stdin_open:
            return [
                self.ctx.make(
                    Log,
                    level="warning",
                    message=f"Claude Code asked about {tool} after its result; "
                    "that can no longer be answered",
                )
            ]
        call_id = str(request.get("tool_use_id") or "")
        return self.parser.announce(call_id, tool, request.get("input"))

    def _start_approval(self, data: dict[str, Any]) -> None:
        request_id = str(data.get("request_id"))
        request = data.get("request") or {}
        if not self._stdin_open:
            return
        if request.get("subtype") == "can_use_tool" and self.interrupted:
            reply = {"behavior": "deny", "message": "The run was cancelled."}
            self._helpers.append(asyncio.create_task(self._reply(request_id, reply)))
        elif request.get("subtype") == "can_use_tool":
            task = asyncio.create_task(self._answer(request_id, request))
            self._approvals[request_id] = task
            task.add_done_callback(lambda _: self._approvals.pop(request_id, None))
        else:
            error = f"Baton does not handle '{request.get('subtype')}' requests"
            self._helpers.append(asyncio.create_task(self._reply_error(request_id, error)))

    async def _answer(self, request_id: str, request: dict[str, Any]) -> None:
        arguments = request.get("input")
        arguments = arguments if isinstance(arguments, dict) else {}
        refusal = protected_refusal(arguments, self.ctx.cwd)
        if refusal is not None:
            await self._reply(request_id, {"behavior": "deny", "message": refusal})
            return
        try:
            answer = await self.ctx.approvals.check(
                run_id=self.ctx.run_id,
                step=self.ctx.step,
                agent=self.ctx.agent.name,
                tool=baton_tool_name(str(request.get("tool_name") or "tool")),
                call_id=str(request.get("tool_use_id") or request_id),
                arguments=arguments,
                cwd=str(self.ctx.cwd),
                flagged=True,
            )
        except Exception as error:  # a failing responder must not leave the CLI waiting
            await self._reply_error(request_id, f"the approval failed: {error}")
            return
        if answer.approved:
            updated = answer.updated_arguments
            reply = {"behavior": "allow", "updatedInput": arguments if updated is None else updated}
        else:
            reply = {"behavior": "deny", "message": answer.denial_message()}
        await self._reply(request_id, reply)

    async def _reply(self, request_id: str, reply: dict[str, Any]) -> None:
        response = {"subtype": "success", "request_id": request_id, "response": reply}
        await self._send({"type": "control_response", "response": response})

    async def _reply_error(self, request_id: str, error: str) -> None:
        response = {"subtype": "error", "request_id": request_id, "error": error}
        await self._send({"type": "control_response", "response": response})

    # ------------------------------------------------------------------------ process

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            return
        async with self._write_lock:
            if not self._stdin_open:
                return
            try:
                stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                self._stdin_open = False  # the CLI is gone; reading stdout tells the rest

    async def _close_stdin(self) -> None:
        """No more messages; the CLI sees end of input. Also after a broken pipe, so the
        pipe's transport is always closed."""
        async with self._write_lock:
            self._stdin_open = False
            stdin = self.proc.stdin
            if stdin is None or stdin.is_closing():
                return
            stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await stdin.wait_closed()

    async def _watch_cancel(self) -> None:
        await self.ctx.cancelled.wait()
        self.tree.refresh()  # while Claude is alive: its bash runs in a session of its own
        if self.proc.returncode is not None:
            return
        self.interrupted = True
        for task in list(self._approvals.values()):
            task.cancel()  # the dialog closes; the CLI withdraws the question itself
        await self._send(
            {
                "type": "control_request",
                "request_id": "baton_interrupt",
                "request": {"subtype": "interrupt"},
            }
        )
        try:
            await asyncio.wait_for(self.proc.wait(), self.backend.interrupt_grace_s)
        except TimeoutError:
            await self.tree.stop(self.proc, self.backend.terminate_grace_s)

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        await keep_stderr_tail(self.proc.stderr, self.stderr_tail)

    async def close(self) -> None:
        """Stop and reap the CLI and every helper task. Idempotent; also the hard stop."""
        if self._closed:
            return
        self._closed = True
        helpers = [*self._approvals.values(), *self._helpers]
        for task in helpers:
            task.cancel()
        await self._close_stdin()
        # Also when the CLI already exited: what it left running (its tree as last seen, and
        # every process carrying its tag, re-parented to Baton) goes too.
        await self.tree.stop(self.proc, self.backend.terminate_grace_s)
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=STDERR_DRAIN_S)
            self._stderr_task.cancel()
            helpers.append(self._stderr_task)
        await asyncio.gather(*helpers, return_exceptions=True)
