"""The ``pi`` backend: one step = one ``pi --mode rpc`` process with Baton's gate (architecture:
"Backends").

Users who already have pi installed and logged in to their providers get Baton's view of
their runs with no set-up: pi chooses the provider and, without a model, its own default.
This module owns the process; the RPC conversation (task, approval questions, the end) is
:mod:`core.backends.pi_rpc`, and what pi's event lines mean is :mod:`core.backends.pi_events`.

The process, per step::

    pi --mode rpc --session-dir <Baton's data folder>/pi-sessions [--fork <session>]
       --no-extensions [--no-approve | --approve] -e <baton-gate.js> [--model M]
       [--tools a,b | --no-tools] [--thinking LEVEL] [--no-context-files]
       [--append-system-prompt | --system-prompt <0600 file in a 0700 temp folder>]

and the task (``Task: <task>``) goes in as an RPC ``prompt`` once the gate is seen loaded.
pi keeps the step's session in Baton's private data folder (out of every tool's reach), and
the step's ``step_finished.session`` names its file, so Continue can go on with a fork of it
(``--fork``: the finished step's session stays as it was; the follow-up is the prompt).

* stdout is read as it arrives, line by line, never buffered whole (0.73.1's output grows
  quadratically with the answer). Lines longer than :attr:`PiBackend.max_line_bytes` are
  skipped with a ``log`` event; so are lines that are not JSON or not UTF-8.
* stderr is read at the same time: each line becomes a ``log`` warning, and its tail explains
  a non-zero exit.
* Cancel (the runner cancels the task iterating :meth:`PiBackend.run`): SIGTERM to pi and
  every descendant (its bash tool's detached shells included), SIGKILL to what is left after
  :attr:`PiBackend.kill_grace_s` (:func:`core.tools.process_tree.stop_tree`).
  The process is always reaped and the prompt folder always removed before ``run`` ends, even
  when the consumer stops iterating early.
* The checkout's own settings (``.pi/settings.json``: packages pi would install, a shell
  prefix for every bash call; ``.pi/mcp.json``; extensions) are loaded only when the person
  trusted them (:mod:`core.safety.checkout_programs`): pi 1.x is told so (``--no-approve`` ignores
  every project-local file; ``--approve`` once trusted). pi 0.73 has no such switch and always
  reads ``.pi/settings.json``: a step in an untrusted folder whose settings name programs is
  refused rather than started. Once trusted, what they run is listed in the step.
* Tools: only pi's built-in tools are offered (:data:`PI_TOOLS`; no extension tools such as
  pi's sub-agent, so a step cannot start agents of its own), minus those the policy denies.
  Every call of the others goes through Baton's approval gate before it runs.

The minimum pi is 0.73 (``MIN_VERSION``): the first release whose events are the ones
``reference/pi/PROTOCOL.md`` describes. Its RPC mode and extension-UI protocol (pi 0.51+) carry
the gate, so every pi Baton runs is gated; 1.x (the ``@earendil-works`` package) works too.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import tempfile
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import ClassVar

from core.backends.base import BackendError, StepContext
from core.backends.cli_output import READ_CHUNK, Line, json_object, read_lines
from core.backends.pi_events import PiEventParser
from core.backends.pi_rpc import PiRpcSession, StdinWriter, gate_extension
from core.backends.pi_sessions import sessions_dir
from core.backends.prompt_file import write_private_prompt
from core.backends.system_prompt import changed_context_note
from core.config.looks import one_look
from core.config.program_locations import locate_program
from core.config.settings import Settings
from core.definitions.project_context import CONTEXT_NAMES
from core.definitions.skills import PROJECT_SKILL_DIRS
from core.model.events import Event, Log, StepFinished
from core.safety.checkout_programs import CheckoutProgram, checkout_programs
from core.safety.environment import PI_PROVIDER_KEYS, cli_environment
from core.safety.nesting import step_process
from core.tools.process_tree import stop_tree

MIN_VERSION = (0, 73, 0)
INSTALL_HINT = "npm install -g @mariozechner/pi-coding-agent, or set its path in Settings"

PI_TOOLS: dict[str, str] = {
    "read": "read",
    "bash": "bash",
    "edit": "edit",
    "write": "write",
    "grep": "grep",
    "find": "find",
    "ls": "ls",
}
"""Baton tool → pi built-in tool: the only tools a pi step is ever given (no extension tools,
so no sub-agents). ``document`` has no pi equivalent."""

STDERR_TAIL_LINES = 50
STDERR_TAIL_BYTES = 8_192
STDERR_LOG_LIMIT = 500
"""stderr lines shown as ``log`` events per step; the rest only feed the tail."""

_VERSION_TIMEOUT_S = 30.0
_versions: dict[str, tuple[int, int, int] | None] = {}
"""``pi --version`` per executable, asked once per process."""


# -------------------------------------------------------------------------------- finding pi


def find_pi(settings: Settings) -> str:
    """The pi executable: the configured path (or name), else ``pi`` on PATH or in the
    usual install folders (a desktop launch may lack the profile's PATH)."""
    configured = settings.pi_path
    located = locate_program("pi", configured)
    if located is None:
        if configured:
            raise BackendError(
                f"pi was not found at '{configured}': fix its path in Settings, or "
                "npm install -g @mariozechner/pi-coding-agent"
            )
        raise BackendError(f"pi is not installed: {INSTALL_HINT}")
    return located.path


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


async def pi_version(executable: str) -> tuple[int, int, int] | None:
    """``pi --version``, asked once per executable and process. ``None``: it answered
    something that is not a version (the caller proceeds, with a warning)."""
    if executable in _versions:
        return _versions[executable]
    try:
        process = await asyncio.create_subprocess_exec(
            executable,
            "--version",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        raise BackendError(f"cannot start pi ({executable}): {error.strerror or error}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), _VERSION_TIMEOUT_S)
    except TimeoutError:
        raise BackendError(
            f"pi ({executable}) did not answer --version within {_VERSION_TIMEOUT_S:g} s"
        ) from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0:
        reason = err.decode("utf-8", "replace").strip()[-500:] or f"status {process.returncode}"
        raise BackendError(f"pi ({executable}) failed to report its version: {reason}")
    # pi 0.73.1 prints its version on stderr, 1.x on stdout: read both.
    version = parse_version(out.decode("utf-8", "replace")) or parse_version(
        err.decode("utf-8", "replace")
    )
    _versions[executable] = version
    return version


def _version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


# -------------------------------------------------------------------------------- tools


def pi_tool_choice(ctx: StepContext) -> tuple[list[str], list[Log]]:
    """pi tool names for ``--tools`` and the notes the user should see about them.

    Only pi's built-in tools are ever passed: a name the agent lists that is not one of them
    (``subagent`` and other extension tools) is left out with a warning, never handed to pi.
    """
    notes: list[Log] = []
    names: list[str] = []
    for tool in ctx.tools:
        if tool == "document":
            explicit = ctx.agent.tools is not None
            notes.append(
                ctx.make(
                    Log,
                    level="warning" if explicit else "info",
                    message="pi has no 'document' tool: this step runs without it",
                )
            )
            continue
        if tool not in PI_TOOLS:
            continue
        if ctx.approvals.policy_for(tool) == "deny":
            notes.append(
                ctx.make(
                    Log,
                    level="info",
                    message=f"the policy denies '{tool}': it is not offered to pi",
                )
            )
            continue
        names.append(PI_TOOLS[tool])
    unknown = [t for t in ctx.agent.tools or () if t not in PI_TOOLS and t != "document"]
    if unknown:
        notes.append(
            ctx.make(
                Log,
                level="warning",
                message=(
                    f"not given to pi: {', '.join(unknown)} (pi steps get only pi's built-in "
                    f"tools: {', '.join(PI_TOOLS)})"
                ),
            )
        )
    return names, notes


def build_argv(
    executable: str,
    ctx: StepContext,
    tools: list[str],
    prompt_file: Path | None,
    version: tuple[int, int, int] | None = None,
) -> list[str]:
    # --no-extensions: neither the user's nor pi's built-in extensions (tools such as pi's
    # sub-agent); the explicitly loaded gate still is.
    argv = [executable, "--mode", "rpc", "--session-dir", str(sessions_dir()), "--no-extensions"]
    if version is None or version >= (1, 0, 0):
        # pi 1.x's own project trust: the project's files only when the person trusted them.
        argv.append("--approve" if ctx.checkout_trusted() else "--no-approve")
    if ctx.continues is not None and ctx.continues.session:
        argv += ["--fork", ctx.continues.session]  # Continue: the finished one stays as it was
    argv += ["-e", str(gate_extension())]
    if ctx.model and ctx.settings.pi_pass_model:
        argv += ["--model", ctx.model]
    argv += ["--tools", ",".join(tools)] if tools else ["--no-tools"]
    agent = ctx.agent
    if agent.reasoning_effort:  # `thinking:` — pi's own levels
        argv += ["--thinking", agent.reasoning_effort]
    if not ctx.project_context_trusted():
        # An untrusted checkout's AGENTS.md / CLAUDE.md and skills are text a stranger wrote
        # for the model; pi reads them even with --no-approve, and cannot leave out only the
        # project's, so the user's own go too (the step says so: untrusted_context_note).
        argv += ["--no-context-files", "--no-skills"]
    elif agent.inherit_project_context is False:  # no AGENTS.md / CLAUDE.md for this agent
        argv.append("--no-context-files")
    if prompt_file is not None:
        # `systemPromptMode: replace`: the body is pi's whole system prompt, not an addition.
        replace = agent.system_prompt_mode == "replace"
        argv += ["--system-prompt" if replace else "--append-system-prompt", str(prompt_file)]
    return argv


# -------------------------------------------------------------------------------- backend


class PiBackend:
    """Runs a step through the ``pi`` CLI. See the module docstring."""

    name: ClassVar[str] = "pi"
    cancel_grace_s: ClassVar[float] = 0.0
    """pi has no graceful in-band interrupt: the runner cancels at once, SIGTERM follows."""
    kill_grace_s: ClassVar[float] = 5.0
    """Seconds between SIGTERM and SIGKILL (tests shorten it)."""
    max_line_bytes: ClassVar[int] = 64 * 1024 * 1024
    """Longest stdout line read; longer ones are skipped with a ``log`` event."""

    async def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        executable = find_pi(ctx.settings)
        version = await pi_version(executable)
        if version is not None and version < MIN_VERSION:
            raise BackendError(
                f"pi {_version_text(version)} is too old: Baton needs pi "
                f"{_version_text(MIN_VERSION[:2])} or newer ({INSTALL_HINT})"
            )
        parser = PiEventParser(ctx.run_id, ctx.step, ctx.clock.now)
        stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        folder = Path(tempfile.mkdtemp(prefix="baton-pi-"))
        process: asyncio.subprocess.Process | None = None
        session: PiRpcSession | None = None
        try:
            notes, argv = _notes_and_command(ctx, executable, version, folder)
            try:
                process = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=ctx.cwd,
                    env=cli_environment(PI_PROVIDER_KEYS, ctx.agent.env) | ctx.trace_environment,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as error:
                raise BackendError(
                    f"cannot start pi ({executable}): {error.strerror or error}"
                ) from None
            assert process.stdin is not None
            stdin = StdinWriter(process.stdin)
            session = PiRpcSession(ctx, stdin.send, stdin.close)
            for note in notes:
                yield note
            # A follow-up (Continue) is a message in the conversation, not a task.
            await session.start(ctx.task if ctx.continues is not None else f"Task: {ctx.task}")
            with step_process(process.pid, ctx.run_id, ctx.step, ctx.agent.name):
                async for event in self._stream(ctx, process, parser, stderr_tail, session):
                    yield event
            exit_code = await process.wait()
            await stdin.close()
        finally:
            if session is not None:
                await session.close()
            await self._stop(process)
            shutil.rmtree(folder, ignore_errors=True)
        finished = parser.finish(exit_code, _tail_text(stderr_tail))
        if session is not None and isinstance(finished[-1], StepFinished):
            update: dict[str, str | None] = {"session": session.session_file}
            if session.failure:
                update |= {"status": "error", "error": session.failure}
            finished[-1] = finished[-1].model_copy(update=update)
        for event in finished:
            yield event

    async def _stream(
        self,
        ctx: StepContext,
        process: asyncio.subprocess.Process,
        parser: PiEventParser,
        stderr_tail: deque[str],
        session: PiRpcSession,
    ) -> AsyncIterator[Event]:
        """stdout and stderr, interleaved as they arrive, until both are closed."""
        assert process.stdout is not None and process.stderr is not None
        queue: asyncio.Queue[tuple[str, Line | None]] = asyncio.Queue(maxsize=64)

        async def pump(source: str, stream: asyncio.StreamReader) -> None:
            # No ``finally``: a cancelled pump must not wait for room in a queue nobody reads.
            with contextlib.suppress(OSError, ConnectionError):
                async for line in read_lines(stream, self.max_line_bytes):
                    await queue.put((source, line))
            await queue.put((source, None))

        pumps = [
            asyncio.create_task(pump("out", process.stdout)),
            asyncio.create_task(pump("err", process.stderr)),
        ]
        stderr_lines = 0
        try:
            open_streams = 2
            while open_streams:
                source, line = await queue.get()
                if line is None:
                    open_streams -= 1
                elif source == "out":
                    for event in self._stdout_events(ctx, parser, session, line):
                        yield event
                else:
                    text = line.data.decode("utf-8", "replace").rstrip("\r\n")
                    if line.kind == "overflow":
                        text = f"(a stderr line of {line.size} bytes was skipped)"
                    stderr_tail.append(text)
                    stderr_lines += 1
                    if stderr_lines <= STDERR_LOG_LIMIT and text.strip():
                        yield ctx.make(Log, level="warning", message=f"pi: {text}")
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    def _stdout_events(
        self, ctx: StepContext, parser: PiEventParser, session: PiRpcSession, line: Line
    ) -> list[Event]:
        if line.kind == "overflow":
            return [
                ctx.make(
                    Log,
                    level="warning",
                    message=(
                        f"skipped a line of {line.size} bytes from pi "
                        f"(longer than {self.max_line_bytes} bytes)"
                    ),
                )
            ]
        if line.kind == "line" and not line.data.startswith(_UPDATE_HEAD):
            data = json_object(line.data)
            if data is not None:
                handled = session.handle(data)
                return parser.feed_object(data) if handled is None else handled
        return parser.feed(line.data, complete=line.kind == "line")

    async def _stop(self, process: asyncio.subprocess.Process | None) -> None:
        """Make sure pi is gone and reaped: SIGTERM, then SIGKILL after the grace time.

        Whatever pi still writes meanwhile is read and dropped: on Python 3.11 a process whose
        pipes are never drained is never reported as finished (``wait()`` hangs, and the
        transport is left open).
        """
        if process is None:
            return
        drains = [
            asyncio.create_task(_discard(stream))
            for stream in (process.stdout, process.stderr)
            if stream is not None and not stream.at_eof()
        ]
        try:
            if process.returncode is None:
                await self._terminate(process)
            if drains:
                await asyncio.wait(drains, timeout=self.kill_grace_s)
        finally:
            for task in drains:
                task.cancel()
            await asyncio.gather(*drains, return_exceptions=True)

    async def _terminate(self, process: asyncio.subprocess.Process) -> None:
        """pi and everything it started (its bash tool's detached shells too): SIGTERM, then
        SIGKILL after the grace — Baton's one process-tree terminator."""
        await stop_tree(process, self.kill_grace_s)


def _notes_and_command(
    ctx: StepContext, executable: str, version: tuple[int, int, int] | None, folder: Path
) -> tuple[list[Log], list[str]]:
    """What the step says before pi starts, and pi's command line (its prompt file written
    in ``folder``), from one comparison of the checkout with what was trusted (one look)."""
    with one_look():
        notes = _checkout_notes(ctx, version) + untrusted_context_note(ctx)
        tools, tool_notes = pi_tool_choice(ctx)
        prompt = ctx.agent.system_prompt.strip()
        prompt_file = write_private_prompt(folder, prompt + "\n") if prompt else None
        argv = build_argv(executable, ctx, tools, prompt_file, version)
    notes += tool_notes
    if version is None:
        notes.insert(
            0,
            ctx.make(
                Log,
                level="warning",
                message=f"could not read the version of {executable}; trying it anyway",
            ),
        )
    return notes, argv


def untrusted_context_note(ctx: StepContext) -> list[Log]:
    """Why pi got no context files or skills in a folder nobody trusted (when it has some)."""
    if ctx.project_context_changed():
        return [changed_context_note(ctx)]
    if ctx.project_trusted:
        return []
    folder = ctx.cwd
    planted = [name for name in (*CONTEXT_NAMES, *PROJECT_SKILL_DIRS) if (folder / name).exists()]
    if not planted:
        return []
    message = (
        f"the project is not trusted: pi starts without context files and skills "
        f"({', '.join(planted)} here; pi cannot leave out only the project's, so yours wait too)"
    )
    return [ctx.make(Log, level="info", message=message)]


def _checkout_notes(ctx: StepContext, version: tuple[int, int, int] | None) -> list[Log]:
    """What the project's pi settings run (trusted), or that they are not loaded; refuses pi
    0.73 in an untrusted folder whose settings name programs, since it cannot ignore them."""
    programs = checkout_programs(ctx.cwd, "pi")
    if not programs:
        return []
    listed = "; ".join(program.line() for program in programs)
    if ctx.checkout_trusted():
        lines = "\n".join(
            f"  {program.line()}"
            + (" (never loaded: Baton starts pi without extensions)" if _extension(program) else "")
            for program in programs
        )
        return [
            ctx.make(Log, level="warning", message=f"the trusted project's settings run:\n{lines}")
        ]
    if version is not None and version < (1, 0, 0) and not all(map(_extension, programs)):
        # Only extensions are covered by --no-extensions; the rest pi 0.73 always reads.
        raise BackendError(
            f"pi {_version_text(version)} always loads this folder's .pi settings, which name "
            f"programs you have not trusted ({listed}): trust the project, or use pi 1.x"
        )
    return [
        ctx.make(Log, level="warning", message=f"not loaded (the project is not trusted): {listed}")
    ]


def _extension(program: CheckoutProgram) -> bool:
    return program.kind == "pi extension"


_UPDATE_HEAD = b'{"type":"message_update"'
"""The huge streaming lines: never decoded here (the parser scans their head)."""


async def _discard(stream: asyncio.StreamReader) -> None:
    while await stream.read(READ_CHUNK):
        pass


def _tail_text(lines: deque[str]) -> str:
    text = "\n".join(lines)
    return text[-STDERR_TAIL_BYTES:]
