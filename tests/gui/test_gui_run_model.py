"""The coalescing view model: batching, replay, threads, and widgets bounded by what is shown."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from core.history.run_export import run_to_markdown, state_to_markdown
from core.record.run_files import Redactor, RunWriter, load_run
from gui.run.run_model import RunModel
from gui.run.run_view import RunView
from gui.run.step_items import TextItem
from gui.run.step_pane import COLLAPSED_ITEMS, EXPANDED_PAGE, LIVE_PAGE, MAX_NEW_WIDGETS
from gui.run.tool_call_row import ToolCallRow
from tests.gui.run_events import finished_chain, flood, many_items


class Recorder:
    """Counts a model's signals and remembers on which thread they arrived."""

    def __init__(self, model: RunModel) -> None:
        self.batches: list[int] = []
        self.steps: list[frozenset[int]] = []
        self.threads: set[QThread] = set()
        model.batchApplied.connect(self._batch)
        model.stepsChanged.connect(self.steps.append)

    def _batch(self, count: int) -> None:
        self.batches.append(count)
        self.threads.add(QThread.currentThread())


def test_a_flood_of_events_becomes_a_few_batches(qtbot: QtBot) -> None:
    model = RunModel()
    recorder = Recorder(model)
    events = flood(5_000)

    for event in events:  # one at a time, as a backend delivers them
        model.add_event(event)

    assert recorder.batches == []  # nothing is applied inside add_event
    qtbot.waitUntil(lambda: sum(recorder.batches) == len(events))
    assert len(recorder.batches) <= len(events) // 50  # 5,000 events, a handful of updates
    assert model.state.status == "ok"
    assert state_to_markdown(model.state) == run_to_markdown(events)


def test_the_first_event_is_applied_without_waiting_for_a_batch(qtbot: QtBot) -> None:
    model = RunModel()
    events = finished_chain()

    with qtbot.waitSignal(model.runStarted):
        model.add_event(events[0])

    assert len(model.state.steps) == 3
    assert model.is_live()


def test_a_saved_run_replays_in_one_batch(qtbot: QtBot) -> None:
    events = finished_chain()
    writer = RunWriter(events[0].run_id, Redactor())
    for event in events:
        writer.write(event)
    writer.close()
    model = RunModel()
    recorder = Recorder(model)

    model.load_events(load_run(writer.path))  # signals are emitted before this returns

    assert recorder.batches == [len(events)]
    assert recorder.steps == [frozenset({0, 1, 2})]
    assert not model.is_live()
    assert model.state.status == "ok"
    assert state_to_markdown(model.state) == run_to_markdown(events)


def test_events_from_another_thread_are_applied_on_the_gui_thread(qtbot: QtBot) -> None:
    model = RunModel()
    recorder = Recorder(model)
    events = finished_chain()

    def produce() -> None:
        for event in events:
            model.add_event(event)

    worker = threading.Thread(target=produce)
    worker.start()
    worker.join()

    qtbot.waitUntil(lambda: sum(recorder.batches) == len(events))
    app = QApplication.instance()
    assert app is not None
    assert recorder.threads == {app.thread()}
    assert model.state.status == "ok"


def item_widget_count(view: RunView) -> int:
    return len(view.findChildren(ToolCallRow)) + len(view.findChildren(TextItem))


def test_ten_thousand_items_cost_a_bounded_number_of_widgets(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.show()

    view.load_events(many_items(10_000))

    pane = view.pane(0)
    assert len(view.state().steps[0].items) == 10_000
    assert len(pane.item_widgets()) == COLLAPSED_ITEMS
    pane.toggle_expanded()
    assert len(pane.item_widgets()) == EXPANDED_PAGE
    pane.earlier.click()
    assert len(pane.item_widgets()) == 2 * EXPANDED_PAGE
    pane.toggle_expanded()
    assert len(pane.item_widgets()) == COLLAPSED_ITEMS
    qtbot.waitUntil(lambda: item_widget_count(view) == COLLAPSED_ITEMS)  # deleteLater ran


def test_a_live_step_with_thousands_of_items_keeps_its_window(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.show()
    events = many_items(4_000, step_finished=False)

    view.add_events(events)
    qtbot.waitUntil(lambda: view.state().events == len(events))

    pane = view.pane(0)
    assert pane.is_expanded()  # the running step follows its newest items
    widgets = pane.item_widgets()
    assert 0 < len(widgets) <= LIVE_PAGE
    assert pane.first_shown_item() + len(widgets) == 4_000  # the newest items are shown
    assert isinstance(widgets[-1], TextItem)  # item 3,999 is a text block
    assert widgets[-1].stream.shown_text() == "Item 3999: done."
    qtbot.waitUntil(lambda: item_widget_count(view) <= LIVE_PAGE)

    pane.earlier.click()  # the reader asks for more: built in full, up to a page more
    assert len(pane.item_widgets()) == len(widgets) + EXPANDED_PAGE


def test_a_step_finishing_after_a_flood_folds_back_a_few_widgets_per_turn(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.show()
    events = many_items(2_000)
    live, ending = events[:-2], events[-2:]  # everything but step_finished + run_finished
    view.add_events(live)
    qtbot.waitUntil(lambda: view.state().events == len(live))
    pane = view.pane(0)
    built_while_running = {id(w) for w in pane.item_widgets()}
    assert len(built_while_running) < COLLAPSED_ITEMS  # a flood builds only its newest items

    view.add_events(ending)
    view.model.flush()  # the finishing update itself, as one model update
    new_at_once = [w for w in pane.item_widgets() if id(w) not in built_while_running]
    assert len(new_at_once) <= MAX_NEW_WIDGETS  # the rest follows on later turns

    qtbot.waitUntil(lambda: len(pane.item_widgets()) == COLLAPSED_ITEMS)
    assert pane.first_shown_item() == 2_000 - COLLAPSED_ITEMS
    assert pane.earlier.text() == "Show all 2,000 items"
