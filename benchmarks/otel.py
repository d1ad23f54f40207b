"""What exporting a run as a trace costs the run: a 100,000-event run published with trace
export off and on, side by side in one process.

The run is :func:`benchmarks.big_runs.flood` (a 3-step chain of text and thinking deltas and
streamed bash calls) with a ``usage`` event after every tool call, so it has model requests
too. Each round publishes every event through an :class:`~core.record.publisher.EventPublisher`
with the run's redactor and a real run file, and closes it (the file drained): **off** with no
other subscriber, **on** with :func:`core.telemetry.export.trace_subscriber` and its batch span
processor exporting over OTLP/HTTP to a real receiver on 127.0.0.1 (``tests/otlp_sink.py``, in
its own process),
timed until every span has been accepted (:func:`core.telemetry.export.flush`). Off and on
alternate, :data:`ROUNDS` each, and the best round of each counts (the machine is shared).
Then the same again while :func:`benchmarks.background_load.background_load` keeps every CPU
busy.

Printed last, as JSON (goal in brackets): ``overhead_ratio`` — on / off, wall clock, quiet
[≤ 1.3]; ``overhead_ratio_loaded`` — the same under load [≤ 1.3]; ``overhead_cpu_ratio*`` — the
same in the process's CPU time, which other processes' load disturbs least (on a shared machine
"quiet" is relative); the seconds behind each, the events and the spans received.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENTS = 100_000
ROUNDS = 7


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


def publish(events: list[object], folder: Path, endpoint: str | None) -> tuple[float, float]:
    """Seconds to publish ``events`` and drain the run file (and, with ``endpoint``, to have
    every span accepted there): wall clock, and CPU time of the whole process (every thread:
    the exporter's too)."""
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
    start, cpu = time.perf_counter(), time.process_time()
    publisher = EventPublisher(redactor, RunFileSink(RunWriter(run_id)), listeners)
    for event in events:
        publisher.publish(event.model_copy(update={"run_id": run_id}))  # type: ignore[attr-defined]
    publisher.close()
    if endpoint is not None:
        assert export.flush(120)
    took = (time.perf_counter() - start, time.process_time() - cpu)
    export.shutdown()
    return took


def side_by_side(events: list[object], endpoint: str) -> dict[str, float]:
    """Off and on alternating; the best round of each, wall clock and CPU time."""
    off: list[tuple[float, float]] = []
    on: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(ROUNDS):
            off.append(publish(events, Path(folder), None))
            on.append(publish(events, Path(folder), endpoint))
    return {
        "off_s": min(wall for wall, _ in off),
        "on_s": min(wall for wall, _ in on),
        "off_cpu_s": min(cpu for _, cpu in off),
        "on_cpu_s": min(cpu for _, cpu in on),
    }


def main() -> None:
    from benchmarks.background_load import background_load

    events = make_run()
    # The receiver in its own process: decoding what arrives is not the exporter's cost.
    receiver = subprocess.Popen(
        [sys.executable, "-m", "tests.otlp_sink"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert receiver.stdin is not None and receiver.stdout is not None
    endpoint = receiver.stdout.readline().strip()
    try:
        quiet = side_by_side(events, endpoint)
        print(f"quiet: {quiet}")
        with background_load() as spinners:
            loaded = side_by_side(events, endpoint)
        print(f"{spinners} busy processes: {loaded}")
    finally:
        receiver.stdin.close()
        received = int(receiver.stdout.readline() or 0)
        receiver.wait()
    spans = received // (2 * ROUNDS)
    print(
        json.dumps(
            {
                "overhead_ratio": round(quiet["on_s"] / quiet["off_s"], 3),
                "overhead_ratio_loaded": round(loaded["on_s"] / loaded["off_s"], 3),
                "overhead_cpu_ratio": round(quiet["on_cpu_s"] / quiet["off_cpu_s"], 3),
                "overhead_cpu_ratio_loaded": round(loaded["on_cpu_s"] / loaded["off_cpu_s"], 3),
                **{k: round(v, 3) for k, v in quiet.items()},
                **{f"loaded_{k}": round(v, 3) for k, v in loaded.items()},
                "events": len(events),
                "spans_per_run": spans,
            }
        )
    )


if __name__ == "__main__":
    main()
