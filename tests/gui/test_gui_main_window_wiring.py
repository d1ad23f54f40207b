"""How the main window ties its views together: the documents' run links, Ctrl+S and the title
following the view that has unsaved edits."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from test_run_state import sample_run
from test_runs_cli import save

from gui.window.main_window import MainWindow


def test_a_document_run_link_opens_that_run(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    save(sample_run())
    window = make_window()
    window.documents_view.openRunRequested.emit("r1")
    qtbot.waitUntil(lambda: window.current_view() == "runs")
    assert "implement x" in window.runs_view.tabs.tabText(window.runs_view.tabs.currentIndex())

    window.documents_view.openRunRequested.emit("gone")
    assert "no longer in the history" in window.statusBar().currentMessage()


def test_ctrl_s_in_the_documents_view_saves_the_document_not_an_agent(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    window.show_view("documents")
    qtbot.waitUntil(lambda: window.documents_view.store is not None)
    store = window.documents_view.store
    assert store is not None
    created = store.create("Notes", "first")
    window.documents_view.reload()
    qtbot.waitUntil(lambda: window.documents_view.open_document(created.id))
    detail = window.documents_view.detail
    qtbot.mouseClick(detail.header.edit_button, Qt.MouseButton.LeftButton)
    detail.content_edit.setPlainText("second")
    qtbot.waitUntil(lambda: window.windowTitle() == "Baton — unsaved changes")
    window.sidebar.setFocus()  # focus outside the editor: File ▸ Save must route
    window.save_action.trigger()
    qtbot.waitUntil(lambda: store.get(created.id, full=True).content == "second")
    assert window.windowTitle() == "Baton"
