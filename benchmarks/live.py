"""The window while a lot runs at once: it must keep answering at LLM pace.

Run from the repository root: ``python -m benchmarks.live``. Two views are on screen side
by side in one window (offscreen, 2400×900), fed the way the runner feeds them — one listener
call per event, on the GUI thread, at the pace a model streams:

* a :class:`~gui.run.run_view.RunView` of a parallel run of :data:`STEPS` steps, each
  streaming :data:`DELTAS_PER_S` text deltas a second, with a bash call every
  :data:`CALL_EVERY` deltas (started, a few output chunks, finished);
* a :class:`~gui.batch.batch_view.BatchView` showing a batch of :data:`ITEMS` items, all
  running at once, each item's events (two steps of deltas and usage) arriving through the
  batch's listener (``add_event(index, event)``) at :data:`ITEM_DELTAS_PER_S` a second.

A 5 ms timer records the longest gap between its ticks over :data:`SECONDS` seconds — how long
input would have waited. Everything runs twice: alone, then under the standard background load
(:mod:`benchmarks.background_load`, one busy process per core).

Last line, JSON: ``max_stall_ms`` [goal for ``max_stall_ms_loaded``: ≤ 50], ``events``
(delivered), ``p99_gap_ms``, ``gui_cpu_share`` (CPU time of the GUI thread / wall time: near 1,
the views cannot keep up; far below 1 with long gaps, other processes held the core),
``max_turn_cpu_ms`` (the GUI thread's own CPU time in its longest gap between two ticks: what
the views can cut), and the same keys with ``_loaded``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

STEPS = 8
DELTAS_PER_S = 30
CALL_EVERY = 45
"""A bash call after this many deltas of a step (one every 1.5 s)."""
ITEMS = 64
ITEM_DELTAS_PER_S = 10
SECONDS = 8.0
FEED_MS = 10
"""The producer's timer: events due are delivered in turns this far apart (a model's deltas
arrive in small bursts, not one by one)."""

RUN_ID = "run-live"
CWD = "/home/dev/src/project"
WORDS = [
    "The",
    "function",
    "`load`",
    "reads",
    "**settings**",
    "and",
    "validates",
    "them;",
    "then",
    "",
]


class Feed:
    """Events due by a given time: each step (and each batch item) streams at its own pace."""

    def __init__(self, view: Any, batch_model: Any) -> None:
        from core.model.events import PlannedStep, RunStarted, StepStarted

        self.view = view
        self.batch_model = batch_model
        self.sent = [0] * STEPS
        self.item_sent = [0] * ITEMS
        self.events = 0
        agents = [f"worker-{n}" for n in range(STEPS)]
        start = RunStarted(
            run_id=RUN_ID,
            mode="parallel",
            steps=[PlannedStep(agent=a, task=f"{a} task", cwd=CWD) for a in agents],
            cwd=CWD,
            started_at="2026-12-04T10:00:00+00:00",
        )
        self.deliver(start)
        for step, agent in enumerate(agents):
            self.deliver(
                StepStarted(run_id=RUN_ID, step=step, ts=0.0, agent=agent, task="t", cwd=CWD)
            )
        for index in range(ITEMS):
            run = f"item-{index}"
            self.item(index, RunStarted(run_id=run, mode="chain", steps=[], cwd=CWD, started_at=""))
            self.item(
                index, StepStarted(run_id=run, step=0, ts=0.0, agent="scout", task="t", cwd=CWD)
            )

    def deliver(self, event: Any) -> None:
        self.view.add_event(event)
        self.events += 1

    def item(self, index: int, event: Any) -> None:
        self.batch_model.add_event(index, event)
        self.events += 1

    def until(self, elapsed: float) -> None:
        from core.model.events import (
            TextDelta,
            ToolCallFinished,
            ToolCallOutput,
            ToolCallStarted,
            Usage,
            UsageStats,
        )

        due = int(elapsed * DELTAS_PER_S)
        for step in range(STEPS):
            while self.sent[step] < due:
                n = self.sent[step]
                self.sent[step] += 1
                word = WORDS[n % len(WORDS)] + " "
                self.deliver(TextDelta(run_id=RUN_ID, step=step, ts=elapsed, text=word))
                if n % CALL_EVERY == CALL_EVERY - 1:
                    call = f"call-{step}-{n}"
                    self.deliver(
                        ToolCallStarted(
                            run_id=RUN_ID,
                            step=step,
                            ts=elapsed,
                            call_id=call,
                            tool="bash",
                            arguments={"command": f"pytest tests/test_{n}.py"},
                        )
                    )
                    for line in range(5):
                        self.deliver(
                            ToolCallOutput(
                                run_id=RUN_ID,
                                step=step,
                                ts=elapsed,
                                call_id=call,
                                chunk=f"tests/test_{n}.py::test_{line} PASSED\n",
                            )
                        )
                    self.deliver(
                        ToolCallFinished(
                            run_id=RUN_ID,
                            step=step,
                            ts=elapsed,
                            call_id=call,
                            status="ok",
                            result="5 passed",
                        )
                    )
        item_due = int(elapsed * ITEM_DELTAS_PER_S)
        for index in range(ITEMS):
            run = f"item-{index}"
            while self.item_sent[index] < item_due:
                n = self.item_sent[index]
                self.item_sent[index] += 1
                self.item(index, TextDelta(run_id=run, step=0, ts=elapsed, text=WORDS[n % 9]))
                if n % 20 == 19:
                    usage = UsageStats(input=200, output=20, model="test-model")
                    self.item(index, Usage(run_id=run, step=0, ts=elapsed, usage=usage))


def measure() -> dict[str, float]:
    """Both views, fed for :data:`SECONDS`; the longest gap of the 5 ms timer."""
    from PySide6.QtCore import QEvent, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication, QSplitter

    from benchmarks.turn_gaps import TurnGaps
    from core.batch.inputs import BatchItem
    from core.batch.store import BatchSpec, BatchStore
    from gui.batch.batch_view import BatchView
    from gui.run.run_view import RunView

    app = QApplication.instance()
    assert app is not None
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=CWD)
    record = store.create(spec, [BatchItem(args=[f"task {n}"]) for n in range(ITEMS)], "live")
    window = QSplitter()  # one window, both views on screen, as a wide main window shows them
    batch_view = BatchView()
    view = RunView()
    window.addWidget(view)
    window.addWidget(batch_view)
    window.resize(2400, 900)
    window.show()
    batch_view.show_batch(record.id)
    app.processEvents()
    feed = Feed(view, batch_view.model)
    loop = QEventLoop()
    ticks = TurnGaps()
    start, cpu_start = time.perf_counter(), time.thread_time()

    def produce() -> None:
        elapsed = time.perf_counter() - start
        feed.until(min(elapsed, SECONDS))
        if elapsed >= SECONDS:
            loop.quit()

    producer = QTimer()
    producer.setInterval(FEED_MS)
    producer.timeout.connect(produce)
    ticks.start()
    producer.start()
    loop.exec()
    cpu = time.thread_time() - cpu_start
    ticks.stop()
    producer.stop()
    producer.timeout.disconnect(produce)
    window.close()
    window.deleteLater()
    app.processEvents()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    turn_cpu = ticks.longest_cpu()
    gaps = sorted(ticks.walls())
    p99 = gaps[int(len(gaps) * 0.99)] if gaps else 0.0
    figures = {
        "max_stall_ms": round(max(gaps, default=0.0) * 1000, 1),
        "p99_gap_ms": round(p99 * 1000, 1),
        "events": feed.events,
        "gui_cpu_share": round(cpu / SECONDS, 2),
        "max_turn_cpu_ms": round(turn_cpu * 1000, 1),
    }
    print(
        f"{feed.events:,} events in {SECONDS:g} s ({STEPS} steps at {DELTAS_PER_S}/s, "
        f"{ITEMS} items at {ITEM_DELTAS_PER_S}/s): longest gap {figures['max_stall_ms']} ms, "
        f"99th percentile {figures['p99_gap_ms']} ms; the GUI thread used "
        f"{figures['gui_cpu_share']:.0%} of a core, {figures['max_turn_cpu_ms']} ms of CPU in "
        "its longest turn",
        flush=True,
    )
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="baton-live-") as scratch:
        os.environ["BATON_CONFIG_DIR"] = str(Path(scratch) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(scratch) / "data")
        import gui  # noqa: F401  (PySide6 work-around first)
        from benchmarks.background_load import quiet_and_loaded
        from core.model.collection import freeze_start_up
        from gui.app import create_application
        from gui.run.markdown_stream import warm_up

        _app = create_application([])  # alive as long as this function runs
        warm_up()
        freeze_start_up()  # as the window does once it has started
        print(json.dumps(quiet_and_loaded(measure)))


if __name__ == "__main__":
    main()
