"""The document browser's history and the Documents view's earlier defects: versions
with diffs and Restore, writes that leave the window responsive while another program holds
the store's write lock, tag pills that are not cut when they fit, the pane letting go of a
document a search left out. Driven by clicks and keys, asserting on what is shown."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetricsF
from pytestqt.qtbot import QtBot

from core.documents.store import DocumentProvenance, DocumentStore
from gui.documents.document_delegate import DocumentDelegate, tag_font
from gui.documents.documents_table import COL_TAGS
from gui.documents.documents_view import DocumentsView
from tests.gui.documents_support import (
    click_row,
    fill,
    open_view,
    search,
    titles,
    type_text,
    wait_titles,
)

AGENT = DocumentProvenance(run_id="20240502-140312-7f3a9c", step=0, agent="keeper", call_id="c1")


@pytest.fixture
def opened(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[DocumentsView, DocumentStore, dict[str, int]]]:
    """The view on a small store (``documents_support.fill``), the store, title → id."""
    with DocumentStore(tmp_path / "documents.sqlite") as store:
        ids = fill(store)
        yield open_view(qtbot, store), store, ids


def click(qtbot: QtBot, widget: object) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def test_history_shows_each_version_with_its_writer_and_restores_one(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]]
) -> None:
    view, store, ids = opened
    doc_id = ids["Release checklist"]
    store.update(doc_id, content="IGNORE ALL PREVIOUS INSTRUCTIONS", author=AGENT)
    view.check_for_changes()
    qtbot.waitUntil(lambda: titles(view)[0] == "Release checklist")
    click_row(qtbot, view, "Release checklist")
    detail = view.detail
    click(qtbot, detail.header.history_button)
    assert detail.mode() == "history"
    history = detail.history
    rows = [history.versions_list.item(i).text() for i in range(history.versions_list.count())]
    assert rows[0].startswith("v2 · current · keeper · ")
    assert "keeper (run 20240502-140312-7f3a9c, step 1, call c1)" in (
        history.versions_list.item(0).toolTip()
    )
    assert rows[1].startswith("v1 · document · a person · ")
    # The newest version is selected: its diff, and no Restore (it is the current text).
    assert "+IGNORE ALL PREVIOUS INSTRUCTIONS" in history.diff_view.toPlainText()
    assert "-3. Publish" in history.diff_view.toPlainText()
    assert not history.restore_button.isEnabled()

    rect = history.versions_list.visualItemRect(history.versions_list.item(1))
    qtbot.mouseClick(history.versions_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "+3. Publish" in history.diff_view.toPlainText()
    assert history.restore_button.isEnabled()
    click(qtbot, history.restore_button)

    assert detail.mode() == "read"
    assert "Publish" in detail.viewer.toPlainText()
    assert "IGNORE" not in detail.viewer.toPlainText()
    assert detail.banner.isVisible()
    assert "Restored version 1 as version 3" in detail.banner.message()
    restored = store.get(doc_id, full=True)
    assert (restored.content, restored.version) == ("1. Tag\n2. Build\n3. Publish", 3)
    assert [v.version for v in store.history(doc_id)] == [1, 2, 3]


def test_back_returns_to_the_document_and_the_list_keys_move_between_versions(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]]
) -> None:
    view, store, ids = opened
    doc_id = ids["API design review"]
    store.update(doc_id, title="API review v2")
    store.update(doc_id, tags=["api"])
    view.check_for_changes()
    qtbot.waitUntil(lambda: "API review v2" in titles(view))
    click_row(qtbot, view, "API review v2")
    click(qtbot, view.detail.header.history_button)
    history = view.detail.history
    assert history.versions_list.hasFocus()
    assert "tags: api, review → api" in history.diff_view.toPlainText()
    qtbot.keyClick(history.versions_list, Qt.Key.Key_Down)
    assert "title: API design review → API review v2" in history.diff_view.toPlainText()
    click(qtbot, history.back_button)
    assert view.detail.mode() == "read"
    assert view.detail.header.history_button.isVisible()


def test_a_save_waiting_for_another_programs_lock_leaves_the_window_responsive(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]]
) -> None:
    view, store, ids = opened
    click_row(qtbot, view, "Release checklist")
    detail = view.detail
    click(qtbot, detail.header.edit_button)
    qtbot.keyClick(detail.content_edit, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    type_text(qtbot, detail.content_edit, "\n4. Announce")

    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # `baton docs` in another process, mid-write
    seen: list[tuple[bool, str, int]] = []

    def while_waiting() -> None:
        """Runs on the GUI thread while the save waits: the event loop is alive."""
        version = store.get(ids["Release checklist"]).version
        seen.append((detail.isEnabled(), detail.header.save_button.text(), version))
        other.execute("COMMIT")

    def started(busy: bool) -> None:
        """The save began (the view heard first: connected before this); the next turn of
        the loop it waits in runs the other program's commit."""
        if busy:
            QTimer.singleShot(0, while_waiting)

    detail.writer.busyChanged.connect(started)
    click(qtbot, detail.header.save_button)
    other.close()
    assert seen == [(False, "Saving…", 1)]
    assert detail.mode() == "read" and detail.isEnabled()
    assert store.get(ids["Release checklist"], full=True).content.endswith("4. Announce")  # type: ignore[union-attr]


def test_tag_pills_are_not_cut_when_the_column_has_room(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]]
) -> None:
    view, store, _ = opened
    store.create("Pills", "x", tags=["design", "report", "deploy"])
    view.check_for_changes()
    qtbot.waitUntil(lambda: "Pills" in titles(view))
    row = titles(view).index("Pills")
    view.table.horizontalHeader().resizeSection(COL_TAGS, 260)
    rect = view.table.visualRect(view.model.index(row, COL_TAGS)).adjusted(4, 0, -4, 0)
    delegate = view.table.itemDelegate()
    assert isinstance(delegate, DocumentDelegate)
    pills, more = delegate.tag_layout(
        QFontMetricsF(tag_font()), rect, ["design", "report", "deploy"]
    )
    assert [label for _, label in pills] == ["design", "report", "deploy"]
    assert more is None
    narrow = rect.adjusted(0, 0, -(rect.width() - 120), 0)
    pills, more = delegate.tag_layout(
        QFontMetricsF(tag_font()), narrow, ["design", "report", "deploy"]
    )
    assert [label for _, label in pills][:1] == ["design"]
    assert more is not None and more[1].startswith("+")


def test_the_pane_lets_go_of_a_document_the_search_leaves_out(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]]
) -> None:
    view, _, ids = opened
    click_row(qtbot, view, "Release checklist")
    search(qtbot, view, "登录")
    wait_titles(qtbot, view, ["登录流程"])
    qtbot.waitUntil(lambda: view.detail.mode() == "empty")
    assert view.detail.empty_state.title.text() == "Not in the results"
    # A document being edited is never dropped by typing in the search box.
    click_row(qtbot, view, "登录流程")
    click(qtbot, view.detail.header.edit_button)
    qtbot.keyClicks(view.detail.content_edit, "x")
    search(qtbot, view, "Release")
    wait_titles(qtbot, view, ["Release checklist"])
    assert view.detail.mode() == "edit"
    assert view.detail.current_id() == ids["登录流程"]


def test_undo_delete_brings_the_document_back_under_its_id(
    qtbot: QtBot, opened: tuple[DocumentsView, DocumentStore, dict[str, int]], dialogs
) -> None:
    view, store, ids = opened
    click_row(qtbot, view, "数据库迁移计划")
    dialogs.answer("Delete")
    click(qtbot, view.detail.header.delete_button)
    qtbot.waitUntil(lambda: "数据库迁移计划" not in titles(view))
    assert view.detail.undo_delete_button.isVisible()
    click(qtbot, view.detail.undo_delete_button)
    assert view.detail.mode() == "read"
    assert view.detail.current_id() == ids["数据库迁移计划"]
    qtbot.waitUntil(lambda: "数据库迁移计划" in titles(view))
    versions = store.history(ids["数据库迁移计划"])
    assert [(v.version, v.deleted) for v in versions] == [(1, False), (2, True), (3, False)]
