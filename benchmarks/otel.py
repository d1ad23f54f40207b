"""What exporting a run as a trace costs the run: a 100,000-event run published with trace
export off and on, side by side in one process.

The run is :func:`benchmarks.big_runs.flood` (a 3-step chain of text and thinking deltas and
streamed bash calls) with a ``usage`` event after every tool call, so it has model requests
too. Each round publishes every event through an :class:`~core.record.publisher.EventPublisher`
with the run's redactor and a real run file, and closes it (the file drained): **off** with no
other subscriber, **on** with :func:`core.telemetry.export.trace_subscriber` and its batch span
processor exporting over OTLP/HTTP to a real receiver on 127.0.0.1 (``tests/otlp_sink.py``),
timed until every span has been accepted (:func:`core.telemetry.export.flush`). Off and on
alternate, :data:`ROUNDS` each, and the best round of each counts (the machine is shared).
Then the same again while :func:`benchmarks.background_load.background_load` keeps every CPU
busy.

Printed last, as JSON (goal in brackets): ``overhead_ratio`` — on / off, quiet [≤ 1.3];
``overhead_ratio_loaded`` — the same under load [≤ 1.3]; the seconds behind each, the events
and the spans received.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

EVENTS = 100_000
ROUNDS = 5


def make_run() -> list[object]:
    from benchmarks.big_runs import flood
    from core.model.events import ToolCallFinished, Usage, UsageStats

    calls = sum(isinstance(e, ToolCallFinished) for e in flood(EVENTS))
    events: list[object] = []
    for event in flood(EVENTS - calls):
        events.append(event)
        if isinstance(event, ToolCallFinished):
            usage = UsageStats(turns=1, input=1_200, output=80, cache_read=400, model="m")
            events.append(Usage(run_id=event.run_id, step=event.step, ts=event.ts, usage=usage))
    return events


def publish(events: list[object], folder: Path, endpoint: str | None) -> float:
    """Seconds to publish ``events`` and drain the run file (and, with ``endpoint``, to have
    every span accepted there)."""
    from core.config.settings import Settings
    from core.record.publisher import EventPublisher, RunFileSink
    from core.record.run_files import RunWriter
    from core.safety.redaction import Redactor
    from core.telemetry import export
    from core.telemetry.switch import TelemetryConfig

    os.environ["BATON_DATA_DIR"] = str(folder)
    listeners = []
    if endpoint is not None:
        config = TelemetryConfig(f"{endpoint}/v1/traces")
        subscriber = export.trace_subscriber(Settings(), config=config)
        assert subscriber is not None
        listeners.append(subscriber)
    run_id = f"bench-{time.monotonic_ns()}"
    redactor = Redactor(["sk-proj-0123456789abcdefghijklmnop", "hunter2-but-longer-password"])
    start = time.perf_counter()
    publisher = EventPublisher(redactor, RunFileSink(RunWriter(run_id)), listeners)
    for event in events:
        publisher.publish(event.model_copy(update={"run_id": run_id}))  # type: ignore[attr-defined]
    publisher.close()
    if endpoint is not None:
        assert export.flush(120)
    took = time.perf_counter() - start
    export.shutdown()
    return took


def side_by_side(events: list[object], endpoint: str) -> tuple[float, float]:
    off: list[float] = []
    on: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(ROUNDS):
            off.append(publish(events, Path(folder), None))
            on.append(publish(events, Path(folder), endpoint))
    return min(off), min(on)


def main() -> None:
    from benchmarks.background_load import background_load
    from tests.otlp_sink import OtlpSink

    events = make_run()
    with OtlpSink() as sink:
        quiet_off, quiet_on = side_by_side(events, sink.endpoint)
        print(f"quiet: off {quiet_off:.2f} s, on {quiet_on:.2f} s")
        with background_load() as spinners:
            loaded_off, loaded_on = side_by_side(events, sink.endpoint)
        print(f"{spinners} busy processes: off {loaded_off:.2f} s, on {loaded_on:.2f} s")
        spans = len(sink.spans) // (2 * ROUNDS)
    print(
        json.dumps(
            {
                "overhead_ratio": round(quiet_on / quiet_off, 3),
                "overhead_ratio_loaded": round(loaded_on / loaded_off, 3),
                "off_s": round(quiet_off, 3),
                "on_s": round(quiet_on, 3),
                "loaded_off_s": round(loaded_off, 3),
                "loaded_on_s": round(loaded_on, 3),
                "events": len(events),
                "spans_per_run": spans,
            }
        )
    )


if __name__ == "__main__":
    main()
