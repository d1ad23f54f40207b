"""Review comments in the window: a finished step's Comment…, lines selected with the mouse
and the keyboard, comments typed and added, Send — and the follow-up step's request, as the
scripted server receives it, carries path, line, code line and comment for each."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.record.run_files import RunIndex
from core.run.run_request import RunRequest, StepSpec
from gui.changes.diff_viewer import DiffViewer
from gui.changes.run_changes import RunChangesDialog
from gui.review.review_dialog import ReviewDialog
from gui.run.run_page import RunPage
from gui.run.step_pane import StepPane
from gui.window.main_window import MainWindow
from tests.git_repos import ALLOW, make_repo, run_step, three_changes
from tests.gui.conftest import OFFSCREEN_NOISE
from tests.gui.launching import (
    click,
    launch_request,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.gui.menus import choose_from_button_menu
from tests.llm_server import LLMServer, Reply

pytestmark = [
    pytest.mark.usefixtures("qasync_loop"),
    # The offscreen platform cannot grab the keyboard for a popup menu; the menu works anyway.
    pytest.mark.qt_log_ignore(
        OFFSCREEN_NOISE, "This plugin does not support grabbing the keyboard"
    ),
]
Window = Callable[..., MainWindow]
T = TypeVar("T", bound=QWidget)
PLAN = "## Plan\n1. Add a cache\n2. Use a global lock\n3. Ship it"


def _choose_comment(qtbot: QtBot, pane: StepPane) -> None:
    """Click the pane's "⋯" and pick "Comment on this step…" with the keyboard, as a person."""
    choose_from_button_menu(
        qtbot, pane.menu_button, (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Return)
    )


def _open_changed_repo_run(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer, tmp_path: Path
) -> tuple[MainWindow, RunPage]:
    """A saved run whose step changed a git repository three ways, opened in a window."""
    repo = make_repo(tmp_path / "repo")
    three_changes(llm_server)
    task = asyncio.ensure_future(run_step(llm_server, repo))
    qtbot.waitUntil(task.done, timeout=15_000)
    run_id = task.result()[0].run_id
    save_settings(llm_server.settings(policy=ALLOW))
    window = make_window(repo)
    record = RunIndex().get(run_id)
    assert record is not None
    page = window.runs_view.open_record(record)
    qtbot.waitUntil(lambda: not page.is_reading())
    return window, page


def _extend_to_next_line(qtbot: QtBot, view: QPlainTextEdit) -> None:
    """Shift+Down, Shift+End: the selection takes in the next line, as a person extends it."""
    qtbot.keyClick(view, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ShiftModifier)


def _click_line(qtbot: QtBot, dialog: ReviewDialog, line: int) -> None:
    """Click at the start of ``line`` (from 1) in the review text."""
    block = dialog.text.document().findBlockByNumber(line - 1)
    cursor = QTextCursor(block)
    rect = dialog.text.cursorRect(cursor)
    qtbot.mouseClick(dialog.text.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_comments_on_a_step_reach_the_follow_up_request(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("Found src/cache.py"), Reply.answer(PLAN))
    window = make_window()
    steps = [StepSpec("scout", "find the cache code"), StepSpec("planner", "plan {previous}")]
    session = launch_request(qtbot, window, RunRequest("chain", steps, window.working_folder))
    assert wait_until_finished(qtbot, session) == "ok"
    runs = window.runs_view
    page = runs.page_for(session.run_id)
    assert page is not None
    pane = page.view.pane(1)
    qtbot.waitUntil(pane.menu_button.comment_action.isEnabled)
    _choose_comment(qtbot, pane)
    review = runs.review.review_dialog
    assert review is not None and review.isVisible()
    assert review.agent.currentText() == "planner"
    assert review.text.toPlainText() == PLAN
    assert not review.send_button.isEnabled()

    _click_line(qtbot, review, 3)  # "2. Use a global lock"
    assert review.where.text() == "Commenting on step 2 output, line 3"
    type_into(qtbot, review.comment, "No global state, please.")
    click(qtbot, review.add_button)
    _click_line(qtbot, review, 2)
    _extend_to_next_line(qtbot, review.text)
    assert review.where.text() == "Commenting on step 2 output, lines 2-3"
    type_into(qtbot, review.comment, "Measure first.")
    click(qtbot, review.add_button)
    assert [review.comment_list.item(i).text() for i in range(2)] == [
        "step 2 output:3 — No global state, please.",
        "step 2 output:2-3 — Measure first.",
    ]
    assert review.send_button.text() == "Send 2 comments"

    llm_server.queue(Reply.answer("Revised plan without a global lock."))
    click(qtbot, review.send_button)
    follow = wait_for_session(qtbot, window, count=2)
    assert wait_until_finished(qtbot, follow) == "ok"
    assert len(llm_server.requests) == 3  # the reviewed steps were reused, not sent again
    sent = llm_server.requests[2].user_text
    assert "## Comment 1: step 2 output, line 3\n\n```\n2. Use a global lock\n```" in sent
    assert "No global state, please." in sent
    assert (
        "## Comment 2: step 2 output, line 2-3\n\n```\n1. Add a cache\n2. Use a global lock\n```"
        in sent
    )
    assert "Measure first." in sent
    assert PLAN in sent  # the answer under review, for context
    record = RunIndex().get(follow.run_id)
    assert record is not None and record.origin is not None
    assert (record.origin.kind, record.origin.run_id) == ("follow_up", session.run_id)
    assert [s.agent for s in follow.view.state().steps] == ["scout", "planner", "planner"]


def test_a_comment_on_a_changed_file_s_diff_names_the_file_line(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A step that changed a git repository: its diff is offered in the review, a comment on
    a ``+`` line carries the file's path, the new line number and the code."""
    window, page = _open_changed_repo_run(qtbot, make_window, llm_server, tmp_path)
    runs = window.runs_view
    pane = page.view.pane(0)
    qtbot.waitUntil(pane.menu_button.comment_action.isEnabled)
    _choose_comment(qtbot, pane)
    review = runs.review.review_dialog
    assert review is not None
    qtbot.waitUntil(lambda: review.source.count() == 4)  # the answer and three files' diffs
    assert [review.source.itemText(i) for i in range(4)] == [
        "step 1 output",
        "app.py",
        "docs/new.md",
        "notes.txt",
    ]
    assert review.source.isVisible()
    review.source.setFocus()
    qtbot.keyClick(review.source, Qt.Key.Key_End)  # the last file, as a person picks it
    assert review.text.toPlainText().split("\n") == [
        "@@ -1,2 +1,2 @@",
        "-colour: red",
        "+colour: blue",
        " size: big",
    ]
    _click_line(qtbot, review, 3)
    assert review.where.text() == "Commenting on notes.txt, line 1"
    type_into(qtbot, review.comment, "Blue clashes with the logo.")
    click(qtbot, review.add_button)
    llm_server.queue(Reply.answer("Changed it back."))
    click(qtbot, review.send_button)
    follow = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, follow) == "ok"
    sent = llm_server.requests[-1].user_text
    assert "## Comment 1: notes.txt, line 1\n\n```\ncolour: blue\n```" in sent
    assert "Blue clashes with the logo." in sent


def _click_row(qtbot: QtBot, view: QPlainTextEdit, row: int) -> None:
    """Click at the start of shown row ``row`` (from 1) of a diff view."""
    rect = view.cursorRect(QTextCursor(view.document().findBlockByNumber(row - 1)))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


@pytest.mark.parametrize("opened_from", ["step pane", "run changes"])
def test_comments_made_in_the_diff_viewer_reach_the_follow_up_request(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer, tmp_path: Path, opened_from: str
) -> None:
    """Comment on selection in the diff viewer (unified and side by side), Send comments:
    the follow-up's request names each file, line, code line and comment. The viewer is
    opened from the step's Changes, or from the run's Changes view."""
    window, page = _open_changed_repo_run(qtbot, make_window, llm_server, tmp_path)
    run_id = page.run_id
    section = page.view.pane(0).changes
    assert section is not None
    if opened_from == "step pane":
        click(qtbot, section.file_buttons[2])  # notes.txt
    else:
        click(qtbot, section.run_button)
        qtbot.waitUntil(lambda: bool(_top_level(RunChangesDialog)))
        (changes,) = _top_level(RunChangesDialog)
        qtbot.addWidget(changes)
        step = changes.tree.topLevelItem(0)
        assert step is not None
        notes = step.child(2)
        assert notes is not None and notes.text(0).startswith("notes.txt")
        at = changes.tree.visualItemRect(notes).center()
        # A double click is a click, then the second press (QTest sends only the latter).
        qtbot.mouseClick(changes.tree.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.mouseDClick(changes.tree.viewport(), Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: bool(_viewers()))
    (viewer,) = _viewers()
    assert viewer.send_button.isVisible() and not viewer.send_button.isEnabled()

    _click_row(qtbot, viewer.unified, 1)  # the hunk header: no file line
    assert viewer.where.text() == "Select the lines of a file to comment on."
    _click_row(qtbot, viewer.unified, 3)  # "+colour: blue"
    assert viewer.where.text() == "Commenting on notes.txt, line 1"
    assert not viewer.comment_button.isEnabled()  # nothing typed yet
    type_into(qtbot, viewer.comment, "Blue clashes with the logo.")
    click(qtbot, viewer.comment_button)

    click(qtbot, viewer.split_button)
    _click_row(qtbot, viewer.old_side, 2)  # "-colour: red", line 1 of the old file
    _extend_to_next_line(qtbot, viewer.old_side)
    assert viewer.where.text() == "Commenting on notes.txt, lines 1-2"
    type_into(qtbot, viewer.comment, "Why was red wrong?")
    click(qtbot, viewer.comment_button)
    assert [viewer.comment_list.item(i).text() for i in range(2)] == [
        "notes.txt:1 — Blue clashes with the logo.",
        "notes.txt:1-2 — Why was red wrong?",
    ]
    assert viewer.send_button.text() == "Send 2 comments"

    llm_server.queue(Reply.answer("Changed it back."))
    click(qtbot, viewer.send_button)
    follow = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, follow) == "ok"
    assert not viewer.isVisible()
    sent = llm_server.requests[-1].user_text
    assert "## Comment 1: notes.txt, line 1\n\n```\ncolour: blue\n```" in sent
    assert "Blue clashes with the logo." in sent
    assert "## Comment 2: notes.txt, line 1-2\n\n```\ncolour: red\nsize: big\n```" in sent
    assert "Why was red wrong?" in sent
    assert [s.agent for s in follow.view.state().steps] == ["worker", "worker"]
    origin = RunIndex().get(follow.run_id)
    assert origin is not None and origin.origin is not None
    assert (origin.origin.kind, origin.origin.run_id) == ("follow_up", run_id)


def _top_level(kind: type[T]) -> list[T]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


def _viewers() -> list[DiffViewer]:
    return _top_level(DiffViewer)
