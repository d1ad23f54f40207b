"""A small real OTLP/HTTP receiver on 127.0.0.1 for tests and benchmarks.

It decodes what arrives at ``POST /v1/traces`` (protobuf, the OTLP exporter's encoding) with the
``opentelemetry-proto`` messages and keeps every span whole, links and events included (Phoenix
drops links on read-back, see tests/test_otel_phoenix.py). Needs the ``otel`` extra.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


class ReceivedSpan:
    """One span as the receiver got it (ids in hex, attributes as Python values)."""

    def __init__(self, span: Any) -> None:
        self.name: str = span.name
        self.trace_id = span.trace_id.hex()
        self.span_id = span.span_id.hex()
        self.parent_id = span.parent_span_id.hex() or None
        self.attributes = {a.key: plain(a.value) for a in span.attributes}
        self.events = [(e.name, {a.key: plain(a.value) for a in e.attributes}) for e in span.events]
        self.links = [
            (link.span_id.hex(), {a.key: plain(a.value) for a in link.attributes})
            for link in span.links
        ]
        self.start_ns: int = span.start_time_unix_nano
        self.end_ns: int = span.end_time_unix_nano


class OtlpSink:
    """``with OtlpSink() as sink:`` then export to ``sink.endpoint``; ``sink.spans`` is what
    arrived; ``sink.raw`` every request body (to search for secrets in the bytes sent)."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.raw: list[bytes] = []
        self.paths: list[str] = []
        """Each request's path (a sender of metrics or logs shows here, not in ``spans``)."""
        self.headers: list[dict[str, str]] = []
        """Each request's HTTP headers (names lower-cased)."""
        self.requests = 0
        self._lock = threading.Condition()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                message = ExportTraceServiceRequest()
                if self.path == "/v1/traces":
                    message.ParseFromString(body)
                received = [
                    ReceivedSpan(span)
                    for resource in message.resource_spans
                    for scope in resource.scope_spans
                    for span in scope.spans
                ]
                with sink._lock:  # kept before answering: an exporter's flush then means here
                    sink.paths.append(self.path)
                    sink.raw.append(body)
                    sink.headers.append({k.lower(): v for k, v in self.headers.items()})
                    sink.spans.extend(received)
                    sink.requests += 1
                    sink._lock.notify_all()
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-sink")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def wait_for(self, count: int, timeout: float = 60.0) -> list[ReceivedSpan]:
        """Block until at least ``count`` spans arrived; returns them all."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.spans) >= count, timeout):
                raise TimeoutError(f"{len(self.spans)} of {count} spans within {timeout} s")
            return list(self.spans)

    def wait_until(
        self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 60.0
    ) -> None:
        """Block until ``predicate(spans received)`` holds (re-checked as requests arrive)."""
        with self._lock:
            if not self._lock.wait_for(lambda: predicate(self.spans), timeout):
                raise TimeoutError(f"condition not met within {timeout} s")

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def serve_until_stdin_closes() -> None:
    """``python -m tests.otlp_sink``: a receiver in its own process (a benchmark must not pay
    for decoding what it sends). Prints its endpoint, serves until stdin closes, then prints
    how many spans it received."""
    import sys

    with OtlpSink() as sink:
        print(sink.endpoint, flush=True)
        sys.stdin.read()
    print(len(sink.spans), flush=True)


if __name__ == "__main__":
    serve_until_stdin_closes()
