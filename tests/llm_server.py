"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for tests.

The only fake in Baton's tests is the LLM: this is a real HTTP server (stdlib
``ThreadingHTTPServer``, one thread per connection, so concurrent requests really overlap) in
background threads. It does not care which event loop the test runs (plain asyncio, qasync,
none at all).

Example::

    from tests.llm_server import LLMServer, Reply, ToolCall, Tokens

    with LLMServer() as server:              # or the ``llm_server`` fixture (already started)
        server.queue(
            Reply.tool("read", {"path": "a.txt"}, tokens=Tokens(100, 20, cached=50)),
            Reply.error(500),                # one failed attempt: the backend retries
            Reply.answer("All done."),       # streamed as several text deltas
        )
        settings = server.settings()         # a Settings whose provider points here
        ...run a step with settings...
        first, second, third = server.wait_requests(3)          # blocks until 3 arrived
        assert third.messages[-1]["role"] == "tool"
        assert server.max_concurrent == 1

    # order unknown (parallel steps): pick the reply from the request
    server.responder = lambda body: Reply.answer(f"echo: {last_user_text(body)}")

    # from async code, without polling and without blocking the loop:
    await server.wait_requests_async(4)
    await server.wait_until_async(lambda: server.in_flight == 0)

Replies (all :class:`Reply` class methods): ``answer(text, reasoning=...)``,
``tool(name, args)``, ``tools(ToolCall(...), ..., text=...)``, ``error(status, message,
retry_after=...)``, ``rate_limited(retry_after)``, ``dropped(text, after=...)`` (socket closed
mid-stream, no ``[DONE]``), ``malformed()`` (``data: {not json``), ``hang()`` (headers, then
nothing until the server stops, ``release`` is set, or the client goes away). Any reply may
carry ``hold=threading.Event()``: the server sends headers, then waits for the event before
streaming — the way to keep N requests in flight at once and measure concurrency.

Replies are taken from the queue first, then from ``responder``; with neither, the request gets
HTTP 500 "no scripted reply left" and is listed in :attr:`LLMServer.problems`. Requests whose
conversation a real provider would reject (a ``tool`` message answering no tool call, a tool
call left unanswered) get HTTP 400 like OpenAI's, so backend bugs show up as failures.

Every request is recorded (:class:`RecordedRequest`: body, lower-cased headers, monotonic
arrival time, ``closed`` event set when the connection is gone or the response is complete).
``stop()`` releases every held or hung handler, closes every connection and joins every thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from core.config.settings import Provider, Settings

Fault = Literal["drop", "drop_clean", "malformed", "hang"]
MODEL = "test-model"


@dataclass(frozen=True)
class ToolCall:
    """A tool call the scripted model makes. A ``str`` ``arguments`` is sent verbatim (so a
    test can send invalid JSON); a dict is JSON-encoded."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Tokens:
    """The usage the server reports: ``prompt`` includes ``cached``, as OpenAI counts it."""

    prompt: int
    completion: int
    cached: int = 0


@dataclass
class Reply:
    """One scripted response. Build with the class methods; fields are public for tweaks."""

    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[ToolCall] = ()
    tokens: Tokens | None = None
    """None: estimated from the request and reply sizes (about 4 characters a token)."""
    finish_reason: str | None = None
    """None: ``tool_calls`` when there are tool calls, else ``stop``."""
    model: str | None = None
    """None: the model the request asked for."""
    pieces: int = 3
    """Text, reasoning and each tool call's arguments are split into this many deltas."""
    status: int = 200
    error_message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    fault: Fault | None = None
    fault_after: int = 1
    """Stream chunks sent before a ``drop``/``drop_clean``/``malformed`` fault."""
    hold: threading.Event | None = None
    """Wait for this event (or the server stopping) before the body; a streamed reply sends
    its headers first, a plain or error reply sends nothing until then."""
    calls_in_one_chunk: bool = False
    """Send every tool call whole in a single delta (as some servers do) instead of each in
    ``pieces``: a flood of calls then costs one chunk, not hundreds of thousands."""
    fragmented: bool = False
    """Write every SSE event in two TCP writes split mid-JSON (exercises line buffering)."""
    burst: bool = False
    """Write the whole stream in one HTTP chunk, one TCP write (a fast model, or a proxy that
    buffers): the client reads all its SSE events together."""

    # -- builders -------------------------------------------------------------------------

    @classmethod
    def answer(
        cls,
        text: str,
        *,
        reasoning: str = "",
        tokens: Tokens | None = None,
        pieces: int = 3,
        model: str | None = None,
        hold: threading.Event | None = None,
    ) -> Reply:
        return cls(
            text=text, reasoning=reasoning, tokens=tokens, pieces=pieces, model=model, hold=hold
        )

    @classmethod
    def tool(
        cls,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        text: str = "",
        call_id: str | None = None,
        tokens: Tokens | None = None,
        hold: threading.Event | None = None,
    ) -> Reply:
        call = ToolCall(name, {} if arguments is None else arguments, call_id)
        return cls(text=text, tool_calls=(call,), tokens=tokens, hold=hold)

    @classmethod
    def tools(
        cls,
        *calls: ToolCall,
        text: str = "",
        reasoning: str = "",
        tokens: Tokens | None = None,
        hold: threading.Event | None = None,
    ) -> Reply:
        return cls(text=text, reasoning=reasoning, tool_calls=calls, tokens=tokens, hold=hold)

    @classmethod
    def error(
        cls, status: int = 500, message: str = "internal server error", *, retry_after: str = ""
    ) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after else {}
        return cls(status=status, error_message=message, headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: float | str = 0) -> Reply:
        value = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
        return cls.error(429, "Rate limit reached; please retry later.", retry_after=value)

    @classmethod
    def dropped(cls, text: str = "partial answer", *, after: int = 2, clean: bool = False) -> Reply:
        """``after`` chunks, then the socket is closed mid-body (``clean``: the HTTP body ends
        properly, but without ``finish_reason`` or ``[DONE]``)."""
        return cls(text=text, fault="drop_clean" if clean else "drop", fault_after=after)

    @classmethod
    def malformed(cls, text: str = "", *, after: int = 0) -> Reply:
        return cls(text=text, fault="malformed", fault_after=after)

    @classmethod
    def hang(cls, *, release: threading.Event | None = None) -> Reply:
        """200 and SSE headers, then silence until ``release``, the server stopping, or the
        client closing; then the connection is closed without a body."""
        return cls(fault="hang", hold=release)


Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class RecordedRequest:
    index: int
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: dict[str, Any]
    arrived: float
    """``time.monotonic()`` when the body had been read."""
    finished: float | None = None
    """``time.monotonic()`` when the response was complete or the connection went away."""
    reply: Reply | None = None
    closed: threading.Event = field(default_factory=threading.Event)
    """Set when the response is complete or the connection went away."""
    client_disconnected: bool = False
    """True when the client closed the connection before the response was complete."""
    client_port: int = 0
    """The client's end of the connection it came on: requests on one connection share it."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.body.get("tools") or []]

    @property
    def tool_messages(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("role") == "tool"]

    @property
    def user_text(self) -> str:
        return last_user_text(self.body)


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last ``user`` message: what a responder picks its reply by."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content)
            return str(content or "")
    return ""


WAIT_S = 120.0
"""How long the waits below give their condition by default. They return as soon as it holds;
the limit only matters when something is broken, so it is generous: a loaded machine can be
many times slower than an idle one."""


class LLMServer:
    """See the module docstring. Thread-safe; every public method may be called from any
    thread. The ``*_async`` waits resolve on the loop that called them."""

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Sequence[str] = (MODEL,),
        strict: bool = True,
    ) -> None:
        self.responder = responder
        self.models = list(models)
        self.strict = strict
        self.problems: list[str] = []
        """Script errors (no reply left, responder crashed, rejected conversations)."""
        self._replies: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Condition()
        self._waiters: list[tuple[Callable[[], bool], asyncio.AbstractEventLoop, Any]] = []
        self._in_flight = 0
        self._max_concurrent = 0
        self.stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> LLMServer:
        if self._httpd is not None:
            return self
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hung handlers, close every connection, join every thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        if self._thread is not None:
            self._thread.join(5)
        httpd.close_connections()
        httpd.join_handlers(5)
        httpd.server_close()
        with self._lock:
            for _, loop, future in self._waiters:
                _resolve(loop, future, TimeoutError("the LLM server stopped"))
            self._waiters.clear()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses and settings -----------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the LLM server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the OpenAI ``base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def provider(self, name: str = "test", api_key_env: str | None = None) -> Provider:
        return Provider(name=name, base_url=self.base_url, api_key_env=api_key_env)

    def settings(self, **overrides: Any) -> Settings:
        """Settings with this server as the only provider and ``test-model`` as default."""
        values: dict[str, Any] = {"providers": [self.provider()], "default_model": MODEL}
        values.update(overrides)
        return Settings.model_validate(values)

    # -- script ---------------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def replies_left(self) -> int:
        with self._lock:
            return len(self._replies)

    # -- observations ---------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Chat completion requests, in arrival order (a snapshot)."""
        with self._lock:
            return [r for r in self._requests if r.path.endswith("/chat/completions")]

    @property
    def all_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def in_flight(self) -> int:
        """Chat requests being answered now. A handler counts itself out just *after* its
        last byte went out, so wait for ``in_flight == 0`` rather than asserting it."""
        with self._lock:
            return self._in_flight

    @property
    def max_concurrent(self) -> int:
        """Peak number of chat requests being answered at the same time."""
        with self._lock:
            return self._max_concurrent

    def wait_until(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> None:
        """Block until ``predicate()`` holds; it is re-checked whenever a request arrives or
        finishes. Raises TimeoutError. The predicate runs under the server's lock: keep it a
        cheap read of this server's state."""
        with self._lock:
            if not self._lock.wait_for(predicate, timeout):
                raise TimeoutError(f"condition not met within {timeout} s")

    def wait_requests(self, count: int, timeout: float = WAIT_S) -> list[RecordedRequest]:
        """Block until ``count`` chat requests have arrived; returns them all."""
        try:
            self.wait_until(lambda: len(self._chat_requests()) >= count, timeout)
        except TimeoutError:
            raise TimeoutError(
                f"{len(self.requests)} of {count} requests arrived within {timeout} s"
            ) from None
        return self.requests

    async def wait_until_async(
        self,
        predicate: Callable[[], bool],
        timeout: float = WAIT_S,  # noqa: ASYNC109 - mirrors wait_until
    ) -> None:
        """The async form of :meth:`wait_until`: no polling, no thread, any event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        entry = (predicate, loop, future)
        with self._lock:
            if predicate():
                return
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise TimeoutError(f"condition not met within {timeout} s") from None
        finally:
            with self._lock:
                if entry in self._waiters:
                    self._waiters.remove(entry)

    async def wait_requests_async(
        self,
        count: int,
        timeout: float = WAIT_S,  # noqa: ASYNC109 - mirrors wait_requests
    ) -> list[RecordedRequest]:
        try:
            await self.wait_until_async(lambda: len(self._chat_requests()) >= count, timeout)
        except TimeoutError:
            raise TimeoutError(
                f"{len(self.requests)} of {count} requests arrived within {timeout} s"
            ) from None
        return self.requests

    # -- used by the handler --------------------------------------------------------------

    def _chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self._requests if r.path.endswith("/chat/completions")]

    def _arrived(
        self, method: str, path: str, headers: dict[str, str], body: Any, client_port: int = 0
    ) -> tuple[RecordedRequest, Reply | None]:
        with self._lock:
            record = RecordedRequest(
                index=next(self._ids),
                method=method,
                path=path,
                headers=headers,
                body=body if isinstance(body, dict) else {},
                arrived=time.monotonic(),
                client_port=client_port,
            )
            self._requests.append(record)
            reply: Reply | None = None
            if path.endswith("/chat/completions"):
                self._in_flight += 1
                self._max_concurrent = max(self._max_concurrent, self._in_flight)
                if self._replies:
                    reply = self._replies.popleft()
            self._changed()
        if reply is None and self.responder is not None and record.body:
            try:
                reply = self.responder(record.body)
            except Exception as error:  # a broken test script must show, not hang
                self._problem(f"responder failed: {type(error).__name__}: {error}")
                reply = Reply.error(500, f"llm_server responder failed: {error}")
        return record, reply

    def _finished(self, record: RecordedRequest, *, disconnected: bool) -> None:
        with self._lock:
            record.client_disconnected = disconnected
            record.finished = time.monotonic()
            if record.path.endswith("/chat/completions"):
                self._in_flight -= 1
            record.closed.set()
            self._changed()

    def _problem(self, message: str) -> None:
        with self._lock:
            self.problems.append(message)

    def _changed(self) -> None:
        """Called with the lock held after any state change: wake sync and async waiters."""
        self._lock.notify_all()
        for entry in list(self._waiters):
            predicate, loop, future = entry
            if predicate():
                self._waiters.remove(entry)
                _resolve(loop, future, None)


def _resolve(loop: asyncio.AbstractEventLoop, future: Any, outcome: BaseException | None) -> None:
    def settle() -> None:
        if future.done():
            return
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)

    with contextlib.suppress(RuntimeError):  # the waiting loop is already closed
        loop.call_soon_threadsafe(settle)


# -- HTTP side ----------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    """Tracks its connections and their threads, so ``stop`` can close and join them all."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: LLMServer) -> None:
        self.owner = owner
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._conn_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name="llm-server-connection",
            daemon=True,
        )
        with self._conn_lock:
            self._connections[request] = thread
        thread.start()

    def _serve_connection(self, request: socket.socket, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except OSError:
            pass  # the client went away; that is a scenario, not a server error
        except Exception as error:
            self.owner._problem(f"handler crashed: {type(error).__name__}: {error}")
        finally:
            self.shutdown_request(request)
            with self._conn_lock:
                self._connections.pop(request, None)

    def close_connections(self) -> None:
        with self._conn_lock:
            sockets = list(self._connections)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def join_handlers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with self._conn_lock:
                threads = list(self._connections.values())
            if not threads:
                return
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                raise RuntimeError("llm_server: connection threads did not stop")


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read the recorded requests, not a log

    @property
    def owner(self) -> LLMServer:
        return self.server.owner

    # -- routes ---------------------------------------------------------------------------

    def do_GET(self) -> None:
        record, _ = self.owner._arrived(
            "GET", self.path, self._headers(), None, self.client_address[1]
        )
        if self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "owned_by": "llm_server"} for m in self.owner.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error_body(f"no route {self.path}"))
        self.owner._finished(record, disconnected=False)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        record, reply = self.owner._arrived(
            "POST", self.path, self._headers(), body, self.client_address[1]
        )
        disconnected = False
        try:
            self._answer(record, body, reply)
        except (_ClientGone, OSError):
            disconnected = True
            self.close_connection = True
        finally:
            self.owner._finished(record, disconnected=disconnected)

    def _answer(self, record: RecordedRequest, body: Any, reply: Reply | None) -> None:
        if not self.path.endswith("/chat/completions"):
            self._send_json(404, _error_body(f"no route {self.path}"))
            return
        if not isinstance(body, dict):
            self._send_json(400, _error_body("the request body is not a JSON object"))
            return
        if self.owner.strict:
            problem = conversation_problem(body.get("messages"))
            if problem:
                self.owner._problem(f"request {record.index} rejected: {problem}")
                self._send_json(400, _error_body(problem, "invalid_request_error"))
                return
        if reply is None:
            message = "llm_server: no scripted reply left for this request"
            self.owner._problem(f"request {record.index}: no scripted reply left")
            self._send_json(500, _error_body(message))
            return
        record.reply = reply
        streaming = bool(body.get("stream")) and reply.status == 200
        if reply.hold is not None and not streaming:
            self._wait(reply.hold)
        if reply.status != 200:
            self._send_json(
                reply.status,
                _error_body(reply.error_message or "error", _error_type(reply.status)),
                reply.headers,
            )
        elif streaming:
            self._stream(body, reply)
        else:
            self._send_json(200, completion_body(body, reply), reply.headers)

    # -- streaming ------------------------------------------------------------------------

    def _stream(self, request: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        if reply.hold is not None or reply.fault == "hang":
            self._wait(reply.hold)
        if reply.fault == "hang":
            self._abort()
            return
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        chunks = stream_chunks(request, reply, include_usage=include_usage)
        if reply.fault in ("drop", "drop_clean", "malformed"):
            for chunk in chunks[: reply.fault_after]:
                self._event(json.dumps(chunk), reply.fragmented)
            if reply.fault == "drop":
                self._abort()
                return
            if reply.fault == "malformed":
                self._event("{not json", fragmented=False)
                self._event("[DONE]", fragmented=False)
            self._chunk(b"")
            return
        if reply.burst:
            events = [*(json.dumps(chunk) for chunk in chunks), "[DONE]"]
            self._chunk("".join(f"data: {data}\n\n" for data in events).encode())
            self._chunk(b"")
            return
        for chunk in chunks:
            self._event(json.dumps(chunk), reply.fragmented)
        self._event("[DONE]", fragmented=False)
        self._chunk(b"")

    def _event(self, data: str, fragmented: bool) -> None:
        payload = f"data: {data}\n\n".encode()
        if fragmented and len(payload) > 8:
            middle = len(payload) // 2
            self._chunk(payload[:middle])
            self._chunk(payload[middle:])
        else:
            self._chunk(payload)

    def _chunk(self, data: bytes) -> None:
        """One HTTP/1.1 chunk (empty = the terminating chunk), flushed at once."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _abort(self) -> None:
        """Close the socket without ending the chunked body: the client sees a dropped
        connection."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _wait(self, release: threading.Event | None) -> None:
        """Wait for ``release`` or the server stopping; notice a client that goes away."""
        while not self.owner.stopping.is_set():
            if release is not None and release.is_set():
                return
            if self._client_closed(0.02):
                raise _ClientGone

    def _client_closed(self, wait: float) -> bool:
        readable, _, _ = select.select([self.connection], [], [], wait)
        if not readable:
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except OSError:
            return True

    # -- plain responses ------------------------------------------------------------------

    def _send_json(
        self, status: int, data: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}


# -- payloads (public so tests can build expectations) ------------------------------------


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def _error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None}}


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    pieces = max(1, min(pieces, len(text)))
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _arguments_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(dict(call.arguments))


def _call_id(call: ToolCall, index: int, request_index: int) -> str:
    return call.id or f"call_{request_index}_{index}"


def usage_of(request: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    tokens = reply.tokens
    if tokens is None:
        prompt = max(1, len(json.dumps(request.get("messages") or [])) // 4)
        produced = reply.text + reply.reasoning
        produced += "".join(_arguments_text(c) for c in reply.tool_calls)
        tokens = Tokens(prompt=prompt, completion=max(1, len(produced) // 4))
    ceiling = request.get("max_tokens", request.get("max_completion_tokens"))
    if isinstance(ceiling, int) and tokens.completion > ceiling:
        # A provider stops writing at the request's ceiling, whatever it would have written.
        tokens = Tokens(tokens.prompt, ceiling, tokens.cached)
    return {
        "prompt_tokens": tokens.prompt,
        "completion_tokens": tokens.completion,
        "total_tokens": tokens.prompt + tokens.completion,
        "prompt_tokens_details": {"cached_tokens": tokens.cached},
    }


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


_completion_ids = itertools.count(1)


def stream_chunks(
    request: Mapping[str, Any], reply: Reply, *, include_usage: bool
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects OpenAI would stream for ``reply``."""
    number = next(_completion_ids)
    model = reply.model or str(request.get("model") or MODEL)
    base: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion.chunk",
        "model": model,
        "created": int(time.time()),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [
        chunk({"reasoning_content": piece}) for piece in _split(reply.reasoning, reply.pieces)
    ]
    chunks += [chunk({"content": piece}) for piece in _split(reply.text, reply.pieces)]
    if reply.calls_in_one_chunk and reply.tool_calls:
        whole = [
            {
                "index": index,
                "id": _call_id(call, index, number),
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
        chunks.append(chunk({"tool_calls": whole}))
    for index, call in enumerate(() if reply.calls_in_one_chunk else reply.tool_calls):
        opening = {
            "index": index,
            "id": _call_id(call, index, number),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [opening]}))
        for piece in _split(_arguments_text(call), reply.pieces):
            chunks.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    chunks.append(chunk({}, _finish_reason(reply)))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": usage_of(request, reply)})
    return chunks


def completion_body(request: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object for ``reply``."""
    number = next(_completion_ids)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(call, index, number),
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or str(request.get("model") or MODEL),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": usage_of(request, reply),
    }


def conversation_problem(messages: Any) -> str | None:
    """What OpenAI would reject about ``messages`` (None: nothing)."""
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    open_calls: list[str] = []
    for position, message in enumerate(messages):
        where = f"messages[{position}]"
        if not isinstance(message, dict):
            return f"{where} is not an object"
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"{where}: invalid role {role!r}"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                return f"{where}: tool message answers no pending tool call ({call_id!r})"
            open_calls.remove(call_id)
            if not isinstance(message.get("content"), str):
                return f"{where}: tool message content must be a string"
            continue
        if open_calls:
            return f"{where}: tool calls {open_calls} were not answered by tool messages"
        if role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                function = call.get("function") or {}
                if not call.get("id") or not function.get("name"):
                    return f"{where}: a tool call lacks its id or function name"
                if not isinstance(function.get("arguments"), str):
                    return f"{where}: tool call arguments must be a JSON string"
                open_calls.append(call["id"])
            if not calls and message.get("content") is None:
                return f"{where}: assistant message without content or tool calls"
    if open_calls:
        return f"tool calls {open_calls} were not answered by tool messages"
    return None


def iter_sse_payloads(raw: bytes) -> Iterator[str]:
    """The ``data:`` payloads of an SSE body (for tests of the server itself)."""
    for line in raw.decode().splitlines():
        if line.startswith("data: "):
            yield line[len("data: ") :]
