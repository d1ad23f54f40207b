"""The suite's ``qtbot`` (``tests/qt_waits.py``): a wait on a condition never gives up before
:data:`QT_WAIT_MS`, whatever limit a test wrote; a deliberate pause keeps its length."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal
from pytestqt.qtbot import QtBot

from tests.qt_waits import QT_WAIT_MS, PatientQtBot


class _Source(QObject):
    fired = Signal()


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The limits pytest-qt's own waits are given (they return at once here)."""
    seen: list[int] = []

    def until(self: QtBot, callback: Any, *, timeout: int = 5000) -> None:
        seen.append(timeout)

    def signal(self: QtBot, signal: Any, *, timeout: int = 5000, **options: Any) -> Any:
        seen.append(timeout)
        return _Blocker()

    monkeypatch.setattr(QtBot, "waitUntil", until)
    monkeypatch.setattr(QtBot, "waitSignal", signal)
    return seen


class _Blocker:
    def __enter__(self) -> _Blocker:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def test_the_suites_qtbot_is_the_patient_one(qtbot: QtBot) -> None:
    assert isinstance(qtbot, PatientQtBot)


def test_a_short_or_default_limit_is_raised(qtbot: QtBot, limits: list[int]) -> None:
    source = _Source()
    qtbot.waitUntil(lambda: True)
    qtbot.waitUntil(lambda: True, timeout=300)
    qtbot.wait_until(lambda: True, timeout=300)  # pytest-qt's pep-8 alias
    with qtbot.waitSignal(source.fired, timeout=1000):
        source.fired.emit()
    assert limits == [QT_WAIT_MS] * 4


def test_a_longer_limit_is_kept(qtbot: QtBot, limits: list[int]) -> None:
    qtbot.waitUntil(lambda: True, timeout=QT_WAIT_MS * 2)
    assert limits == [QT_WAIT_MS * 2]


def test_a_pause_that_expects_nothing_keeps_its_length(qtbot: QtBot, limits: list[int]) -> None:
    source = _Source()
    with qtbot.waitSignal(source.fired, timeout=50, raising=False):
        pass
    assert limits == [50]
