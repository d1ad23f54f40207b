"""``baton runs send-traces [RUN_ID…] [--since WHEN]`` and ``baton runs export RUN_ID --format
otlp-json``: saved runs as OpenTelemetry traces, so history is not lost when traces were off.

A run's trace is derived from its file (:mod:`core.telemetry.spans`): the same ids and times as
a live export, so sending a run that was exported live adds nothing new to the receiver but a
duplicate of the same spans.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from core.config.settings import SettingsError, load_settings
from core.model.events import Event
from core.record.run_files import RunIndex, RunRecord, load_run
from core.safety.redaction import Redactor, redact_all

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TRACES_OFF = (
    "traces are off: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), "
    "or turn them on in Settings ▸ Telemetry"
)


def register(actions: Any) -> None:
    parser = actions.add_parser(
        "send-traces",
        help="send saved runs to the OpenTelemetry endpoint as traces",
        description="Send saved runs as OpenTelemetry traces to the endpoint that OTEL_* or"
        " Settings ▸ Telemetry names (OTLP over HTTP), with the ids and times a live export"
        " would have used. Message content goes only with the opt-in"
        " (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT or the settings switch), redacted.",
    )
    parser.add_argument("run_ids", nargs="*", metavar="RUN_ID")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="every finished run started at or after WHEN (ISO date or time: 2026-12-01)",
    )
    parser.set_defaults(handler=_send)


def saved_events(record: RunRecord) -> list[Event]:
    """A saved run's events, redacted with today's secrets too (a key added since)."""
    return redact_all(load_run(Path(record.path)), Redactor.configured())


def otlp_json_of(record: RunRecord) -> str:
    """The run's trace in the OTLP JSON encoding (``baton runs export --format otlp-json``)."""
    from core.telemetry.export import otlp_json
    from core.telemetry.switch import capture_content

    try:
        settings = load_settings()
    except SettingsError:
        from core.config.settings import Settings

        settings = Settings()
    return otlp_json(saved_events(record), capture_content=capture_content(settings, os.environ))


def _since(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.astimezone()


def _chosen(args: argparse.Namespace, index: RunIndex) -> list[RunRecord] | str:
    if not args.run_ids and not args.since:
        return "name runs, or --since WHEN"
    chosen: list[RunRecord] = []
    for run_id in args.run_ids:
        record = index.get(run_id)
        if record is None:
            return f"no run '{run_id}' (see 'baton runs list')"
        chosen.append(record)
    if args.since:
        try:
            since = _since(args.since)
        except ValueError:
            return f"--since {args.since}: not an ISO date or time (2026-12-01, 2026-12-01T09:00)"
        for record in reversed(index.list(limit=100_000)):
            if record.id not in args.run_ids and _since(record.started_at) >= since:
                chosen.append(record)
    return chosen


def _send(args: argparse.Namespace) -> int:
    from core.telemetry.export import TelemetryUnavailable, send_run
    from core.telemetry.switch import telemetry_config

    try:
        config = telemetry_config(load_settings())
    except SettingsError as error:
        print(f"baton runs send-traces: {error}", file=sys.stderr)
        return EXIT_USAGE
    if config is None:
        print(f"baton runs send-traces: {TRACES_OFF}", file=sys.stderr)
        return EXIT_USAGE
    chosen = _chosen(args, RunIndex())
    if isinstance(chosen, str):
        print(f"baton runs send-traces: {chosen}", file=sys.stderr)
        return EXIT_USAGE
    failed = 0
    for record in chosen:
        if record.status == "running":
            print(f"{record.id}: still running, not sent (its trace goes when it ends)")
            continue
        try:
            spans = send_run(saved_events(record), config)
        except TelemetryUnavailable as missing:
            print(f"baton runs send-traces: {missing}", file=sys.stderr)
            return EXIT_USAGE
        except (OSError, ValueError) as error:
            failed += 1
            print(f"{record.id}: not sent ({error})", file=sys.stderr)
            continue
        print(f"{record.id}: sent {spans} spans to {config.describe()}")
    if not chosen:
        print("No finished runs to send.")
    return EXIT_FAILED if failed else EXIT_OK
