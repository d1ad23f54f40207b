"""The one throttle (``gui.widgets.throttle``): served on the next loop turn after a quiet
spell, coalesced into one pending call within the interval, never inside the caller.

Intervals here are a minute long, so "not yet" is certain without a clock; "soon" is waited
for with ``qtbot.waitUntil``."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.widgets.throttle import Throttle

LONG_MS = 60_000


class Counter(QObject):
    """An owner with a throttled job that counts its calls."""

    def __init__(self, interval_ms: int = LONG_MS) -> None:
        super().__init__()
        self.calls = 0
        self.throttle = Throttle(self.work, interval_ms, self)

    def work(self) -> None:
        self.calls += 1


def test_first_request_is_served_on_the_next_loop_turn_not_inside_the_caller(
    qtbot: QtBot,
) -> None:
    owner = Counter()
    owner.throttle.request()
    assert owner.calls == 0 and owner.throttle.is_pending()
    qtbot.waitUntil(lambda: owner.calls == 1)
    assert not owner.throttle.is_pending()


def test_requests_within_the_interval_wait_and_become_one_call() -> None:
    owner = Counter()
    owner.throttle.request()
    owner.throttle.flush()
    assert owner.calls == 1
    for _ in range(5):
        owner.throttle.request()
    QApplication.processEvents()
    assert owner.calls == 1  # the interval since the last call has not passed
    assert owner.throttle.is_pending()
    owner.throttle.flush()
    assert owner.calls == 2 and not owner.throttle.is_pending()  # five requests, one call


def test_a_short_interval_serves_the_pending_call_by_itself(qtbot: QtBot) -> None:
    owner = Counter(interval_ms=20)
    owner.throttle.request()
    qtbot.waitUntil(lambda: owner.calls == 1)
    owner.throttle.request()
    owner.throttle.request()
    qtbot.waitUntil(lambda: owner.calls == 2)
    assert not owner.throttle.is_pending()


def test_urgent_skips_the_wait(qtbot: QtBot) -> None:
    owner = Counter()
    owner.throttle.request()
    owner.throttle.flush()
    owner.throttle.request()
    owner.throttle.request(urgent=True)
    qtbot.waitUntil(lambda: owner.calls == 2)


def test_cancel_drops_the_pending_call_and_flush_without_one_does_nothing() -> None:
    owner = Counter()
    owner.throttle.request()
    owner.throttle.cancel()
    assert not owner.throttle.is_pending()
    owner.throttle.flush()
    QApplication.processEvents()
    assert owner.calls == 0


def test_restart_counts_the_interval_from_now() -> None:
    owner = Counter()
    owner.throttle.restart()  # the owner showed everything itself just now
    owner.throttle.request()
    QApplication.processEvents()
    assert owner.calls == 0 and owner.throttle.is_pending()
    owner.throttle.cancel()


def test_a_request_made_by_the_call_itself_stays_pending(qtbot: QtBot) -> None:
    """A job that cuts its work into slices asks for the next slice from inside the call."""
    owner = Counter()
    slices = [3]

    def one_slice() -> None:
        owner.calls += 1
        slices[0] -= 1
        if slices[0]:
            owner.throttle.request(urgent=True)

    owner.throttle = Throttle(one_slice, LONG_MS, owner)
    owner.throttle.request()
    qtbot.waitUntil(lambda: owner.calls == 3)
    assert not owner.throttle.is_pending()
