"""Helpers for the document browser tests: a small realistic store, and ways to drive the view
as a person does (type, click a row, wait for the table)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from core.documents.store import DocumentProvenance, DocumentStore, NewDocument
from gui.documents.documents_table import COL_TITLE
from gui.documents.documents_view import DocumentsView

RUN_ID = "20240502-140312-7f3a9c"


def fill(store: DocumentStore) -> dict[str, int]:
    """Five documents, English and Chinese, memories and documents; returns title → id.
    Their update times are spread over the last days, oldest first."""
    now = datetime.now(UTC)
    scout = DocumentProvenance(run_id=RUN_ID, step=0, agent="scout", call_id="call_1")
    planner = DocumentProvenance(run_id="imported-pi-session-1", step=1, agent="planner")
    rows = [
        ("Release checklist", "document", ["release"], "1. Tag\n2. Build\n3. Publish", None),
        (
            "登录流程",
            "memory",
            ["auth", "登录"],
            "用户通过 **OAuth** 登录，令牌保存在钥匙串中。\n\n- 失败三次后锁定",
            scout,
        ),
        (
            "Login flow notes",
            "memory",
            ["auth"],
            "The login page posts to `/api/session`; tokens live in the keychain.",
            scout,
        ),
        ("API design review", "document", ["api", "review"], "## Endpoints\n\nGET /users", planner),
        ("数据库迁移计划", "document", ["数据库"], "先备份数据，再运行迁移脚本。", planner),
    ]
    ids = store.create_many(
        NewDocument(
            title=title,
            type=doc_type,
            tags=tags,
            content=content,
            provenance=provenance or DocumentProvenance(),
            created=now - timedelta(days=5 - number, minutes=5),
            updated=now - timedelta(days=5 - number),
        )
        for number, (title, doc_type, tags, content, provenance) in enumerate(rows)
    )
    return {row[0]: doc_id for row, doc_id in zip(rows, ids, strict=True)}


def open_view(qtbot: QtBot, store: DocumentStore) -> DocumentsView:
    """The view on ``store``, shown at a usual size, with its first page loaded."""
    view = DocumentsView(store)
    qtbot.addWidget(view, before_close_func=_shut_down)
    view.resize(1200, 720)
    with qtbot.waitSignal(view.pageLoaded):
        view.show()
    return view


def _shut_down(view: object) -> None:
    if isinstance(view, DocumentsView):
        view.shutdown()


def titles(view: DocumentsView) -> list[str]:
    return [hit.title for hit in view.model.hits()]


def wait_titles(qtbot: QtBot, view: DocumentsView, expected: list[str]) -> None:
    qtbot.waitUntil(lambda: titles(view) == expected and not view.filters.search_pending())


def click_row(qtbot: QtBot, view: DocumentsView, title: str) -> None:
    """Click the row of ``title`` the way a person does, and wait for the detail pane."""
    row = titles(view).index(title)
    rect = view.table.visualRect(view.model.index(row, COL_TITLE))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: view.detail.current() is not None)
    qtbot.waitUntil(lambda: view.detail.header.title.full_text() == title)


def type_text(qtbot: QtBot, widget: QWidget, text: str) -> None:
    """Type ``text`` into the focused ``widget``: key presses for ASCII (Return for a line
    break); for Chinese, what an input method sends when a person picks the characters (QTest
    has no key codes for them, nor for a bare line feed)."""
    for number, line in enumerate(text.split("\n")):
        if number:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        if line.isascii():
            qtbot.keyClicks(widget, line)
        else:
            event = QInputMethodEvent()
            event.setCommitString(line)
            QApplication.sendEvent(widget, event)


def search(qtbot: QtBot, view: DocumentsView, text: str) -> None:
    """Replace the search text by typing it (the debounce applies, as for a person)."""
    field = view.filters.search_field
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Backspace)
    type_text(qtbot, field, text)
