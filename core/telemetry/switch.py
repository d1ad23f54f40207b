"""Whether runs are exported as traces, where to, and with what: decided once per run from
the standard ``OTEL_*`` variables and Settings ▸ Telemetry, without importing the SDK.

The environment's conventions win where they speak: ``OTEL_SDK_DISABLED=true`` turns every
export off, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` turn it on
(``OTEL_TRACES_EXPORTER=none`` keeps those from doing so), and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is the GenAI conventions' switch for
message content. Settings ▸ Telemetry is the same switch for a person who never sets a variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from core.config.settings import Settings

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CONTENT_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event", "event_only"})
_TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class TelemetryConfig:
    """Export is on: where to and what to include."""

    traces_url: str | None
    """The OTLP/HTTP traces address; None: the exporter reads the ``OTEL_*`` variables itself."""
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    """Headers from the keyring (Settings ▸ Telemetry); None: ``OTEL_EXPORTER_OTLP_HEADERS``."""
    capture_content: bool = False
    """Messages, task, tool arguments and results on the spans (always redacted)."""
    from_environment: bool = False

    def __repr__(self) -> str:  # a log line or a traceback shows no password either
        return (
            f"TelemetryConfig(traces_url={self.describe()!r}, "
            f"capture_content={self.capture_content}, from_environment={self.from_environment})"
        )

    def describe(self) -> str:
        """Where traces go, for messages and logs: without a password in the address."""
        if self.traces_url is None:
            return "the endpoint in OTEL_EXPORTER_OTLP_*"
        return without_credentials(self.traces_url)


def without_credentials(url: str) -> str:
    """``https://user:token@host/v1/traces`` → ``https://host/v1/traces``: what may be shown,
    logged or handed to a CLI step (whose tools could read it); only the exporter gets the
    address whole."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def traces_url(base: str) -> str:
    """``http://host:6006`` → ``http://host:6006/v1/traces`` (an address already naming the
    traces path is kept as it is)."""
    base = base.strip().rstrip("/")
    return base if base.endswith(_TRACES_PATH) else base + _TRACES_PATH


def parse_headers(text: str) -> dict[str, str]:
    """``name=value,name=value`` (the ``OTEL_EXPORTER_OTLP_HEADERS`` form, values
    percent-encoded) as a mapping; pairs without ``=`` are ignored."""
    from urllib.parse import unquote

    headers: dict[str, str] = {}
    for pair in text.split(","):
        name, sep, value = pair.partition("=")
        if sep and name.strip():
            headers[unquote(name.strip())] = unquote(value.strip())
    return headers


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in _CONTENT_ON


def capture_content(settings: Settings, environ: Mapping[str, str]) -> bool:
    return settings.telemetry.capture_content or _true(environ.get(CAPTURE_CONTENT_VARIABLE))


def telemetry_config(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> TelemetryConfig | None:
    """The export configuration, or None when traces are off (the common case: no import)."""
    environ = os.environ if environ is None else environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    content = capture_content(settings, environ)
    chosen = settings.telemetry
    if chosen.enabled and chosen.endpoint:
        from core.safety.secrets import telemetry_headers

        headers = telemetry_headers(settings)
        return TelemetryConfig(
            traces_url(chosen.endpoint),
            parse_headers(headers) if headers else None,
            content,
        )
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    specific = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    general = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if specific or general:
        url = specific or traces_url(general)
        return TelemetryConfig(url, None, content, from_environment=True)
    return None
