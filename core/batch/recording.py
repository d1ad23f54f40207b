"""Recording an item that runs elsewhere: its events in, an ordinary run file and index row out.

A remote worker runs the core :class:`~core.run.runner.Runner` with ``record=False`` and sends
its events back; the supervisor publishes each into a :class:`RemoteRecording`, which records
them with the class a local run records itself with,
:class:`~core.record.run_recording.RunRecording` — the liveness lock, the redacting publisher
(the run file group-flushed per loop turn, the subscribers isolated), the index row at
``run_started`` and ``run_finished``, a run file that cannot be written ending the run
``error`` — and makes the item's outcome as the local executor does
(:meth:`~core.batch.jobs.ItemOutcome.ended`). So History, ``baton runs``, the batch store and
the window cannot tell where an item ran.

If the worker dies, :meth:`RemoteRecording.close` without a ``run_finished`` seen ends the
run file itself: what was open (approvals, tool calls, running steps) is closed with the
reason, then ``run_finished`` ``error`` with the reason and the usage received so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from core.backends.base import RunClock
from core.batch.jobs import ItemJob, ItemOutcome, OutputKeeper
from core.config.settings import Settings
from core.model.events import (
    ApprovalResolved,
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCallFinished,
)
from core.record.publisher import EventListener
from core.record.run_recording import RunRecording
from core.safety.redaction import Redactor
from core.telemetry.export import traces_for_run

WORKER_LOST = "the worker running this item ended before the item did"


class RemoteRecording:
    """One remote item's run file and index row. Use from one thread (the batch's loop):
    :meth:`publish` each event in order, then :meth:`close` once."""

    def __init__(
        self,
        job: ItemJob,
        settings: Settings,
        listeners: Iterable[EventListener] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.job = job
        self._kept = OutputKeeper()
        subscribers: list[EventListener] = [self._kept, *listeners]
        traces = traces_for_run(settings)  # exported here, where the run file is written
        if traces is not None and traces.subscriber is not None:
            subscribers.append(traces.subscriber)
        self.stop: Callable[[], None] = lambda: None
        """Stops the item where it runs (the relay sets its worker's cancel): called once
        when the run file cannot be written, as a local run stops itself then."""
        # The clock is the worker's: every event comes timed, the ending included.
        self._recording = RunRecording(job.run_id, RunClock(), subscribers, lambda: self.stop())
        self._recording.open(settings, record=True, redactor=redactor)
        self._start: RunStarted | None = None
        self._end: RunFinished | None = None

    def publish(self, event: Event) -> None:
        """Record one event of the item's run (already in order, from the worker)."""
        if self._end is not None:
            return  # nothing follows run_finished in a run file
        if isinstance(event, RunStarted):
            self._start = event
            self._recording.started(event)
        elif isinstance(event, RunFinished):
            if self._start is None:  # not from a worker's runner; still a whole run file
                self.publish(self._stand_in_start())
            assert self._start is not None
            self._end = self._recording.ended(event, self._start)
        else:
            self._recording.emit(event)

    def close(self, reason: str = WORKER_LOST) -> ItemOutcome:
        """Finish the recording. Without a ``run_finished`` from the worker, the run ends
        ``error`` with ``reason`` (the worker died or was cut off). Returns the outcome."""
        if self._start is None:
            self.publish(self._stand_in_start())
        if self._end is None:
            self._close_steps(reason)
            state = self._recording.state
            self.publish(
                RunFinished(
                    run_id=self.job.run_id,
                    ts=state.elapsed,
                    status="error",
                    usage=state.usage,
                    error=reason,
                )
            )
        assert self._end is not None
        return ItemOutcome.ended(self.job, self._end, self._kept)

    def _close_steps(self, reason: str) -> None:
        """End what the worker left open — approvals waiting, tool calls, running steps —
        as the runner ends them when a step is cut short, so the run reads as it stopped."""
        ts = self._recording.state.elapsed
        run_id = self.job.run_id
        for step in self._recording.state.steps:
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
