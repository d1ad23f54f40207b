"""The check that fails a test leaving a Qt timer running (``no_running_qt_timers`` in
``tests/gui/conftest.py``), run on sample tests in a pytest of their own: a leak must fail
there, and a timer stopped, fired, or gone with its owner must not."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SAMPLES = """
from PySide6.QtCore import QObject, QTimer

kept = []


def test_a_timer_left_running(qapp):
    timer = QTimer()
    timer.start(60_000)
    kept.append(timer)


def test_a_single_shot_left_pending(qapp):
    keeper = QObject()
    kept.append(keeper)
    QTimer.singleShot(60_000, keeper, lambda: None)


def test_a_timer_stopped(qapp):
    timer = QTimer()
    timer.start(60_000)
    timer.stop()
    kept.append(timer)


def test_a_timer_gone_with_its_owner(qapp):
    owner = QObject()
    QTimer(owner).start(60_000)
    owner.deleteLater()


def test_a_single_shot_whose_context_is_gone(qapp):
    owner = QObject()
    QTimer.singleShot(60_000, owner, lambda: None)
    owner.deleteLater()


def test_a_single_shot_that_fired(qtbot):
    fired = []
    QTimer.singleShot(0, lambda: fired.append(1))
    qtbot.waitUntil(lambda: fired == [1])
"""


def test_a_leaked_timer_fails_its_test_and_nothing_else_does(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeini("[pytest]\nqt_api = pyside6\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest("from tests.gui.conftest import no_running_qt_timers  # noqa: F401\n")
    pytester.makepyfile(test_samples=SAMPLES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=6, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_a_timer_left_running*",
            "*Qt timers still running after the test, started at: ['test_samples.py:*",
            "*ERROR at teardown of test_a_single_shot_left_pending*",
            "*started at: ['single shot from test_samples.py:*",
        ],
        consecutive=False,
    )
