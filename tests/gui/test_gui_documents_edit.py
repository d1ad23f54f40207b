"""The document browser's detail pane: reading, editing in place (Save, Ctrl+S, Cancel),
conflicts with a write made meanwhile, delete, New, the run link, and unsaved edits.

Dialogs are answered through the ``dialogs`` fixture, by button label, as a person clicks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from core.config import paths
from core.documents.store import DocumentNotFound, DocumentStore
from gui.documents.document_prompts import KEEP_MINE, TAKE_THEIRS
from gui.documents.documents_view import DocumentsView
from gui.window.main_window import MainWindow
from tests.gui.documents_support import RUN_ID, click_row, fill, open_view, titles, type_text


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


@pytest.fixture
def ids(store: DocumentStore) -> dict[str, int]:
    return fill(store)


@pytest.fixture
def view(
    qtbot: QtBot,
    store: DocumentStore,
    ids: dict[str, int],
    qasync_loop: asyncio.AbstractEventLoop,
) -> DocumentsView:
    return open_view(qtbot, store)


def click(qtbot: QtBot, button: object) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def append_text(qtbot: QtBot, editor: object, text: str) -> None:
    """Go to the end of the text (Ctrl+End) and type ``text``."""
    qtbot.keyClick(editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    type_text(qtbot, editor, text)  # type: ignore[arg-type]


def replace_text(qtbot: QtBot, widget: object, text: str) -> None:
    """Select all in a field or editor and type over it."""
    widget.setFocus()  # type: ignore[attr-defined]
    widget.selectAll()  # type: ignore[attr-defined]
    qtbot.keyClick(widget, Qt.Key.Key_Delete)
    type_text(qtbot, widget, text)  # type: ignore[arg-type]


def test_opening_a_row_renders_the_document_with_its_metadata(
    qtbot: QtBot, view: DocumentsView
) -> None:
    click_row(qtbot, view, "登录流程")
    detail = view.detail
    assert detail.mode() == "read"
    text = detail.viewer.toPlainText()
    assert "用户通过 OAuth 登录" in text and "**" not in text  # Markdown rendered, not shown raw
    assert "失败三次后锁定" in text
    assert detail.header.type_badge.text() == "Memory"
    assert detail.header.tag_texts() == ["auth", "登录"]
    assert detail.header.written_by.text() == "Written by scout · step 1 · run"
    assert detail.header.run_link.isVisible()
    assert "created" in detail.header.times.full_text()


def test_the_run_link_asks_to_show_the_run_that_wrote_the_document(
    qtbot: QtBot, view: DocumentsView
) -> None:
    click_row(qtbot, view, "Login flow notes")
    with qtbot.waitSignal(view.openRunRequested) as signal:
        click(qtbot, view.detail.header.run_link)
    assert signal.args == [RUN_ID, 0, "call_1"]  # the step (0-based) and the tool call

    click_row(qtbot, view, "Release checklist")  # written by a person: no run to show
    assert view.detail.header.written_by.text() == "Written by hand"
    assert not view.detail.header.run_link.isVisible()


def test_edit_and_save_updates_the_store_and_the_table(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int]
) -> None:
    click_row(qtbot, view, "API design review")
    detail = view.detail
    click(qtbot, detail.header.edit_button)
    assert detail.mode() == "edit"
    assert detail.content_edit.hasFocus()
    replace_text(qtbot, detail.title_field, "API review, round two")
    replace_text(qtbot, detail.tags_field, "api, 评审")
    append_text(qtbot, detail.content_edit, "\n\nPOST /users added.")
    assert detail.header.dirty_mark.isVisible()
    click(qtbot, detail.header.save_button)

    stored = store.get(ids["API design review"], full=True)
    assert stored.title == "API review, round two"
    assert stored.tags == ["api", "评审"]
    assert stored.content is not None and stored.content.endswith("POST /users added.")
    assert stored.version == 2
    assert detail.mode() == "read" and not detail.is_dirty()
    assert "POST /users added." in detail.viewer.toPlainText()
    qtbot.waitUntil(lambda: titles(view)[0] == "API review, round two")  # newest change first
    qtbot.waitUntil(lambda: "评审" in view.filters.tags())


def test_ctrl_s_saves_while_typing(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int]
) -> None:
    click_row(qtbot, view, "Release checklist")
    click(qtbot, view.detail.header.edit_button)
    append_text(qtbot, view.detail.content_edit, "\n4. Announce")
    qtbot.keyClick(view.detail.content_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert view.detail.mode() == "read"
    assert store.get(ids["Release checklist"], full=True).content == (
        "1. Tag\n2. Build\n3. Publish\n4. Announce"
    )


def test_cancel_drops_the_edits(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int]
) -> None:
    click_row(qtbot, view, "Release checklist")
    click(qtbot, view.detail.header.edit_button)
    replace_text(qtbot, view.detail.content_edit, "scrap this")
    click(qtbot, view.detail.header.cancel_button)
    assert view.detail.mode() == "read"
    assert "Publish" in view.detail.viewer.toPlainText()
    assert store.get(ids["Release checklist"]).version == 1


def test_an_empty_title_is_refused_in_one_sentence_and_the_edits_stay(
    qtbot: QtBot, view: DocumentsView
) -> None:
    click_row(qtbot, view, "Release checklist")
    click(qtbot, view.detail.header.edit_button)
    replace_text(qtbot, view.detail.title_field, "   ")
    click(qtbot, view.detail.header.save_button)
    assert view.detail.banner.isVisible()
    assert view.detail.banner.message() == "The title must not be empty."
    assert view.detail.mode() == "edit"


def test_delete_asks_naming_the_document_and_removes_it(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    click_row(qtbot, view, "数据库迁移计划")
    asked: list[str] = []
    dialogs.answer("Delete", lambda box: asked.append(box.text()))
    click(qtbot, view.detail.header.delete_button)
    assert asked == ["Delete “数据库迁移计划”?"]
    with pytest.raises(DocumentNotFound):
        store.get(ids["数据库迁移计划"])
    assert view.detail.mode() == "empty"
    assert view.detail.empty_state.title.text() == "Document deleted"
    qtbot.waitUntil(lambda: "数据库迁移计划" not in titles(view))


def test_declining_the_delete_keeps_the_document(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    click_row(qtbot, view, "数据库迁移计划")
    dialogs.answer("Cancel")
    click(qtbot, view.detail.header.delete_button)
    assert store.get(ids["数据库迁移计划"]).title == "数据库迁移计划"
    assert view.detail.mode() == "read"


def _edit_then_agent_writes(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, doc_id: int
) -> None:
    """Open "Login flow notes", type an edit, and meanwhile an agent (another connection)
    saves the same document."""
    click_row(qtbot, view, "Login flow notes")
    click(qtbot, view.detail.header.edit_button)
    replace_text(qtbot, view.detail.content_edit, "Mine: tokens live in the vault.")
    with DocumentStore(store.path) as agent:
        agent.update(doc_id, content="Theirs: tokens live in the HSM.")


def test_conflict_keep_mine_overwrites_theirs(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    doc_id = ids["Login flow notes"]
    _edit_then_agent_writes(qtbot, view, store, doc_id)
    dialogs.answer(KEEP_MINE)
    click(qtbot, view.detail.header.save_button)
    assert dialogs.seen[-1] == "DocumentConflictPrompt"
    stored = store.get(doc_id, full=True)
    assert stored.content == "Mine: tokens live in the vault."
    assert stored.version == 3
    assert view.detail.mode() == "read"


def test_conflict_take_theirs_reloads_and_drops_the_edits(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    doc_id = ids["Login flow notes"]
    _edit_then_agent_writes(qtbot, view, store, doc_id)
    dialogs.answer(TAKE_THEIRS)
    click(qtbot, view.detail.header.save_button)
    assert store.get(doc_id, full=True).content == "Theirs: tokens live in the HSM."
    assert view.detail.mode() == "read"
    assert "HSM" in view.detail.viewer.toPlainText()


def test_conflict_cancel_keeps_editing_with_my_text(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    doc_id = ids["Login flow notes"]
    _edit_then_agent_writes(qtbot, view, store, doc_id)
    dialogs.answer("Cancel")
    click(qtbot, view.detail.header.save_button)
    assert store.get(doc_id, full=True).content == "Theirs: tokens live in the HSM."
    assert view.detail.mode() == "edit"
    assert view.detail.content_edit.toPlainText() == "Mine: tokens live in the vault."


def test_a_write_meanwhile_shows_a_banner_and_never_touches_the_edits(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int]
) -> None:
    view.set_poll_interval(50)
    _edit_then_agent_writes(qtbot, view, store, ids["Login flow notes"])
    qtbot.waitUntil(lambda: view.detail.banner.isVisible())
    assert "scout changed this document while you were editing it" in (view.detail.banner.message())
    assert view.detail.content_edit.toPlainText() == "Mine: tokens live in the vault."
    take = view.detail.banner.button("Take theirs")
    assert take is not None
    click(qtbot, take)
    assert view.detail.mode() == "read"
    assert "HSM" in view.detail.viewer.toPlainText()


def test_new_writes_a_document_by_hand_as_baton_docs_add_does(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore
) -> None:
    click(qtbot, view.filters.new_button)
    detail = view.detail
    assert detail.mode() == "new" and detail.title_field.hasFocus()
    assert detail.type_combo.currentData() == "document"  # the CLI's default too
    assert detail.header.no_tags.isVisible()
    type_text(qtbot, detail.title_field, "部署注意事项")
    assert detail.header.title.full_text() == "部署注意事项"
    replace_text(qtbot, detail.tags_field, "deploy, 运维")
    # The header follows the typing: chips for the tags, no "No tags".
    assert detail.header.tag_texts() == ["deploy", "运维"]
    assert not detail.header.no_tags.isVisible()
    detail.content_edit.setFocus()
    qtbot.keyClicks(detail.content_edit, "Never deploy on Fridays.")
    qtbot.keyClick(detail.content_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: titles(view)[:1] == ["部署注意事项"])
    created = store.get(view.model.hit(0).id, full=True)
    assert created.type == "document"
    assert created.tags == ["deploy", "运维"]
    assert created.content == "Never deploy on Fridays."
    assert created.provenance.by_person
    assert detail.mode() == "read"
    qtbot.waitUntil(lambda: view.table.selectionModel().isRowSelected(0))


def test_switching_rows_with_unsaved_edits_asks_first(
    qtbot: QtBot, view: DocumentsView, store: DocumentStore, ids: dict[str, int], dialogs
) -> None:
    click_row(qtbot, view, "Release checklist")
    click(qtbot, view.detail.header.edit_button)
    append_text(qtbot, view.detail.content_edit, "\n4. Announce")

    dialogs.answer("Cancel")  # stay: the edits and the selection are kept
    row = titles(view).index("API design review")
    rect = view.table.visualRect(view.model.index(row, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.detail.mode() == "edit"
    assert view.detail.content_edit.toPlainText().endswith("4. Announce")
    selection = view.table.selectionModel()
    qtbot.waitUntil(
        lambda: [titles(view)[i.row()] for i in selection.selectedRows()] == ["Release checklist"]
    )

    dialogs.answer("Don't save")
    click_row(qtbot, view, "API design review")
    assert view.detail.mode() == "read"
    assert store.get(ids["Release checklist"]).version == 1


def test_in_the_window_ctrl_s_saves_the_document_not_an_agent(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    qasync_loop: asyncio.AbstractEventLoop,
) -> None:
    with DocumentStore(paths.data_dir() / "documents.sqlite") as other:
        doc = other.create("Shortcut memory", "first line", type="memory")
        window = make_window()
        window.show_view("documents")
        view = window.stack.currentWidget()
        assert isinstance(view, DocumentsView)
        qtbot.waitUntil(lambda: titles(view) == ["Shortcut memory"])
        click_row(qtbot, view, "Shortcut memory")
        click(qtbot, view.detail.header.edit_button)
        append_text(qtbot, view.detail.content_edit, " and more")
        qtbot.keyClick(view.detail.content_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        assert other.get(doc.id, full=True).content == "first line and more"
        assert QApplication.activeModalWidget() is None
        view.shutdown()
