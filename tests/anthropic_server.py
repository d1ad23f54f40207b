"""A scripted Anthropic Messages API server on 127.0.0.1 for tests that drive real clients.

The real Claude Code CLI talks to whatever ``ANTHROPIC_BASE_URL`` says, so tests point it here
and script what "the model" answers. Only the LLM is fake: the HTTP (chunked SSE in Anthropic's
event format), the client and the process are real.

What the server does:

* ``POST /v1/messages`` — the conversation. Requests for which :attr:`AnthropicServer.is_main`
  holds take the next scripted :class:`Reply` (or :class:`ErrorReply`) in order; other requests
  (Claude Code's side calls: titles, topic checks, Bash-prefix checks by a small model) get
  :attr:`AnthropicServer.side_reply`. With ``"stream": true`` the reply is streamed as
  ``message_start``, ``content_block_start/delta/stop`` (``text_delta``, ``thinking_delta`` +
  ``signature_delta``, ``input_json_delta`` in a few pieces), ``message_delta`` with usage and
  ``message_stop``; otherwise it is one JSON message.
* ``POST /v1/messages/count_tokens`` — a plausible count.
* Anything else — ``404`` with an Anthropic-style error body.

Every request is recorded (:class:`Recorded`: path, headers, JSON body) so tests can assert what
the client sent, e.g. that a denial reason reached the model in a ``tool_result``.

The server runs in a daemon thread (so sync and async tests, and child processes, can all use
it); use it as a context manager, which stops and joins the thread.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str = "ZmFrZS1zaWduYXR1cmU="


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str | None = None


Block = Text | Thinking | ToolUse


@dataclass(frozen=True)
class Reply:
    """One assistant message. ``stop_reason`` defaults to ``tool_use`` when a tool is called."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    input_tokens: int = 12
    output_tokens: int = 7
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class ErrorReply:
    status: int = 500
    message: str = "fake: internal server error"
    error_type: str = "api_error"


Scripted = Reply | ErrorReply


def reply(*blocks: Block | str, **fields: Any) -> Reply:
    """``reply("Hello")``, ``reply(ToolUse("Bash", {...}))``: strings become text blocks."""
    made = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
    return Reply(blocks=made, **fields)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    main: bool

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block in the request's messages, oldest first."""
        found: list[dict[str, Any]] = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                found.extend(
                    b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                )
        return found

    def text(self) -> str:
        """All text of the request (system + messages), for loose assertions."""
        return json.dumps(self.body, ensure_ascii=False)


def tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def default_is_main(body: dict[str, Any]) -> bool:
    """Claude Code's conversation requests offer tools; its side calls do not."""
    return bool(body.get("tools"))


def default_side_reply(body: dict[str, Any]) -> Reply:
    """Something sensible for Claude Code's side calls: "none" to its Bash-prefix check (so
    every command still needs approval), a short text to anything else (warm-ups, titles)."""
    if "policy_spec" in json.dumps(body.get("messages", [])):
        return reply("none")
    return reply("Side answer")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that exits with keep-alive connections open resets them: not an error."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            super().handle_error(request, client_address)


class AnthropicServer:
    """See the module docstring. ``url`` is the base URL to hand to a client."""

    def __init__(
        self,
        script: list[Scripted] | None = None,
        *,
        is_main: Callable[[dict[str, Any]], bool] = default_is_main,
        side_reply: Callable[[dict[str, Any]], Reply] = default_side_reply,
        exhausted: Reply | None = None,
    ) -> None:
        self.script: list[Scripted] = list(script or [])
        self.is_main = is_main
        self.side_reply = side_reply
        self.exhausted = exhausted or reply("(the script has no more replies)")
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> AnthropicServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="anthropic-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> AnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests read ------------------------------------------------------------------

    @property
    def main_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.main]

    # -- serving --------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> tuple[Scripted, bool]:
        main = self.is_main(body)
        with self._lock:
            if not main:
                return self.side_reply(body), False
            if self.script:
                return self.script.pop(0), True
            return self.exhausted, True

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> Recorded:
        entry = Recorded(method, path, headers, body if isinstance(body, dict) else {}, False)
        with self._lock:
            self.requests.append(entry)
        return entry

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: tests read server.requests instead

            def do_GET(self) -> None:
                server._record("GET", self.path, dict(self.headers), {})
                self._json(404, _error_body("not_found_error", f"no route {self.path}"))

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                path = self.path.split("?", 1)[0]
                entry = server._record("POST", self.path, dict(self.headers), body)
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": 42})
                    return
                if path != "/v1/messages":
                    self._json(404, _error_body("not_found_error", f"no route {path}"))
                    return
                scripted, main = server._next(body)
                entry.main = main
                if isinstance(scripted, ErrorReply):
                    self._json(scripted.status, _error_body(scripted.error_type, scripted.message))
                    return
                message_id = f"msg_fake{next(server._ids):04d}{uuid.uuid4().hex[:8]}"
                model = str(body.get("model") or "claude-sonnet-4-5")
                if body.get("stream"):
                    self._stream(scripted, message_id, model)
                else:
                    self._json(200, _message(scripted, message_id, model))

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", f"req_fake{uuid.uuid4().hex[:12]}")
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, scripted: Reply, message_id: str, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("request-id", f"req_fake{uuid.uuid4().hex[:12]}")
                self.end_headers()
                for name, data in _sse_events(scripted, message_id, model):
                    chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _tool_id(block: ToolUse, index: int, message_id: str) -> str:
    return block.id or f"toolu_{message_id[4:]}_{index}"


def _stop_reason(scripted: Reply) -> str:
    if scripted.stop_reason:
        return scripted.stop_reason
    if any(isinstance(b, ToolUse) for b in scripted.blocks):
        return "tool_use"
    return "end_turn"


def _usage(scripted: Reply, *, output: int) -> dict[str, int]:
    return {
        "input_tokens": scripted.input_tokens,
        "output_tokens": output,
        "cache_read_input_tokens": scripted.cache_read,
        "cache_creation_input_tokens": scripted.cache_write,
    }


def _content(block: Block, index: int, message_id: str) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {
        "type": "tool_use",
        "id": _tool_id(block, index, message_id),
        "name": block.name,
        "input": block.input,
    }


def _message(scripted: Reply, message_id: str, model: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_content(b, i, message_id) for i, b in enumerate(scripted.blocks)],
        "stop_reason": _stop_reason(scripted),
        "stop_sequence": None,
        "usage": _usage(scripted, output=scripted.output_tokens),
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _sse_events(scripted: Reply, message_id: str, model: str) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API stream of one reply, event by event."""
    start = _message(scripted, message_id, model)
    start.update(content=[], stop_reason=None, usage=_usage(scripted, output=1))
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(scripted.blocks):
        deltas: list[dict[str, Any]]
        if isinstance(block, Text):
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block.text, 12)]
        elif isinstance(block, Thinking):
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block.thinking, 12)
            ]
            deltas.append({"type": "signature_delta", "signature": block.signature})
        else:
            opening = {
                "type": "tool_use",
                "id": _tool_id(block, index, message_id),
                "name": block.name,
                "input": {},
            }
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(json.dumps(block.input), 16)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(scripted), "stop_sequence": None},
                "usage": {"output_tokens": scripted.output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
