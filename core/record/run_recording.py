"""What a run leaves behind: its events published and folded, its run file, index row and
liveness lock.

:class:`RunRecording` is the one place a :class:`core.run.runner.Runner` sends events through.
Each event is published (:class:`~core.record.publisher.EventPublisher`: redaction, the run
file flushed once per event-loop turn, the isolated subscribers) and, as published, folded
into the run's one :class:`~core.record.run_state.RunState` (per-step usage, open tool calls,
partial text: what the runner decides with). That state is the redacted run, so the window
reads it too instead of folding the events again (architecture: *Events*).

A recorded run holds a liveness lock (:mod:`core.record.liveness`) until its ending is indexed, so a
run whose process died reads ``interrupted``, never ``running`` forever. A run file that cannot
be written (disk full) stops the run through ``on_failure``: it then ends ``error`` with the
reason, in the index too.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from core.backends.base import RunClock
from core.config.settings import Settings
from core.model.budget import BudgetAsker, BudgetQuestion, Caps
from core.model.collection import weakly
from core.model.events import (
    BudgetAnswered,
    BudgetAsked,
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCallFinished,
    UsageStats,
)
from core.record.liveness import LivenessLock
from core.record.publisher import EventListener, EventPublisher, RunFileSink
from core.record.run_files import RunIndex, RunWriter
from core.record.run_state import RunState
from core.safety.redaction import Redactor

_log = logging.getLogger(__name__)


def new_run_id() -> str:
    """A run's id: sortable by start time, unique enough for one person's machine."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class RunRecording:
    """One run's event path, from before it starts until its ending is indexed.

    Until :meth:`open` the events reach ``listeners`` only (nothing can be redacted or written
    yet); ``listeners`` is used as given, so subscribers appended to it later are called too.
    Not thread-safe: emit from the run's event loop.
    """

    def __init__(
        self,
        run_id: str,
        clock: RunClock,
        listeners: list[EventListener],
        on_failure: Callable[[], None],
    ) -> None:
        self.run_id = run_id
        self.state = RunState()
        """Everything the run published (redacted), folded: per-step usage, open tool calls,
        partial text. Shared read-only with the run's window (same thread: the run's loop)."""
        self.write_error: str | None = None
        """Why the run file could not be written, once that happened (the run stops)."""
        self._clock = clock
        self._listeners = listeners
        self._on_failure = on_failure
        self._publisher = EventPublisher(listeners=listeners, state=self.state)
        self._redactor: Redactor | None = None
        self._lock: LivenessLock | None = None
        self._index: RunIndex | None = None
        self._ended = False

    # ---------------------------------------------------------------------------- public API

    @property
    def redactor(self) -> Redactor:
        """The run's secrets (after :meth:`open`): what else keeps the run's data — its
        checkpoints' file names — hides the same values."""
        if self._redactor is None:
            raise RuntimeError("the recording is not open yet")
        return self._redactor

    def open(self, settings: Settings, *, record: bool, redactor: Redactor | None = None) -> None:
        """Start redacting with the run's secrets; when ``record``, open the run file (with its
        liveness lock) and the index. Call from the run's event loop. ``redactor``: the
        secrets gathered already for runs sharing ``settings`` (a batch's items), else they
        are gathered now (settings, environment, the known projects' MCP files)."""
        self._redactor = redactor or Redactor.for_settings(settings)
        self._publisher = EventPublisher(self._redactor, None, self._listeners, self.state)
        if not record:
            return
        writer = RunWriter(self.run_id)  # the publisher redacts before the writer sees events
        self._lock = LivenessLock(writer.path)
        loop = asyncio.get_running_loop()
        stop = weakly(self._failed)  # the sink is the recording's: it must not keep it alive

        def failed(error: OSError) -> None:  # inside publish or a flush: stop the run later
            loop.call_soon_threadsafe(stop, writer.path, error)

        self._publisher.sink = RunFileSink(writer, failed)
        self._index = RunIndex()

    @property
    def run_file(self) -> Path | None:
        """The file the run is written to (None: not recorded, or not open yet) — the one
        made at its start, wherever the data folder is by now."""
        sink = self._publisher.sink
        return sink.writer.path if sink is not None else None

    def scrub(self, text: str) -> str:
        """``text`` without the run's secrets (what tools store, e.g. document bodies)."""
        return self._redactor.scrub(text) if self._redactor is not None else text

    def emit(self, event: Event) -> None:
        """Publish the event (redacted) to the run file, :attr:`state` and the subscribers;
        see :mod:`core.record.publisher`."""
        self._publisher.publish(event)

    def settle(self, step: int) -> None:
        """The step ended: publish what redaction still holds of its streams, so
        :attr:`state` has all of its text."""
        self._publisher.settle(self.run_id, step)

    def started(self, start: RunStarted) -> None:
        """Emit ``start`` and index the run as running (in this loop turn's group commit of
        the index, with the start as published). An index that cannot be written stops the
        run, as a run file that cannot be: it ends ``error`` with the reason."""
        published = self._publisher.publish_whole(start)
        path = self.run_file
        if self._index is not None and path is not None:
            self._index.started_soon(published, path, self._start_indexed)

    def finish(
        self,
        status: Literal["ok", "error", "aborted"],
        error: str | None,
        start: RunStarted,
    ) -> RunFinished:
        """Emit the ending, drain the run file, index the ending and release the lock.
        Returns the ending as published (redacted; ``error`` when the run file failed)."""
        finished = RunFinished(
            run_id=self.run_id,
            ts=self._clock.now(),
            status=status,
            usage=self.state.usage,
            error=error,
        )
        return self.ended(finished, start)

    def ended(self, finished: RunFinished, start: RunStarted) -> RunFinished:
        """:meth:`finish` with the ending made elsewhere: a remote worker's run sent its own
        (:class:`core.batch.recording.RemoteRecording`), recorded here as a local run's is."""
        self._ended = True
        if self.write_error is not None:
            finished = finished.model_copy(update={"status": "error", "error": self.write_error})
        finished = self._publisher.publish_whole(finished)
        write_error = self._publisher.close()
        if write_error is not None and self.write_error is None:  # the very last lines
            path = self.run_file
            assert path is not None
            self._failed(path, write_error)
            finished = finished.model_copy(update={"status": "error", "error": self.write_error})
        if self._index is None:
            self._release_lock()
            return finished
        # The lock is held until the row says how the run ended: a reader that saw the row
        # "running" with no live owner would take it for a crash.
        self._index.finished_soon(
            finished, start.started_at, by_agent=self.state.usage_by_agent(), done=self._end_indexed
        )
        return finished

    def step_finished(
        self,
        step: int,
        status: Literal["ok", "error", "aborted"],
        output: str,
        error: str | None,
        structured: dict[str, Any] | None = None,
        session: str | None = None,
    ) -> StepFinished:
        """Emit and return the step's ending, with the usage the step's events added up to
        (and, in a graph run, the node, iteration and branch its start named)."""
        known = self.state.step(step)
        event = StepFinished(
            run_id=self.run_id,
            step=step,
            ts=self._clock.now(),
            status=status,
            output=output,
            error=error,
            usage=known.usage if known is not None else UsageStats(),
            structured=structured,
            session=session,
            node=known.node if known is not None else None,
            iteration=known.iteration if known is not None else None,
            branch=known.branch if known is not None else None,
        )
        self.emit(event)
        return event

    def close_open_calls(self, step: int) -> None:
        """Close the step's tool calls still open as aborted, so no backend has to."""
        for call in self.state.steps[step].open_calls():
            self.emit(
                ToolCallFinished(
                    run_id=self.run_id,
                    step=step,
                    ts=self._clock.now(),
                    call_id=call.call_id,
                    status="aborted",
                    result="(aborted: the step ended before this call did)",
                )
            )

    def usage_of(self, step: int) -> tuple[UsageStats, UsageStats]:
        """The run's usage so far and step ``step``'s (what a budget is checked against)."""
        return self.state.usage, self.state.steps[step].usage

    def recorded(self, ask: BudgetAsker) -> BudgetAsker:
        """``ask``, with the question and its answer in the run: the run file keeps who spent
        more, and the step shows "waiting for you" while a person decides."""

        async def recorded(question: BudgetQuestion) -> Caps | None:
            self.emit(
                BudgetAsked(
                    run_id=self.run_id,
                    step=question.step,
                    ts=self._clock.now(),
                    scope="run" if question.scope == "run" else "step",
                    kind=question.kind,
                    reason=question.reason,
                )
            )
            answer: Caps | None = None
            try:
                answer = await ask(question)
            finally:
                self.emit(
                    BudgetAnswered(
                        run_id=self.run_id,
                        step=question.step,
                        ts=self._clock.now(),
                        stopped=answer is None,
                        max_cost=answer.max_cost if answer is not None else None,
                        max_tokens=answer.max_tokens if answer is not None else None,
                    )
                )
            return answer

        return recorded

    # ---------------------------------------------------------------------------- private

    def _failed(self, path: Path, error: OSError) -> None:
        if self.write_error is None:
            self.write_error = (
                f"the run file {path} could not be written ({error.strerror or error}); "
                "the run was stopped"
            )
            self._on_failure()

    def _end_indexed(self, failure: Exception | None) -> None:
        """The run's ending is in its row, or could not be written: the lock goes either
        way (a row left "running" then reads as the run file ended)."""
        if failure is not None:
            _log.error("could not record the end of run %s: %s", self.run_id, failure)
        self._release_lock()

    def _start_indexed(self, failure: Exception | None) -> None:
        """The run's row was written at its start, or could not be: then stop the run."""
        if failure is None or self._ended or self.write_error is not None:
            return  # a run ended in the same turn: its ending's write reports the failure
        if self._index is not None:
            self.write_error = (
                f"the run index {self._index.path} could not be written ({failure}); "
                "the run was stopped"
            )
            self._on_failure()

    def _release_lock(self) -> None:
        """The run's ending is recorded (or never will be): it no longer has a live owner."""
        if self._lock is not None:
            self._lock.release()
