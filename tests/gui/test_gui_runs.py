"""The Runs view: history of real runs (filter, reopen, delete, export, re-run), transcripts,
cancelling, closing the window during a run, and notifications."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget
from pytestqt.qtbot import QtBot

from core.record.run_files import RunIndex
from core.run.run_request import RunRequest, StepSpec
from gui.approvals.approval_dialog import ApprovalDialog
from gui.run.run_controller import RunSession
from gui.run.run_page import RunPage
from gui.run.runs_view import RunsView
from gui.window.main_window import MainWindow
from tests.gui.launching import (
    RUN_TIMEOUT_MS,
    click,
    open_launch_dialog,
    pick_preset,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply, Tokens

pytestmark = pytest.mark.usefixtures("qasync_loop")
Window = Callable[..., MainWindow]


def _launch(qtbot: QtBot, window: MainWindow, *steps: tuple[str, str], mode: str = "chain"
            ) -> RunSession:  # fmt: skip
    """Start a run through the window's launcher (what the dialog and Re-run call)."""
    request = RunRequest(
        mode=mode,  # type: ignore[arg-type]
        steps=[StepSpec(agent=a, task=t) for a, t in steps],
        cwd=window.working_folder,
    )
    task = asyncio.ensure_future(window.run_controller.launch(request, "ask", window))
    qtbot.waitUntil(task.done, timeout=RUN_TIMEOUT_MS)
    session = task.result()
    assert session is not None
    return session


def _history_row(qtbot: QtBot, runs: RunsView, run_id: str) -> None:
    """Select the run's row with the mouse."""
    runs.show_history()
    qtbot.waitUntil(lambda: run_id in [r.id for r in runs.history.visible_records()])
    table = runs.history.table
    row = [r.id for r in runs.history.visible_records()].index(run_id)
    rect = table.visualRect(runs.history.model.index(row, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    selected = runs.history.selected_record()
    assert selected is not None and selected.id == run_id


def _texts(page: RunPage) -> list[list[str]]:
    return [[getattr(item, "text", "") for item in s.items] for s in page.view.state().steps]


def test_a_finished_run_is_listed_filtered_and_reopened_with_the_same_content(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    server.queue(
        Reply.answer("The flags live in **src/cli.py**.", tokens=Tokens(1200, 80)),
        Reply.answer("1. Add `--json`.", tokens=Tokens(2000, 120)),
    )
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "scout-and-plan")
    type_into(qtbot, dialog.args_edit, "json output")
    click(qtbot, dialog.run_button)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    live_texts = _texts(window.runs_view.page_for(session.run_id))  # type: ignore[arg-type]

    runs = window.runs_view
    qtbot.waitUntil(lambda: [r.status for r in runs.history.visible_records()] == ["ok"])
    model = runs.history.model
    row = [model.index(0, c).data() for c in range(6)]
    assert row[1] == "scout-and-plan json output"
    assert row[2] == "Done"
    assert row[4] == "↑3.2k ↓200"

    runs.history.filter_field.setText("planner done")  # agents and status match too
    qtbot.waitUntil(lambda: len(runs.history.visible_records()) == 1)  # after a typing pause
    runs.history.filter_field.setText("SCOUT failed")  # every word must match
    qtbot.waitUntil(lambda: runs.history.visible_records() == [])
    assert runs.history.stack.currentWidget() is runs.history.table  # no "No runs yet"
    runs.history.filter_field.setText("")
    qtbot.waitUntil(lambda: len(runs.history.visible_records()) == 1)

    # Close the live tab, then reopen the run from the history: replayed at once.
    live_page = runs.page_for(session.run_id)
    assert live_page is not None
    runs.tabs.tabCloseRequested.emit(runs.tabs.indexOf(live_page))
    assert runs.page_for(session.run_id) is None
    _history_row(qtbot, runs, session.run_id)
    table = runs.history.table
    rect = table.visualRect(runs.history.model.index(0, 1))
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    page = runs.current_page()
    assert page is not None and page.session is None
    assert page.view.placeholder.text().startswith("Reading ")  # read off the GUI thread
    qtbot.waitUntil(lambda: not page.is_reading())
    assert not page.view.model.is_live()
    assert page.view.state().status == "ok"
    assert _texts(page) == live_texts
    assert [p.isVisible() for p in page.view.panes()] == [True, True]
    assert page.banner.isHidden()  # it is in the history: nothing to import


def test_delete_asks_and_export_writes_markdown(
    qtbot: QtBot,
    make_window: Window,
    server: LLMServer,
    dialogs: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.queue(Reply.answer("Found it."))
    window = make_window()
    session = _launch(qtbot, window, ("scout", "Find the parser"), mode="single")
    assert wait_until_finished(qtbot, session) == "ok"
    runs = window.runs_view
    _history_row(qtbot, runs, session.run_id)

    target = tmp_path / "out" / "run.md"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    click(qtbot, runs.history.export_button)
    markdown = target.read_text(encoding="utf-8")
    assert markdown.startswith("# scout\n") or markdown.startswith("# scout:")
    assert "Find the parser" in markdown and "Found it." in markdown
    assert runs.history.banner.message() == f"Exported to {target}."

    record = RunIndex().get(session.run_id)
    assert record is not None
    dialogs.answer("Cancel")
    click(qtbot, runs.history.delete_button)
    assert Path(record.path).is_file()
    texts: list[str] = []
    dialogs.answer("Delete", lambda box: texts.append(box.text()))
    window.activateWindow()  # the closed prompt took the activation with it (offscreen)
    qtbot.waitUntil(window.isActiveWindow)
    runs.history.table.setFocus()
    qtbot.keyClick(runs.history.table, Qt.Key.Key_Delete)
    assert texts and texts[0].startswith("Delete the run “scout")
    assert not Path(record.path).exists()
    assert runs.history.visible_records() == []
    assert runs.history.stack.currentWidget() is runs.history.empty_state
    assert runs.page_for(session.run_id) is None  # its tab went with it


def test_rerun_starts_a_new_run_with_the_same_tasks(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    server.responder = lambda body: Reply.answer("ok: " + body["messages"][-1]["content"][-12:])
    window = make_window()
    first = _launch(qtbot, window, ("scout", "Map the repo"), ("planner", "Plan from {previous}"))
    assert wait_until_finished(qtbot, first) == "ok"
    runs = window.runs_view
    _history_row(qtbot, runs, first.run_id)
    click(qtbot, runs.history.rerun_button)
    second = wait_for_session(qtbot, window, count=2)
    assert second is not first
    assert wait_until_finished(qtbot, second) == "ok"
    assert [(s.agent, s.task) for s in second.request.steps] == [
        ("scout", "Map the repo"),
        ("planner", "Plan from {previous}"),
    ]
    assert second.request.mode == "chain"
    assert runs.current_page() is runs.page_for(second.run_id)
    qtbot.waitUntil(lambda: len(runs.history.visible_records()) == 2)
    assert len(server.requests) == 4


def test_cancel_from_the_run_view_and_closing_its_tab(
    qtbot: QtBot, make_window: Window, server: LLMServer, dialogs: Any
) -> None:
    release = threading.Event()
    server.queue(Reply.hang(release=release))
    window = make_window()
    session = _launch(qtbot, window, ("scout", "Take forever"), mode="single")
    runs = window.runs_view
    page = runs.page_for(session.run_id)
    assert page is not None
    qtbot.waitUntil(lambda: len(server.requests) == 1)
    qtbot.waitUntil(lambda: session.view.header.cancel_button.isEnabled())

    dialogs.answer("Keep running")
    runs.tabs.tabCloseRequested.emit(runs.tabs.indexOf(page))
    assert session.is_active() and runs.page_for(session.run_id) is page

    click(qtbot, session.view.header.cancel_button)
    assert wait_until_finished(qtbot, session) == "aborted"
    release.set()
    record = RunIndex().get(session.run_id)
    assert record is not None and record.status == "aborted"
    runs.tabs.tabCloseRequested.emit(runs.tabs.indexOf(page))
    assert runs.page_for(session.run_id) is None
    assert session not in window.run_controller.sessions()


def test_closing_the_window_during_a_run_cancels_it_first(
    qtbot: QtBot, make_window: Window, server: LLMServer, dialogs: Any
) -> None:
    server.queue(Reply.hang())
    window = make_window()
    session = _launch(qtbot, window, ("scout", "Take forever"), mode="single")
    qtbot.waitUntil(lambda: len(server.requests) == 1)

    dialogs.answer("Keep running")
    window.close()
    assert window.isVisible() and session.is_active()

    dialogs.answer("Cancel runs and quit")
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=RUN_TIMEOUT_MS)
    assert session.runner.result is not None and session.runner.result.status == "aborted"
    assert dialogs.seen == ["CancelRunsPrompt", "CancelRunsPrompt"]


def test_a_run_ending_while_the_window_is_inactive_notifies(
    qtbot: QtBot,
    make_window: Window,
    server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alerts: list[QWidget] = []
    monkeypatch.setattr(QApplication, "alert", lambda widget, _ms=0: alerts.append(widget))
    release = threading.Event()
    server.queue(Reply.answer("Done and dusted.", hold=release))
    window = make_window()
    session = _launch(qtbot, window, ("scout", "Look"), mode="single")
    elsewhere = QWidget()
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    release.set()
    assert wait_until_finished(qtbot, session) == "ok"
    sent = window.run_controller.notifier.sent
    assert [n.title for n in sent] == ["Run finished"]
    assert sent[0].message.startswith("scout")
    assert alerts == [window]


def test_an_approval_request_reaches_the_queue_and_notifies_when_away(
    qtbot: QtBot,
    make_window: Window,
    server: LLMServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)
    server.queue(Reply.tool("bash", {"command": "touch made.txt"}), Reply.answer("ok, I won't"))
    window = make_window()
    elsewhere = QWidget()
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    session = _launch(qtbot, window, ("worker", "Make a file"), mode="single")
    queue = window.run_controller.approvals
    qtbot.waitUntil(lambda: len(queue.pending()) == 1, timeout=RUN_TIMEOUT_MS)
    notes = window.run_controller.notifier.sent
    assert notes[0].title == "Approval needed"
    assert notes[0].message == "worker, step 1: worker wants to use bash."
    assert notes[0].target == (session.run_id, 0)
    qtbot.waitUntil(lambda: session.view.state().steps[0].phase == "waiting")

    dialog = queue.dialog
    qtbot.waitUntil(dialog.buttons_enabled)
    click(qtbot, dialog.deny_button)
    assert wait_until_finished(qtbot, session) == "ok"
    assert not (project / "made.txt").exists()
    assert [n.title for n in notes] == ["Approval needed", "Run finished"]


def test_open_a_transcript_then_import_it(
    qtbot: QtBot,
    make_window: Window,
    server: LLMServer,  # a configured provider: no first-run panel probing for Ollama
    fixtures_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    transcript = fixtures_dir / "pi" / "pi-0.73.1" / "simple.jsonl"
    window = make_window()
    runs = window.runs_view
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(transcript), ""))
    window.open_run_action.trigger()
    assert window.current_view() == "runs"
    page = runs.current_page()
    assert page is not None and page.path == transcript
    qtbot.waitUntil(lambda: not page.is_reading())
    assert page.view.state().status == "ok"
    assert len(page.view.panes()) == 1
    assert runs.history.visible_records() == []  # opening is not importing
    assert page.banner.message() == "This run is not in your history."

    click(qtbot, page.banner.button("Import into history"))  # type: ignore[arg-type]
    assert page.banner.message() == "Imported into the history."
    assert len(runs.history.visible_records()) == 1

    garbage = tmp_path / "notes.jsonl"
    garbage.write_text('{"hello": "world"}\n', encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(garbage), ""))
    window.open_run_action.trigger()
    qtbot.waitUntil(lambda: runs.history.banner.kind() == "error")
    assert runs.tabs.currentWidget() is runs.history
    assert [p.path for p in runs.pages()] == [transcript]  # the failed tab went away
    assert runs.history.banner.message().startswith("Could not open notes.jsonl: ")


def test_history_stays_reachable_and_tabs_tell_runs_apart(
    qtbot: QtBot, make_window: Window, server: LLMServer
) -> None:
    window = make_window()
    window.resize(800, 600)
    runs = window.runs_view
    assert not runs.history_button.isVisible()  # the History tab is in sight
    sessions = []
    for _ in range(6):
        server.queue(Reply.answer("done"))
        sessions.append(_launch(qtbot, window, ("scout", "look"), mode="single"))
    for session in sessions:
        wait_until_finished(qtbot, session)
    texts = set()
    for session in sessions:
        page = runs.page_for(session.run_id)
        assert page is not None
        texts.add(runs.tabs.tabText(runs.tabs.indexOf(page)))
    assert len(texts) == 6  # the same run six times, six different tab texts
    qtbot.waitUntil(runs.history_button.isVisible)  # six tabs do not fit in 800 px
    qtbot.mouseClick(runs.history_button, Qt.MouseButton.LeftButton)
    assert runs.tabs.currentWidget() is runs.history
    # The History tab scrolled back into sight: the button goes, never both over the tabs.
    qtbot.waitUntil(lambda: not runs.history_button.isVisible())
    runs.tabs.setCurrentIndex(runs.tabs.count() - 1)
    qtbot.waitUntil(runs.history_button.isVisible)


def test_a_status_dot_is_drawn_once_per_palette(qtbot: QtBot) -> None:
    from PySide6.QtGui import QColor, QPalette

    from gui.history.runs_table import status_icon

    light = QApplication.palette()
    dark = QPalette(light)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#181818"))
    assert status_icon("ok", light).cacheKey() == status_icon("ok", light).cacheKey()
    assert status_icon("ok", dark).cacheKey() != status_icon("ok", light).cacheKey()
    assert status_icon("error", light).cacheKey() != status_icon("ok", light).cacheKey()
