"""Opening a run from the history shows it in a run view built while the window was idle
(:mod:`gui.run.spare_run_view`): the double-click's turn does not build one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from core.record.run_files import RunIndex
from gui.run.spare_run_view import SpareRunView
from gui.widgets.turn_work import later
from gui.window.main_window import MainWindow
from tests.test_run_state import sample_run
from tests.test_runs_cli import save


def test_a_run_opens_in_the_view_built_ahead_and_the_next_is_built_after(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    save(sample_run())
    window = make_window()
    runs = window.runs_view
    qtbot.waitUntil(lambda: runs.spare_view.ready is not None)
    spare = runs.spare_view.ready
    (record,) = RunIndex().list()

    page = runs.open_record(record)

    assert page.view is spare
    assert runs.spare_view.ready is None
    qtbot.waitUntil(lambda: not page.is_reading())
    assert [pane.agent.full_text() for pane in page.view.panes()] == ["scout", "worker"]
    qtbot.waitUntil(lambda: runs.spare_view.ready is not None)  # the next one, once idle
    assert runs.spare_view.ready is not page.view
    assert runs.spare_view.built == 2


def test_no_view_is_built_ahead_while_the_window_is_busy(qtbot: QtBot) -> None:
    """Not while a run is read or its panes built (``idle``), nor while gradual work waits
    for its turns: the spare never adds its cost to theirs."""
    host = QWidget()
    qtbot.addWidget(host)
    busy = [True]
    spare = SpareRunView(host, idle=lambda: not busy[0])
    qtbot.waitUntil(lambda: spare.looks >= 2)
    assert spare.ready is None

    working = [True]

    def gradual_work() -> None:  # a job that needs turn after turn, like panes filling in
        if working[0]:
            later(host, gradual_work)

    later(host, gradual_work)
    busy[0] = False
    looked = spare.looks
    qtbot.waitUntil(lambda: spare.looks >= looked + 2)
    assert spare.ready is None

    working[0] = False
    qtbot.waitUntil(lambda: spare.ready is not None)
    assert spare.built == 1
    taken = spare.take()
    assert taken is not None and spare.ready is None
    assert spare.take() is not taken  # none ready: one is built on the spot
