"""Work spread over event-loop turns (:mod:`gui.widgets.turn_work`): jobs run in the order
they were queued, a job queued by a job waits for a later turn, and a deleted owner's jobs
never run."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from gui.widgets.turn_work import later


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
