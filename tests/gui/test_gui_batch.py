"""The Batches view: a recorded batch as a table, the failed filter, totals, opening an item
as a run, a live re-run of the failed items, and export — driven by clicks, against the
scripted server and real batch records."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from core.batch.executors import ExecutorOptions, LocalExecutor
from core.batch.inputs import BatchItem
from core.batch.store import BatchRecord, BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.config.settings import save_settings
from core.model.events import RunFinished, RunStarted, StepStarted, TextDelta, Usage, UsageStats
from gui.batch.batch_view import BatchView
from gui.window.main_window import MainWindow
from tests.llm_server import LLMServer, Reply, last_user_text

MARK = re.compile(r"item-\d")


def scripted(failing: set[str], hold: threading.Event | None = None) -> Callable[..., Reply]:
    def respond(body: dict[str, Any]) -> Reply:
        mark = MARK.search(last_user_text(body))
        assert mark is not None
        if mark.group() in failing:
            return Reply.error(400, f"{mark.group()} refused")
        return Reply.answer(f"plan for {mark.group()}", hold=hold)

    return respond


@pytest.fixture
def recorded(llm_server: LLMServer, tmp_path: Path) -> BatchRecord:
    """A finished 3-item batch of scout-and-plan whose item-1 failed."""
    save_settings(llm_server.settings())
    llm_server.responder = scripted({"item-1"})
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item-{n}"]) for n in range(3)], "in.jsonl")
    executor = LocalExecutor(ExecutorOptions(concurrency=3))
    asyncio.run(BatchRun(record, executor, settings=llm_server.settings(), store=store).run())
    done = store.get(record.id)
    assert done is not None
    return done


def cell(view: BatchView, row: int, column: int) -> str:
    return str(view.model.index(row, column).data())


def shown_column(view: BatchView, column: int) -> list[str]:
    return [cell(view, row, column) for row in range(view.model.rowCount())]


@pytest.fixture
def batch_view(qtbot: QtBot) -> BatchView:
    view = BatchView()
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    return view


def test_a_recorded_batch_shows_its_items_totals_and_filters_the_failed(
    recorded: BatchRecord, batch_view: BatchView, qtbot: QtBot
) -> None:
    assert batch_view.count() == 1
    assert "scout-and-plan" in batch_view.title.text() and "3 items" in batch_view.title.text()
    assert shown_column(batch_view, 1) == ["item-0", "item-1", "item-2"]
    assert shown_column(batch_view, 2) == ["done", "failed", "done"]
    assert cell(batch_view, 0, 7) == "plan for item-0"
    assert "item-1 refused" in cell(batch_view, 1, 7)
    assert "2 done" in batch_view.totals.text() and "1 failed" in batch_view.totals.text()
    assert "tokens" in batch_view.totals.text()

    qtbot.mouseClick(batch_view.failed_only, Qt.MouseButton.LeftButton)
    assert shown_column(batch_view, 1) == ["item-1"]
    qtbot.mouseClick(batch_view.failed_only, Qt.MouseButton.LeftButton)
    assert batch_view.model.rowCount() == 3


def test_re_run_failed_runs_only_those_live_and_updates_the_table(
    recorded: BatchRecord,
    batch_view: BatchView,
    llm_server: LLMServer,
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
) -> None:
    release = threading.Event()
    llm_server.responder = scripted(set(), hold=release)
    before = len(llm_server.requests)
    assert batch_view.rerun_button.isEnabled() and not batch_view.cancel_button.isEnabled()
    qtbot.mouseClick(batch_view.rerun_button, Qt.MouseButton.LeftButton)
    assert batch_view.task is not None
    qtbot.waitUntil(lambda: cell(batch_view, 1, 2) == "running")  # live, while it waits
    qtbot.waitUntil(lambda: cell(batch_view, 1, 3) == "1/2 scout")
    assert batch_view.cancel_button.isEnabled() and not batch_view.rerun_button.isEnabled()
    release.set()
    qtbot.waitUntil(lambda: batch_view.task is not None and batch_view.task.done(), timeout=15_000)
    assert shown_column(batch_view, 2) == ["done", "done", "done"]
    assert cell(batch_view, 1, 7) == "plan for item-1"
    again = llm_server.requests[before:]
    assert [MARK.search(r.user_text).group() for r in again] == ["item-1", "item-1"]  # type: ignore[union-attr]
    assert "3 done" in batch_view.totals.text()
    assert not batch_view.rerun_button.isEnabled()


def test_cancel_stops_a_live_re_run(
    recorded: BatchRecord,
    batch_view: BatchView,
    llm_server: LLMServer,
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
) -> None:
    llm_server.responder = lambda body: Reply.hang()
    qtbot.mouseClick(batch_view.rerun_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell(batch_view, 1, 2) == "running")
    qtbot.mouseClick(batch_view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: batch_view.task is not None and batch_view.task.done(), timeout=15_000)
    assert cell(batch_view, 1, 2) == "cancelled"


def test_export_writes_the_results_as_csv(
    recorded: BatchRecord,
    batch_view: BatchView,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "results.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(batch_view.csv_button, Qt.MouseButton.LeftButton)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("item,status,$1,")
    assert [line.split(",")[1] for line in lines[1:]] == ["ok", "error", "ok"]
    assert "Exported 3 items" in batch_view.totals.text()


def test_open_and_compare_show_items_as_normal_runs_in_the_window(
    recorded: BatchRecord, make_window: Callable[..., MainWindow], qtbot: QtBot
) -> None:
    window = make_window()
    window.show_view("batches")
    view = window.view("batches")
    assert isinstance(view, BatchView)
    assert not view.open_button.isEnabled() and not view.compare_button.isEnabled()
    view.select(0, 2)
    assert view.compare_button.isEnabled()
    qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    first, third = recorded.items[0].run_id, recorded.items[2].run_id
    assert first and third
    qtbot.waitUntil(lambda: window.current_view() == "runs")
    assert window.runs_view.page_for(first) is not None
    assert window.runs_view.page_for(third) is not None


def test_history_shows_the_batch_a_run_belongs_to(
    recorded: BatchRecord, make_window: Callable[..., MainWindow], qtbot: QtBot
) -> None:
    window = make_window()
    window.show_view("runs")
    history = window.runs_view.history
    qtbot.waitUntil(lambda: history.model.rowCount() == 3)
    history.table.selectRow(0)
    action = next(a for a in history.table.actions() if a.text() == "Show its batch")
    action.trigger()
    assert window.current_view() == "batches"
    view = window.view("batches")
    assert isinstance(view, BatchView)
    assert view.record is not None and view.record.id == recorded.id
    assert view.model.rowCount() == 3


def test_a_batch_running_elsewhere_moves_on_in_the_table(
    llm_server: LLMServer,
    tmp_path: Path,
    batch_view: BatchView,
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
) -> None:
    """A batch the view did not start (as ``baton batch`` in a terminal) is read again while
    it runs: rows turn from running to done as its items finish."""
    save_settings(llm_server.settings())
    release = threading.Event()
    llm_server.responder = scripted(set(), hold=release)
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item-{n}"]) for n in range(2)], "in.jsonl")
    executor = LocalExecutor(ExecutorOptions(concurrency=2))
    elsewhere = asyncio.ensure_future(
        BatchRun(record, executor, settings=llm_server.settings()).run()
    )
    qtbot.waitUntil(lambda: len(llm_server.requests) == 2)
    qtbot.mouseClick(batch_view.refresh_button, Qt.MouseButton.LeftButton)
    assert shown_column(batch_view, 2) == ["running", "running"]
    release.set()
    qtbot.waitUntil(elsewhere.done, timeout=15_000)
    qtbot.waitUntil(lambda: shown_column(batch_view, 2) == ["done", "done"], timeout=10_000)
    assert cell(batch_view, 1, 7) == "plan for item-1"
    assert "2 done" in batch_view.batches.currentItem().text()


def test_a_live_item_repaints_only_the_cells_its_events_changed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """A live batch's table asks for no more than the cells that changed: a row's number and
    input never do, and tokens alone leave its status, step and output as they are."""
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item-{n}"]) for n in range(3)], "in.jsonl")
    view = BatchView()
    qtbot.addWidget(view)
    view.show_batch(record.id)
    model = view.model
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(
        lambda first, last, *_: changed.append(
            (first.row(), first.column(), last.row(), last.column())
        )
    )
    run = "run-1"
    started = RunStarted(run_id=run, mode="chain", steps=[], cwd=str(tmp_path), started_at="")
    model.add_event(1, started)
    model.add_event(1, StepStarted(run_id=run, step=0, ts=0.0, agent="scout", task="t", cwd=""))
    model.flush()
    assert changed == [(1, 2, 1, 6)]  # status, step (and the duration it starts)
    assert cell(view, 1, 2) == "running" and cell(view, 1, 3) == "1/1 scout"
    changed.clear()
    usage = UsageStats(input=1200, output=30, model="test-model")
    model.add_event(1, Usage(run_id=run, step=0, ts=0.0, usage=usage))
    model.flush()
    assert changed == [(1, 4, 1, 4)]  # tokens only
    assert cell(view, 1, 4) == "1.2k"
    changed.clear()
    model.add_event(1, TextDelta(run_id=run, step=0, ts=0.0, text="thinking"))
    model.flush()
    assert changed == []  # a step's text shows once the step ends


def test_a_preset_named_in_html_is_shown_as_written(qtbot: QtBot, tmp_path: Path) -> None:
    """A batch's title is styled, but its preset's name (a checkout's) and input file are
    text: tags in them are shown, not obeyed."""
    store = BatchStore()
    spec = BatchSpec(preset='<img src="/etc/x.png">scout', cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=["one"])], "<b>in</b>.jsonl")
    view = BatchView()
    qtbot.addWidget(view)
    view.show_batch(record.id)
    shown = QTextDocument()
    shown.setHtml(view.title.text())
    assert shown.toPlainText().startswith('<img src="/etc/x.png">scout over <b>in</b>.jsonl')


def test_sorted_by_a_live_figure_the_rows_follow_it_and_the_selection_its_item(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """A click on the Tokens header sorts by tokens; as items' figures change the rows move,
    the selected item stays selected, and the failed filter keeps the order."""
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item-{n}"]) for n in range(3)], "in.jsonl")
    view = BatchView()
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    view.show_batch(record.id)
    model = view.model

    spent: dict[int, int] = {}

    def spend(item: int, tokens: int, status: Literal["error", ""] = "") -> None:
        run = f"run-{item}"
        spent[item] = spent.get(item, 0) + tokens
        if model.row(item).state is None:
            model.add_event(
                item, RunStarted(run_id=run, mode="chain", steps=[], cwd="", started_at="")
            )
            step = StepStarted(run_id=run, step=0, ts=0.0, agent="scout", task="t", cwd="")
            model.add_event(item, step)
        usage = UsageStats(input=tokens, output=0, model="test-model")
        model.add_event(item, Usage(run_id=run, step=0, ts=0.0, usage=usage))
        if status:
            total = UsageStats(input=spent[item], output=0, model="test-model")
            model.add_event(item, RunFinished(run_id=run, ts=1.0, status=status, usage=total))

    header = view.table.horizontalHeader()
    tokens_header = QPoint(header.sectionViewportPosition(4) + 5, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=tokens_header)
    assert header.sortIndicatorSection() == 4
    if header.sortIndicatorOrder() != Qt.SortOrder.AscendingOrder:
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=tokens_header)
    for item, tokens in ((0, 500), (1, 100), (2, 300)):
        spend(item, tokens)
    model.flush()
    assert shown_column(view, 1) == ["item-1", "item-2", "item-0"]

    view.select(1)  # item-1, shown first
    spend(1, 900)  # now the most
    model.flush()
    assert shown_column(view, 1) == ["item-2", "item-0", "item-1"]
    assert view.selected_rows() == [1]

    spend(2, 50, status="error")
    spend(0, 10, status="error")
    model.flush()
    qtbot.mouseClick(view.failed_only, Qt.MouseButton.LeftButton)
    assert shown_column(view, 1) == ["item-2", "item-0"]  # 350 and 510 tokens, failed
    assert shown_column(view, 2) == ["failed", "failed"]
