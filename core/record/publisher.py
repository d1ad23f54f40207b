"""The one way a run's events leave the runner: redacted, recorded, and handed to subscribers.

A producer — the runner on this machine, or later whatever reads a remote worker's event queue
(architecture: "Batches and Ray") — calls :meth:`EventPublisher.publish` with complete,
serialisable events and
never learns who listens. For each event the publisher

1. redacts it on the stream (:class:`core.safety.redaction.StreamRedactor`), so nothing downstream —
   run file, terminal, ``--json``, the window — ever sees a secret;
2. queues it for the run file (:class:`RunFileSink`): serialising, writing and flushing happen
   on the run-file thread (one for every run of the process), never on the producer's (the
   GUI thread in the window);
3. calls each subscriber in turn. A subscriber that raises is logged, detached and named in
   the run file (a ``log`` event); the step it happened in goes on.

A run file that cannot be written (disk full, the folder gone) is reported once, from the
run-file thread, through ``on_write_error``: the runner stops the run and records the reason in
the index, instead of failing somewhere in a backend.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Final, TypeVar, cast

from pydantic import BaseModel

from core.model.events import Event, Log
from core.record.run_files import RunWriter
from core.safety.redaction import Redactor, StreamRedactor

EventListener = Callable[[Event], None]
"""A subscriber. Called on the producer's thread, in event order, with redacted events."""

WriteErrorHandler = Callable[[OSError], None]
"""Told once when the run file cannot be written. Called on the run-file thread."""

E = TypeVar("E", bound=BaseModel)
_log = logging.getLogger(__name__)
_STOP: Final = object()
MAX_BATCH = 256
"""Events written between two flushes at most (a crash loses at most one unflushed batch,
and normally the queue holds one event: each is flushed as it comes)."""


class _Writing:
    """The one thread that writes every open run file of the process.

    A thread per run cost a thread start per item and, with dozens of runs at once, dozens of
    threads fighting for the GIL on every event (measured: benchmarks/batch.py). It starts with
    the first open sink and ends with the last one closed, so nothing is left running between
    runs (tests check that no thread outlives them).
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[RunFileSink, object]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._users = 0

    def open(self) -> None:
        with self._guard:
            self._users += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="run-files", daemon=True)
                self._thread.start()

    def put(self, sink: RunFileSink, item: object) -> None:
        self._queue.put((sink, item))

    def release(self) -> None:
        """A sink is closed: end the thread when it was the last one open."""
        with self._guard:
            self._users -= 1
            if self._users or self._thread is None:
                return
            thread, self._thread = self._thread, None
            self._queue.put((_NO_SINK, _STOP))
            thread.join()

    def _work(self) -> None:
        while True:
            batch = [self._queue.get()]
            with suppress(queue.Empty):
                while len(batch) < MAX_BATCH:
                    batch.append(self._queue.get_nowait())
            touched: dict[RunFileSink, None] = {}  # in order, each once
            for sink, item in batch:
                if sink is _NO_SINK:
                    continue
                touched[sink] = None
                if item is not _STOP:
                    sink.append(item)  # type: ignore[arg-type]
            for sink in touched:
                sink.flush()
            for sink, item in batch:
                if item is _STOP:
                    if sink is _NO_SINK:
                        return
                    sink.stopped()


class RunFileSink:
    """Appends events to a run file on the process's run-file thread.

    :meth:`put` never blocks and never raises. The thread writes whatever is queued, then
    flushes, so a line reaches the file as soon as the thread gets to it, and a crash leaves
    complete lines only (plus perhaps one torn last line, which readers skip).
    """

    def __init__(self, writer: RunWriter, on_error: WriteErrorHandler | None = None) -> None:
        self.writer = writer
        self.error: OSError | None = None
        self._on_error = on_error
        self._done = threading.Event()
        self._open = True
        _WRITING.open()

    def put(self, event: Event) -> None:
        _WRITING.put(self, event)

    def close(self) -> OSError | None:
        """Write everything queued, close the file (and end the thread if no other run uses
        it); returns the write error, if any. Safe to call more than once."""
        if self._open:
            self._open = False
            _WRITING.put(self, _STOP)
            self._done.wait()
            _WRITING.release()
        return self.error

    # -- on the run-file thread ------------------------------------------------------------

    def append(self, event: Event) -> None:
        if self.error is None:
            try:
                self.writer.append(event)
            except OSError as error:
                self._failed(error)
            except Exception:  # a bug must not end the thread every run writes through
                _log.exception("could not write an event to %s", self.writer.path)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.writer.flush()
            except OSError as error:
                self._failed(error)

    def stopped(self) -> None:
        with suppress(OSError):
            self.writer.close()
        self._done.set()

    def _failed(self, error: OSError) -> None:
        self.error = error
        with suppress(OSError):
            self.writer.close()
        if self._on_error is not None:
            try:
                self._on_error(error)
            except Exception:
                _log.exception("the run-file error handler failed")


_NO_SINK: Final = cast(RunFileSink, object())
"""Addressed to the thread itself (its end), not to a run file."""
_WRITING: Final = _Writing()


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
    ) -> None:
        self._given = redactor
        self._stream: StreamRedactor | None = None
        self.sink = sink
        self.listeners: list[EventListener] = listeners if listeners is not None else []

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it again."""
        self.listeners.append(listener)
        return lambda: self._detach(listener)

    def publish(self, event: Event) -> None:
        for safe in self._redactor().feed(event):
            self._deliver(safe)

    def redacted(self, event: E) -> E:
        """What ``event`` looks like once published, without publishing it (for the index
        and the caller's own copy of the ending)."""
        return self._redactor().scrub_event(event)

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

    def _deliver(self, event: Event) -> None:
        if self.sink is not None:
            self.sink.put(event)
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
