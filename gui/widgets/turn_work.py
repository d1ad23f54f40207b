"""Work spread over event-loop turns, with one budget per turn for all of it.

Opening a run builds its panes, each pane its items, each long answer its slices — each a
little per turn. Scheduled separately (a zero-delay timer each), every piece ran in the same
turn as all the others: three panes growing two items each, the next pane and three answers'
slices made one 40 ms turn, which a loaded machine stretched past 100 ms before input was
answered. :func:`later` puts them in one queue instead, run in order until
:data:`TURN_BUDGET_S` is spent; the rest waits for the next turn, after input and painting.
A job is not started when the budget left is less than what its kind took before (a pane's
build, 8-11 ms): checked only after each job, a run of a few small jobs and then a big one
went to twice the budget. The first job of a run always starts, so the queue moves.
A run that comes right after another waits for half that one's time first
(:data:`REST_RATIO`): Qt's dispatcher sometimes fires the queue's timer again before timers
already due, and two runs then made one turn of two budgets.
GUI thread only.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QObject, Qt, QTimer
from shiboken6 import isValid

TURN_BUDGET_S = 0.008
"""GUI-thread time one turn spends on queued work (at least one job a turn)."""

REST_RATIO = 0.5
"""After a run, the next waits until this share of the run's time has passed (once). Under
the glib dispatcher a fifth of the runs of ``benchmarks/live.py`` came straight after another
with a 5 ms timer overdue between them: the turn held both budgets. A timer with an interval
is fired after the ones already due, so input and painting come first; the queue still works
two thirds of the time when nothing else wants the thread. Side by side under load, 8 rounds
in two sessions: the live view's worst stall 24-42 ms against 26-97 (its longest turn 16-24 ms of
CPU against 18-29); opening and ingesting within the noise, the 2 MB answer complete ~7 % later."""

MAX_REST_S = 0.02
"""The longest rest: enough for what is due to go first; a rare long job (a 100 ms pane)
does not hold the queue for half its time."""


class TurnWork(QObject):
    """The queue: jobs of live owners, run a budget's worth per turn, oldest first.

    The turn is asked for in the name of a live owner (the timer is Qt's to drop when that
    owner goes, and none outlives the widgets it works for); when that owner goes first, the
    next live one asks."""

    def __init__(self) -> None:
        super().__init__()
        self._jobs: deque[tuple[QObject, Callable[[], object]]] = deque()
        self._context: QObject | None = None
        self._costs: dict[object, float] = {}
        """What a job of each kind took (seconds): one that would overrun the budget left
        waits for the next turn instead (see :meth:`_learn`)."""
        self.deadline: float | None = None
        """When the run under way must stop (``time.perf_counter()``), None between runs."""
        self._last_end = 0.0
        self._rest_s = 0.0
        """When the last run ended (``time.perf_counter()``) and how long after it the next
        waits, once (:data:`REST_RATIO`)."""

    def later(self, owner: QObject, job: Callable[[], object]) -> None:
        """Run ``job`` at a coming turn, unless ``owner`` is deleted first."""
        self._jobs.append((owner, job))
        self._post()

    def pending(self) -> int:
        return len(self._jobs)

    def _post(self, dying: QObject | None = None, delay_ms: int = 0) -> None:
        if self._context is not None:
            return
        live = (owner for owner, _job in self._jobs if owner is not dying and isValid(owner))
        context = next(live, None)
        if context is None:
            self._jobs.clear()
            return
        self._context = context
        self._context.destroyed.connect(self._context_gone)
        # A zero-interval timer object, not QTimer.singleShot(0): that posts a call, and Qt
        # delivers a call posted while it delivers posted calls in the same pass — the rest
        # of a spent budget ran at once, two or three budgets in one turn (benchmarks/live.py:
        # 26-28 ms where 8 were meant). A timer fires at the next pass of the event loop,
        # after input and painting (a widget's repaint is a posted event too).
        timer = QTimer(context)
        timer.setSingleShot(True)
        timer.setTimerType(Qt.TimerType.PreciseTimer)  # a coarse one may add 5 % of a rest
        timer.timeout.connect(self._run)
        timer.timeout.connect(timer.deleteLater)
        timer.start(delay_ms)

    def _learn(self, kind: object, seconds: float) -> None:
        """A longer run at once, a shorter one slowly: the decision to start a job is made
        before it runs, so it leans to what the slow ones of its kind took."""
        known = self._costs.get(kind)
        if known is None or seconds > known:
            self._costs[kind] = seconds
        else:
            self._costs[kind] = known + 0.1 * (seconds - known)

    def _context_gone(self) -> None:
        dying, self._context = self._context, None
        self._post(dying)

    def _release_context(self) -> None:
        context, self._context = self._context, None
        if context is not None and isValid(context):
            context.destroyed.disconnect(self._context_gone)

    def _run(self) -> None:
        self._release_context()
        started = time.perf_counter()
        rest_s, self._rest_s = self._rest_s, 0.0
        since_s = started - self._last_end
        if 0.0 <= since_s < rest_s:  # right after a long run: let what is due go first, once
            self._post(delay_ms=math.ceil((rest_s - since_s) * 1000))
            return
        limit = self.deadline = started + TURN_BUDGET_S
        due, self._jobs = self._jobs, deque()  # jobs queued meanwhile wait for the next turn
        ran = False
        try:
            while due:
                owner, job = due[0]
                if not isValid(owner):
                    due.popleft()
                    continue
                kind = _kind(job)
                began = time.perf_counter()
                if ran and began + self._costs.get(kind, 0.0) > limit:
                    break  # it would not fit: first in the next turn
                due.popleft()
                ran = True
                try:
                    job()
                finally:
                    self._learn(kind, time.perf_counter() - began)
                if time.perf_counter() > limit:
                    break
        finally:  # a job that raised loses its turn, not the others theirs
            self.deadline = None
            self._last_end = time.perf_counter()
            self._rest_s = min(REST_RATIO * (self._last_end - started), MAX_REST_S)
            due.extend(self._jobs)
            self._jobs = due
            if self._jobs:
                self._post()


def _kind(job: Callable[[], object]) -> object:
    """What makes jobs alike: the code they run (a pane's build, a stream's next slice),
    whatever object they run it for and whatever partial arguments they carry."""
    function: object = job
    while isinstance(function, partial):
        function = function.func
    function = getattr(function, "__func__", function)
    return getattr(function, "__code__", function)


_queue: TurnWork | None = None


def later(owner: QObject, job: Callable[[], object]) -> None:
    """Run ``job`` at a coming event-loop turn within the shared per-turn budget (see the
    module's docstring); dropped when ``owner`` is deleted before."""
    global _queue
    if _queue is None:
        _queue = TurnWork()
    _queue.later(owner, job)


def pending_jobs() -> int:
    """Jobs waiting for a coming turn: 0 when the window has no gradual work under way."""
    return _queue.pending() if _queue is not None else 0


def turn_deadline() -> float:
    """When work done now must stop for this turn (``time.perf_counter()`` seconds): inside
    the queue's run, the run's own limit — a job that loops over its work (panes to sync)
    stops there, so the jobs of a turn share one budget instead of each spending a whole
    one; elsewhere, one budget from now."""
    deadline = _queue.deadline if _queue is not None else None
    return deadline if deadline is not None else time.perf_counter() + TURN_BUDGET_S
