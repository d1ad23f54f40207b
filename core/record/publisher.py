"""The one way a run's events leave the runner: redacted, recorded, and handed to subscribers.

A producer — the runner on this machine, or later whatever reads a remote worker's event queue
(architecture: "Batches and Ray") — calls :meth:`EventPublisher.publish` with complete,
serialisable events and
never learns who listens. For each event the publisher

1. redacts it on the stream (:class:`core.safety.redaction.StreamRedactor`), so nothing downstream —
   run file, terminal, ``--json``, the window — ever sees a secret;
2. writes it to the run file (:class:`RunFileSink`): the line is written at once, and every
   run file written to is flushed together at the end of the event loop's turn (group
   commit, :class:`_GroupFlush`);
3. folds it into the run's :class:`~core.record.run_state.RunState`, when it keeps one (the
   recording's: what the runner decides with, and what the window shows — one fold of the
   redacted stream, read by everyone, instead of one per reader);
4. calls each subscriber in turn. A subscriber that raises is logged, detached and named in
   the run file (a ``log`` event); the step it happened in goes on.

A run file that cannot be written (disk full, the folder gone) is reported once through
``on_write_error``: the runner stops the run and records the reason in
the index, instead of failing somewhere in a backend.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Final, TypeVar

from core.model.events import Event, Log, RunFinished, RunStarted
from core.record.run_files import RunWriter
from core.record.run_state import RunState
from core.safety.redaction import Redactor, StreamRedactor

EventListener = Callable[[Event], None]
"""A subscriber. Called on the producer's thread, in event order, with redacted events."""

WriteErrorHandler = Callable[[OSError], None]
"""Told once when the run file cannot be written (from inside ``publish`` or a flush: defer
what it does, such as stopping the run)."""

W = TypeVar("W", RunStarted, RunFinished)
"""The events :meth:`EventPublisher.publish_whole` returns as published."""
_log = logging.getLogger(__name__)


class _GroupFlush:
    """Run files written during this loop turn, flushed together at its end (group commit).

    Each event's line is written (buffered) as it is published, and every file written to is
    flushed once, in a callback at the end of the event loop's turn: after all the events
    that turn produced — 64 answers arriving together make one flush per file, not one per
    event. A crash loses at most the lines of the turn it happened in, as the writer thread
    before this lost the lines it had not got to.

    Why not a writer thread (what this replaced): measured side by side on the batch
    benchmark (instant model, 256 items at 64), the thread's queue and its fight with the
    loop for the GIL cost more than the writes themselves — every system call on the loop
    let the writer take the GIL, and the loop waited for it to give it back. Writing from
    the loop, the supervisor used ~20 % less CPU per item and closed runs without waiting
    for another thread.

    One per thread (a thread's event loop; no loop running: each write is flushed at once).
    """

    def __init__(self) -> None:
        self._dirty: dict[RunFileSink, None] = {}
        self._scheduled_on: asyncio.AbstractEventLoop | None = None
        """The loop a flush is scheduled on: a loop closed before its turn ended never runs
        it, and the thread's next loop must schedule its own."""

    def written(self, sink: RunFileSink) -> None:
        self._dirty[sink] = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if self._scheduled_on is not loop:
            self._scheduled_on = loop
            loop.call_soon(self.flush)

    def forget(self, sink: RunFileSink) -> None:
        self._dirty.pop(sink, None)

    def flush(self) -> None:
        self._scheduled_on = None
        dirty, self._dirty = self._dirty, {}
        for sink in dirty:
            sink.flush()


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.group = _GroupFlush()


_FLUSH: Final = _PerThread()


class RunFileSink:
    """Appends events to a run file: each line written as the event is published, the file
    flushed at the end of the loop turn (:class:`_GroupFlush`).

    :meth:`put` never raises. A crash leaves complete lines only (plus perhaps one torn
    last line, which readers skip). Use from the thread that made it (the run's loop).
    """

    def __init__(self, writer: RunWriter, on_error: WriteErrorHandler | None = None) -> None:
        self.writer = writer
        self.error: OSError | None = None
        self._on_error = on_error
        self._open = True
        self._group = _FLUSH.group

    def put(self, event: Event, line: str | None = None) -> None:
        """Write ``event`` (``line``: its JSON, when the caller has it already)."""
        if not self._open or self.error is not None:
            return
        try:
            self.writer.append(event, line)
        except OSError as error:
            self._failed(error)
            return
        except Exception:  # a bug must not fail the step that published
            _log.exception("could not write an event to %s", self.writer.path)
            return
        self._group.written(self)

    def close(self) -> OSError | None:
        """Flush and close the file; returns the write error, if any. Safe to call more than
        once."""
        if self._open:
            self._open = False
            self._group.forget(self)
            self.flush()
            with suppress(OSError):
                self.writer.close()
        return self.error

    def flush(self) -> None:
        if self.error is None:
            try:
                self.writer.flush()
            except OSError as error:
                self._failed(error)

    def _failed(self, error: OSError) -> None:
        self.error = error
        with suppress(OSError):
            self.writer.close()
        if self._on_error is not None:
            try:
                self._on_error(error)
            except Exception:
                _log.exception("the run-file error handler failed")


class EventPublisher:
    """Redacts, records and fans out one run's events (see the module docstring).

    ``listeners`` is used as given (not copied), so a caller may keep a reference and append
    subscribers to it; :meth:`subscribe` does the same. One producer at a time: ``publish``
    is not thread-safe, and a remote producer's events are published by whichever task reads
    its queue.
    """

    def __init__(
        self,
        redactor: Redactor | None = None,
        sink: RunFileSink | None = None,
        listeners: list[EventListener] | None = None,
        state: RunState | None = None,
    ) -> None:
        self._given = redactor
        self._stream: StreamRedactor | None = None
        self.sink = sink
        self.state = state
        """Where published events are folded before subscribers hear of them (so a subscriber
        reading it sees the event it is called with), if anywhere."""
        self.listeners: list[EventListener] = listeners if listeners is not None else []

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it again."""
        self.listeners.append(listener)
        return lambda: self._detach(listener)

    def publish(self, event: Event) -> None:
        for safe, line in self._redactor().feed_encoded(event):
            self._deliver(safe, line)

    def publish_whole(self, event: W) -> W:
        """:meth:`publish` an event that is no stream's piece (a run's start, its ending) and
        return it as published, redacted: what the index keeps, without redacting it twice."""
        published = self._redactor().feed_encoded(event)
        for safe, line in published:
            self._deliver(safe, line)
        safe = published[-1][0]  # the event itself, after the held tails it ends
        assert isinstance(safe, type(event))
        return safe

    def settle(self, run_id: str, step: int) -> None:
        """Publish the step's held stream tails now (its text, thinking and tool outputs):
        the step has ended, so nothing can follow that would complete a secret, and
        :attr:`state` then holds all of its text (the partial answer of a step cut short)."""
        for safe in self._redactor().release_step(run_id, step):
            self._deliver(safe)

    def close(self) -> OSError | None:
        """Release held stream tails, then drain and close the run file. Returns the error
        that stopped the run file, if one did."""
        for safe in self._redactor().flush():
            self._deliver(safe)
        return self.sink.close() if self.sink is not None else None

    # -- internals ------------------------------------------------------------------------

    def _redactor(self) -> StreamRedactor:
        """Made on first use: reading the environment's secrets costs a scan of every
        variable, and a runner's first publisher is replaced before it publishes anything."""
        if self._stream is None:
            self._stream = StreamRedactor(self._given or Redactor.from_environment())
        return self._stream

    def _deliver(self, event: Event, line: str | None = None) -> None:
        if self.sink is not None:
            self.sink.put(event, line)
        if self.state is not None:
            self.state.apply(event)
        for listener in tuple(self.listeners):
            try:
                listener(event)
            except Exception as error:
                self._listener_failed(listener, event, error)

    def _listener_failed(self, listener: EventListener, event: Event, error: Exception) -> None:
        self._detach(listener)
        name = getattr(listener, "__qualname__", None) or type(listener).__qualname__
        message = f"a subscriber ({name}) failed on a {event.type} event: {error!r}; detached"
        _log.error(message)
        _log.debug("the subscriber's traceback", exc_info=error)
        notice = Log(run_id=event.run_id, step=None, ts=event.ts, level="warning", message=message)
        self.publish(notice)

    def _detach(self, listener: EventListener) -> None:
        with suppress(ValueError):
            self.listeners.remove(listener)
