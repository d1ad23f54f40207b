"""Where a run's spans go: an OTLP/HTTP endpoint, live or afterwards, or an OTLP JSON file.

Live, :func:`trace_subscriber` is one more subscriber of the run's publisher (architecture:
"Run files and the index"): it sees the events the run file sees, redacted, builds spans with
:class:`~core.telemetry.spans.TraceBuilder` and hands each ended span to one batch span
processor per endpoint for the process. The processor exports on its own thread, so a run
never waits for the network; a run's end asks for a flush without waiting for it, and the
process flushes what is left when it exits.

OTLP over HTTP only: gRPC receivers (Phoenix's among them) listen on every interface, and the
HTTP exporter needs no native extension.
"""

from __future__ import annotations

import atexit
import base64
import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from core.config.settings import Settings
from core.model.events import Event, RunFinished
from core.telemetry.switch import TelemetryConfig, telemetry_config

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter

_log = logging.getLogger(__name__)
_guard = threading.Lock()
_processors: dict[tuple[str | None, tuple[tuple[str, str], ...]], SpanProcessor] = {}
MISSING_EXTRA = (
    "traces are on (OTEL_EXPORTER_OTLP_* or Settings ▸ Telemetry) but the OpenTelemetry SDK "
    "is not installed: pip install 'baton[otel]'"
)
_warned = False


class TelemetryUnavailable(RuntimeError):
    """The ``otel`` extra is not installed; the message says how to install it."""


def _require_sdk() -> None:
    try:
        import opentelemetry.exporter.otlp.proto.http
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise TelemetryUnavailable(MISSING_EXTRA) from None


def span_exporter(config: TelemetryConfig) -> SpanExporter:
    """The OTLP/HTTP exporter for ``config`` (the ``OTEL_*`` variables fill what it leaves
    unset: headers, timeout, compression)."""
    _require_sdk()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(
        endpoint=config.traces_url,
        headers=dict(config.headers) if config.headers is not None else None,
    )


def _processor(config: TelemetryConfig) -> SpanProcessor:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    key = (config.traces_url, tuple(sorted((config.headers or {}).items())))
    with _guard:
        processor = _processors.get(key)
        if processor is None:
            processor = BatchSpanProcessor(span_exporter(config))
            _processors[key] = processor
            if len(_processors) == 1:
                atexit.register(shutdown)
        return processor


def shutdown() -> None:
    """Export what is queued and stop the processors' threads (at exit, and in tests)."""
    with _guard:
        processors = list(_processors.values())
        _processors.clear()
    for processor in processors:
        processor.shutdown()


def flush(timeout_s: float = 30.0) -> bool:
    """Export everything queued so far; False when an endpoint did not take it in time."""
    with _guard:
        processors = list(_processors.values())
    return all(p.force_flush(int(timeout_s * 1000)) for p in processors)


def trace_subscriber(
    settings: Settings,
    *,
    config: TelemetryConfig | None = None,
    processor: SpanProcessor | None = None,
) -> Callable[[Event], None] | None:
    """A subscriber exporting the run it listens to, or None when traces are off (or the
    extra is missing: then a warning says how to install it, once per process)."""
    global _warned
    config = config if config is not None else telemetry_config(settings)
    if config is None:
        return None
    try:
        _require_sdk()
    except TelemetryUnavailable as missing:
        if not _warned:
            _warned = True
            _log.warning("%s", missing)
        return None
    from core.telemetry.spans import TraceBuilder

    chosen = processor if processor is not None else _processor(config)
    builder = TraceBuilder(capture_content=config.capture_content)

    def export(event: Event) -> None:
        spans = builder.feed(event)
        if not spans:
            return
        for span in spans:
            chosen.on_end(span)
        if isinstance(event, RunFinished):  # the run's trace is complete: send it now
            threading.Thread(target=chosen.force_flush, name="trace-flush", daemon=True).start()

    return export


# -------------------------------------------------------------------------- saved runs


def _scrubbed_spans(events: Iterable[Event], config: TelemetryConfig | None) -> list[ReadableSpan]:
    _require_sdk()
    from core.safety.redaction import Redactor
    from core.telemetry.spans import spans_of_run

    redactor = Redactor.configured()
    capture = config.capture_content if config is not None else False
    return spans_of_run(list(events), capture_content=capture, scrub=redactor.scrub)


def send_run(events: Iterable[Event], config: TelemetryConfig) -> int:
    """Export a saved run's trace now (its events redacted already); returns the number of
    spans. Raises :class:`TelemetryUnavailable`, or ``OSError`` when the endpoint refused."""
    spans = _scrubbed_spans(events, config)
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = span_exporter(config)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise OSError(f"{config.describe()} did not accept the trace")
    return len(spans)


def otlp_json(events: Iterable[Event], *, capture_content: bool = False) -> str:
    """A run's trace in the OTLP JSON encoding (an ``ExportTraceServiceRequest``: ids in
    hex, enums as numbers, field names in lowerCamelCase), as a receiver's file import or
    ``otel-cli``-style tools read it."""
    config = TelemetryConfig(None, None, capture_content)
    spans = _scrubbed_spans(events, config)
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    message = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    return json.dumps(_hex_ids(message), ensure_ascii=False)  # one line: JSON Lines readers


_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(value: Any) -> Any:
    """Protobuf's JSON writes bytes in base64; OTLP JSON writes trace and span ids in hex."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def sample_trace_events(run_id: str, started_at: str) -> Sequence[Event]:
    """A tiny run (one step, one request, one tool call) for "Send a test trace"."""
    from core.model.events import (
        PlannedStep,
        RunStarted,
        StepFinished,
        StepStarted,
        ToolCallFinished,
        ToolCallStarted,
        Usage,
        UsageStats,
    )

    planned = PlannedStep(agent="telemetry-test", task="Say hello", cwd=".")
    usage = UsageStats(turns=1, input=12, output=3, model="test-model")
    return [
        RunStarted(
            run_id=run_id, mode="single", preset="telemetry test", steps=[planned], cwd=".",
            started_at=started_at,
        ),
        StepStarted(run_id=run_id, step=0, ts=0.01, agent="telemetry-test", task="Say hello",
                    cwd="."),
        Usage(run_id=run_id, step=0, ts=0.2, usage=usage),
        ToolCallStarted(run_id=run_id, step=0, ts=0.21, call_id="call-1", tool="ls"),
        ToolCallFinished(run_id=run_id, step=0, ts=0.25, call_id="call-1", status="ok"),
        StepFinished(run_id=run_id, step=0, ts=0.3, status="ok", output="hello", usage=usage),
        RunFinished(run_id=run_id, ts=0.31, status="ok", usage=usage),
    ]  # fmt: skip


def send_test_trace(config: TelemetryConfig) -> str:
    """Send a test trace; returns its trace id (hex) for the person to look up. Raises
    :class:`TelemetryUnavailable` or ``OSError`` (the sentence says what went wrong)."""
    import secrets
    from datetime import UTC, datetime

    run_id = f"telemetry-test-{secrets.token_hex(4)}"
    send_run(sample_trace_events(run_id, datetime.now(UTC).isoformat()), config)
    from core.telemetry.trace_ids import trace_id

    return f"{trace_id(run_id):032x}"


class RunTraces:
    """A run's share of trace export: its subscriber (None where another process records
    the run and exports it) and its CLI steps' environment."""

    def __init__(self, config: TelemetryConfig, subscriber: Callable[[Event], None] | None) -> None:
        self.config = config
        self.subscriber = subscriber

    def step_environment(self, run_id: str, step: int) -> dict[str, str]:
        from core.telemetry.trace_ids import trace_environment

        return trace_environment(run_id, step, self.config)


def traces_for_run(settings: Settings, *, export: bool = True) -> RunTraces | None:
    """What a starting run needs, or None when traces are off. ``export`` False: the run is
    recorded elsewhere (a batch item on a Ray worker: the supervisor that writes its run file
    exports it), so only its steps' trace context is needed here."""
    config = telemetry_config(settings)
    if config is None:
        return None
    if not export:
        return RunTraces(config, None)
    subscriber = trace_subscriber(settings, config=config)
    return RunTraces(config, subscriber) if subscriber is not None else None
