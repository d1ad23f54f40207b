"""The ACP backend: one step = one ACP agent process, Baton its client over stdio.

Any agent speaking the Agent Client Protocol (OpenCode ``opencode acp``, Codex through
``codex-acp``, Gemini CLI ``--acp``, Claude through ``claude-agent-acp``) runs a step; the agent
file names it (``acp:``, :mod:`core.config.acp_agents`). The protocol goes through the
``agent-client-protocol`` SDK; what the agent asks of Baton is answered in
:mod:`core.backends.acp_client`, its updates become events in :mod:`core.backends.acp_events`.

The flow: ``initialize`` (Baton offers ``fs`` and ``terminal``), ``session/new`` in the step's
folder (or ``session/load`` of the continued step's session, when the agent can), an optional
mode (``acp.mode``), then ``session/prompt`` with the task — the agent file's body, if any, goes
first, since the protocol has no system prompt. When a turn ends, what waits is sent as the next
prompt of the same session: the messages of denials (the protocol has no field for a reason;
Codex even ends the turn ``cancelled`` at a refusal) and what a person typed to the step
(steering). The step's answer is the last message's text.

* **Containment.** ACP agents run their own commands and write files themselves (field notes:
  no agent tried sends ``terminal/*``), so Baton's gate only sees what the agent asks about.
  With the sandbox on, the agent process itself runs in bubblewrap (:mod:`core.safety.sandbox`):
  everything read-only but the working folder, a private ``/tmp`` and the agent's own state
  folders (``acp.writable``); Baton's folders and the host's sockets hidden; its own PID
  namespace. Its environment is scrubbed of secrets like the CLIs' (the agent file's ``env:``
  names what may pass, ``acp.env`` adds values).
* **Cancel.** ``session/cancel``; open permission questions are answered ``cancelled``; the
  prompt's stop reason is awaited (:attr:`AcpBackend.stop_grace_s`), then stdin closes, the
  process gets :attr:`AcpBackend.exit_grace_s` to exit, then every process of its tree (tracked
  while it ran, and tagged through the environment) gets SIGTERM, then SIGKILL.
* **Usage.** The prompt's ``usage`` (an unstable field some agents fill) and the cost of
  ``usage_update`` become a ``usage`` event; when the agent reports neither, the step says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from acp import PROTOCOL_VERSION, connect_to_agent, telemetry, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

import core
from core.backends.acp_client import AcpClient
from core.backends.acp_events import AcpEventTranslator
from core.backends.base import BackendError, StepContext
from core.backends.cli_events import error_tail
from core.backends.cli_output import keep_stderr_tail
from core.backends.tool_calls import confinement
from core.config.acp_agents import KNOWN_ACP_AGENTS, AcpCommand
from core.config.handoff_files import readable_handoff_dir
from core.config.looks import one_look
from core.config.paths import protected_dirs
from core.model.events import Event, Log, StepFinished, StepStatus, Usage, UsageStats
from core.safety.environment import cli_environment
from core.safety.nesting import step_process
from core.safety.sandbox import bwrap_argv, named_temp_folders, sandbox_status
from core.tools.base import Provenance, ToolContext
from core.tools.paths import working_root
from core.tools.process_tree import TAG_VARIABLE, ProcessTree, become_subreaper, new_tag

# The SDK opens a span per JSON-RPC message when OpenTelemetry or logfire is installed; a
# run's trace is Baton's to shape (and a stream of updates would be thousands of spans).
setattr(telemetry, "TRACER", None)  # noqa: B010 (typed as a Tracer there: None is its "off")
setattr(telemetry, "logfire_span", None)  # noqa: B010

STDIO_LIMIT = 50 * 1024 * 1024
NO_USAGE = "usage: — (the agent reported neither token counts nor cost)"


@dataclass
class _Outcome:
    status: StepStatus = "ok"
    error: str | None = None
    session: str | None = None


def find_agent(spec: AcpCommand, env: dict[str, str]) -> str:
    """The agent's executable; :class:`BackendError` with the install hint when missing."""
    found = shutil.which(spec.command, path=env.get("PATH"))
    if found is not None:
        return found
    hint = next(
        (agent.install for agent in KNOWN_ACP_AGENTS if agent.command.command == spec.command),
        None,
    )
    how = f": install it with `{hint}`" if hint else ""
    raise BackendError(f"the ACP agent '{spec.command}' is not installed or not on PATH{how}.")


_NO_PROJECT_CONTEXT: dict[str, tuple[str, ...]] = {
    "codex-acp": ("-c", "project_doc_max_bytes=0"),
}
"""Per agent program, the arguments that keep a folder's ``AGENTS.md`` out of its prompt
(Codex reads none when its budget for them is 0; yours in ``~/.codex`` go too)."""


_NO_PROJECT_ENV: dict[str, dict[str, str]] = {
    # The project's opencode.json, .opencode folder, AGENTS.md and CLAUDE.md files; and the
    # .claude skills (yours go too).
    "opencode": {"OPENCODE_DISABLE_PROJECT_CONFIG": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1"},
}
"""Per agent program, the environment that keeps a folder's own files out of it."""


def untrusted_context_env(ctx: StepContext, executable: str) -> dict[str, str]:
    """The environment that keeps an untrusted checkout's context files out (OpenCode)."""
    if ctx.project_context_trusted():
        return {}
    return _NO_PROJECT_ENV.get(Path(executable).name, {})


def untrusted_context_args(ctx: StepContext, executable: str) -> tuple[str, ...]:
    """What keeps an untrusted (or, during the run, changed) checkout's context files out."""
    if ctx.project_context_trusted():
        return ()
    return _NO_PROJECT_CONTEXT.get(Path(executable).name, ())


def agent_argv(
    ctx: StepContext, spec: AcpCommand, executable: str, path: str = ""
) -> tuple[list[str], str]:
    """The command line (in bubblewrap when the sandbox is on) and a sentence saying how the
    agent is contained. ``path``: the agent's ``PATH`` (where its ``#!`` interpreter is found)."""
    argv = [executable, *spec.args, *untrusted_context_args(ctx, executable)]
    status = sandbox_status(ctx.settings.sandbox.enabled)
    if status.kind != "bubblewrap":
        return argv, (
            f"the ACP agent is {status.describe()}: it runs its own commands and file edits "
            "unconfined (Baton only sees what it asks permission for)"
        )
    writable = []
    for folder in spec.writable_paths():
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            writable.append(folder)
    network = ctx.settings.sandbox.network and ctx.agent.network
    wrapped = bwrap_argv(
        argv,
        cwd=working_root(ctx.cwd),
        protected=protected_dirs(),
        network=network,
        writable=writable,
        readable_temp=named_temp_folders(argv, {**spec.env, "PATH": path}),
    )
    places = ", ".join(str(folder) for folder in writable) or "nothing else"
    return wrapped, (
        "the ACP agent runs sandboxed (bubblewrap): it may write only the working folder, a "
        f"private /tmp and its own state ({places})"
    )


class AcpBackend:
    """See the module docstring. Timeouts are attributes so tests can change them."""

    name: ClassVar[str] = "acp"
    cancel_grace_s: ClassVar[float] = 25.0
    start_timeout_s: float = 180.0
    """``initialize`` and ``session/new`` (OpenCode takes seconds for each on a busy machine)."""
    stop_grace_s: float = 10.0
    exit_grace_s: float = 3.0
    terminate_grace_s: float = 5.0

    async def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        spec = ctx.agent.acp
        if spec is None:
            raise BackendError(
                f"the agent '{ctx.agent.name}' names no ACP agent: add `acp: opencode` or "
                "`acp: {command: …, args: […]}` to its file"
            )
        tag = new_tag()
        env = cli_environment((), ctx.agent.env) | spec.env | {TAG_VARIABLE: tag}
        executable = find_agent(spec, env)
        with one_look():  # one comparison of the checkout for the environment and command
            env |= untrusted_context_env(ctx, executable)
            argv, containment = agent_argv(ctx, spec, executable, env.get("PATH", ""))
        become_subreaper()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=working_root(ctx.cwd),
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=STDIO_LIMIT,
            )
        except OSError as error:
            raise BackendError(
                f"the ACP agent could not be started ({executable}): {error.strerror or error}"
            ) from None
        yield ctx.make(Log, level="info", message=containment)
        session = _Session(self, ctx, spec, proc, ProcessTree(proc.pid, tag))
        try:
            with step_process(proc.pid, ctx.run_id, ctx.step, ctx.agent.name):
                async for event in session.events():
                    yield event
        finally:
            await session.close()


class _Session:
    """One running agent: the connection, the driver task, the cancel watcher, stderr."""

    def __init__(
        self,
        backend: AcpBackend,
        ctx: StepContext,
        spec: AcpCommand,
        proc: asyncio.subprocess.Process,
        tree: ProcessTree,
    ) -> None:
        self.backend = backend
        self.ctx = ctx
        self.spec = spec
        self.proc = proc
        self.tree = tree
        self.queue: asyncio.Queue[Event | asyncio.Future[None] | None] = asyncio.Queue()
        """Events in order; a future is a marker set once everything before it was yielded."""
        self.translator = AcpEventTranslator(ctx.run_id, ctx.step, ctx.clock.now)
        tool_context = ToolContext(
            cwd=ctx.cwd,
            limits=ctx.settings.limits,
            provenance=Provenance(run_id=ctx.run_id, step=ctx.step, agent=ctx.agent.name),
            scrub=ctx.scrub,
            handoff_dir=readable_handoff_dir(ctx.run_id),
            **confinement(ctx),
        )
        self.client = AcpClient(ctx, self.translator, self.queue, tool_context)
        self.client.on_tool_call.append(tree.refresh)
        assert proc.stdin is not None and proc.stdout is not None
        self.conn = connect_to_agent(self.client, proc.stdin, proc.stdout)
        self.session_id: str | None = None
        self.counts: dict[str, int] = {}
        self.reported_usage = False
        self.stderr_tail = bytearray()
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    async def events(self) -> AsyncGenerator[Event, None]:
        self._tasks.append(asyncio.create_task(self._drain_stderr()))
        driver = asyncio.create_task(self._drive())
        watcher = asyncio.create_task(self._watch_cancel(driver))
        self._tasks.append(watcher)
        driver.add_done_callback(lambda _: self.queue.put_nowait(None))
        while (item := await self.queue.get()) is not None:
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
            else:
                yield item
        outcome = _Outcome("aborted", "cancelled") if driver.cancelled() else driver.result()
        if self.ctx.cancelled.is_set():
            outcome.status, outcome.error = "aborted", None
        await self.close()
        while not self.queue.empty():
            late = self.queue.get_nowait()
            if isinstance(late, asyncio.Future):
                late.cancel()
            elif late is not None:
                yield late
        for event in self.translator.close_open_calls(outcome.status):
            yield event
        cost = self.translator.cost
        if self.reported_usage or cost is not None:
            usage = UsageStats(**self.counts, cost=cost or 0.0, priced=cost is not None)
            yield self.ctx.make(Usage, usage=usage)
        else:
            yield self.ctx.make(Log, level="info", message=NO_USAGE)
        if outcome.status == "error" and outcome.error:
            tail = error_tail(self.stderr_tail.decode("utf-8", errors="replace"))
            outcome.error += f"\n{tail}" if tail else ""
        yield self.ctx.make(
            StepFinished,
            status=outcome.status,
            output=self.translator.answer,
            error=outcome.error,
            session=outcome.session,
        )

    async def _drive(self) -> _Outcome:
        outcome = _Outcome()
        try:
            await self._start(outcome)
            await self._converse(outcome)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the agent died, answered nonsense, or timed out
            if not self.ctx.cancelled.is_set():
                outcome.status = "error"
                outcome.error = f"the ACP agent failed: {error or type(error).__name__}"
        finally:
            self.ctx.inbox.close()
        return outcome

    async def _start(self, outcome: _Outcome) -> None:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        info = Implementation(name="baton", title="Baton", version=core.__version__)
        limit = self.backend.start_timeout_s
        init = await asyncio.wait_for(
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=info,
            ),
            limit,
        )
        agent = init.agent_info
        if agent is not None:
            name = f"{agent.title or agent.name} {agent.version}".strip()
            self._log("info", f"ACP agent: {name} (protocol {init.protocol_version})")
        cwd = str(working_root(self.ctx.cwd))
        continues = self.ctx.continues
        can_load = bool(init.agent_capabilities and init.agent_capabilities.load_session)
        if continues is not None and continues.session and can_load:
            # Replayed history is dropped until the first prompt is sent (_converse).
            self.client.replaying = True
            await asyncio.wait_for(
                self.conn.load_session(cwd=cwd, session_id=continues.session, mcp_servers=[]),
                limit,
            )
            self.session_id = continues.session
        else:
            if continues is not None:
                self._log("warning", "this agent cannot load the earlier session: a new one")
            created = await asyncio.wait_for(self.conn.new_session(cwd=cwd, mcp_servers=[]), limit)
            self.session_id = created.session_id
        outcome.session = self.session_id
        if self.spec.mode:
            await self.conn.set_session_mode(session_id=self.session_id, mode_id=self.spec.mode)

    async def _converse(self, outcome: _Outcome) -> None:
        assert self.session_id is not None
        instructions = self.ctx.agent.system_prompt.strip()
        text = f"{instructions}\n\n{self.ctx.task}" if instructions else self.ctx.task
        self.ctx.inbox.open()
        self.client.replaying = False
        turns = 0
        while True:
            turns += 1
            self.translator.new_turn()
            response = await self.conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
            self._add_usage(response.usage)
            if self.ctx.cancelled.is_set():
                outcome.status = "aborted"
                return
            if response.stop_reason == "cancelled" and not self.client.denials:
                outcome.status = "aborted"  # the agent gave up by itself
                return
            if response.stop_reason in ("refusal", "max_tokens", "max_turn_requests"):
                self._log("warning", f"the agent stopped: {response.stop_reason}")
            waiting = [*self.client.denials, *self.ctx.inbox.take()]
            self.client.denials.clear()
            if not waiting:
                return
            if turns >= self.ctx.settings.limits.max_turns:
                self._log("warning", "the turn limit is reached: what waited was not sent")
                return
            text = "\n\n".join(waiting)

    def _add_usage(self, usage: object) -> None:
        if usage is None:
            return
        self.reported_usage = True
        fields = {
            "turns": 1,
            "input": getattr(usage, "input_tokens", 0),
            "output": getattr(usage, "output_tokens", 0),
            "cache_read": getattr(usage, "cached_read_tokens", 0),
            "cache_write": getattr(usage, "cached_write_tokens", 0),
        }
        for name, value in fields.items():
            self.counts[name] = self.counts.get(name, 0) + int(value or 0)

    def _log(self, level: str, message: str) -> None:
        self.queue.put_nowait(self.ctx.make(Log, level=level, message=message))

    async def _watch_cancel(self, driver: asyncio.Task[_Outcome]) -> None:
        await self.ctx.cancelled.wait()
        self.tree.refresh()
        self.client.cancelled = True
        if self.session_id is not None and self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.session_id)
        # The agent answers the prompt with stopReason "cancelled"; past the grace, stop it.
        await asyncio.wait({driver}, timeout=self.backend.stop_grace_s)
        if not driver.done():
            driver.cancel()

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        await keep_stderr_tail(self.proc.stderr, self.stderr_tail)

    async def close(self) -> None:
        """Close stdin, let the agent exit, then end its whole tree. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.tree.refresh()
        await self.client.terminals.close()
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), self.backend.exit_grace_s)
        await self.tree.stop(self.proc, self.backend.terminate_grace_s)
        with contextlib.suppress(Exception):
            await self.conn.close()
        for task in self._tasks:
            if not task.done():
                await asyncio.wait({task}, timeout=1.0)
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
