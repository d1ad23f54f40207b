"""100,000 events through the run view model and its widgets, against ``json.loads`` alone.

The run is a 3-step chain of text deltas, thinking, and tool calls with streamed output
(``tests/gui/run_events.flood``). A :class:`~gui.run_view.RunView` is shown offscreen; a
producer callback on the event loop hands it the events in chunks of 1,000 as fast as it can
(as the asyncio side would during a flood), while a 5 ms timer records the longest gap between
two of its ticks: that gap is how long input would have waited. The clock stops when the final
state is on screen (run finished, every queued event applied, pending renders done).

Baseline: ``json.loads`` of the same NDJSON, line by line — reading the data and nothing more.
Printed last, as JSON: ``ratio`` (view / baseline; target ≤ 5), ``max_stall_ms`` (target ≤ 50)
and ``peak_rss_mb`` (whole process; target ≤ 400), with the raw times. ``max_stall_cpu_ms`` is
the CPU time this thread spent inside the longest gap: on a busy shared machine the wall-clock
gap also holds time other processes ran, and this figure shows how much was Baton's own.
Live events are already objects, so parsing them is not part of the view's cost; ``parse_s``
(pydantic, for a saved run) is shown for reference.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "gui"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

EVENTS = 100_000
CHUNK = 1_000
TICK_MS = 5


def main() -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication
    from run_events import flood

    import gui  # noqa: F401  (PySide6 work-around first)
    from core.events import event_from_json, event_to_json
    from gui.run_view import RunView
    from gui.theme import apply_theme

    events = flood(EVENTS)
    lines = [event_to_json(event) for event in events]
    print(f"{len(events):,} events, {sum(map(len, lines)) / 1e6:.1f} MB of NDJSON")

    start = time.perf_counter()
    for line in lines:
        json.loads(line)
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    for line in lines[:20_000]:
        event_from_json(line)
    parse = (time.perf_counter() - start) * len(lines) / 20_000
    print(f"json.loads: {baseline:.3f} s; pydantic parse (estimated): {parse:.3f} s")

    app = QApplication.instance() or QApplication([])
    apply_theme(app)  # type: ignore[arg-type]
    view = RunView()
    view.resize(1280, 860)
    view.show()
    app.processEvents()

    loop = QEventLoop()
    gaps: list[float] = []
    cpu_gaps: list[float] = []
    last_tick = [0.0, 0.0]
    fed = [0]

    def tick() -> None:
        now, cpu_now = time.perf_counter(), time.thread_time()
        if last_tick[0]:
            gaps.append(now - last_tick[0])
            cpu_gaps.append(cpu_now - last_tick[1])
        last_tick[0], last_tick[1] = now, cpu_now

    def produce() -> None:
        view.add_events(events[fed[0] : fed[0] + CHUNK])
        fed[0] += CHUNK
        if fed[0] >= len(events):
            producer.stop()

    def check_done() -> None:
        state = view.state()
        if fed[0] >= len(events) and view.model.pending_count() == 0 and state.status != "running":
            loop.quit()

    ticker = QTimer()
    ticker.setInterval(TICK_MS)
    ticker.timeout.connect(tick)
    producer = QTimer()
    producer.setInterval(0)
    producer.timeout.connect(produce)
    view.model.batchApplied.connect(lambda _count: QTimer.singleShot(0, check_done))

    start = time.perf_counter()
    cpu_start = time.process_time()
    ticker.start()
    producer.start()
    loop.exec()
    app.processEvents()  # the last renders scheduled by the final batch
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    ticker.stop()

    widgets = sum(len(pane.item_widgets()) for pane in view.panes())
    items = sum(len(step.items) for step in view.state().steps)
    max_stall = max(gaps) * 1000 if gaps else 0.0
    max_stall_cpu = max(cpu_gaps) * 1000 if cpu_gaps else 0.0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"view: {elapsed:.3f} s wall, {cpu:.3f} s CPU; {items:,} items kept, {widgets} widgets; "
        f"{len(gaps)} ticks, longest gap {max_stall:.1f} ms ({max_stall_cpu:.1f} ms of it CPU); "
        f"peak RSS {rss_mb:.0f} MB"
    )
    result = {
        "events": len(events),
        "ratio": round(elapsed / baseline, 2),
        "max_stall_ms": round(max_stall, 1),
        "max_stall_cpu_ms": round(max_stall_cpu, 1),
        "peak_rss_mb": round(rss_mb, 1),
        "view_s": round(elapsed, 3),
        "json_loads_s": round(baseline, 3),
        "parse_s": round(parse, 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
