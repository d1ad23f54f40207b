"""A streamable-HTTP MCP server at a run's end and when it goes wrong, for real: the SDK's
server (``tests/mcp_test_server.py --http``) when the run ends, when it is cancelled during a
call, when a call never answers and when its process ends; an endpoint that accepts
connections and never answers; an endpoint where nothing listens. Each is a clear warning or
call error and the step goes on.

An HTTP server is not Baton's process to stop, so "nothing left running" means: no socket of
this process still connected to it, no connection task still running in the run's loop, and,
where a session was opened, the server told it is over (the SDK client's ``DELETE``, seen in the
server's access log)."""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading
from pathlib import Path
from types import TracebackType

from core.config.mcp_servers import McpServer
from core.model.events import Event
from core.record.publisher import EventListener
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import (
    WAIT_S,
    configure,
    finished_calls,
    free_port,
    http_server,
    sockets_to,
    warnings,
    write_agent,
)
from tests.waiting import POLL_S, until

RUN_LIMIT_S = 180.0
"""Bounds a run that hangs (a failure); a passing run never comes near it."""
ENDED = "DELETE /mcp 200"
"""The access log's line for a session the client ended."""


class SilentEndpoint:
    """A TCP listener on 127.0.0.1 that accepts every connection, reads what comes and never
    answers: an HTTP server hung after its ``accept``. It notes each connection the client
    closes, so a test sees that nothing was left open."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._received: list[bytes] = []
        self._open = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="silent endpoint", daemon=True)

    @property
    def received(self) -> list[bytes]:
        """What each accepted connection sent, in order of acceptance."""
        with self._lock:
            return list(self._received)

    @property
    def open(self) -> int:
        """Accepted connections the client has not closed."""
        with self._lock:
            return self._open

    def __enter__(self) -> SilentEndpoint:
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._thread.join(WAIT_S)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()

    def _serve(self) -> None:
        while not self._stopping.is_set():  # the poll only notices the end of the test
            for key, _ in self._selector.select(timeout=POLL_S):
                if key.fileobj is self._listener:
                    self._accept()
                else:
                    self._read(key.fileobj, key.data)  # type: ignore[arg-type]

    def _accept(self) -> None:
        try:
            connection, _ = self._listener.accept()
        except BlockingIOError:
            return
        connection.setblocking(False)
        with self._lock:
            index = len(self._received)
            self._received.append(b"")
            self._open += 1
        self._selector.register(connection, selectors.EVENT_READ, data=index)

    def _read(self, connection: socket.socket, index: int) -> None:
        try:
            data = connection.recv(65536)
        except BlockingIOError:
            return
        except OSError:  # reset by the client: closed all the same
            data = b""
        with self._lock:
            if data:
                self._received[index] += data
                return
            self._open -= 1
        self._selector.unregister(connection)
        connection.close()


def _runner(
    llm: LLMServer, cwd: Path, events: list[Event], *also: EventListener, **settings: object
) -> Runner:
    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="go")], cwd=cwd)
    return Runner(
        request,
        settings=llm.settings(**settings),
        responder=approve_all,
        listeners=[events.append, *also],
    )


async def _run(llm: LLMServer, cwd: Path, **settings: object) -> tuple[str, list[Event]]:
    """One own-loop step in this test's loop (its leftover tasks stay visible here)."""
    events: list[Event] = []
    runner = _runner(llm, cwd, events, **settings)
    finished = await asyncio.wait_for(runner.run(), RUN_LIMIT_S)
    return finished.status, events


def _web_server(server: McpServer, llm: LLMServer, *replies: Reply, tools: str = "") -> None:
    """The HTTP server as ``web``, an agent using it (and ``tools``), the model's replies."""
    configure("web", server)
    write_agent("mcp-user", f"mcp: [web]\ntools: {tools}" if tools else "mcp: [web]")
    llm.queue(*replies)


def _connection_tasks() -> list[str]:
    """MCP connection tasks (named ``mcp <server>``) still running in this loop."""
    return [task.get_name() for task in asyncio.all_tasks() if task.get_name().startswith("mcp ")]


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


async def _nothing_left(port: int, access_log: Path | None = None) -> None:
    """No connection task, no socket to ``port``; with a log, the server saw the session end.
    (A closed transport lets go of its socket on the loop's next turn: waited for.)"""
    assert _connection_tasks() == []
    await until(lambda: not sockets_to(port), lambda: f"sockets left open: {sockets_to(port)}")
    if access_log is not None:
        await until(lambda: ENDED in access_log.read_text(encoding="utf-8"), "no DELETE /mcp")


async def test_the_session_and_its_connections_end_with_the_run(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    log = tmp_path / "access.log"
    held: list[list[str]] = []
    with http_server(access_log=log) as url:
        port = _port(url)
        _web_server(
            McpServer(type="http", url=url),
            llm_server,
            Reply.tool("mcp__web__echo", {"text": "hi"}),
            Reply.answer("done"),
        )
        events: list[Event] = []
        runner = _runner(llm_server, tmp_path, events, lambda _: held.append(sockets_to(port)))
        status = (await asyncio.wait_for(runner.run(), RUN_LIMIT_S)).status
        assert status == "ok"
        (call,) = finished_calls(events)
        assert call.result == "echo: hi"
        assert any(held), "the run never held a connection to the server"  # what is checked
        await _nothing_left(port, log)


async def test_cancel_during_an_http_call_ends_the_session(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    log = tmp_path / "access.log"
    with http_server(access_log=log) as url:
        _web_server(
            McpServer(type="http", url=url),
            llm_server,
            Reply.tool("mcp__web__sleep", {"seconds": 3600}),
            Reply.answer("never"),
        )
        events: list[Event] = []
        runner = _runner(llm_server, tmp_path, events)
        task = asyncio.create_task(runner.run())
        # The sleep tool says on stderr that it runs: the call is in the server's hands.
        await until(
            lambda: "sleep: 3600 s" in log.read_text(encoding="utf-8") or task.done(),
            "the call never reached the server",
        )
        assert not task.done()
        runner.cancel()
        result = await asyncio.wait_for(task, RUN_LIMIT_S)
        assert result.status == "aborted"
        (call,) = finished_calls(events)
        assert call.status == "aborted"
        await _nothing_left(_port(url), log)


async def test_an_http_call_that_never_answers_is_that_calls_error(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The call's time-out is bash's (``limits.bash_timeout_s``); the step goes on."""
    log = tmp_path / "access.log"
    with http_server(access_log=log) as url:
        _web_server(
            McpServer(type="http", url=url),
            llm_server,
            Reply.tool("mcp__web__sleep", {"seconds": 3600}),
            Reply.answer("went on"),
        )
        status, events = await _run(llm_server, tmp_path, limits={"bash_timeout_s": 2})
        assert status == "ok"
        (call,) = finished_calls(events)
        assert call.status == "error"
        assert call.result == "MCP server web: no answer within 2 s"
        assert "no answer within 2 s" in llm_server.requests[1].tool_messages[0]["content"]
        await _nothing_left(_port(url), log)


async def test_an_http_server_that_exits_fails_the_calls_after_it(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The server's process ends in a call. The SDK 1.x client never answers that call (its
    event stream ends without a response: modelcontextprotocol/python-sdk#3441), so it ends at
    its time-out; the next call finds nothing listening, the transport tears itself down, and
    the call says so instead of waiting out its own time-out too."""
    with http_server() as url:
        _web_server(
            McpServer(type="http", url=url),
            llm_server,
            Reply.tool("mcp__web__exit_now"),
            Reply.tool("mcp__web__echo", {"text": "anyone?"}),
            Reply.answer("went on"),
        )
        # The first call ends at its limit; the second must fail on its own, well before it
        # (a limit close to a busy machine's connect-and-tear-down time would race).
        status, events = await _run(llm_server, tmp_path, limits={"bash_timeout_s": 10})
        assert status == "ok"
        exited, after = finished_calls(events)
        assert exited.status == "error"
        assert after.status == "error"
        assert after.result == (
            f"MCP server web failed: cannot connect to 127.0.0.1:{_port(url)} (All connection "
            "attempts failed)"
        )
        assert llm_server.requests[2].tool_messages[1]["content"] == after.result
        await _nothing_left(_port(url))


async def test_an_endpoint_that_never_answers_times_out_at_start(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    with SilentEndpoint() as endpoint:
        url = f"http://127.0.0.1:{endpoint.port}/mcp"
        _web_server(
            McpServer(type="http", url=url, startupTimeout=1),
            llm_server,
            Reply.answer("went on"),
            tools="read",
        )
        status, events = await _run(llm_server, tmp_path)
        assert status == "ok"
        assert llm_server.requests[0].tool_names == ["read"]
        (warning,) = warnings(events)
        assert warning == (
            "MCP server web did not start within 1 s (startupTimeout); its tools are not offered"
        )
        assert endpoint.received and endpoint.received[0].startswith(b"POST /mcp")
        await until(lambda: endpoint.open == 0, lambda: f"{endpoint.open} connection(s) open")
        await _nothing_left(endpoint.port)


async def test_an_endpoint_where_nothing_listens_is_a_warning(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    port = free_port()  # bound and closed: nothing listens there
    _web_server(
        McpServer(type="http", url=f"http://127.0.0.1:{port}/mcp"),
        llm_server,
        Reply.answer("went on"),
        tools="read",
    )
    status, events = await _run(llm_server, tmp_path)
    assert status == "ok"
    assert llm_server.requests[0].tool_names == ["read"]
    (warning,) = warnings(events)
    assert warning == (
        f"MCP server web failed: cannot connect to 127.0.0.1:{port} (All connection attempts "
        "failed); its tools are not offered"
    )
    await _nothing_left(port)
