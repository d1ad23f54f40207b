"""Recording an item that runs elsewhere: its events in, an ordinary run file and index row out.

A remote worker runs the core :class:`~core.run.runner.Runner` with ``record=False`` and sends
its events back; the supervisor publishes each into a :class:`RemoteRecording`, which does
what the runner does for a local run — the liveness lock, the run file (group-flushed per loop turn)
(through the same :class:`~core.record.publisher.EventPublisher`, so redaction and subscriber
isolation are the same), the index row at ``run_started`` and ``run_finished``. So History,
``baton runs`` and the window cannot tell where an item ran.

If the worker dies, :meth:`RemoteRecording.close` without a ``run_finished`` seen ends the
run file itself: what was open (approvals, tool calls, running steps) is closed with the
reason, then ``run_finished`` ``error`` with the reason and the usage received so far.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from core.batch.jobs import ItemJob, ItemOutcome
from core.config.settings import Settings
from core.model.events import (
    ApprovalResolved,
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCallFinished,
)
from core.record.liveness import LivenessLock
from core.record.publisher import EventListener, EventPublisher, RunFileSink
from core.record.run_files import RunIndex, RunWriter
from core.record.run_state import RunState
from core.safety.redaction import Redactor
from core.telemetry.export import traces_for_run

WORKER_LOST = "the worker running this item ended before the item did"


class RemoteRecording:
    """One remote item's run file and index row. Use from one thread (the batch's loop):
    :meth:`publish` each event in order, then :meth:`close` once."""

    def __init__(
        self, job: ItemJob, settings: Settings, listeners: Iterable[EventListener] = ()
    ) -> None:
        self.job = job
        writer = RunWriter(job.run_id)
        self._path = writer.path
        self._lock: LivenessLock | None = LivenessLock(writer.path)
        subscribers = list(listeners)
        traces = traces_for_run(settings)  # exported here, where the run file is written
        if traces is not None and traces.subscriber is not None:
            subscribers.append(traces.subscriber)
        self._publisher = EventPublisher(
            Redactor.for_settings(settings), RunFileSink(writer), subscribers
        )
        self._index = RunIndex()
        self._state = RunState()
        self._start: RunStarted | None = None
        self._end: RunFinished | None = None
        self._output = ""
        self._structured: dict[str, Any] | None = None

    def publish(self, event: Event) -> None:
        """Record one event of the item's run (already in order, from the worker)."""
        if self._end is not None:
            return  # nothing follows run_finished in a run file
        self._state.apply(event)
        if isinstance(event, RunStarted):
            self._start = event
            self._index.started(self._publisher.redacted(event), self._path)
        elif isinstance(event, StepFinished):
            self._output = event.output
            self._structured = event.structured
        elif isinstance(event, RunFinished):
            self._end = self._publisher.redacted(event)
        self._publisher.publish(event)

    def close(self, reason: str = WORKER_LOST) -> ItemOutcome:
        """Finish the recording. Without a ``run_finished`` from the worker, the run ends
        ``error`` with ``reason`` (the worker died or was cut off). Returns the outcome."""
        if self._start is None:
            self.publish(self._stand_in_start())
        if self._end is None:
            self._close_steps(reason)
            self.publish(
                RunFinished(
                    run_id=self.job.run_id,
                    ts=self._state.elapsed,
                    status="error",
                    usage=self._state.usage,
                    error=reason,
                )
            )
        assert self._start is not None and self._end is not None
        self._publisher.close()
        # On failure the lock still goes below: the row then reads "interrupted".
        with suppress(sqlite3.Error):
            self._index.finished(
                self._end, self._start.started_at, by_agent=self._state.usage_by_agent()
            )
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        return ItemOutcome(
            index=self.job.index,
            run_id=self.job.run_id,
            status=self._end.status,
            error=self._end.error,
            usage=self._end.usage,
            output=self._output,
            duration_s=self._end.ts,
            structured=self._structured,
        )

    def _close_steps(self, reason: str) -> None:
        """End what the worker left open — approvals waiting, tool calls, running steps —
        as the runner ends them when a step is cut short, so the run reads as it stopped."""
        ts = self._state.elapsed
        run_id = self.job.run_id
        for step in self._state.steps:
            if step.phase not in ("running", "waiting"):
                continue
            for request_id in sorted(step.pending_approvals):
                self.publish(
                    ApprovalResolved(
                        run_id=run_id,
                        step=step.index,
                        ts=ts,
                        request_id=request_id,
                        decision="deny",
                        reason=reason,
                        automatic=True,
                        decided_by="cancel",
                    )
                )
            for call in step.open_calls():
                self.publish(
                    ToolCallFinished(
                        run_id=run_id,
                        step=step.index,
                        ts=ts,
                        call_id=call.call_id,
                        status="aborted",
                        result=f"(aborted: {reason})",
                    )
                )
            self.publish(
                StepFinished(
                    run_id=run_id,
                    step=step.index,
                    ts=ts,
                    status="error",
                    output=step.text_since_last_tool_call(),
                    error=reason,
                    usage=step.usage,
                )
            )

    def _stand_in_start(self) -> RunStarted:
        """A ``run_started`` for an item whose worker died before sending its own."""
        return RunStarted(
            run_id=self.job.run_id,
            mode="chain",
            preset=self.job.spec.preset,
            args=self.job.item.args,
            steps=[],
            cwd=self.job.spec.cwd,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            batch_id=self.job.batch_id,
            batch_item=self.job.index,
        )
