"""A scripted OpenAI **Responses** API server (``POST /v1/responses``, streamed) on 127.0.0.1.

Codex (and so ``codex-acp``) speaks only the Responses API; this serves it the way
tests/llm_server.py serves Chat Completions: a real HTTP server in a thread, every request
recorded, replies chosen by a ``responder`` from the request body. A reply is text, or one
function call (``name`` and JSON ``arguments``), streamed as the events of OpenAI's Responses
streaming format (``response.created``, ``response.output_item.added``,
``response.output_text.delta`` / ``response.function_call_arguments.delta``,
``response.output_item.done``, ``response.completed`` with usage). The shape of Codex's requests
is recorded by ``tests/fixtures/record_codex_requests.py``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ResponsesReply:
    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None
    """A function call: (tool name, arguments)."""


Responder = Callable[[dict[str, Any]], ResponsesReply]


@dataclass
class ResponsesServer:
    responder: Responder = field(default=lambda body: ResponsesReply("ok"))
    requests: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def __enter__(self) -> ResponsesServer:
        owner = self
        ids = itertools.count(1)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:  # model lists and the like: nothing
                body = json.dumps({"object": "list", "data": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append({"path": self.path, "body": body})
                reply = owner.responder(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in _events(reply, next(ids), str(body.get("model", "m"))):
                    data = json.dumps(event)
                    self.wfile.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"


def _events(reply: ResponsesReply, number: int, model: str) -> list[dict[str, Any]]:
    response_id = f"resp_{number}"
    base = {"id": response_id, "object": "response", "created_at": 0, "model": model}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    ]
    if reply.call is not None:
        name, arguments = reply.call
        text = json.dumps(arguments)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{number}",
            "call_id": f"call_{number}",
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        events.append(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": 0,
                "delta": text,
            }
        )
        done = {**item, "arguments": text, "status": "completed"}
    else:
        item = {
            "type": "message",
            "id": f"msg_{number}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        events.append(
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": reply.text,
            }
        )
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        done = {**item, "status": "completed", "content": [part]}
    events.append({"type": "response.output_item.done", "output_index": 0, "item": done})
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    completed = {**base, "status": "completed", "output": [done], "usage": usage}
    events.append({"type": "response.completed", "response": completed})
    return events
