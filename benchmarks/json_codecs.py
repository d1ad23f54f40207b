"""JSON codecs on Baton's event lines: the stdlib ``json`` against ``orjson`` and ``msgspec``.

Run from the repository root: ``python -m benchmarks.json_codecs``. ``orjson`` and
``msgspec`` are not Baton dependencies: install them into the venv to measure them (a codec
that is missing is reported as skipped).

The lines are Baton's own: the events of :func:`benchmarks.publisher.make_events` (text
deltas, tool calls and their output, usage) plus the events a batch item of
``scout-and-plan`` publishes (run and step starts with their planned steps, usage, step and
run endings). Side by side, in one run, each codec:

* **encode** — the event as a ``dict`` (``model_dump(mode="json")``, made once, outside the
  timing) to one compact line;
* **decode** — the line back to a ``dict``.

Baton itself does neither on its per-event path: an event becomes its line through
pydantic's serializer (``model_dump_json``, in Rust) and a line an event through pydantic's
validator (``validate_json``); those two are timed too (``pydantic_*``), as the baseline a
codec would have to beat — encoding through a codec needs the ``dict`` first
(``model_dump``), which ``pydantic_dump_then_*`` adds. Each is timed :data:`ROUNDS` times and
the best round counts (a shared machine). Last line: one JSON object (µs per event, and the
ratios of each codec to the stdlib).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from benchmarks.publisher import make_events
from core.model.events import (
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    Usage,
    UsageStats,
    event_from_json,
)

ROUNDS = 5


def batch_item_events(items: int) -> list[Event]:
    """The events of ``items`` runs of a two-step chain, as a batch item publishes them."""
    events: list[Event] = []
    usage = UsageStats(turns=1, input=1200, output=60, model="test-model")
    for item in range(items):
        run = f"20261205-083000-{item:06x}"
        steps = [
            PlannedStep(agent=a, task=f"task {item}", model="test-model", backend="baton", cwd="/w")
            for a in ("scout", "planner")
        ]
        events.append(
            RunStarted(
                run_id=run, ts=0.0, mode="chain", preset="scout-and-plan", args=[f"task {item}"],
                steps=steps, cwd="/w", started_at="2026-12-05T08:30:00+00:00",
                batch_id="b1", batch_item=item,
            )
        )  # fmt: skip
        for step in (0, 1):
            events.append(
                StepStarted(
                    run_id=run, step=step, ts=0.1, agent=steps[step].agent, task="t", cwd="/w"
                )
            )
            events.append(Usage(run_id=run, step=step, ts=0.2, usage=usage))
            events.append(
                StepFinished(
                    run_id=run, step=step, ts=0.3, status="ok",
                    output="## Files Retrieved\n- none needed", usage=usage,
                )
            )  # fmt: skip
        events.append(RunFinished(run_id=run, ts=0.4, status="ok", usage=usage + usage))
    return events


def best(fn: Callable[[], object]) -> float:
    """The best of :data:`ROUNDS` timings of ``fn``, in seconds (the garbage collector off
    while timed, as ``timeit`` does: the lists of results would otherwise set it off)."""
    times = []
    for _ in range(ROUNDS):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def encoding(encode: Callable[[Any], bytes], values: list[Any]) -> Callable[[], object]:
    return lambda: [encode(value) for value in values]


def decoding(decode: Callable[[bytes], Any], lines: list[bytes]) -> Callable[[], object]:
    return lambda: [decode(line) for line in lines]


def codecs() -> dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]]:
    """Encode (to UTF-8 bytes, compact) and decode of each codec that is installed."""
    found: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = {
        "json": (
            lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(),
            json.loads,
        )
    }
    try:
        import orjson

        found["orjson"] = (orjson.dumps, orjson.loads)
    except ImportError:
        print("orjson: skipped (not installed)")
    try:
        import msgspec

        found["msgspec"] = (msgspec.json.encode, msgspec.json.decode)
    except ImportError:
        print("msgspec: skipped (not installed)")
    return found


def main() -> None:
    events: list[BaseModel] = [*make_events(), *batch_item_events(2000)]  # type: ignore[list-item]
    count = len(events)
    dicts = [event.model_dump(mode="json") for event in events]
    lines = [event.model_dump_json().encode() for event in events]
    per_event = 1e6 / count
    results: dict[str, float] = {"events": count}

    results["pydantic_encode_us"] = best(lambda: [e.model_dump_json() for e in events]) * per_event
    results["pydantic_decode_us"] = best(lambda: [event_from_json(line) for line in lines]) * (
        per_event
    )
    dump = best(lambda: [e.model_dump(mode="json") for e in events]) * per_event
    for name, (encode, decode) in codecs().items():
        pairs = zip(dicts, lines, strict=True)
        assert all(decode(encode(d)) == json.loads(line) for d, line in pairs)
        results[f"{name}_encode_us"] = best(encoding(encode, dicts)) * per_event
        results[f"{name}_decode_us"] = best(decoding(decode, lines)) * per_event
        results[f"pydantic_dump_then_{name}_us"] = dump + results[f"{name}_encode_us"]
    for name in ("orjson", "msgspec"):
        for way in ("encode", "decode"):
            if f"{name}_{way}_us" in results:
                results[f"{name}_{way}_vs_json"] = (
                    results[f"json_{way}_us"] / results[f"{name}_{way}_us"]
                )
    print(f"{count} events; µs per event (best of {ROUNDS})")
    for key, value in results.items():
        if key.endswith("_us"):
            print(f"  {key:32} {value:7.3f}")
        elif key.endswith("_vs_json"):
            print(f"  {key:32} {value:7.2f}× faster than json")
    print(json.dumps({k: round(v, 3) for k, v in results.items()}))


if __name__ == "__main__":
    main()
