"""CPU cost of redaction per event: the stream redactor over the publisher benchmark's event
mix (mostly short text deltas), with the secrets it knows — each now also looked for in its
encoded forms — and :class:`~core.safety.redaction.OutputJoiner` over tool outputs.

CPU time (``process_time``), best of :data:`ROUNDS`, so a busy shared machine disturbs it
less than wall time. Prints, as its last line, JSON: ``stream_us_per_event`` (every event
through :class:`~core.safety.redaction.StreamRedactor`), ``scrub_us_per_kb`` (whole-text scrubbing
of 1 MB of tool output) and ``joined_us_per_output`` (the per-step join of tool outputs).
"""

from __future__ import annotations

import json
import time

from benchmarks.publisher import EVENTS, SECRETS, make_events

ROUNDS = 5


def best(run: object) -> float:
    assert callable(run)
    times = []
    for _ in range(ROUNDS):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    from core.safety.redaction import Redactor, StreamRedactor

    redactor = Redactor(SECRETS)
    events = make_events()

    def stream() -> None:
        streaming = StreamRedactor(redactor)
        for event in events:
            streaming.feed(event)  # type: ignore[arg-type]
        streaming.flush()

    output = "drwxr-xr-x 2 user user 4096 Dec  3 10:00 core/runner.py line 42\n" * 16_000

    def scrub() -> None:
        redactor.scrub(output)

    outputs = [output[i * 4000 : (i + 1) * 4000] for i in range(200)]

    def joined() -> None:
        try:
            from core.safety.redaction import OutputJoiner
        except ImportError:  # before the joiner existed
            return
        joiner = OutputJoiner(redactor)
        for piece in outputs:
            joiner.scrub(piece)

    result = {
        "events": EVENTS,
        "stream_us_per_event": round(best(stream) / EVENTS * 1e6, 2),
        "scrub_us_per_kb": round(best(scrub) / (len(output) / 1000) * 1e6, 2),
        "joined_us_per_output": round(best(joined) / len(outputs) * 1e6, 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
