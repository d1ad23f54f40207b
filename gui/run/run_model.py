"""The run view's model: core events in, a few coalesced Qt signals out.

Backends can produce thousands of events a second (a token per text delta, a line per bash
output chunk). Updating widgets per event would freeze the window, so :class:`RunModel` only
queues events when they arrive and folds them into a :class:`~core.record.run_state.RunState` in
batches: at most ~20 times a second, immediately for the first event and for ``run_finished``
(a :class:`~gui.widgets.throttle.Throttle`: leading and trailing edge, one pending update at
most). A batch is also cut into time slices of a few milliseconds, so even a backlog of
100,000 events never blocks input for long.

The state is the one reducer of :mod:`core.record.run_state`: every item of every step lives there,
whether or not a widget shows it. Views read the state after each signal and keep widgets only
for what is on screen.

A live run started in this window is folded once, by the core: its recording folds each event
as it is published (redacted), and :meth:`RunModel.follow` makes that state the model's. The
events then only say *which* steps changed (and move :attr:`RunModel.graph`); nothing is
folded twice, and a 2 MB answer is held once. The runner runs on the qasync loop — the GUI
thread — so the views read the state between two of its turns, never while it changes. A
run whose events come from elsewhere (a test, a remote producer) is folded here, as above.

A saved run is replayed through :meth:`RunModel.load_events` as one batch, instantly, not at
recorded speed; one folded elsewhere (a saved run read on a worker thread) is adopted whole by
:meth:`RunModel.load_state`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.model.events import Event, RunFinished, RunStarted, StepFinished, StepStarted
from core.record.run_state import STREAMED_EVENTS, RunState
from gui.run.graph_progress import GraphProgress
from gui.widgets.throttle import Throttle

BATCH_INTERVAL_MS = 50
"""Events are folded in at most every 50 ms (20 Hz): smooth to the eye, cheap to draw."""
SLICE_SECONDS = 0.005
"""A batch yields to the event loop after this long, so input stays responsive in a flood (the
views catch up in the same turn when the batch reports: often as long again)."""
_CHECK_EVERY = 128
"""Events applied between two looks at the clock (perf_counter is not free)."""
_TURNING_POINTS = (RunStarted, StepStarted, StepFinished, RunFinished)
"""Events after which a slice ends and views hear at once: they rebuild or fold panes."""


class RunModel(QObject):
    """One run's events, folded into a :class:`RunState` in batches.

    Thread contract: :meth:`add_event` and :meth:`add_events` may be called from any thread
    (the runner normally calls them from the asyncio loop, which qasync runs on the GUI
    thread) — except after :meth:`follow`, when the state they describe is folded by the
    producer itself: then producer, model and views must share the GUI thread. Everything
    else happens on the thread that owns the model — the GUI thread — and every signal is
    emitted from its event loop, never from inside ``add_event``, so a view is never updated
    in the middle of the producer's code.
    """

    # ------------------------------------------------------------------ signals
    # All of them are emitted on the model's thread (the GUI thread), from its event loop.
    runStarted = Signal()
    """A ``run_started`` was applied: the list of steps is new; rebuild step widgets."""
    stepsChanged = Signal(object)
    """``frozenset[int]``: indexes of the steps whose state changed in the last batch."""
    runChanged = Signal()
    """Run-level figures may have changed: status, usage totals, elapsed, progress, error."""
    graphChanged = Signal()
    """A node's status, a loop's iteration or a gate changed (:attr:`graph`)."""
    batchApplied = Signal(int)
    """Emitted last for each batch, with the number of events it applied."""
    _wakeRequested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = RunState()
        """The folded run. Read it after a signal; never modify it from a view."""
        self.graph = GraphProgress()
        """The run's graph and its nodes' statuses, folded from the same events."""
        self._graph_changed = False
        self._pending: deque[Event] = deque()
        self._urgent = False
        self._live = False
        self._last_emit = 0.0
        self._unreported: set[int] = set()
        self._unreported_count = 0
        self._unreported_start = False
        self._turning_point = False
        self._clock_ts = 0.0
        self._clock_wall = 0.0
        self._shared = False
        self._requested = False
        self._throttle = Throttle(self._apply_pending, BATCH_INTERVAL_MS, self)
        self._wakeRequested.connect(self._schedule)

    # ------------------------------------------------------------------ public API

    def add_event(self, event: Event) -> None:
        """Queue one live event; it reaches the state and the views within one interval.
        After :meth:`follow`, the event is in the state already: it is only noted."""
        if self._shared:
            if isinstance(event, STREAMED_EVENTS):
                # A piece of a step's words or of a call's output: it moves no node of the
                # graph and is no turning point.
                self._unreported_count += 1
                step = event.step
                if step is not None and 0 <= step < len(self.state.steps):
                    self._unreported.add(step)
                if not self._requested:
                    self._requested = True
                    self._throttle.request(urgent=self._urgent)
                return
            self._note(event)
            # One request per report, not one per event (a timer call costs more than the
            # note); a turning point makes the pending one urgent.
            if isinstance(event, _TURNING_POINTS) and not self._urgent:
                self._urgent = self._requested = True
                self._throttle.request(urgent=True)
            elif not self._requested:
                self._requested = True
                self._throttle.request(urgent=self._urgent)
            return
        self._pending.append(event)
        if isinstance(event, RunFinished | RunStarted) or self.state.events == 0:
            self._urgent = True
        self._live = True
        self._wake()

    def add_events(self, events: Iterable[Event]) -> None:
        """Queue several live events at once (same contract as :meth:`add_event`)."""
        batch = list(events)
        if not batch:
            return
        if self._shared:
            for event in batch:
                self.add_event(event)
            return
        self._pending.extend(batch)
        if self.state.events == 0 or any(isinstance(e, RunFinished | RunStarted) for e in batch):
            self._urgent = True
        self._live = True
        self._wake()

    def follow(self, state: RunState) -> None:
        """Show a live run folded elsewhere, as it grows: ``state`` is the run's recording
        (:attr:`core.run.runner.Runner.state`), which folds every event before its
        subscribers — :meth:`add_event` among them — hear of it. From now on events are only
        noted: which steps changed, the graph's progress. GUI thread only (the producer
        must fold on it too: qasync's loop)."""
        self._throttle.cancel()
        self._pending.clear()
        self._requested = False
        self.state = state
        self.graph = GraphProgress.from_state(state) if state.events else GraphProgress()
        self._shared = True
        self._live = True
        self._graph_changed = bool(state.events)
        self._unreported = set(range(len(state.steps)))
        self._unreported_start = bool(state.events)
        self._unreported_count = state.events
        if state.events:
            self._urgent = self._requested = True
            self._schedule()

    def load_events(self, events: Iterable[Event]) -> None:
        """Replace the run with a saved one: all events in one batch, signals emitted before
        this returns. Replays are not live: nothing ticks, and nothing can be cancelled."""
        self._throttle.cancel()
        self._pending.clear()
        self.state = RunState()
        self.graph = GraphProgress()
        self._live = self._shared = False
        for event in events:
            self.state.apply(event)
            self.graph.apply(event)
        self._graph_changed = True
        self._mark_clock()
        self._emit(set(range(len(self.state.steps))), started=True, count=self.state.events)

    def load_state(self, state: RunState) -> None:
        """Replace the run with one already folded (off the GUI thread, see
        :mod:`gui.run.run_loader`); signals are emitted before this returns."""
        self._throttle.cancel()
        self._pending.clear()
        self.state = state
        self.graph = GraphProgress.from_state(state)
        self._graph_changed = True
        self._live = self._shared = False
        self._mark_clock()
        self._emit(set(range(len(state.steps))), started=True, count=state.events)

    def flush(self) -> None:
        """Apply everything queued now, without waiting for the timer (GUI thread only)."""
        self._throttle.cancel()
        self._requested = False
        if self._pending or self._unreported_count:
            self._apply_pending(deadline=False)
            while self._pending:
                self._apply_pending(deadline=False)
            self._throttle.restart()

    def is_live(self) -> bool:
        """True when events come from a running run (not a replay)."""
        return self._live

    def pending_count(self) -> int:
        """Events the views have not heard of yet (queued, or folded elsewhere and noted)."""
        return len(self._pending) if not self._shared else self._unreported_count

    def elapsed(self) -> float:
        """Seconds since the run started: the newest event's time, plus the wall-clock time
        since it arrived while the run is live and still running (so the header ticks)."""
        if self._live and self.state.status == "running" and self.state.events:
            return self._clock_ts + (time.monotonic() - self._clock_wall)
        return self.state.elapsed

    # ------------------------------------------------------------------ private

    def _wake(self) -> None:
        if QThread.currentThread() is self.thread():
            self._schedule()
        else:
            self._wakeRequested.emit()  # queued: hops to the model's thread

    @Slot()
    def _schedule(self) -> None:
        self._throttle.request(urgent=self._urgent)

    def _apply_pending(self, deadline: bool = True) -> None:
        """Apply queued events for one time slice; report them when the queue is empty or
        when the views have not heard anything for an interval (a long backlog is applied
        in many slices, but views still update at ~20 Hz, not once per slice)."""
        self._urgent = self._requested = False
        count = 0
        limit = time.perf_counter() + SLICE_SECONDS
        pending, state = self._pending, self.state
        while pending:
            event = pending.popleft()
            step = state.apply(event)
            self._note(event, step.index if step is not None else None)
            count += 1
            if deadline and isinstance(event, _TURNING_POINTS):
                # Panes are built, expanded or folded now, in a batch of their own, instead of
                # on top of a full slice of the flood that follows.
                self._turning_point = True
                break
            if deadline and count % _CHECK_EVERY == 0 and time.perf_counter() > limit:
                break
        now = time.monotonic()
        if pending and deadline:
            self._throttle.request(urgent=True)  # the rest after the event loop had its turn
            if (now - self._last_emit) * 1000 < BATCH_INTERVAL_MS and not self._turning_point:
                return
        self._turning_point = False
        if self._unreported_count:
            changed, started, total = (
                self._unreported,
                self._unreported_start,
                self._unreported_count,
            )
            self._unreported, self._unreported_count, self._unreported_start = set(), 0, False
            self._last_emit = now
            self._mark_clock()
            self._emit(changed, started=started, count=total)

    def _note(self, event: Event, step: int | None = -1) -> None:
        """What ``event`` changed, for the next report: its step (``-1``: the event's own,
        when the state was folded elsewhere), every step at a start or an end, the graph."""
        if self.graph.apply(event):
            self._graph_changed = True
        self._unreported_count += 1
        if step == -1:
            step = event.step
            if step is not None and not 0 <= step < len(self.state.steps):
                step = None
        if step is not None:
            self._unreported.add(step)
        elif isinstance(event, RunStarted | RunFinished):  # all steps are new / final
            self._unreported.update(range(len(self.state.steps)))
            self._unreported_start = self._unreported_start or isinstance(event, RunStarted)

    def _mark_clock(self) -> None:
        self._clock_ts = self.state.elapsed
        self._clock_wall = time.monotonic()

    def _emit(self, changed: set[int], *, started: bool, count: int) -> None:
        if started:
            self.runStarted.emit()
        if changed:
            self.stepsChanged.emit(frozenset(changed))
        if self._graph_changed:
            self._graph_changed = False
            self.graphChanged.emit()
        self.runChanged.emit()
        self.batchApplied.emit(count)
