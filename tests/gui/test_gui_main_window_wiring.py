"""How the main window ties its views together: the documents' run links, Ctrl+S and the title
following the view that has unsaved edits."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from gui.run.tool_call_row import ToolCallRow
from gui.window.main_window import MainWindow
from tests.test_run_state import sample_run
from tests.test_runs_cli import save


def test_a_document_run_link_opens_that_run(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    save(sample_run())
    window = make_window()
    window.documents_view.openRunRequested.emit("r1", -1, "")
    qtbot.waitUntil(lambda: window.current_view() == "runs")
    assert "implement x" in window.runs_view.tabs.tabText(window.runs_view.tabs.currentIndex())

    window.documents_view.openRunRequested.emit("gone", -1, "")
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


def test_a_document_run_link_lands_on_the_step_and_call_open_or_not(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    save(sample_run())
    window = make_window()
    for attempt in ("closed", "already open"):
        window.show_view("documents")
        window.documents_view.openRunRequested.emit("r1", 0, "c1")
        qtbot.waitUntil(lambda: window.current_view() == "runs")
        page = window.runs_view.current_page()
        assert page is not None and page.run_id == "r1", attempt
        view = page.view
        qtbot.waitUntil(lambda: len(view.panes()) == 2)  # noqa: B023 (waited on at once)
        pane = view.pane(0)
        qtbot.waitUntil(pane.is_highlighted)
        (row,) = [
            w for w in pane.item_widgets() if isinstance(w, ToolCallRow) and w.call_id() == "c1"
        ]
        assert row.is_expanded()
    assert len(window.runs_view.pages()) == 1


def test_the_window_reopens_on_the_view_it_was_closed_on(
    qtbot: QtBot, make_window: Callable[..., MainWindow], gui_settings: QSettings
) -> None:
    window = make_window()
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # View ▸ Presets
    assert window.current_view() == "presets"
    assert window.close()

    again = make_window()
    assert again.current_view() == "presets"
    assert again.sidebar.list.currentRow() == 1
    assert again.close()

    gui_settings.setValue("main/view", "a view an older Baton had")
    assert make_window().current_view() == "agents"
