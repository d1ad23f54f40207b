"""The trace and span ids of a run, derived from its run id.

Derived, not random, for two reasons: a saved run sent later (``baton runs send-traces``) or
exported to a file becomes the very same trace as when it was exported live, and the runner
can hand a CLI step its ``TRACEPARENT`` before the step's span exists (a span's id is known
from the run id and the step number alone), so pi's and Claude Code's own spans nest under it.
"""

from __future__ import annotations

import hashlib

from core.telemetry.switch import TelemetryConfig, without_credentials


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


def trace_id(run_id: str) -> int:
    """128 bits, never 0 (0 is the invalid id)."""
    return int.from_bytes(_digest("trace", run_id)[:16], "big") or 1


def span_id(run_id: str, *parts: object) -> int:
    """64 bits, never 0; ``parts`` name the span within the run (``"step", 2``)."""
    return int.from_bytes(_digest("span", run_id, *parts)[:8], "big") or 1


def run_span_id(run_id: str) -> int:
    return span_id(run_id, "run")


def step_span_id(run_id: str, step: int) -> int:
    return span_id(run_id, "step", step)


def traceparent(run_id: str, step: int) -> str:
    """The W3C ``traceparent`` of a step's ``invoke_agent`` span (sampled)."""
    return f"00-{trace_id(run_id):032x}-{step_span_id(run_id, step):016x}-01"


def trace_environment(run_id: str, step: int, config: TelemetryConfig) -> dict[str, str]:
    """What a CLI step's process gets so its own spans join the step's.

    ``TRACEPARENT`` (the environment carrier of the W3C trace context) is read by Claude Code
    when its tracing is on: ``CLAUDE_CODE_ENABLE_TELEMETRY`` with the enhanced-telemetry beta
    and an OTLP traces exporter. pi reads no trace context today; it gets the variable so
    whatever it runs that does (an extension, a tool) nests too. The endpoint's headers are a
    secret and are not passed: a CLI's tools could read them.
    """
    environment = {
        "TRACEPARENT": traceparent(run_id, step),
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
    }
    if config.traces_url is not None:  # a password in the address stays with Baton too
        environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = without_credentials(config.traces_url)
    return environment
