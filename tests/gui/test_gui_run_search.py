"""History's run search and Compare, driven as a person would: type in the search box, click
a result (the run opens at the step, the match highlighted); select two runs, click Compare."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextDocument
from PySide6.QtWidgets import QListWidgetItem
from pytestqt.qtbot import QtBot

from core.record.run_files import Redactor, RunIndex, RunWriter
from gui.compare.compare_view import CompareDialog
from gui.history.search_results import ROLE_MARKED
from gui.run.markdown_stream import MarkdownStream
from gui.run.runs_view import RunsView
from gui.widgets.match_highlight import marked_texts, marked_weights
from gui.window.main_window import MainWindow
from tests.gui.launching import click, type_into
from tests.gui.run_events import RunBuilder

pytestmark = pytest.mark.usefixtures("qasync_loop")
Window = Callable[..., MainWindow]


def _save(run_id: str, answer: str, bash_result: str, tokens: int, worker_model: str = "m") -> None:
    """A finished two-step run (scout → worker), written and indexed as Baton records one."""
    run = RunBuilder(run_id).start(
        "chain", [("scout", "look around", "m"), ("worker", "fix the login", worker_model)]
    )
    run.step_started(0, "look around", "m").text(0, "Nothing odd.").usage(0, "m", 100, 10, 0.01)
    run.step_finished(0, output="Nothing odd.")
    run.step_started(1, "fix the login", worker_model)
    run.tool(1, "bash", {"command": "pytest -q tests/test_login.py"}, bash_result)
    run.tool(1, "write", {"path": "src/login.py", "content": "x"}, "wrote src/login.py")
    run.text(1, answer).usage(1, worker_model, tokens, 50, 0.02)
    run.step_finished(1, output=answer).run_finished()
    writer = RunWriter(run_id, Redactor())
    for event in run.events:
        writer.write(event)
    writer.close()
    RunIndex().add_file(writer.path)


def bold_parts(item: QListWidgetItem) -> list[str]:
    """The bold runs of text of a result as its delegate paints it."""
    document = QTextDocument()
    document.setHtml(item.data(ROLE_MARKED))
    found: list[str] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().fontWeight() >= QFont.Weight.Bold:
                found.append(fragment.text())
            it += 1
        block = block.next()
    return found


def _runs(qtbot: QtBot, window: MainWindow) -> RunsView:
    window.show_view("runs")
    runs = window.runs_view
    runs.show_history()
    return runs


def test_search_box_finds_a_tool_result_and_opens_the_run_there(
    qtbot: QtBot, make_window: Window
) -> None:
    _save("run-a", "Fixed the 登录 retry loop.", "3 passed, 1 failed: test_token_refresh", 900)
    _save("run-b", "Nothing to fix.", "4 passed", 700)
    window = make_window()
    runs = _runs(qtbot, window)
    panel = runs.history.search_panel
    type_into(qtbot, panel.field, "token_refresh")
    qtbot.waitUntil(lambda: panel.results.count() == 1 and not panel.is_searching())
    assert not runs.history.stack.isVisible()  # the results take the table's place
    [hit] = panel.hits()
    assert (hit.run_id, hit.step, hit.kind, hit.tool) == ("run-a", 1, "result", "bash")
    item = panel.results.item(0)
    assert "step 2 · tool result (bash)" in item.text()
    assert "3 passed, 1 failed: test_token_refresh" in item.text()  # plain: no marks
    assert bold_parts(item) == ["token", "refresh"]
    rect = panel.results.visualItemRect(item)
    qtbot.mouseClick(panel.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: runs.current_page() is not None)
    page = runs.current_page()
    assert page is not None and page.run_id == "run-a"
    qtbot.waitUntil(lambda: not page.is_reading())
    pane = page.view.pane(1)
    qtbot.waitUntil(lambda: bool(marked_texts(pane)))
    assert pane.is_highlighted()
    assert set(marked_texts(pane)) == {"token", "refresh"}
    assert all(w == QFont.Weight.Bold for w in marked_weights(pane))

    runs.show_history()
    panel.field.clear()
    panel.field.insert("登录")  # as an input method commits it (QTest types Latin-1 only)
    qtbot.waitUntil(lambda: panel.results.count() == 1 and not panel.is_searching())
    assert panel.hits()[0].kind == "output"
    panel.field.clear()
    assert runs.history.stack.isVisible() and not panel.results.isVisible()
    type_into(qtbot, panel.field, "nowhere")
    qtbot.waitUntil(lambda: not panel.is_searching() and "No run mentions" in panel.status.text())
    assert panel.results.count() == 0


def test_a_hit_deep_in_a_long_answer_is_marked_where_it_is(
    qtbot: QtBot, make_window: Window
) -> None:
    """A long answer's segments out of sight are parked (their rendering dropped): the one
    holding the match is rendered again to be marked and scrolled to."""
    paragraphs = [f"Paragraph {n}: " + "plain words " * 30 for n in range(160)]
    paragraphs[60] = "Paragraph 60: the zephyrine clause is here."
    _save("run-long", "\n\n".join(paragraphs), "4 passed", 900)
    window = make_window()
    runs = _runs(qtbot, window)
    panel = runs.history.search_panel
    type_into(qtbot, panel.field, "zephyrine")
    qtbot.waitUntil(lambda: panel.results.count() >= 1 and not panel.is_searching())
    rect = panel.results.visualItemRect(panel.results.item(0))
    qtbot.mouseClick(panel.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: runs.current_page() is not None)
    page = runs.current_page()
    assert page is not None
    qtbot.waitUntil(lambda: not page.is_reading())
    pane = page.view.pane(1)
    qtbot.waitUntil(lambda: marked_texts(pane) == ["zephyrine"])
    streams = pane.findChildren(MarkdownStream)
    assert any(view.is_parked() for stream in streams for view in stream.views())
    (holder,) = [v for s in streams for v in s.views() if "zephyrine" in v.toPlainText()]
    cursor = holder.cursorRect(holder.textCursor())
    assert holder.viewport().visibleRegion().contains(cursor.center())  # scrolled to it


def test_compare_two_selected_runs(qtbot: QtBot, make_window: Window) -> None:
    _save("run-a", "Fixed it.\nAll green.", "3 passed", 900)
    _save("run-b", "Fixed it.\nOne left.", "4 passed", 700, worker_model="big-model")
    window = make_window()
    runs = _runs(qtbot, window)
    history = runs.history
    qtbot.waitUntil(lambda: len(history.visible_records()) == 2)
    assert not history.compare_button.isEnabled()
    table = history.table
    for row, modifier in (
        (0, Qt.KeyboardModifier.NoModifier),
        (1, Qt.KeyboardModifier.ControlModifier),
    ):
        rect = table.visualRect(history.model.index(row, 1))
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())
    assert history.compare_button.isEnabled()
    assert not history.open_button.isEnabled()  # one run at a time for the others
    click(qtbot, history.compare_button)
    qtbot.waitUntil(
        lambda: runs.review.compare_dialog is not None and runs.review.compare_dialog.isVisible()
    )
    dialog = runs.review.compare_dialog
    assert isinstance(dialog, CompareDialog)
    view = dialog.view
    assert {view.comparison.left.run_id, view.comparison.right.run_id} == {"run-a", "run-b"}
    assert view.row_texts(0)[2] == "m"  # each step's model
    assert view.row_texts(0)[3] == "same"
    second = view.row_texts(1)
    assert second[2] in ("m → big-model", "big-model → m")
    assert second[3] == "changed" and second[4] == "same"
    assert second[8] == "1"
    assert second[6] == "$0.0200"  # same cost both sides: shown once, as every cost is
    qtbot.waitUntil(
        lambda: (
            view.steps.viewport().height()
            >= view.steps.rowViewportPosition(1) + view.steps.rowHeight(1)
        )
    )  # every step row in sight, not one and a half
    assert view.files_a.text() == "Files changed: none"  # step 1 is shown
    rect = view.steps.visualRect(view.steps.model().index(1, 0))
    qtbot.mouseClick(view.steps.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.files_a.text() == "Files changed: src/login.py"
    diff = view.diff.toPlainText()
    assert "-All green." in diff or "-One left." in diff
    assert [view.tools_a.item(i).text() for i in range(view.tools_a.count())] == [
        "bash: pytest -q tests/test_login.py",
        "write: src/login.py",
    ]
    dialog.close()


def test_run_content_is_shown_as_text_never_as_html(qtbot: QtBot, make_window: Window) -> None:
    hostile = 'Done <img src="https://x.example/a.png"> <b>no</b> [it] &amp; quota'
    _save("run-a", hostile, "3 passed", 900)
    window = make_window()
    panel = _runs(qtbot, window).history.search_panel
    type_into(qtbot, panel.field, "quota")
    qtbot.waitUntil(lambda: panel.results.count() == 1 and not panel.is_searching())
    item = panel.results.item(0)
    assert bold_parts(item) == ["quota"]  # the model's <b> is not bold, its [ ] not a match
    document = QTextDocument()
    document.setHtml(item.data(ROLE_MARKED))
    assert hostile in document.toPlainText()  # every character shown as written
    assert "<img" not in document.toHtml()  # no image asked for
