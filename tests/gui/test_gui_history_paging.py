"""The History table reaches every run: rows load as it scrolls, sorting and filtering are
done by the index, so an old run is one scroll or one word away."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from core.record.index_db import close_index_connections
from core.record.run_files import RunIndex
from gui.history import runs_table
from gui.history.runs_history import HistoryPage
from tests.test_runs_paging import fill


@pytest.fixture(scope="module")
def filled_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """130 runs indexed once for the module (each test gets a copy)."""
    folder = tmp_path_factory.mktemp("index")
    fill(RunIndex(folder / "runs.sqlite"), 130, folder)
    # The kept connection holds the rows in the write-ahead log: closing it checkpoints them
    # into the file, which the tests copy alone.
    close_index_connections()
    return folder / "runs.sqlite"


@pytest.fixture
def history(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, filled_index: Path) -> HistoryPage:
    monkeypatch.setattr(runs_table, "PAGE", 50)
    target = RunIndex().path
    close_index_connections()  # the new index's log would replay over the copy
    for log in (target.with_name(target.name + "-wal"), target.with_name(target.name + "-shm")):
        log.unlink(missing_ok=True)
    shutil.copy(filled_index, target)
    page = HistoryPage()
    qtbot.addWidget(page)
    page.resize(900, 500)
    page.show()
    qtbot.waitUntil(lambda: page.table.model().rowCount() > 0)
    return page


def test_scrolling_down_loads_older_runs_until_the_first(
    qtbot: QtBot, history: HistoryPage
) -> None:
    table = history.table
    assert table.model().rowCount() == 50
    assert history.model.total() == 130
    bar = table.verticalScrollBar()
    while table.model().rowCount() < 130:
        rows = table.model().rowCount()
        qtbot.waitUntil(lambda: bar.maximum() > bar.value())  # laid out, not at the bottom
        bar.setValue(bar.maximum())  # the view asks the model for more at the bottom
        qtbot.waitUntil(lambda rows=rows: table.model().rowCount() > rows)  # type: ignore[misc]
    assert table.model().index(129, 1).data() == "reviewer"  # the very first run
    assert not history.model.canFetchMore()


def test_header_click_sorts_every_run_not_only_those_loaded(
    qtbot: QtBot, history: HistoryPage
) -> None:
    header = history.table.horizontalHeader()
    cost = 5
    spot = QPoint(header.sectionViewportPosition(cost) + header.sectionSize(cost) // 2, 5)

    def first_cost() -> str:
        return str(history.table.model().index(0, cost).data())

    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.waitUntil(lambda: first_cost() == "—")  # cheapest first: run 0 cost nothing
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.waitUntil(lambda: first_cost() == "$0.1290")  # run 129, never loaded before
    assert history.table.model().rowCount() == 50


def test_typing_a_word_finds_an_old_run(qtbot: QtBot, history: HistoryPage) -> None:
    qtbot.keyClicks(history.filter_field, "run-0003")
    qtbot.waitUntil(lambda: len(history.visible_records()) == 1)
    assert history.visible_records()[0].args == ["task 3"]
    assert history.select_run("run-0003")
