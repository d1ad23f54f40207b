"""Per-event cost of publishing: the old inline path against the publisher.

100,000 events of a realistic mix (mostly short text deltas, some tool output, usage, tool
calls) with a redactor that knows a handful of secrets, and one listener that only counts.

* **inline** (what the runner did before): redact the JSON line, write it, flush it and call
  the listener, all on the caller's thread — in the window, the GUI thread.
* **publisher**: stream redaction and the listener on the caller's thread; serialising,
  writing and flushing on the writer thread. Timed twice: the caller's share (what the GUI
  thread pays) and end to end, including :meth:`EventPublisher.close` draining the file.

Each is run :data:`ROUNDS` times and the best round counts (the machine is shared; the best
round is the one least disturbed). Prints a table and, as its last line, a JSON object
(events/s and µs per event for each).
"""

from __future__ import annotations

import json
import os
import tempfile
import time

EVENTS = 100_000
ROUNDS = 3
SECRETS = [
    "sk-proj-0123456789abcdefghijklmnop",
    "ghp_abcdefghijklmnopqrstuvwxyz0123",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "xoxb-1234567890-abcdefghij",
    "hunter2-but-longer-password",
]


def make_events() -> list[object]:
    from core.model.events import (
        TextDelta,
        ToolCallFinished,
        ToolCallOutput,
        ToolCallStarted,
        Usage,
        UsageStats,
    )

    words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "the",
        "lazy",
        "dog;",
        "see",
        "src/core/runner.py:",
        "line",
        "42",
    ]
    events: list[object] = []
    for i in range(EVENTS):
        ts = i / 1000
        kind = i % 20
        if kind < 16:
            text = " ".join(words[(i + k) % len(words)] for k in range(3)) + " "
            events.append(TextDelta(run_id="bench", step=0, ts=ts, text=text))
        elif kind == 16:
            events.append(
                ToolCallStarted(
                    run_id="bench", step=0, ts=ts, call_id=f"c{i}", tool="bash",
                    arguments={"command": "ls -la src"},
                )
            )  # fmt: skip
        elif kind == 17:
            chunk = "drwxr-xr-x 2 user user 4096 Dec  3 10:00 core\n"
            events.append(
                ToolCallOutput(run_id="bench", step=0, ts=ts, call_id=f"c{i - 1}", chunk=chunk)
            )
        elif kind == 18:
            events.append(
                ToolCallFinished(
                    run_id="bench",
                    step=0,
                    ts=ts,
                    call_id=f"c{i - 2}",
                    status="ok",
                    result="core\ngui\n",
                )
            )
        else:
            events.append(
                Usage(
                    run_id="bench", step=0, ts=ts, usage=UsageStats(turns=1, input=900, output=40)
                )
            )
    return events


def main() -> None:
    with tempfile.TemporaryDirectory() as data:
        os.environ["BATON_DATA_DIR"] = data
        from core.record.publisher import EventPublisher, RunFileSink
        from core.record.run_files import RunWriter
        from core.safety.redaction import Redactor

        events = make_events()
        redactor = Redactor(SECRETS)

        def listener(event: object) -> None:
            pass

        inline = caller = total = float("inf")
        for round_number in range(ROUNDS):
            writer = RunWriter(f"inline-{round_number}", redactor)
            start = time.perf_counter()
            for event in events:
                writer.write(event)  # type: ignore[arg-type]
                listener(event)
            inline = min(inline, time.perf_counter() - start)
            writer.close()

            sink = RunFileSink(RunWriter(f"published-{round_number}"))
            publisher = EventPublisher(redactor, sink, [listener])
            start = time.perf_counter()
            for event in events:
                publisher.publish(event)  # type: ignore[arg-type]
            caller = min(caller, time.perf_counter() - start)
            assert publisher.close() is None
            total = min(total, time.perf_counter() - start)
            lines = sink.writer.path.read_text(encoding="utf-8").count("\n")
            assert lines == EVENTS, lines

    result = {
        "events": EVENTS,
        "inline_events_per_s": round(EVENTS / inline),
        "inline_us_per_event": round(inline / EVENTS * 1e6, 2),
        "publisher_caller_events_per_s": round(EVENTS / caller),
        "publisher_caller_us_per_event": round(caller / EVENTS * 1e6, 2),
        "publisher_total_events_per_s": round(EVENTS / total),
        "publisher_total_us_per_event": round(total / EVENTS * 1e6, 2),
    }
    for name, value in result.items():
        print(f"{name:32} {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
