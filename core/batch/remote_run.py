"""The supervisor's side of a run whose steps execute elsewhere (a Ray worker).

:class:`RemoteRun` collects what the worker's :class:`~core.batch.item_host.ItemHost` sends
and gives it the life a local run has: every event goes through the ordinary
:class:`~core.publisher.EventPublisher` (redaction, the run file on its writer thread, the
subscribers — ``--json``, the transcript, the window), the index gets its row at
``run_started`` and its ending at ``run_finished``, and this process holds the run's liveness
lock in between, since it is the one recording it. A run file therefore reads the same whether
its steps ran here or on a worker.

Questions travel both ways: an approval asked on the worker is put to this process's
responder (the terminal, the window's dialog, or a ``--approve`` setting) and the answer sent
back. Cancelling (:meth:`RemoteRun.cancel`) asks the worker to cancel, so the run ends
``aborted`` there and its ending still arrives here.

A worker that dies mid-item (killed, out of memory, its node gone) cannot say how its run
ended, so the ending is written here: open tool calls and pending approvals closed, the
running steps failed, and ``run_finished`` ``error`` with the reason — the run fails, the
batch goes on.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import Literal, Protocol

from core.approvals import ApprovalAnswer, ApprovalRequest, Responder
from core.batch.item_host import Outgoing
from core.errors import RunError
from core.events import (
    ApprovalResolved,
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCallFinished,
    event_from_json,
)
from core.liveness import LivenessLock
from core.publisher import EventListener, EventPublisher, RunFileSink
from core.run_state import RunState
from core.runs import RunIndex, RunWriter

_log = logging.getLogger(__name__)


class WorkerLost(Exception):
    """The worker running an item is gone; the message says what the transport knows."""


class ItemChannel(Protocol):
    """One item on one worker, as the supervisor reaches it (see :mod:`core.batch.item_host`
    for the messages). ``answer`` and ``cancel`` only send: they never wait for the worker."""

    async def collect(self) -> list[Outgoing]:
        """The next messages, waiting for at least one; raises :class:`WorkerLost`."""
        ...

    def answer(self, request_id: str, answer: str) -> None: ...

    def cancel(self) -> None: ...


class RemoteRun:
    """Supervises one run on a worker: ``await run()`` to the end, :meth:`cancel` any time
    from the same event loop."""

    def __init__(
        self,
        run_id: str,
        channel: ItemChannel,
        *,
        responder: Responder,
        listeners: list[EventListener] | None = None,
        record: bool = True,
    ) -> None:
        self.run_id = run_id
        self.result: RunFinished | None = None
        self._channel = channel
        self._responder = responder
        self._record = record
        self._publisher = EventPublisher(listeners=listeners)
        self._state = RunState()
        self._start: RunStarted | None = None
        self._index: RunIndex | None = None
        self._lock: LivenessLock | None = None
        self._asks: dict[str, asyncio.Task[None]] = {}
        self._write_error: str | None = None
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Ask the worker to cancel the run (it ends ``aborted``). Safe to call repeatedly."""
        if not self._cancelled:
            self._cancelled = True
            self._channel.cancel()

    async def run(self) -> RunFinished:
        """Collect and record until the run's ending; returns it. Raises :class:`RunError`
        when the worker could not start the run (nothing was recorded then)."""
        try:
            while self.result is None:
                try:
                    messages = await self._channel.collect()
                except WorkerLost as lost:
                    reason = f"the worker running this item died: {lost}"
                    if self._start is None:
                        raise RunError(f"{reason} (before the run started)") from None
                    self._end_here("error", reason)
                    break
                for message in messages:
                    self._handle(message)
        except asyncio.CancelledError:
            self.cancel()  # the worker stops too; what it sends from now on is not recorded
            self._end_here("aborted", "the run was cancelled")
            raise
        finally:
            for task in self._asks.values():
                task.cancel()
        assert self.result is not None
        return self.result

    # -- messages ----------------------------------------------------------------------------

    def _handle(self, message: Outgoing) -> None:
        if message.kind == "event":
            self._publish(event_from_json(message.body))
        elif message.kind == "ask":
            request = ApprovalRequest.model_validate_json(message.body)
            task = asyncio.create_task(self._ask(request))
            self._asks[request.request_id] = task
            task.add_done_callback(lambda _: self._asks.pop(request.request_id, None))
        elif self.result is None:  # an "end" before run_finished
            if self._start is None:
                raise RunError(message.body or "the worker ended the item without running it")
            self._end_here("error", message.body or "the worker ended the run without its ending")

    async def _ask(self, request: ApprovalRequest) -> None:
        try:
            answer = await self._responder(request)
        except Exception as error:  # a broken responder must not leave the step waiting
            _log.exception("the approval responder failed")
            answer = ApprovalAnswer(
                decision="deny", reason=f"Denied: asking failed ({error!r})", decided_by="no_one"
            )
        self._channel.answer(request.request_id, answer.model_dump_json())

    # -- recording ---------------------------------------------------------------------------

    def _publish(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._started(event)
        self._state.apply(event)
        self._publisher.publish(event)
        if isinstance(event, RunFinished):
            self._finished(event)

    def _started(self, start: RunStarted) -> None:
        self._start = start
        if not self._record:
            return
        writer = RunWriter(start.run_id)
        self._lock = LivenessLock(writer.path)
        loop = asyncio.get_running_loop()

        def failed(error: OSError) -> None:  # on the writer thread
            loop.call_soon_threadsafe(self._recording_failed, writer, error)

        self._publisher.sink = RunFileSink(writer, failed)
        self._index = RunIndex()
        self._index.started(self._publisher.redacted(start), writer.path)

    def _recording_failed(self, writer: RunWriter, error: OSError) -> None:
        if self._write_error is None:
            self._write_error = (
                f"the run file {writer.path} could not be written ({error.strerror or error}); "
                "the run was stopped"
            )
            self.cancel()

    def _finished(self, event: RunFinished) -> None:
        finished = self._publisher.redacted(event)
        write_error = self._publisher.close()
        if write_error is not None and self._publisher.sink is not None:
            self._recording_failed(self._publisher.sink.writer, write_error)
        if self._write_error is not None:
            finished = finished.model_copy(update={"status": "error", "error": self._write_error})
        self.result = finished
        if self._index is not None and self._start is not None:
            try:
                self._index.finished(
                    finished, self._start.started_at, by_agent=self._state.usage_by_agent()
                )
            except sqlite3.Error as failure:
                _log.error("could not record the end of run %s: %s", self.run_id, failure)
        if self._lock is not None:
            self._lock.release()

    def _end_here(self, status: Literal["error", "aborted"], reason: str) -> None:
        """Write the ending the worker can no longer send (it died, or we stop listening)."""
        if self.result is not None or self._start is None:
            return
        ts = self._state.elapsed
        for request_id, task in list(self._asks.items()):
            task.cancel()
            owner = next(s.index for s in self._state.steps if request_id in s.pending_approvals)
            self._publish(
                ApprovalResolved(
                    run_id=self.run_id,
                    step=owner,
                    ts=ts,
                    request_id=request_id,
                    decision="deny",
                    reason=reason,
                    automatic=True,
                    decided_by="cancel",
                )
            )
        for step in self._state.steps:
            if step.phase not in ("running", "waiting"):
                continue
            for call in step.open_calls():
                self._publish(
                    ToolCallFinished(
                        run_id=self.run_id,
                        step=step.index,
                        ts=ts,
                        call_id=call.call_id,
                        status="aborted",
                        result=f"(aborted: {reason})",
                    )
                )
            self._publish(
                StepFinished(
                    run_id=self.run_id,
                    step=step.index,
                    ts=ts,
                    status=status,
                    output=step.text_since_last_tool_call(),
                    error=reason,
                    usage=step.usage,
                )
            )
        self._publish(
            RunFinished(
                run_id=self.run_id,
                ts=ts,
                status=status,
                usage=self._state.usage,
                error=reason,
            )
        )
