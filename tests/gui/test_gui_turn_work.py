"""Work spread over event-loop turns (:mod:`gui.widgets.turn_work`): jobs run in the order
they were queued, a job queued by a job waits for a later turn, and a deleted owner's jobs
never run."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace

import pytest
import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from gui.widgets import turn_work
from gui.widgets.turn_work import later, turn_deadline


def test_jobs_run_in_order_and_a_follow_up_waits_for_a_later_turn(qtbot: QtBot) -> None:
    owner = QObject()
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        later(owner, lambda: ran.append("follow-up"))

    later(owner, first)
    later(owner, lambda: ran.append("second"))
    assert ran == []  # nothing runs inside the call that queues it

    qtbot.waitUntil(lambda: len(ran) == 3)
    assert ran == ["first", "second", "follow-up"]


def test_a_deleted_owners_jobs_are_dropped(qtbot: QtBot) -> None:
    gone, kept = QObject(), QObject()
    ran: list[str] = []
    later(gone, lambda: ran.append("gone"))
    later(kept, lambda: ran.append("kept"))
    shiboken6.delete(gone)  # before the turn came

    qtbot.waitUntil(lambda: ran == ["kept"])
    gone2 = QObject()
    later(gone2, lambda: ran.append("gone too"))  # its owner alone asked for the turn
    shiboken6.delete(gone2)
    later(kept, lambda: ran.append("kept again"))
    qtbot.waitUntil(lambda: ran == ["kept", "kept again"])


def test_a_job_that_raises_does_not_lose_the_jobs_after_it(qtbot: QtBot) -> None:
    owner = QObject()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("a bug in one pane")

    with qtbot.capture_exceptions() as raised:
        later(owner, broken)
        later(owner, lambda: ran.append("after"))
        qtbot.waitUntil(lambda: ran == ["after"])
    assert [str(error[1]) for error in raised] == ["a bug in one pane"]


class _PaintLog(QWidget):
    """A widget that notes each paint in the shared log."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def paintEvent(self, event: QPaintEvent) -> None:
        self.log.append("paint")


def test_a_spent_budget_lets_the_window_paint_before_the_next_job(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qt paints after the calls it has queued; a queue that asked for its next run with a
    zero-delay call ran budget after budget before the window was painted."""
    monkeypatch.setattr(turn_work, "TURN_BUDGET_S", 0.0)  # every run is one job
    log: list[str] = []
    widget = _PaintLog(log)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: "paint" in log)
    log.clear()

    def changes_the_widget() -> None:
        log.append("first job")
        widget.update()

    later(widget, changes_the_widget)
    later(widget, lambda: log.append("second job"))
    qtbot.waitUntil(lambda: "second job" in log)
    assert log.index("paint") < log.index("second job")


def test_jobs_of_one_run_share_its_deadline(qtbot: QtBot) -> None:
    """A job that loops over its own work stops where the run's budget ends, not a whole
    budget after it began."""
    owner = QObject()
    seen: list[float] = []
    later(owner, lambda: seen.append(turn_deadline()))
    later(owner, lambda: seen.append(turn_deadline()))
    qtbot.waitUntil(lambda: len(seen) == 2)
    assert seen[0] == seen[1]
    outside = turn_deadline()
    assert outside > seen[1]  # outside a run: a budget from now


def test_a_job_that_took_longer_than_the_budget_left_waits_for_the_next_run(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked only after each job, a few small jobs and then a big one made a run of twice
    the budget; a job whose kind took more than what is left waits (and comes first)."""
    clock = [0.0]
    monkeypatch.setattr(turn_work, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    owner = QObject()
    runs: list[tuple[str, float]] = []

    def job(name: str, seconds: float) -> Callable[[], None]:
        def run() -> None:
            runs.append((name, turn_deadline()))
            clock[0] += seconds

        return run

    def build_pane(name: str) -> None:  # one kind of job, whatever it builds
        runs.append((name, turn_deadline()))
        clock[0] += 0.010  # more than a whole budget

    later(owner, partial(build_pane, "pane 1"))
    qtbot.waitUntil(lambda: len(runs) == 1)
    later(owner, job("small", 0.001))
    later(owner, partial(build_pane, "pane 2"))  # would end 3 ms past the budget: waits
    later(owner, job("after", 0.001))
    qtbot.waitUntil(lambda: len(runs) == 4)

    names = [name for name, _deadline in runs]
    assert names == ["pane 1", "small", "pane 2", "after"]
    run_of = {name: deadline for name, deadline in runs}
    assert run_of["small"] != run_of["pane 2"]  # the pane waited for the next run
    assert run_of["pane 2"] != run_of["after"]  # which it had to itself


def test_a_run_right_after_a_long_one_lets_a_due_timer_fire_first(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qt's dispatcher could fire the queue's timer again before a timer already due (a
    tick, input): two budgets in one turn. After a run that spent its budget, the next
    waits half as long, once — a timer due by then fires first."""
    clock = [0.0]
    monkeypatch.setattr(turn_work, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    owner = QObject()
    log: list[str] = []

    def tick() -> None:
        log.append("tick")

    def long_job() -> None:
        log.append("long job")
        QTimer.singleShot(1, tick)  # due 1 ms from now, in real time
        clock[0] += turn_work.TURN_BUDGET_S  # spends the whole budget
        later(owner, lambda: log.append("next run"))

    later(owner, long_job)
    qtbot.waitUntil(lambda: "next run" in log)
    assert log == ["long job", "tick", "next run"]


def test_the_rest_is_taken_once_so_the_queue_always_moves(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clock that stands still (here faked; a suspended laptop's jumps) never holds the
    queue: after its one rest, the next run goes."""
    clock = [0.0]
    monkeypatch.setattr(turn_work, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    owner = QObject()
    ran: list[int] = []

    def job(number: int) -> None:
        ran.append(number)
        clock[0] += turn_work.TURN_BUDGET_S
        if number < 5:
            later(owner, partial(job, number + 1))

    later(owner, partial(job, 1))
    qtbot.waitUntil(lambda: len(ran) == 5)
    assert ran == [1, 2, 3, 4, 5]


def test_the_rest_after_a_long_job_is_capped(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rare long job (a 100 ms pane) does not hold the queue for half its time: the rest
    before the next run is at most :data:`~gui.widgets.turn_work.MAX_REST_S`."""
    clock = [0.0]
    monkeypatch.setattr(turn_work, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    owner = QObject()
    ran: list[str] = []

    def long_job() -> None:
        clock[0] += 0.1
        later(owner, lambda: ran.append("next"))

    later(owner, long_job)

    def resting() -> bool:
        return any(timer.interval() > 0 for timer in owner.findChildren(QTimer))

    qtbot.waitUntil(lambda: resting() or bool(ran))
    intervals = [timer.interval() for timer in owner.findChildren(QTimer)]
    assert intervals == [round(turn_work.MAX_REST_S * 1000)]
    qtbot.waitUntil(lambda: ran == ["next"])
