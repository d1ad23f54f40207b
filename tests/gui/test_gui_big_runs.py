"""Big runs stay usable: a huge tool output shows its tail and loads the rest on demand, and a
long answer reopened is laid out a slice at a time. Asserted on what is shown, never on time."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.record.run_state import fold
from gui.run.markdown_stream import LAZY_SLICE_CHARS
from gui.run.markdown_view import MarkdownView
from gui.run.run_view import RunView
from gui.run.step_items import TextItem
from gui.run.step_pane import COLLAPSED_ITEMS
from gui.run.tool_call_row import ToolCallRow
from gui.run.tool_output import LOAD_SLICE_CHARS, OUTPUT_LINES
from tests.gui.run_events import SONNET, RunBuilder, many_items


def _log_lines(count: int) -> list[str]:
    return [f"[{n:06}] compiling module_{n % 97}.c ... ok\n" for n in range(count)]


def _long_answer(sections: int) -> str:
    parts = []
    for n in range(sections):
        parts.append(f"## Section {n}\n\nThe **planner** reads `file_{n}.py` and writes a plan.")
        parts.append(f"- first point {n}\n- second point {n}")
    return "\n\n".join(parts) + "\n"


def _row(view: RunView) -> ToolCallRow:
    return next(w for w in view.pane(0).item_widgets() if isinstance(w, ToolCallRow))


def test_show_all_loads_a_huge_output_in_slices(qtbot: QtBot, view: RunView) -> None:
    lines = _log_lines(8_000)  # ~330 KB in 8,000 chunks
    builder = RunBuilder()
    builder.start("single", [("worker", "Build", SONNET)])
    builder.step_started(0, "Build", SONNET)
    tail = "".join(lines[-50:]) + "exit code 0"  # what bash hands the model: the tail
    builder.tool(0, "bash", {"command": "make"}, tail, output=lines)
    builder.step_finished(0, output="Built.")
    builder.run_finished()
    view.load_events(builder.events)
    row = _row(view)

    qtbot.mouseClick(row.summary, Qt.MouseButton.LeftButton, pos=row.summary.rect().center())
    assert row.output_text() == tail  # the result the model saw, small
    button = row.show_all_button()
    assert button is not None and button.text() == "Show all (7,950 more lines hidden)"

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert row.output is not None
    assert row.output.is_loading()
    assert len(row.output_text()) == LOAD_SLICE_CHARS  # only the first slice so far
    assert "loading" in row.output.label.text()
    qtbot.waitUntil(lambda: not row.output.is_loading())  # type: ignore[union-attr]
    full = "".join(lines)
    assert row.output_text() == full
    assert row.output.slices_loaded == -(-len(full) // LOAD_SLICE_CHARS)
    assert row.output.label.text() == "Output"
    assert row.show_all_button() is None


def test_a_streaming_flood_shows_only_the_tail(qtbot: QtBot, view: RunView) -> None:
    builder = RunBuilder()
    builder.start("single", [("worker", "Build", SONNET)])
    builder.step_started(0, "Build", SONNET)
    call = builder.tool_started(0, "bash", {"command": "make"})
    builder.tool_output(0, call, "starting\n")
    view.add_events(builder.events)
    qtbot.waitUntil(lambda: view.state().events == len(builder.events))
    row = _row(view)
    qtbot.mouseClick(row.summary, Qt.MouseButton.LeftButton, pos=row.summary.rect().center())
    assert row.output_text() == "starting\n"

    more = RunBuilder(builder.run_id)
    lines = _log_lines(3_000)
    for line in lines:
        more.tool_output(0, call, line)
    view.add_events(more.events)
    qtbot.waitUntil(lambda: row.output_text().endswith(lines[-1]))

    shown = row.output_text().split("\n")
    assert len(shown) == OUTPUT_LINES  # the tail: the last lines, the newest at the bottom
    assert shown[-2] == lines[-1].rstrip("\n")
    button = row.show_all_button()
    assert button is not None and button.text() == "Show all (2,602 earlier lines hidden)"


def test_a_flood_of_answers_shows_the_newest_in_reused_text_items(
    qtbot: QtBot, view: RunView
) -> None:
    """A flood slides the pane's window faster than items can be read: text items that
    leave it show the next answers instead of being deleted and made again, and show them
    exactly; once the step ends, every item shown is built for what it shows."""
    builder = RunBuilder()
    builder.start("single", [("worker", "Build", SONNET)])
    builder.step_started(0, "Build", SONNET)
    view.add_events(builder.events)
    qtbot.waitUntil(lambda: view.state().events == len(builder.events))
    pane = view.pane(0)
    seen: dict[int, set[str]] = {}
    held: list[TextItem] = []  # so that no id is a deleted widget's, given again

    def shown_texts() -> list[str]:
        texts = []
        for widget in pane.item_widgets():
            if isinstance(widget, TextItem):
                texts.append(widget.stream.shown_text())
                seen.setdefault(id(widget), set()).add(texts[-1])
                held.append(widget)
        return texts

    for burst in range(4):
        more = RunBuilder(builder.run_id)
        for n in range(burst * 20, burst * 20 + 20):  # far more than one update builds
            more.text(0, f"Answer number {n}.", size=100)
            more.thinking(0, f"thought {n}", size=100)
        view.add_events(more.events)
        newest = f"Answer number {burst * 20 + 19}."
        qtbot.waitUntil(lambda: newest in shown_texts())  # noqa: B023 (waited for at once)
        assert all(text.startswith("Answer number ") for text in shown_texts())

    assert any(len(texts) > 1 for texts in seen.values())  # a widget showed another answer
    ending = RunBuilder(builder.run_id)
    ending.step_finished(0, output="done")
    ending.run_finished()
    view.add_events(ending.events)
    qtbot.waitUntil(lambda: len(pane.item_widgets()) == COLLAPSED_ITEMS)
    texts = [w for w in pane.item_widgets() if isinstance(w, TextItem)]
    assert [w.stream.shown_text() for w in texts] == [f"Answer number {n}." for n in range(75, 80)]
    assert all(w.isVisible() for w in pane.findChildren(TextItem))  # none kept hidden


def test_a_reopened_long_answer_is_laid_out_in_slices(qtbot: QtBot, view: RunView) -> None:
    answer = _long_answer(900)  # ~100 KB
    builder = RunBuilder()
    builder.start("single", [("planner", "Plan", SONNET)])
    builder.step_started(0, "Plan", SONNET)
    builder.text(0, answer, size=400, delay=0.001)
    builder.step_finished(0, output=answer)
    builder.run_finished()

    view.load_events(builder.events)
    item = next(w for w in view.pane(0).item_widgets() if isinstance(w, TextItem))
    stream = item.stream
    assert not stream.is_laid_out()
    assert stream.layout_slices == 1  # what is visible first; the rest on later turns
    first = stream.shown_text()
    assert first.startswith("Section 0") and len(first) < LAZY_SLICE_CHARS
    qtbot.waitUntil(stream.is_laid_out, timeout=20_000)

    assert stream.layout_slices >= len(answer) // LAZY_SLICE_CHARS
    once = MarkdownView()
    qtbot.addWidget(once)
    once.set_markdown(answer)
    assert stream.shown_text() == once.toPlainText()


def test_a_run_opened_from_a_file_fills_its_panes_over_a_few_turns(
    qtbot: QtBot, view: RunView
) -> None:
    state = fold(many_items(25))  # what the worker thread hands over

    built_with: list[int] = []
    view.load_state(state)
    view.focus_step(0, then=lambda pane: built_with.append(len(pane.item_widgets())))

    assert not view.panes()  # the header now, the first pane at the next turn
    qtbot.waitUntil(lambda: bool(built_with))
    assert built_with == [0]  # built bare: its items over the next turns
    pane = view.pane(0)
    qtbot.waitUntil(lambda: len(pane.item_widgets()) == COLLAPSED_ITEMS)
    assert pane.first_shown_item() == 15


def test_a_run_opened_at_a_step_builds_its_panes_over_turns_and_shows_that_step(
    qtbot: QtBot, view: RunView
) -> None:
    steps = 12
    builder = RunBuilder()
    builder.start("chain", [(f"agent-{n}", f"Task {n}", SONNET) for n in range(steps)])
    for n in range(steps):
        builder.step_started(n, f"Task {n}", SONNET)
        answer = "\n\n".join(f"Paragraph {p} of step {n}: the plan goes on." for p in range(12))
        builder.text(n, answer)
        builder.step_finished(n, output=answer)
    builder.run_finished()
    reached: list[int] = []

    view.load_state(fold(builder.events))  # what a search hit or a graph click opens
    view.focus_step(9, then=lambda pane: reached.append(pane.index))

    assert view.is_building() and len(view.panes()) < steps  # the window answers meanwhile
    qtbot.waitUntil(lambda: reached == [9])
    pane = view.pane(9)
    assert pane.is_highlighted() and not pane.is_folded()
    qtbot.waitUntil(lambda: not view.is_building())
    assert [p.index for p in view.panes()] == list(range(steps))  # in order, none twice
    qtbot.waitUntil(lambda: not pane.visibleRegion().isEmpty())  # scrolled to it
    assert view.pane(0).visibleRegion().isEmpty()  # away from the top
