"""Gates in the window: a waiting gate shows what is handed on and takes the person's answer —
continue, edit what is handed on, send back with a note, stop, or nothing until its timeout —
through the core's real gates (:class:`core.run.gates.Gates`), as the runner asks them."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.model.events import Event, GateDecided, GateDecision, GateWaiting
from core.run.gates import PERSON_OPTIONS, GateAnswer, GateError, Gates
from core.run.run_request import RunRequest, StepSpec
from gui.inbox.inbox_view import InboxView
from gui.run.gate_panel import countdown
from gui.run.run_controller import RunSession
from gui.run.run_view import RunView
from gui.window.main_window import MainWindow
from tests.graph_runs import by_agent, graph_runner
from tests.gui.launching import RUN_TIMEOUT_MS, launch_request, wait_until_finished
from tests.gui.run_events import RunBuilder
from tests.llm_server import LLMServer, Reply

HANDOFF = "Plan: add --json to 'baton agents'."


def _running(view: RunView, qtbot: QtBot) -> RunBuilder:
    b = RunBuilder()
    b.start("chain", [("planner", "plan", "m"), ("worker", "do it", "m")])
    b.step_started(0, "plan", "m").text(0, HANDOFF).step_finished(0, output=HANDOFF)
    view.add_events(b.events)
    qtbot.waitUntil(lambda: view.graph_view.canvas.node_view("step-1").status == "done")
    return b


def _ask(
    view: RunView, b: RunBuilder, *, timeout: float | None = None, options: list[str] | None = None
) -> tuple[Gates, asyncio.Future[GateAnswer]]:
    """Raise a gate before step 2, as the graph runner does, answered from the view."""
    gates = Gates(b.run_id, view.add_event, lambda: b.now)

    def answer(gate_id: str, decision: GateDecision, text: str | None, note: str | None) -> None:
        try:  # as the run controller answers with Runner.decide_gate
            gates.decide(gate_id, decision, text=text, note=note)
        except GateError as error:
            view.show_gate_problem(f"Not taken: {error}.")

    view.gateDecisionRequested.connect(answer)
    waiting = GateWaiting(
        run_id=b.run_id,
        ts=b.now,
        gate_id=gates.new_id("step-2"),
        node="step-2",
        question="Ship it?",
        handoff=HANDOFF,
        timeout_s=timeout,
        default="stop",
        options=options if options is not None else list(PERSON_OPTIONS),
    )
    return gates, asyncio.ensure_future(gates.ask(waiting, None, asyncio.Event()))


def _click(qtbot: QtBot, button: QPushButton) -> None:
    assert button.isVisible(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.mark.usefixtures("qasync_loop")
def test_a_gate_shows_the_handoff_and_continue_lets_the_step_start(
    qtbot: QtBot, view: RunView
) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b)
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    assert "Ship it?" in panel.question.text() and "step-2" in panel.question.text()
    assert panel.handoff.toPlainText() == HANDOFF
    assert panel.handoff.isReadOnly()
    canvas = view.graph_view.canvas
    assert canvas.node_view("step-2").status == "waiting"
    assert canvas.node_view("step-2").note == "Ship it?"

    _click(qtbot, panel.continue_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("continue")
    qtbot.waitUntil(lambda: not panel.isVisible())
    assert canvas.node_view("step-2").note == "continued (person)"


@pytest.mark.usefixtures("qasync_loop")
def test_editing_what_is_handed_on_hands_on_the_persons_text(qtbot: QtBot, view: RunView) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b)
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    _click(qtbot, panel.edit_button)
    assert not panel.handoff.isReadOnly()
    assert panel.continue_button.text() == "Hand on my edit"
    panel.handoff.selectAll()
    qtbot.keyClicks(panel.handoff, "Only the --json flag, no other change.")
    _click(qtbot, panel.continue_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("edit", text="Only the --json flag, no other change.")
    qtbot.waitUntil(lambda: view.graph_view.canvas.node_view("step-2").note == "edited (person)")


@pytest.mark.usefixtures("qasync_loop")
def test_send_back_carries_the_note(qtbot: QtBot, view: RunView) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b)
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    _click(qtbot, panel.send_back_button)
    assert panel.note.isVisible() and not panel.continue_button.isVisible()
    qtbot.keyClicks(panel.note, "Plan the tests too.")
    qtbot.keyClick(panel.note, Qt.Key.Key_Return)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("send_back", note="Plan the tests too.")


@pytest.mark.usefixtures("qasync_loop")
def test_stop_and_a_refused_answer_is_explained(qtbot: QtBot, view: RunView) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b, options=["continue", "stop"])  # no edit, no send back
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    assert not panel.edit_button.isVisible() and not panel.send_back_button.isVisible()
    gate = panel.gate()
    assert gate is not None
    view.gateDecisionRequested.emit(gate.gate_id, "edit", "x", None)  # an answer not offered
    assert not answer.done()
    assert panel.problem.isVisible()
    assert panel.problem.text() == "Not taken: 'edit' is not offered here (continue, stop)."
    _click(qtbot, panel.stop_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("stop")
    qtbot.waitUntil(lambda: view.graph_view.canvas.node_view("step-2").status == "stopped")


@pytest.mark.usefixtures("qasync_loop")
def test_a_gate_with_a_timeout_says_what_it_will_do_and_when(qtbot: QtBot, view: RunView) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b, timeout=600)
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    assert panel.remaining.text().startswith("Stops in 10:00")
    assert panel.remaining.text().endswith("unless you decide")
    _click(qtbot, panel.stop_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("stop", by="person")


@pytest.mark.usefixtures("qasync_loop")
def test_a_gate_nobody_answers_takes_its_default_at_the_timeout(
    qtbot: QtBot, view: RunView
) -> None:
    """A timeout of zero: the gate's clock runs out at once, and the test waits on no clock."""
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b, timeout=0)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("stop", by="timeout")
    canvas = view.graph_view.canvas
    qtbot.waitUntil(lambda: canvas.node_view("step-2").note == "stopped at its gate (timeout)")
    assert not view.gate_panel.isVisible()


@pytest.mark.usefixtures("qasync_loop")
def test_a_best_of_without_a_judge_asks_which_attempt_to_keep(qtbot: QtBot, view: RunView) -> None:
    b = _running(view, qtbot)
    _gates, answer = _ask(view, b, options=["attempt#1", "attempt#2", "attempt#3"])
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    assert [button.text() for button in panel.pick_buttons()] == [
        "Keep attempt#1",
        "Keep attempt#2",
        "Keep attempt#3",
    ]
    assert not panel.continue_button.isVisible()
    _click(qtbot, panel.pick_buttons()[1])
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("continue", text="attempt#2")


def test_a_replayed_run_shows_no_gate_to_answer(qtbot: QtBot, view: RunView) -> None:
    b = RunBuilder().start("chain", [("planner", "plan", "m"), ("worker", "do", "m")])
    b.events.append(
        GateWaiting(run_id=b.run_id, gate_id="step-2#1", node="step-2", question="Ship it?")
    )
    view.load_events(b.events)
    assert view.graph_view.canvas.node_view("step-2").status == "waiting"
    assert not view.gate_panel.isVisible()


def test_countdown_words() -> None:
    assert countdown(245.2) == "4:06"
    assert countdown(-3) == "0:00"


@pytest.mark.usefixtures("qasync_loop")
def test_a_runs_gate_waits_in_the_inbox_and_is_answered_from_its_view(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    """A real run started from the window, its runner's own gates: the window's answer
    reaches ``Runner.decide_gate`` and a person looking elsewhere hears the question."""
    save_settings(llm_server.settings(default_model="gpt-4o-mini"))
    release = threading.Event()
    llm_server.queue(Reply.answer("done", hold=release))
    window = make_window()
    elsewhere = QWidget()
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    request = RunRequest("single", [StepSpec("worker", "go")], window.working_folder)
    session = launch_request(qtbot, window, request)
    runner = session.runner
    waiting = GateWaiting(
        run_id=runner.run_id,
        gate_id=runner.gates.new_id("ship"),
        node="ship",
        question="Ship it?",
        handoff=HANDOFF,
        options=list(PERSON_OPTIONS),
    )
    answer = asyncio.ensure_future(runner.gates.ask(waiting, None, asyncio.Event()))
    panel = session.view.gate_panel
    qtbot.waitUntil(panel.isVisible, timeout=RUN_TIMEOUT_MS)
    notes = [n for n in window.run_controller.notifier.sent if n.title == "Gate waiting"]
    assert len(notes) == 1 and notes[0].message.endswith("before “ship”: Ship it?")
    assert notes[0].target == (runner.run_id, 0)
    assert "Inbox (1)" in window.sidebar.labels()
    window.show_view("inbox")
    inbox = window.view("inbox")
    assert isinstance(inbox, InboxView)
    assert inbox.texts() == [f"Gate waiting — {session.title()}, step 1\nbefore “ship”: Ship it?"]
    window.show_view("agents")
    inbox.open_current()  # the inbox shows the run, whose view asks the question
    assert window.current_view() == "runs"

    _click(qtbot, panel.send_back_button)
    qtbot.keyClicks(panel.note, "Once more, with tests.")
    _click(qtbot, panel.send_back_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == GateAnswer("send_back", note="Once more, with tests.")
    qtbot.waitUntil(lambda: inbox.texts() == [])
    release.set()
    assert wait_until_finished(qtbot, session) == "ok"


# -- end to end: the graph runner, the window, the scripted model -------------------------

GATED = """\
name: gated
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - name: ship
    agent: worker
    task: "Ship: {previous}"
    gate: {question: "Ship it?", timeout: TIMEOUT, default: continue}
"""


def _gated_session(
    window: MainWindow, llm_server: LLMServer, timeout: float = 600
) -> tuple[RunSession, list[Event]]:
    drafts = itertools.count(1)
    llm_server.responder = by_agent(
        {"worker": lambda task: f"draft {next(drafts)}" if task.startswith("Draft") else "shipped"}
    )
    text = GATED.replace("TIMEOUT", str(timeout))
    runner, events = graph_runner(llm_server, text, window.working_folder)
    return window.run_controller.start(runner), events


def _tasks(llm_server: LLMServer) -> list[str]:
    return [request.user_text for request in llm_server.requests]


@pytest.mark.usefixtures("qasync_loop")
def test_a_graph_runs_gate_edited_in_the_window_hands_on_the_persons_text(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    window = make_window()
    session, events = _gated_session(window, llm_server)
    panel = session.view.gate_panel
    qtbot.waitUntil(panel.isVisible, timeout=RUN_TIMEOUT_MS)
    assert panel.handoff.toPlainText() == "draft 1"
    assert session.view.graph_view.canvas.node_view("ship").status == "waiting"
    _click(qtbot, panel.edit_button)
    panel.handoff.selectAll()
    qtbot.keyClicks(panel.handoff, "draft 1, without the typo")
    _click(qtbot, panel.continue_button)
    assert wait_until_finished(qtbot, session) == "ok"
    assert _tasks(llm_server) == ["Draft: the task", "Ship: draft 1, without the typo"]
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == ("edit", "person")
    qtbot.waitUntil(lambda: session.view.graph_view.canvas.node_view("ship").status == "done")
    assert not panel.isVisible()


@pytest.mark.usefixtures("qasync_loop")
def test_a_graph_runs_gate_sent_back_from_the_window_reruns_the_step_with_the_note(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    window = make_window()
    session, _events = _gated_session(window, llm_server)
    panel = session.view.gate_panel
    qtbot.waitUntil(panel.isVisible, timeout=RUN_TIMEOUT_MS)
    first = panel.gate()
    _click(qtbot, panel.send_back_button)
    qtbot.keyClicks(panel.note, "shorter please")
    _click(qtbot, panel.send_back_button)
    qtbot.waitUntil(  # asked again, about the second draft
        lambda: panel.gate() is not None and panel.gate() != first, timeout=RUN_TIMEOUT_MS
    )
    assert panel.handoff.toPlainText() == "draft 2"
    assert "shorter please" in _tasks(llm_server)[1]
    _click(qtbot, panel.continue_button)
    assert wait_until_finished(qtbot, session) == "ok"
    assert _tasks(llm_server)[-1] == "Ship: draft 2"


@pytest.mark.usefixtures("qasync_loop")
def test_a_graph_runs_gate_nobody_answers_takes_its_default_in_the_window(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    window = make_window()
    session, events = _gated_session(window, llm_server, timeout=0.001)  # runs out at once
    assert wait_until_finished(qtbot, session) == "ok"
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == ("continue", "timeout")
    assert _tasks(llm_server) == ["Draft: the task", "Ship: draft 1"]
    assert not session.view.gate_panel.isVisible()
    qtbot.waitUntil(
        lambda: session.view.graph_view.canvas.node_view("ship").status == "done",
        timeout=RUN_TIMEOUT_MS,
    )


def test_a_gates_question_is_shown_as_text_not_markup(qtbot: QtBot, view: RunView) -> None:
    """The question comes from a preset file of a checkout, maybe hostile: no links, no
    images, no styling reach the window through it."""
    b = RunBuilder().start("chain", [("planner", "plan", "m"), ("worker", "do", "m")])
    question = '<img src="file:///etc/passwd"><a href="https://evil.example">Ship?</a>'
    b.events.append(
        GateWaiting(run_id=b.run_id, gate_id="step-2#1", node="step-2", question=question)
    )
    view.add_events(b.events)
    panel = view.gate_panel
    qtbot.waitUntil(panel.isVisible)
    assert "&lt;img" in panel.question.text() and "<img" not in panel.question.text()
    assert "<a " not in panel.question.text()
