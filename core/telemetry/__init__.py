"""Runs as OpenTelemetry traces (architecture: "Traces"): whether export is on, the trace and
span ids a run's events map to, the spans built from the typed event stream, and where they
go (an OTLP/HTTP endpoint, or an OTLP JSON file).

The OpenTelemetry SDK is an optional extra (``baton[otel]``); nothing here imports it until
export is on, so a run with telemetry off costs one settings check and no import.
"""
