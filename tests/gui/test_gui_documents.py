"""The document browser's list side: search as you type (English and Chinese), type and tag
filters, paging, empty states and live refresh while someone else writes.

Pages are fetched on a worker thread through the qasync loop, as in the app; every wait is on
a condition, never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.config.settings import Limits
from core.documents.store import DocumentStore
from gui.documents.documents_table import (
    COL_RUN,
    COL_SUMMARY,
    COL_TAGS,
    COL_TYPE,
    COL_UPDATED,
    MARK_CLOSE,
    MARK_OPEN,
    ROLE_SEGMENTS,
    relative_time,
    snippet_segments,
)
from gui.documents.documents_view import DocumentsView
from tests.gui.documents_support import (
    RUN_ID,
    click_row,
    fill,
    open_view,
    search,
    titles,
    wait_titles,
)

OLDEST_FIRST = [
    "Release checklist",
    "登录流程",
    "Login flow notes",
    "API design review",
    "数据库迁移计划",
]
NEWEST_FIRST = OLDEST_FIRST[::-1]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


@pytest.fixture
def view(
    qtbot: QtBot, store: DocumentStore, qasync_loop: asyncio.AbstractEventLoop
) -> DocumentsView:
    fill(store)
    return open_view(qtbot, store)


def test_an_empty_store_explains_where_documents_come_from(
    qtbot: QtBot, store: DocumentStore, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    view = open_view(qtbot, store)
    assert view.list_stack.currentWidget() is view.empty_state
    assert view.empty_state.title.text() == "No documents yet"
    assert "document tool" in view.empty_state.hint.text()
    assert view.detail.mode() == "empty"


def test_the_table_lists_newest_first_with_type_tags_time_and_run(view: DocumentsView) -> None:
    assert titles(view) == NEWEST_FIRST
    assert view.page_label.text() == "1–5 of 5 documents"
    assert not view.prev_button.isVisible()  # one page: no pager buttons
    model = view.model
    row = NEWEST_FIRST.index("Login flow notes")
    assert model.index(row, COL_TYPE).data() == "Memory"
    assert model.index(row, COL_TAGS).data() == "auth"
    assert model.index(row, COL_UPDATED).data() == "3 days ago"
    assert "Updated 20" in model.index(row, COL_UPDATED).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(row, COL_RUN).data() == "scout · 7f3a9c"
    planner_row = NEWEST_FIRST.index("API design review")
    assert model.index(planner_row, COL_RUN).data() == "planner · imported-…"
    assert RUN_ID in model.index(row, COL_RUN).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(NEWEST_FIRST.index("Release checklist"), COL_RUN).data() == "by hand"
    assert model.headerData(COL_SUMMARY, Qt.Orientation.Horizontal) == "Summary"
    # A short document has no stored summary: its text stands in, on one line, without
    # Markdown's backticks.
    assert model.index(row, COL_SUMMARY).data() == (
        "The login page posts to /api/session; tokens live in the keychain."
    )


def test_typing_an_english_word_searches_and_marks_the_match(
    qtbot: QtBot, view: DocumentsView
) -> None:
    search(qtbot, view, "keychain")
    wait_titles(qtbot, view, ["Login flow notes"])
    assert view.model.headerData(COL_SUMMARY, Qt.Orientation.Horizontal) == "Match"
    segments = view.model.index(0, COL_SUMMARY).data(ROLE_SEGMENTS)
    assert ("keychain", True) in segments
    assert view.page_label.text() == "1–1 of 1 result"

    search(qtbot, view, "login")  # a word prefix, in titles and text alike
    wait_titles(qtbot, view, ["Login flow notes"])


def test_a_two_character_chinese_query_finds_the_chinese_memory(
    qtbot: QtBot, view: DocumentsView
) -> None:
    search(qtbot, view, "登录")
    wait_titles(qtbot, view, ["登录流程"])
    segments = view.model.index(0, COL_SUMMARY).data(ROLE_SEGMENTS)
    assert ("登录", True) in segments

    search(qtbot, view, "数据")
    wait_titles(qtbot, view, ["数据库迁移计划"])


def test_clearing_the_search_lists_everything_again(qtbot: QtBot, view: DocumentsView) -> None:
    search(qtbot, view, "keychain")
    wait_titles(qtbot, view, ["Login flow notes"])
    view.filters.search_field.clear()
    wait_titles(qtbot, view, NEWEST_FIRST)
    assert view.model.headerData(COL_SUMMARY, Qt.Orientation.Horizontal) == "Summary"


def test_a_search_without_results_says_so(qtbot: QtBot, view: DocumentsView) -> None:
    search(qtbot, view, "kubernetes")
    qtbot.waitUntil(lambda: view.list_stack.currentWidget() is view.empty_state)
    assert view.empty_state.title.text() == "No results for “kubernetes”"
    assert view.page_label.text() == ""


def test_the_type_switch_filters_memories_and_documents(qtbot: QtBot, view: DocumentsView) -> None:
    memory, document = view.filters.type_button("Memory"), view.filters.type_button("Document")
    qtbot.mouseClick(memory, Qt.MouseButton.LeftButton)
    wait_titles(qtbot, view, ["Login flow notes", "登录流程"])
    qtbot.mouseClick(document, Qt.MouseButton.LeftButton)
    wait_titles(qtbot, view, ["数据库迁移计划", "API design review", "Release checklist"])
    search(qtbot, view, "登录")  # the type filter applies to searches too
    qtbot.waitUntil(lambda: view.list_stack.currentWidget() is view.empty_state)
    assert "show all types and tags" in view.empty_state.hint.text()


def test_the_tag_filter_offers_the_tags_in_use_with_counts(
    qtbot: QtBot, view: DocumentsView
) -> None:
    combo = view.filters.tag_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[0] == "All tags"
    assert texts[1] == "auth  (2)"  # most used first
    assert set(view.filters.tags()) == {"auth", "登录", "release", "api", "review", "数据库"}

    combo.setFocus()
    combo.setCurrentIndex(combo.findData("auth"))
    combo.activated.emit(combo.currentIndex())  # what a click in the popup sends
    wait_titles(qtbot, view, ["Login flow notes", "登录流程"])
    search(qtbot, view, "keychain")
    wait_titles(qtbot, view, ["Login flow notes"])


def test_pages_of_results_with_previous_and_next(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with DocumentStore(tmp_path / "paged.sqlite", limits=Limits(document_page_size=5)) as store:
        for number in range(12):
            store.create(f"Note {number:02}", f"Text of note {number}", type="memory")
        view = open_view(qtbot, store)
        assert titles(view) == [f"Note {n:02}" for n in range(11, 6, -1)]
        assert view.page_label.text() == "1–5 of 12 documents"
        assert view.next_button.isEnabled() and not view.prev_button.isEnabled()

        qtbot.mouseClick(view.next_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.page_label.text() == "6–10 of 12 documents")
        qtbot.mouseClick(view.next_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.page_label.text() == "11–12 of 12 documents")
        assert titles(view) == ["Note 01", "Note 00"]
        assert not view.next_button.isEnabled() and view.prev_button.isEnabled()
        qtbot.mouseClick(view.prev_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.page_label.text() == "6–10 of 12 documents")

        search(qtbot, view, "note")  # a new query starts again at page 1
        qtbot.waitUntil(lambda: view.page_label.text() == "1–5 of 12 results")
        view.shutdown()


def test_live_refresh_shows_what_another_connection_writes_keeping_the_selection(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore
) -> None:
    view.set_poll_interval(50)
    click_row(qtbot, view, "API design review")
    with DocumentStore(store.path) as agent:  # another connection, as an agent's would be
        agent.create("Fresh memory from an agent", "Remember the deadline.", type="memory")
        wait_titles(qtbot, view, ["Fresh memory from an agent", *NEWEST_FIRST])
    selected = view.table.selectionModel().selectedRows()
    assert [index.row() for index in selected] == [titles(view).index("API design review")]
    assert view.detail.header.title.full_text() == "API design review"


def test_live_refresh_updates_the_open_document_while_reading(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore
) -> None:
    view.set_poll_interval(50)
    click_row(qtbot, view, "Login flow notes")
    doc_id = view.detail.current_id()
    assert doc_id is not None
    with DocumentStore(store.path) as agent:
        agent.update(doc_id, content="Tokens now live in the **vault**.")
    qtbot.waitUntil(lambda: "vault" in view.detail.viewer.toPlainText())
    assert view.detail.mode() == "read"


def test_polling_stops_while_the_view_is_hidden(qtbot: QtBot, view: DocumentsView) -> None:
    assert view._poll.isActive()
    view.hide()
    assert not view._poll.isActive()
    view.show()
    assert view._poll.isActive()


def test_pages_are_fetched_on_a_worker_thread_that_shutdown_ends(
    qtbot: QtBot, view: DocumentsView
) -> None:
    search(qtbot, view, "keychain")
    wait_titles(qtbot, view, ["Login flow notes"])
    assert _worker_threads()
    view.shutdown()
    assert not _worker_threads()


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("baton-documents")]


def test_relative_times_and_snippet_markers() -> None:
    now = datetime(2024, 5, 10, 12, 0, tzinfo=UTC)
    assert relative_time(now - timedelta(seconds=10), now) == "just now"
    assert relative_time(now - timedelta(minutes=3), now) == "3 min ago"
    assert relative_time(now - timedelta(hours=5), now) == "5 h ago"
    assert relative_time(now - timedelta(days=3), now) == "3 days ago"
    assert relative_time(datetime(2023, 1, 2, 12, 0, tzinfo=UTC), now) == "2 Jan 2023"
    snippet = f"…the {MARK_OPEN}登录{MARK_CLOSE} page [not a match]"
    assert snippet_segments(snippet) == [
        ("…the ", False),
        ("登录", True),
        (" page [not a match]", False),
    ]


def test_store_tags_count_each_tag_once_ignoring_case(store: DocumentStore) -> None:
    store.create("a", tags=["Auth", "x"])
    store.create("b", tags=["auth"], type="memory")
    assert [(tag.casefold(), uses) for tag, uses in store.tags()] == [("auth", 2), ("x", 1)]
    assert store.tags(type="memory") == [("auth", 1)]
