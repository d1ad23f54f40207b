"""A live run is folded once: the window's model follows the core's state and only notes
which steps changed (architecture: *Events*, *The window*)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from core.history.run_export import run_to_markdown, state_to_markdown
from core.record.run_state import RunState
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from gui.run.run_model import RunModel
from gui.window.main_window import MainWindow
from tests.graph_runs import by_agent, graph_runner
from tests.gui.launching import RUN_TIMEOUT_MS, wait_until_finished
from tests.gui.run_events import finished_chain, flood
from tests.llm_server import LLMServer

CHAIN = """\
name: two
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - {name: check, agent: worker, task: "Check: {previous}"}
"""


class Recorder:
    def __init__(self, model: RunModel) -> None:
        self.batches: list[int] = []
        self.steps: set[int] = set()
        self.starts = 0
        model.batchApplied.connect(self.batches.append)
        model.stepsChanged.connect(self.steps.update)
        model.runStarted.connect(self._started)

    def _started(self) -> None:
        self.starts += 1


def test_a_followed_state_is_not_folded_again(qtbot: QtBot) -> None:
    """The producer folds; the model's signals say what changed, coalesced as before."""
    events = flood(5_000)
    state = RunState()
    model = RunModel()
    recorder = Recorder(model)
    model.follow(state)

    for event in events:  # as the recording does: folded, then the subscribers hear of it
        state.apply(event)
        model.add_event(event)

    assert recorder.batches == []  # nothing is reported inside add_event
    qtbot.waitUntil(lambda: sum(recorder.batches) == len(events))
    assert model.pending_count() == 0
    assert model.state is state
    assert state.events == len(events)  # each event folded once, by the producer
    assert recorder.starts == 1
    assert recorder.steps == {0, 1, 2}
    assert len(recorder.batches) <= len(events) // 50
    assert state_to_markdown(model.state) == run_to_markdown(events)
    assert model.is_live()


def test_following_a_run_already_under_way_reports_what_it_holds(qtbot: QtBot) -> None:
    """A view made mid-run (the window reopened a run's tab) hears of every step at once."""
    events = finished_chain()
    state = RunState()
    for event in events[: len(events) // 2]:
        state.apply(event)
    model = RunModel()
    recorder = Recorder(model)

    model.follow(state)

    qtbot.waitUntil(lambda: recorder.starts == 1)
    assert recorder.steps == set(range(len(state.steps)))
    assert model.graph.node_of_step  # the graph is drawn from the state


def test_loading_a_saved_run_after_following_folds_it_here(qtbot: QtBot) -> None:
    state = RunState()
    model = RunModel()
    model.follow(state)
    events = finished_chain()

    model.load_events(events)

    assert model.state is not state
    assert state.events == 0
    assert model.state.events == len(events)
    assert not model.is_live()


@pytest.mark.usefixtures("qasync_loop")
def test_a_run_started_in_the_window_shows_the_runners_own_state(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    llm_server.responder = by_agent(
        {"worker": lambda task: "the draft" if task.startswith("Draft") else "looks right"}
    )
    window = make_window()
    runner, events = graph_runner(llm_server, CHAIN, window.working_folder)

    session = window.run_controller.start(runner)

    status = wait_until_finished(qtbot, session)
    assert status == "ok", runner.state.error
    assert session.view.state() is runner.state  # one fold, shared
    assert runner.state.events == len(events)
    assert [step.output for step in session.view.state().steps] == ["the draft", "looks right"]
    qtbot.waitUntil(lambda: session.view.model.pending_count() == 0)
    assert len(session.view.panes()) == 2


@pytest.mark.usefixtures("qasync_loop")
def test_a_run_that_never_began_shows_why_in_its_view(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    """No run_started, no run_finished from the runner: the window ends the state it shows
    itself, and the view says why."""
    window = make_window()
    request = RunRequest(
        mode="single", steps=[StepSpec(agent="nobody", task="t")], cwd=window.working_folder
    )
    runner = Runner(request, settings=llm_server.settings())

    session = window.run_controller.start(runner)

    qtbot.waitUntil(lambda: not session.is_active(), timeout=RUN_TIMEOUT_MS)
    assert runner.result is None
    qtbot.waitUntil(lambda: session.view.header.status_text() == "Failed")
    assert session.view.state() is runner.state
    assert "the run stopped unexpectedly" in (runner.state.error or "")
