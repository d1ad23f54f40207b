"""New batch… in the Batches view: pick a preset and an inputs file, see its first items,
choose concurrency and executor, and Start runs the batch live through the core's batch API
(the one ``baton batch`` uses) against the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from core.batch.store import BatchStore
from core.config.settings import save_settings
from gui.batch.batch_view import BatchView
from gui.batch.new_batch_dialog import PREVIEW_ITEMS, NewBatchDialog
from tests.gui.test_gui_batch import cell, scripted, shown_column
from tests.llm_server import LLMServer


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    path = tmp_path / "issues.jsonl"
    rows = [{"args": [f"item-{n}"]} for n in range(7)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def view(qtbot: QtBot, tmp_path: Path) -> BatchView:
    batch_view = BatchView(working_folder=lambda: tmp_path)
    qtbot.addWidget(batch_view)
    batch_view.resize(1000, 600)
    batch_view.show()
    return batch_view


def test_new_batch_previews_the_inputs_and_starts_the_batch_live(
    view: BatchView,
    inputs: Path,
    llm_server: LLMServer,
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = scripted({"item-3"})
    qtbot.mouseClick(view.new_button, Qt.MouseButton.LeftButton)
    dialog = view.findChild(NewBatchDialog)
    assert dialog is not None and dialog.isVisible()
    assert not dialog.start_button.isEnabled()  # no inputs yet

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args: (str(inputs), ""))
    qtbot.mouseClick(dialog.browse, Qt.MouseButton.LeftButton)
    assert dialog.preview.rowCount() == PREVIEW_ITEMS
    first = dialog.preview.item(0, 1)
    assert first is not None and first.text() == "item-0"
    assert "7 items" in dialog.preview_note.text()
    dialog.preset.setCurrentText("scout-and-plan")
    dialog.concurrency.setValue(2)
    assert dialog.executor.currentText() == "local" and not dialog.address.isEnabled()
    assert dialog.start_button.isEnabled()
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)

    assert view.task is not None
    assert view.totals.text() == "Checking 7 items…"  # off the window's loop, meanwhile
    qtbot.waitUntil(view.task.done, timeout=60_000)
    records = BatchStore().list()
    assert len(records) == 1
    record = records[0]
    assert record.spec.preset == "scout-and-plan" and record.inputs == "issues.jsonl"
    assert record.placement is not None and record.placement.concurrency == 2
    assert sorted(item.status for item in record.items).count("ok") == 6
    assert shown_column(view, 1) == [f"item-{n}" for n in range(7)]
    assert cell(view, 3, 2) == "failed"
    assert "6 done" in view.totals.text()


def test_a_file_that_cannot_be_read_says_why_and_keeps_start_disabled(
    qtbot: QtBot, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"args": ["fine"]}\nnot json\n', encoding="utf-8")
    dialog = NewBatchDialog(tmp_path)
    qtbot.addWidget(dialog)
    qtbot.keyClicks(dialog.inputs, str(broken))
    assert dialog.preview.rowCount() == 0
    assert "broken.jsonl" in dialog.preview_note.text()
    assert not dialog.start_button.isEnabled()


def test_an_item_that_cannot_run_stops_the_batch_before_it_starts_and_keeps_no_record(
    view: BatchView,
    tmp_path: Path,
    llm_server: LLMServer,
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The items are checked after Start, off the window's loop: the third row has no
    argument for the preset, so nothing runs, the totals say which row, and no batch is kept."""
    save_settings(llm_server.settings())
    rows = [{"args": ["one"]}, {"args": ["two"]}, {"args": []}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    qtbot.mouseClick(view.new_button, Qt.MouseButton.LeftButton)
    dialog = view.findChild(NewBatchDialog)
    assert dialog is not None
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args: (str(path), ""))
    qtbot.mouseClick(dialog.browse, Qt.MouseButton.LeftButton)
    dialog.preset.setCurrentText("scout-and-plan")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)

    assert view.task is not None
    qtbot.waitUntil(view.task.done, timeout=30_000)
    assert view.totals.text().startswith("Cannot start the batch: item 3: preset")
    assert BatchStore().list() == [] and view.count() == 0
    assert view.title.text() == "No batch chosen" and view.model.rowCount() == 0
    assert llm_server.requests == [] and view.new_button.isEnabled()
