"""Screenshot of the Batches view for the README: a triage batch part-way through.

Records a batch of ``scout-and-plan`` over 16 issues in temporary folders — ten items done and
two failed (ordinary run files and index rows, as ``baton batch`` writes them), four still to
go — then opens the real window on the Batches view, streams the events of two items that are
running now into the view (what a live batch delivers), and captures the screen::

    Xvfb :95 -screen 0 1400x820x24 &
    DISPLAY=:95 .venv/bin/python docs/make_batch_screenshot.py [OUTPUT.png]

The capture is ``import -window root`` (ImageMagick) when available, else the window's own
grab; the default output is ``docs/screenshots/batch.png``.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import open_window, save_screen, scratch_home  # noqa: E402

SCRATCH = scratch_home("baton-batch-demo")

from PySide6.QtCore import QTimer  # noqa: E402

from core.batch.inputs import BatchItem  # noqa: E402
from core.batch.store import BatchSpec, BatchStore  # noqa: E402
from core.model.events import (  # noqa: E402
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    Usage,
    UsageStats,
)
from core.record.run_files import RunIndex, RunWriter  # noqa: E402
from gui.app import create_application  # noqa: E402
from gui.batch.batch_view import BatchView  # noqa: E402
from gui.qt_asyncio import run_event_loop  # noqa: E402

ISSUES = [
    "#412 login redirect loops after password reset",
    "#415 export of runs drops non-ASCII names",
    "#418 --verbose flag is ignored by 'runs list'",
    "#421 retry on 429 ignores Retry-After",
    "#423 dark mode: diff colours unreadable",
    "#426 history paging skips the last page",
    "#427 bash tool output capped too early",
    "#430 trust dialog shows stale hashes",
    "#431 Ollama model list times out on first start",
    "#433 documents search misses CJK titles",
    "#436 preset editor loses the argument hint",
    "#438 approval rule for git diff too broad",
    "#440 start-up slow with 1,000 agents",
    "#441 Windows: sandbox note wording",
    "#444 crash when the run folder is deleted",
    "#447 usage chart legend overlaps",
]
FAILED = {3: "HTTP 429 from the provider after 5 retries", 8: "the step ran longer than 300 s"}
RUNNING = (12, 13)
MODEL = "qwen2.5-coder:7b"


def usage(prompt: int, answer: int) -> UsageStats:
    return UsageStats(turns=1, input=prompt, output=answer, cost=0.0, model=MODEL)


def item_events(run_id: str, batch_id: str, index: int, issue: str) -> list[Event]:
    """A finished item's run, as the runner records it (two steps, or one that failed)."""
    steps = [
        PlannedStep(agent="scout", task=f"Find all code relevant to: {issue}", cwd=str(SCRATCH)),
        PlannedStep(
            agent="planner", task=f'Create an implementation plan for "{issue}"…', cwd=str(SCRATCH)
        ),
    ]
    started = datetime.now(UTC).isoformat(timespec="seconds")
    events: list[Event] = [
        RunStarted(
            run_id=run_id,
            mode="chain",
            preset="scout-and-plan",
            args=[issue],
            steps=steps,
            cwd=str(SCRATCH),
            started_at=started,
            batch_id=batch_id,
            batch_item=index,
        ),
    ]
    total, ts = UsageStats(), 0.0
    for number, step in enumerate(steps):
        ts += 0.3
        events.append(
            StepStarted(
                run_id=run_id,
                step=number,
                ts=ts,
                agent=step.agent,
                task=step.task,
                model=MODEL,
                cwd=str(SCRATCH),
            )
        )
        spent = usage(2400 + 97 * index + 900 * number, 310 + 23 * index)
        ts += 6.5 + (index % 5) * 1.7 + number * 4
        total = total + spent
        events.append(Usage(run_id=run_id, step=number, ts=ts, usage=spent))
        if index in FAILED:
            error = FAILED[index]
            events.append(
                StepFinished(
                    run_id=run_id, step=number, ts=ts, status="error", error=error, usage=spent
                )
            )
            events.append(
                RunFinished(
                    run_id=run_id,
                    ts=ts,
                    status="error",
                    usage=total,
                    error=f"Chain stopped at step 1 (scout): {error}",
                )
            )
            return events
        output = (
            f"Files: auth/session.py, web/routes.py — {issue[5:]}"
            if number == 0
            else f"## Plan\n1. Reproduce {issue.split()[0]} with a test.\n2. Fix it where "
            f"the scout pointed.\n3. Note it in the changelog."
        )
        events.append(
            StepFinished(run_id=run_id, step=number, ts=ts, status="ok", output=output, usage=spent)
        )
    events.append(RunFinished(run_id=run_id, ts=ts, status="ok", usage=total))
    return events


def record_batch() -> tuple[str, list[list[Event]]]:
    """The batch record with its finished items' runs; returns the id and the running items'
    first events (to stream into the view)."""
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(SCRATCH))
    record = store.create(spec, [BatchItem(args=[issue]) for issue in ISSUES], "issues.jsonl")
    index = RunIndex()
    live = []
    for number, issue in enumerate(ISSUES):
        run_id = f"20261203-1{number:02d}000-demo{number:02d}"
        events = item_events(run_id, record.id, number, issue)
        if number in RUNNING:
            live.append(events[:5] if number == RUNNING[0] else events[:2])
            continue
        if number > RUNNING[-1]:
            continue  # not started yet
        writer = RunWriter(run_id)
        for event in events:
            writer.write(event)
        writer.close()
        start, end = events[0], events[-1]
        assert isinstance(start, RunStarted) and isinstance(end, RunFinished)
        index.started(start, writer.path)
        index.finished(end, start.started_at)
        store.finished(record.id, number, run_id, end.status)
    return record.id, live


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs/screenshots/batch.png"
    _batch_id, live = record_batch()
    app = create_application([])
    window = open_window(SCRATCH, "batches", 1400, 820)
    view = window.stack.currentWidget()
    assert isinstance(view, BatchView)

    def stream() -> None:
        for events in live:
            start = events[0]
            assert isinstance(start, RunStarted) and start.batch_item is not None
            for event in events:
                view.model.add_event(start.batch_item, event)
        view.model.flush()
        view.select(4)

    def capture() -> None:
        save_screen(window, output)
        window.close()
        app.quit()

    QTimer.singleShot(400, stream)
    QTimer.singleShot(1200, capture)
    return run_event_loop(app)


if __name__ == "__main__":
    sys.exit(main())
