"""A scripted OpenAI-compatible endpoint on 127.0.0.1 for ``baton --self-test``.

The self-test runs one real step on Baton's own agent loop — HTTP client, streaming parser,
pricing, the bash tool, approvals — and only the model is scripted: the first request is
answered with a ``bash`` tool call, every later one with a short Markdown answer. Standard
library only (``http.server`` in a thread), so it works wherever the app runs.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "self-test-model"
COMMAND = "echo baton-self-test"
ANSWER = "## Self-test\n\nThe bash tool **ran**."


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-self-test",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "created": 0,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _reply(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks for ``request``: a tool call until a tool result is in the conversation."""
    answered = any(m.get("role") == "tool" for m in request.get("messages", []))
    if answered:
        chunks = [_chunk({"role": "assistant", "content": ANSWER}), _chunk({}, "stop")]
    else:
        call = {
            "index": 0,
            "id": "call_self_test",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": COMMAND})},
        }
        chunks = [_chunk({"role": "assistant", "tool_calls": [call]}), _chunk({}, "tool_calls")]
    usage = {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132}
    return [*chunks, {**_chunk({}), "choices": [], "usage": usage}]


class _Handler(BaseHTTPRequestHandler):
    server: Endpoint

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the self-test prints its own one line per check."""

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        self._send(200, "application/json", body.encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(request)
        chunks = _reply(request)
        if not request.get("stream"):
            self._send(200, "application/json", json.dumps(_whole(chunks)).encode())
            return
        events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, "text/event-stream", events.encode())

    def _send(self, status: int, kind: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _whole(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming form of ``chunks``."""
    delta = chunks[0]["choices"][0]["delta"]
    message = {"role": "assistant", "content": delta.get("content")}
    if "tool_calls" in delta:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"} for call in delta["tool_calls"]
        ]
    finish = chunks[1]["choices"][0]["finish_reason"]
    return {
        "id": "chatcmpl-self-test",
        "object": "chat.completion",
        "model": MODEL,
        "created": 0,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": chunks[-1]["usage"],
    }


class Endpoint(ThreadingHTTPServer):
    """The endpoint, serving from a daemon thread between ``with`` and its end."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> Endpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()
