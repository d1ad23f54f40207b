"""The run view, driven the way a person uses it: reading, clicking, keys, cancelling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from core.model.events import ApprovalResolved, Event, RunFinished, StepFinished, StepStarted
from gui.run import run_header
from gui.run.run_view import RunView
from gui.run.step_items import NoticeItem, TextItem, ThinkingItem
from gui.run.step_pane import StepPane
from gui.run.tool_call_row import ToolCallRow
from gui.run.tool_output import OUTPUT_LINES
from gui.widgets import turn_work
from tests.gui.labels import labels_with, renders_as_html
from tests.gui.run_events import (
    HAIKU,
    SONNET,
    RunBuilder,
    failed_chain,
    finished_chain,
    many_items,
    running_parallel,
    waiting_for_approval,
)


def live(qtbot: QtBot, view: RunView, events: list[Event]) -> None:
    """Feed events as a running run would, and wait until the view has them all."""
    view.add_events(events)
    qtbot.waitUntil(lambda: view.state().events == len(events))


def rows(pane: StepPane) -> list[ToolCallRow]:
    return [w for w in pane.item_widgets() if isinstance(w, ToolCallRow)]


def click_row(qtbot: QtBot, row: ToolCallRow) -> None:
    qtbot.mouseClick(row.summary, Qt.MouseButton.LeftButton, pos=row.summary.rect().center())


def test_a_finished_chain_reads_top_down_with_a_pane_per_step(view: RunView) -> None:
    view.load_events(finished_chain())

    assert [pane.agent.full_text() for pane in view.panes()] == ["scout", "planner", "worker"]
    assert view.header.title.full_text() == "implement add a --json flag to 'baton agents'"
    assert view.header.status_text() == "Done"
    without_model = view.state().usage.model_copy(update={"model": None}).line()
    assert view.header.usage.full_text() == f"{without_model} {HAIKU}, {SONNET}"  # every model
    assert "5 turns" in view.header.usage.text()
    assert view.pane(2).usage.full_text().startswith("2 turns ↑34k")
    assert not view.header.cancel_button.isEnabled()
    assert view.scroll_area.verticalScrollBar().value() == 0  # a saved run opens at the top


def test_clicking_a_tool_row_shows_its_arguments_and_full_result(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(finished_chain())
    bash = next(r for r in rows(view.pane(2)) if r.tool_name() == "bash")
    assert "pytest" in bash.argument_text()
    assert bash.duration_text() == "2.1 s"

    click_row(qtbot, bash)

    assert bash.is_expanded()
    assert '"command": "python -m pytest -q' in bash.arguments_text()
    assert "42 passed in 1.84s" in bash.output_text()
    assert bash.output_text().endswith("exit code 0")
    click_row(qtbot, bash)
    assert not bash.is_expanded()

    bash.setFocus()  # keyboard: Enter or Space opens and closes a focused row
    qtbot.keyClick(bash, Qt.Key.Key_Return)
    assert bash.is_expanded()
    qtbot.keyClick(bash, Qt.Key.Key_Space)
    assert not bash.is_expanded()


def test_long_output_is_capped_until_show_all(qtbot: QtBot, view: RunView) -> None:
    builder = RunBuilder()
    builder.start("single", [("worker", "List files", SONNET)])
    builder.step_started(0, "List files", SONNET)
    listing = "\n".join(f"file_{i:04}.py" for i in range(1_500))
    builder.tool(0, "bash", {"command": "ls"}, listing)
    builder.step_finished(0, output="")
    builder.run_finished()
    view.load_events(builder.events)
    row = rows(view.pane(0))[0]

    click_row(qtbot, row)
    assert row.output_text().count("\n") + 1 == OUTPUT_LINES
    button = row.show_all_button()
    assert button is not None and "1,100 more lines hidden" in button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    assert row.output_text() == listing
    assert row.show_all_button() is None


def test_bash_output_streams_into_an_open_row(qtbot: QtBot, view: RunView) -> None:
    events = running_parallel()
    live(qtbot, view, events)
    bash = next(r for r in rows(view.pane(2)) if r.tool_name() == "bash")
    click_row(qtbot, bash)
    assert "create_subprocess_exec" in bash.output_text()

    more = RunBuilder(events[0].run_id)
    more.now = view.state().elapsed
    more.tool_output(2, bash.call_id(), "gui/run/run_view.py:12: await proc.wait()\n")
    view.add_events(more.events)

    qtbot.waitUntil(lambda: "await proc.wait()" in bash.output_text())
    assert bash.output_text().startswith("gui/app.py:88:")


def test_a_collapsed_pane_shows_the_last_ten_items(qtbot: QtBot, view: RunView) -> None:
    view.load_events(many_items(25))
    pane = view.pane(0)

    assert not pane.is_expanded()
    qtbot.waitUntil(lambda: len(pane.item_widgets()) == 10)
    assert pane.first_shown_item() == 15
    before_last, last = pane.item_widgets()[-2:]
    assert isinstance(last, ToolCallRow) and last.argument_text() == "src/file_24.py"
    assert isinstance(before_last, TextItem)
    assert before_last.stream.shown_text() == "Item 23: done."
    assert pane.earlier.text() == "Show all 25 items"

    qtbot.mouseClick(pane.earlier, Qt.MouseButton.LeftButton)
    assert pane.is_expanded()
    assert len(pane.item_widgets()) == 25
    assert pane.earlier.isHidden()


def test_ctrl_o_toggles_the_focused_pane(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    first, second = view.pane(0), view.pane(1)

    qtbot.mouseClick(first.task, Qt.MouseButton.LeftButton)  # click into the first pane
    assert view.focused_pane() is first
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert first.is_expanded() and not second.is_expanded()

    qtbot.mouseClick(second.task, Qt.MouseButton.LeftButton)
    assert view.focused_pane() is second
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert first.is_expanded() and second.is_expanded()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert not second.is_expanded()


def test_the_chevron_folds_a_pane_to_its_header_and_tells_the_truth(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(finished_chain())
    pane = view.pane(0)
    qtbot.waitUntil(lambda: len(pane.item_widgets()) > 0)
    assert pane.chevron.arrowType() == Qt.ArrowType.DownArrow  # items are shown
    assert pane.body.isVisible() and not pane.summary.isVisible()

    qtbot.mouseClick(pane.chevron, Qt.MouseButton.LeftButton)
    assert pane.is_folded() and pane.chevron.arrowType() == Qt.ArrowType.RightArrow
    assert not pane.body.isVisible() and pane.summary.isVisible()
    summary = pane.summary.full_text()
    assert summary.startswith("done · ") and "tool call" in summary and " items — " in summary
    assert pane.height() < 90  # the header, the task line and the summary

    qtbot.mouseClick(pane.chevron, Qt.MouseButton.LeftButton)
    assert not pane.is_folded() and pane.body.isVisible()
    assert pane.chevron.arrowType() == Qt.ArrowType.DownArrow


def test_clicking_a_step_header_folds_and_unfolds_the_pane(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    pane = view.pane(0)
    qtbot.mouseClick(pane.header, Qt.MouseButton.LeftButton, pos=pane.header.rect().center())
    assert pane.is_folded()
    qtbot.mouseClick(pane.header, Qt.MouseButton.LeftButton, pos=pane.header.rect().center())
    assert not pane.is_folded()


def test_show_all_opens_a_folded_pane(qtbot: QtBot, view: RunView) -> None:
    view.load_events(many_items(25))
    pane = view.pane(0)
    pane.set_folded(True)
    pane.set_expanded(True)  # Ctrl+O, or "Show all N items"
    assert not pane.is_folded()
    assert len(pane.item_widgets()) == 25


def test_thinking_is_folded_to_one_line_until_clicked(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    thinking = next(w for w in view.pane(0).item_widgets() if isinstance(w, ThinkingItem))
    assert not thinking.is_expanded()
    assert thinking.body is None
    assert thinking.preview_text().endswith("Let me look at how it prints.")

    qtbot.mouseClick(thinking.header, Qt.MouseButton.LeftButton)

    assert thinking.is_expanded()
    assert thinking.body is not None and thinking.body.isVisible()
    assert thinking.body.text().startswith("The agents command lives in core/commands.")
    qtbot.mouseClick(thinking.header, Qt.MouseButton.LeftButton)
    assert not thinking.is_expanded() and thinking.body.isHidden()


def test_cancel_emits_the_signal_and_waits_for_the_run_to_end(qtbot: QtBot, view: RunView) -> None:
    events = running_parallel()
    live(qtbot, view, events)
    button = view.header.cancel_button
    assert button.isEnabled()

    with qtbot.waitSignal(view.cancelRequested):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not button.isEnabled() and button.text() == "Cancelling…"

    end = RunBuilder(events[0].run_id)
    end.now = 5.0
    end.step_finished(2, "aborted", error="cancelled")
    end.run_finished("aborted", "the run was cancelled")
    view.add_events(end.events)
    qtbot.waitUntil(lambda: view.header.status_text() == "Cancelled")
    assert not button.isEnabled() and button.text() == "Cancel"
    assert view.pane(2).error.text() == "Aborted: cancelled"


def test_a_failed_chain_says_where_it_stopped_and_what_never_ran(view: RunView) -> None:
    view.load_events(failed_chain())

    assert view.header.banner.isVisible()
    assert view.header.banner.message().startswith(
        "Chain stopped at step 2 (planner): the provider answered HTTP 500"
    )
    assert view.header.status_text() == "Failed"
    assert view.pane(1).phase.text() == "failed"
    assert view.pane(1).error.text().startswith("Error: the provider answered HTTP 500")
    assert view.pane(2).phase.text() == "not run"
    assert view.pane(2).icon.phase() == "not_run"
    superseded = [w for w in view.pane(1).item_widgets() if isinstance(w, TextItem)]
    assert superseded
    assert all(
        w.superseded_label is not None and w.superseded_label.isVisible() for w in superseded
    )
    assert all(v.is_struck() for w in superseded for v in w.stream.views())


def test_a_step_shows_its_task_and_error_as_written(view: RunView) -> None:
    """A task comes from a preset or a person, an error from a provider or a tool: text
    that looks like HTML is shown as such, never rendered (an image would be loaded)."""
    hostile = '<img src="/etc/hostile.png"> <b>plan</b>'
    events: list[Event] = []
    for event in failed_chain():
        if isinstance(event, StepStarted) and event.step == 1:
            event = event.model_copy(update={"task": hostile, "node": "<i>node</i>"})
        if isinstance(event, StepFinished | RunFinished) and event.step in (1, None):
            event = event.model_copy(update={"error": hostile})
        events.append(event)
    view.load_events(events)

    shown = labels_with(view.pane(1), "<img")
    assert len(shown) >= 2  # the task and the error
    assert labels_with(view.header, "<img")  # the run's error, in its banner
    assert not [
        label for label in [*shown, *labels_with(view.header, "<img")] if renders_as_html(label)
    ]


def test_a_repaint_inside_a_card_shows_what_painting_it_whole_does(
    qtbot: QtBot, view: RunView
) -> None:
    """A child repainting inside a step's card repaints only the card's plain inside (no
    outline or accent bar); the pixels are the ones a whole repaint gives."""
    live(qtbot, view, running_parallel())
    pane = next(p for p in view.panes() if p.phase.text() == "running")  # an accent bar
    whole = pane.grab().toImage()
    spinners = 64  # running icons turn with the clock: left of this, two grabs differ
    for inside in (
        pane.rect().adjusted(spinners, 12, -12, -12),  # the children and the card's inside
        QRect(pane.width() // 2, 9, 40, 20),  # a bit of the header, away from the edges
    ):
        assert pane.grab(inside).toImage() == whole.copy(inside)
    for edge in (QRect(0, 0, 12, pane.height()), QRect(pane.width() - 40, 0, 40, 40)):
        assert pane.grab(edge).toImage() == whole.copy(edge)  # accent bar, outline, corner


def test_a_card_paints_its_corners_in_the_views_background(qtbot: QtBot, view: RunView) -> None:
    """A card paints every pixel of its rectangle, the corners outside its rounded outline
    in what the run view shows around the cards: Qt paints nothing behind it."""
    live(qtbot, view, running_parallel())
    pane = view.pane(0)
    assert pane.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    on_screen = view.grab().toImage()
    corner = pane.mapTo(view, QPoint(0, 0))
    around = pane.mapTo(view, QPoint(0, -4))  # the view's background, above the card
    assert on_screen.pixelColor(corner) == on_screen.pixelColor(around)
    assert pane.grab().toImage().pixelColor(0, 0) == on_screen.pixelColor(around)


def test_a_step_whose_clock_ran_backwards_shows_no_negative_time(view: RunView) -> None:
    """A step that ended "before" it started (a clock that went back) took no time anyone can
    tell: its pane says 0.0 s, not -0.0 s."""
    events = finished_chain()
    started = next(e for e in events if isinstance(e, StepStarted) and e.step == 1)
    earlier = started.ts - 0.04
    events = [
        e.model_copy(update={"ts": earlier}) if isinstance(e, StepFinished) and e.step == 1 else e
        for e in events
    ]
    view.load_events(events)
    assert view.pane(1).duration.text() == "0.0 s"
    assert view.pane(0).duration.text().endswith(" s")  # the others as they were


def test_a_parallel_run_shows_its_progress_line(qtbot: QtBot, view: RunView) -> None:
    live(qtbot, view, running_parallel())

    assert view.header.progress.text() == "2/3 done, 1 running"
    assert view.header.status_text() == "Running"
    assert [p.icon.phase() for p in view.panes()] == ["ok", "ok", "running"]
    assert view.pane(2).is_expanded() and not view.pane(0).is_expanded()


def test_a_saved_run_that_stopped_mid_way_shows_nothing_still_running(view: RunView) -> None:
    view.load_events(running_parallel())  # the file ends while step 3 and its bash still run

    assert view.header.status_text() == "Interrupted"
    assert not view.header.cancel_button.isEnabled()
    pane = view.pane(2)
    assert pane.phase.text() == "interrupted"
    assert pane.icon.phase() == "aborted"
    bash = next(r for r in rows(pane) if r.tool_name() == "bash")
    assert bash.status() == "aborted" and bash.duration_text() == "interrupted"


def test_a_step_waiting_for_approval_says_so(qtbot: QtBot, view: RunView) -> None:
    live(qtbot, view, waiting_for_approval())

    pane = view.pane(0)
    assert pane.phase.text() == "waiting for you"
    assert pane.icon.phase() == "waiting"
    assert view.header.status_text() == "Waiting for you"
    row = rows(pane)[0]
    assert row.status() == "waiting" and row.duration_text() == "awaiting approval"

    resolved = RunBuilder(view.state().run_id)
    resolved.now = 2.0
    resolved._agents = ["worker"]
    resolved.events.append(
        ApprovalResolved(
            run_id=resolved.run_id,
            step=0,
            ts=2.0,
            request_id="approval-0001",
            decision="deny",
            reason="not today",
        )
    )
    view.add_events(resolved.events)
    qtbot.waitUntil(lambda: pane.phase.text() == "running")
    assert row.status() == "running"
    assert view.header.status_text() == "Running"
    notice = pane.item_widgets()[-1]
    assert isinstance(notice, NoticeItem) and notice.text() == "✗  bash — Denied: not today"


def growing_text(run_id: str, start: float, paragraphs: range) -> list[Event]:
    builder = RunBuilder(run_id)
    builder.now = start
    for number in paragraphs:
        builder.text(0, f"Paragraph {number}: " + "words and more words " * 12 + "\n\n", 40)
    return builder.events


def test_auto_scroll_follows_until_the_reader_scrolls_up(qtbot: QtBot, view: RunView) -> None:
    head = waiting_for_approval()[:2]  # run_started, step_started
    live(qtbot, view, head + growing_text(head[0].run_id, 1, range(30)))
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    assert view.is_following()

    bar.triggerAction(bar.SliderAction.SliderToMinimum)  # the reader scrolls up to read
    assert not view.is_following()
    before = bar.maximum()
    view.add_events(growing_text(head[0].run_id, 20, range(30, 50)))
    qtbot.waitUntil(lambda: bar.maximum() > before)
    assert bar.value() == 0

    bar.triggerAction(bar.SliderAction.SliderToMaximum)  # back at the bottom: follow again
    assert view.is_following()
    before = bar.maximum()
    view.add_events(growing_text(head[0].run_id, 40, range(50, 70)))
    qtbot.waitUntil(lambda: bar.maximum() > before and bar.value() == bar.maximum())


def test_streamed_markdown_ends_like_the_saved_run(qtbot: QtBot, view: RunView) -> None:
    events = finished_chain()
    live(qtbot, view, events)
    streamed = [w for w in view.pane(2).item_widgets() if isinstance(w, TextItem)]

    replay = RunView()
    qtbot.addWidget(replay)
    replay.load_events(events)
    replayed = [w for w in replay.pane(2).item_widgets() if isinstance(w, TextItem)]

    assert streamed[-1].stream.is_finished()
    assert streamed[-1].stream.shown_text() == replayed[-1].stream.shown_text()
    assert "All 42 tests pass" in streamed[-1].stream.shown_text()


def test_export_and_copy_give_the_run_as_markdown(
    qtbot: QtBot, view: RunView, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_header, "COPIED_MS", 20)
    view.load_events(finished_chain())
    target = tmp_path / "run.md"

    view.export_markdown(target)
    qtbot.mouseClick(view.header.copy_button, Qt.MouseButton.LeftButton)

    text = target.read_text(encoding="utf-8")
    assert text.startswith("# implement add a --json flag to 'baton agents'")
    assert "## Step 3: worker — ok" in text
    assert QGuiApplication.clipboard().text() == text
    assert view.header.copy_button.text() == "Copied ✓"
    qtbot.waitUntil(lambda: view.header.copy_button.text() == "Copy")


def test_an_export_that_cannot_be_written_says_why(
    qtbot: QtBot, view: RunView, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialogs: Any
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    target = blocker / "run.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: (str(target), ""))
    view.load_events(finished_chain())
    dialogs.answer("OK")

    qtbot.mouseClick(view.header.export_button, Qt.MouseButton.LeftButton)

    assert dialogs.pending() == 0  # the warning was shown and dismissed
    assert not target.exists()


def test_prose_keeps_a_readable_measure_on_a_wide_window(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    view.resize(2560, 900)
    pane = view.pane(2)
    column = view.column_width()
    qtbot.waitUntil(lambda: pane.width() <= column)
    assert pane.width() > column - 200  # a column, centred, not a sliver
    left = pane.mapTo(view, pane.rect().topLeft()).x()
    right = view.width() - (left + pane.width())
    assert abs(left - right) < 40
    narrow = column - 100
    view.resize(narrow, 700)  # narrower than the column: all the width is used
    qtbot.waitUntil(lambda: pane.width() >= narrow - 2 * 16 - 24)


def test_focus_step_scrolls_to_a_step_further_down(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    view.resize(900, 400)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(0)
    view.focus_step(2, highlight=False)
    qtbot.waitUntil(lambda: bar.value() > 0)
    assert not view.pane(2).is_highlighted()
    view.focus_step(1)
    assert view.pane(1).is_highlighted()


def test_parallel_tasks_stand_side_by_side_when_there_is_room(qtbot: QtBot, view: RunView) -> None:
    view.load_events(running_parallel())
    view.resize(1700, 800)
    qtbot.waitUntil(lambda: view.columns() == 3)
    qtbot.waitUntil(  # one row, once the layout has settled
        lambda: len({p.mapTo(view, p.rect().topLeft()).y() for p in view.panes()}) == 1
    )
    lefts = [pane.mapTo(view, pane.rect().topLeft()).x() for pane in view.panes()]
    assert lefts == sorted(lefts) and len(set(lefts)) == 3

    view.resize(800, 800)
    qtbot.waitUntil(lambda: view.columns() == 1)

    def stacked() -> bool:
        tops = [p.mapTo(view, p.rect().topLeft()).y() for p in view.panes()]
        return tops == sorted(set(tops)) and len(set(tops)) == 3

    qtbot.waitUntil(stacked)


def test_a_chain_always_stacks(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    view.resize(2400, 800)
    qtbot.waitUntil(lambda: view.pane(0).width() > 0)
    assert view.columns() == 1


def test_an_edited_bash_call_shows_the_same_command_live_and_reopened(qtbot: QtBot) -> None:
    """The person edits the command in the approval dialog: the live row, which was built
    with the proposed command, shows what ran — as the same run reopened from its file does."""
    waiting = waiting_for_approval()
    run_id = waiting[0].run_id
    end = RunBuilder(run_id)
    end.now, end._agents = 2.0, ["worker"]
    end.events.append(
        ApprovalResolved(
            run_id=run_id,
            step=0,
            ts=2.0,
            request_id="approval-0001",
            decision="approve",
            updated_arguments={"command": "rm -rf build/cache/"},
        )
    )
    end.tool_finished(0, "call_0001", "removed")
    end.step_finished(0, output="Cleaned.").run_finished()

    live_view = RunView()
    qtbot.addWidget(live_view)
    live(qtbot, live_view, waiting)
    row = rows(live_view.pane(0))[0]
    assert row.argument_text() == "rm -rf build/"  # proposed, awaiting approval
    row.set_expanded(True)  # the details are open while the answer comes
    live_view.add_events(end.events)
    qtbot.waitUntil(lambda: live_view.state().events == len(waiting) + len(end.events))

    reopened = RunView()
    qtbot.addWidget(reopened)
    reopened.load_events(waiting + end.events)
    again = rows(reopened.pane(0))[0]
    again.set_expanded(True)
    assert row.argument_text() == again.argument_text() == "rm -rf build/cache/"
    assert "build/cache/" in row.arguments_text() and row.arguments_text() == again.arguments_text()
    assert row.summary.toolTip() == again.summary.toolTip() == "bash: rm -rf build/cache/"


def test_a_live_parallel_run_of_eight_shows_its_first_panes_at_once_and_every_answer(
    qtbot: QtBot, view: RunView
) -> None:
    """Panes of a live run are built a few per turn (a run of eight built at once held the
    window): the first ones show with the start, the rest follow, and what a step said
    before its pane existed is in it."""
    b = eight_talking_steps("run-20261204-190000", "reviewer", "answer of task")
    view.add_events(b.events)
    view.model.flush()  # the whole start in one batch, as a fast model's first turn
    assert 0 < len(view.panes()) < 8  # the first panes at once, the rest in the next turns
    qtbot.waitUntil(lambda: len(view.panes()) == 8)

    def shown(step: int) -> str:
        texts = [w for w in view.pane(step).item_widgets() if isinstance(w, TextItem)]
        return " ".join(w.stream.shown_text() for w in texts)

    qtbot.waitUntil(lambda: all(f"answer of task {n}" in shown(n) for n in range(8)))
    assert [pane.agent.full_text() for pane in view.panes()] == ["reviewer"] * 8


def test_eight_steps_calling_a_tool_together_get_their_rows_over_several_turns(
    qtbot: QtBot, view: RunView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row costs Qt more after the turn that builds it (polish, layout, first paint) than
    the turn's budget sees: eight steps that call a tool at once get their rows a few per
    turn, however fast the machine, and every one shows."""
    monkeypatch.setattr(turn_work, "TURN_BUDGET_S", 60.0)  # only the count of rows limits
    b = eight_talking_steps("run-20261204-190500", "worker", "looking at area")
    view.add_events(b.events)
    view.model.flush()
    qtbot.waitUntil(lambda: len(view.panes()) == 8 and all(has_text(view, n) for n in range(8)))
    started = len(b.events)
    for step in range(8):
        b.tool_started(step, "bash", {"command": f"pytest area_{step}"})
    view.add_events(b.events[started:])
    view.model.flush()  # one batch: all eight calls in the same turn
    assert 0 < sum(len(rows(pane)) for pane in view.panes()) < 8
    qtbot.waitUntil(lambda: all(len(rows(pane)) == 1 for pane in view.panes()))


def eight_talking_steps(run_id: str, agent: str, saying: str) -> RunBuilder:
    """A parallel run of eight ``agent`` steps, each saying ``saying`` and its number."""
    b = RunBuilder(run_id)
    b.start("parallel", [(agent, f"area {n}", SONNET) for n in range(8)])
    for step in range(8):
        b.step_started(step, f"area {step}", SONNET)
        b.text(step, f"{saying} {step}")
    return b


def has_text(view: RunView, step: int) -> bool:
    return any(isinstance(w, TextItem) for w in view.pane(step).item_widgets())
