"""MCP server connections of one run: started lazily, shared by its steps, stopped at its end
(architecture: "Tools, approvals and trust").

Each server gets one :class:`McpConnection`, made the first time a step offers one of its
tools, through the official SDK's client sessions (stdio and streamable HTTP: no protocol is
written here). A connection lives in a task of its own, because the SDK's transports are
context managers that must be left by the task that entered them; calls reach its session from
any step's task. Stopping sets an event that task waits on, so the SDK's own shutdown runs
(stdin closed, then SIGTERM / SIGKILL to the process group), and a stdio server inside
bubblewrap has its own PID namespace besides (``--die-with-parent``); unconfined, a tag in the
server's environment finds what left its process group
(:func:`core.tools.process_tree.stop_tagged`): what the server started ends with it.

A stdio server is a program from a configuration file, so it is treated like a ``bash``
command: confined by :func:`core.safety.sandbox.confine` (writes only in the working folder,
Baton's folders masked, network as the server's ``network`` and the run allow), with the
environment scrubbed of secrets (:func:`core.safety.environment.scrubbed_env`) plus only the
variables its entry names. An HTTP server gets exactly the headers configured.

What goes wrong is said in one sentence with the server's name — it did not start within its
time-out, it exited (with the last lines it wrote to stderr), nothing listens at its address,
it answered with garbage — and raised as :class:`McpServerError`; the step turns it into a
warning and goes on without that server. A call fails when its connection ends (the SDK's
HTTP transport, torn down by a failed request, never answers the calls it carried), else at
its time-out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from core.config.mcp_servers import McpServer, ServerEntry, expand_env
from core.config.paths import protected_dirs
from core.safety.environment import scrubbed_env
from core.safety.sandbox import confine, named_temp_folders, sandbox_status
from core.tools.process_tree import TAG_VARIABLE, new_tag, stop_tagged

MAX_LISTED_TOOLS = 1000
"""Tools read from one server's list; a longer list is cut (with a warning)."""
STDERR_TAIL = 2_000
"""Characters of a failed server's stderr quoted in its error."""


class McpServerError(Exception):
    """A server that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class Confinement:
    """How a stdio server runs: the step's folder and the run's sandbox choices."""

    cwd: Path
    sandbox: bool = True
    network: bool = True
    env_allow: tuple[str, ...] = ()
    secret_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerTools:
    """What a started server offers."""

    description: str
    """The server's own instructions / title, shown in approvals."""
    tools: tuple[Any, ...]
    """``mcp.types.Tool`` entries, as listed (at most :data:`MAX_LISTED_TOOLS`)."""
    truncated: bool = False


def confinement_for(cwd: Path) -> Confinement:
    """How a server tested from ``cwd`` runs ("Test connection", ``baton mcp test``): as a
    run there would start it, under the saved settings' sandbox switches."""
    from core.config.settings import SettingsError, load_settings
    from core.safety.environment import known_key_names

    try:
        settings = load_settings()
    except SettingsError:
        return Confinement(cwd=cwd)
    return Confinement(
        cwd=cwd,
        sandbox=settings.sandbox.enabled,
        network=settings.sandbox.network,
        secret_env=known_key_names(settings),
    )


class McpConnection:
    """One running server: started once, called many times, stopped once."""

    def __init__(self, entry: ServerEntry, confinement: Confinement) -> None:
        self.entry = entry
        self._confinement = confinement
        self._ready: asyncio.Future[ServerTools] | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: Any = None
        self._errlog: IO[str] | None = None
        self._tag: str | None = None
        self._started_at = 0.0
        self._ended: str | None = None
        """Why the connection ended, when it failed (said to calls made after it)."""
        self.garbage = 0
        """Lines of output that were not MCP messages (a server printing to stdout)."""

    @property
    def name(self) -> str:
        return self.entry.name

    async def start(self) -> ServerTools:
        """Start the server (once) and list its tools; raises :class:`McpServerError`."""
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._serve(), name=f"mcp {self.name}")
        return await asyncio.shield(self._ready)

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> Any:
        """``tools/call``; returns the SDK's ``CallToolResult``."""
        from mcp.shared.exceptions import McpError

        await self.start()
        task, session = self._task, self._session
        if task is None or task.done() or session is None:
            raise McpServerError(
                self._ended or f"MCP server {self.name} is not running{self._stderr_tail()}"
            )
        call = asyncio.ensure_future(
            session.call_tool(tool, arguments, read_timeout_seconds=timedelta(seconds=timeout_s))
        )
        call.add_done_callback(_retrieved)  # its error is read below, or of no one's interest
        try:
            done, _ = await asyncio.wait({call, task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            raise
        if call not in done:
            # The connection ended first (an HTTP server gone: its transport fails and is torn
            # down without answering the calls it was carrying), so nothing will answer.
            call.cancel()
            await asyncio.wait({call})
            raise McpServerError(self._ended or f"MCP server {self.name} stopped")
        try:
            return call.result()
        except McpError as error:
            message = error.error.message
            if "timed out" in message.casefold():
                message = f"no answer within {timeout_s:g} s"
            elif "connection closed" in message.casefold():
                message = "the server exited during the call"
            raise McpServerError(
                f"MCP server {self.name}: {message}{self._stderr_tail()}"
            ) from None
        except (OSError, EOFError) as error:
            raise McpServerError(f"MCP server {self.name} failed: {error}") from None

    async def stop(self) -> None:
        """Stop the server and everything it started; safe to call more than once."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10.0)
            except TimeoutError:
                task.cancel()
                await asyncio.wait({task})
        if self._tag is not None:  # what left the server's process group (setsid, nohup)
            await stop_tagged(self._tag, self._started_at)
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # -- the connection's own task ---------------------------------------------------------

    async def _serve(self) -> None:
        assert self._ready is not None
        ready = self._ready
        try:
            async with contextlib.AsyncExitStack() as stack:
                session = await self._open(stack)
                listed: ServerTools | None = None
                timeout = self.entry.server.startup_timeout_s
                with _move_on_after(timeout) as scope:
                    listed = await self._initialize(session)
                if listed is None or scope.cancelled_caught:
                    raise McpServerError(
                        f"MCP server {self.name} did not start within {timeout:g} s "
                        f"(startupTimeout){self._stderr_tail()}"
                    )
                self._session = session
                ready.set_result(listed)
                await self._stop.wait()
        except McpServerError as error:
            self._ended = str(error)
            _fail(ready, error)
        except Exception as error:  # the SDK's and the transport's failures, whatever they are
            self._ended = self._failure(error)
            _fail(ready, McpServerError(self._ended))
        except BaseException as error:  # cancelled from stop(): say so to a waiting start()
            self._ended = f"MCP server {self.name} was stopped"
            _fail(ready, McpServerError(self._ended))
            if not isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self._session = None

    async def _open(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import ClientSession

        server = self.entry.server
        if server.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            argv, env = self._stdio_command(server)
            # Kept open for the server's life (its stderr), closed in stop().
            self._errlog = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace"
            )
            parameters = StdioServerParameters(
                command=argv[0], args=argv[1:], env=env, cwd=str(self._workdir(server))
            )
            read, write = await stack.enter_async_context(stdio_client(parameters, self._errlog))
        elif server.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = {key: expand_env(value) for key, value in server.headers.items()}
            client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            url = expand_env(server.url)
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(url, http_client=client)
            )
        else:
            from mcp.client.sse import sse_client

            headers = {key: expand_env(value) for key, value in server.headers.items()}
            read, write = await stack.enter_async_context(
                sse_client(expand_env(server.url), headers=headers)
            )
        logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)  # said in a warning
        return await stack.enter_async_context(
            ClientSession(read, write, message_handler=self._on_message)
        )

    async def _on_message(self, message: Any) -> None:
        """What the session does not handle itself; an exception is a line of stdout that
        was not an MCP message (counted, and said once the tools are listed)."""
        if isinstance(message, Exception):
            self.garbage += 1

    async def _initialize(self, session: Any) -> ServerTools:
        result = await session.initialize()
        info = result.serverInfo
        description = (result.instructions or "").strip() or (
            getattr(info, "title", None) or info.name or ""
        )
        tools: list[Any] = []
        cursor: str | None = None
        truncated = False
        while True:
            page = await session.list_tools(cursor) if cursor else await session.list_tools()
            tools.extend(page.tools)
            cursor = page.nextCursor
            if len(tools) >= MAX_LISTED_TOOLS:
                truncated = len(tools) > MAX_LISTED_TOOLS or cursor is not None
                tools = tools[:MAX_LISTED_TOOLS]
                break
            if not cursor:
                break
        return ServerTools(description[:500], tuple(tools), truncated)

    def _workdir(self, server: McpServer) -> Path:
        root = self._confinement.cwd
        if server.cwd:
            return (root / expand_env(server.cwd)).resolve()
        return root

    def _stdio_command(self, server: McpServer) -> tuple[list[str], dict[str, str]]:
        """The confined command line and the scrubbed environment of a stdio server."""
        confinement = self._confinement
        program = shutil.which(server.command) or server.command
        argv = [program, *(expand_env(arg) for arg in server.args)]
        env = scrubbed_env(allow=confinement.env_allow, known=confinement.secret_env)
        configured = {key: expand_env(value) for key, value in server.env.items()}
        env.update(configured)
        if server.sandbox and confinement.sandbox:
            status = sandbox_status(True)
            argv = confine(
                status,
                argv,
                cwd=self._workdir(server),
                protected=protected_dirs(),
                network=server.network and confinement.network,
                temp=None,
                readable_temp=named_temp_folders(argv, {**configured, "PATH": env.get("PATH", "")}),
            )
        self._tag = env[TAG_VARIABLE] = new_tag()  # what it starts is found by this at stop()
        self._started_at = time.time() - 1.0
        return argv, env

    def _failure(self, error: BaseException) -> str:
        """One sentence for a server that failed while starting or running."""
        errors: Sequence[BaseException] = [error]
        while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
            errors = errors[0].exceptions
        first = errors[0] if errors else error
        if isinstance(first, McpServerError):
            return str(first)
        detail = str(first) or type(first).__name__
        if "Connection closed" in detail or isinstance(first, (EOFError, BrokenPipeError)):
            detail = "the server exited"
        elif isinstance(first, FileNotFoundError):
            detail = f"cannot start {first.filename or self.entry.server.command}: not found"
        elif self.entry.server.transport != "stdio" and _is_connect_error(first):
            detail = f"cannot connect to {self._endpoint()} ({detail})"
        return f"MCP server {self.name} failed: {detail}{self._stderr_tail()}"

    def _endpoint(self) -> str:
        """``host:port`` of an HTTP server: where nothing answered, without the URL's path and
        query (a token may be written there)."""
        parts = urlsplit(expand_env(self.entry.server.url))
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:  # not a number: httpx would not have tried
            return "its URL"
        return f"{parts.hostname}:{port}"

    def _stderr_tail(self) -> str:
        """The last lines the server wrote to stderr, for an error message."""
        log = self._errlog
        if log is None or log.closed:
            return ""
        try:
            log.flush()
            log.seek(0)
            text = log.read()
        except (OSError, ValueError):
            return ""
        text = text.strip()[-STDERR_TAIL:]
        return f"; it wrote:\n{text}" if text else ""


class McpHub:
    """The run's servers, by name; :meth:`aclose` stops every one that started."""

    def __init__(self) -> None:
        self._connections: dict[tuple[str, str, Path], McpConnection] = {}
        """By name, configuration and folder: steps in another folder (its sandbox) or a
        project's server of the same name get their own."""
        self._lock = asyncio.Lock()
        self.closed = False

    async def connect(self, entry: ServerEntry, confinement: Confinement) -> McpConnection:
        """The run's connection to ``entry`` (started on first use, then shared)."""
        async with self._lock:
            if self.closed:
                raise McpServerError(f"MCP server {entry.name}: the run has ended")
            key = (entry.name, entry.server.model_dump_json(), confinement.cwd)
            connection = self._connections.get(key)
            if connection is None:
                connection = McpConnection(entry, confinement)
                self._connections[key] = connection
        await connection.start()
        return connection

    async def aclose(self) -> None:
        """Stop every server; called when the run ends or is cancelled."""
        self.closed = True
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    async def __aenter__(self) -> McpHub:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._connections:
            # Most runs start no server: closing nothing needs no task (a shielded one costs
            # the run's end three loop turns, each spent behind a batch's other items).
            self.closed = True
            return
        await asyncio.shield(self.aclose())


def _is_connect_error(error: BaseException) -> bool:
    """httpx's "nothing accepted the connection" (its message alone, "All connection attempts
    failed", names neither the server nor the address)."""
    import httpx

    return isinstance(error, httpx.ConnectError)


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a future's error as read: a call abandoned with its step is no "unhandled" error."""
    if not future.cancelled():
        future.exception()


def _fail(ready: asyncio.Future[ServerTools], error: McpServerError) -> None:
    if not ready.done():
        ready.set_exception(error)
        ready.exception()  # retrieved: a start() nobody awaits is not an "unhandled" error


@contextlib.contextmanager
def _move_on_after(seconds: float) -> Any:
    """anyio's cancel scope with a deadline: the SDK's transports are anyio task groups, so
    only an anyio scope interrupts a server that never answers without tearing them down."""
    import anyio

    with anyio.move_on_after(seconds) as scope:
        yield scope


async def probe(entry: ServerEntry, confinement: Confinement) -> ServerTools:
    """Start ``entry``, list its tools, stop it: "Test connection" and ``baton mcp test``.
    Raises :class:`McpServerError` with the reason."""
    async with McpHub() as hub:
        connection = await hub.connect(entry, confinement)
        listed = await connection.start()
        if connection.garbage:
            raise McpServerError(
                f"MCP server {entry.name} wrote {connection.garbage} line(s) on stdout that are "
                f"not MCP messages (it lists {len(listed.tools)} tools)"
            )
        return listed
