"""The message box under a step: a person types to the running step, presses Enter, sees the
message in the step's stream, and the agent gets it in its very next request; once the step
finished, the same box continues its conversation as a new, linked run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.run.run_request import RunRequest, StepSpec
from gui.run.run_controller import RunSession
from gui.run.step_items import NoticeItem
from gui.run.step_message_box import StepMessageBox
from gui.run.step_pane import StepPane
from gui.window.main_window import MainWindow
from tests.gui.labels import renders_as_html
from tests.gui.launching import RUN_TIMEOUT_MS, wait_for_session, wait_until_finished
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")

MESSAGE = "Only look at the tests folder."


def shown_messages(pane: StepPane) -> list[str]:
    return [
        w.text() for w in pane.item_widgets() if isinstance(w, NoticeItem) and "You:" in w.text()
    ]


def start_held_run(qtbot: QtBot, window: MainWindow, server: LLMServer) -> RunSession:
    """A one-step run launched from ``window``, its first request sent and held by the
    server: the step is running and its message box shown."""
    save_settings(server.settings())
    request = RunRequest(
        mode="single", steps=[StepSpec("scout", "find")], cwd=window.working_folder
    )
    task = asyncio.ensure_future(window.run_controller.launch(request, "ask", window))
    qtbot.waitUntil(task.done, timeout=RUN_TIMEOUT_MS)
    session = task.result()
    assert session is not None
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: len(session.view.panes()) == 1)
    qtbot.waitUntil(lambda: message_box(session.view.pane(0)).isVisible())
    return session


def message_box(pane: StepPane) -> StepMessageBox:
    """The pane's box, once made (at the turn after the pane, when the step needs one)."""
    assert pane.message_box is not None
    return pane.message_box


def test_a_message_typed_to_the_running_step_shows_and_reaches_the_model(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    release = threading.Event()
    llm_server.queue(Reply.answer("Looking around…", hold=release), Reply.answer("Tests only."))
    window = make_window()
    session = start_held_run(qtbot, window, llm_server)
    box = message_box(session.view.pane(0))
    assert box.mode == "steer" and box.button.text() == "Send"
    assert not box.button.isEnabled()  # nothing typed yet

    box.editor.setFocus()
    qtbot.keyClicks(box.editor, MESSAGE)
    assert box.button.isEnabled()
    qtbot.keyClick(box.editor, Qt.Key.Key_Return)

    assert box.editor.toPlainText() == ""
    qtbot.waitUntil(lambda: shown_messages(session.view.pane(0)) == [f"➤  You: {MESSAGE}"])
    release.set()
    assert wait_until_finished(qtbot, session) == "ok"
    first, second = llm_server.requests  # the very next request carries it
    assert second.messages[-2:] == [
        {"role": "assistant", "content": "Looking around…"},
        {"role": "user", "content": MESSAGE},
    ]
    assert MESSAGE not in str(first.messages)
    pane = session.view.pane(0)
    qtbot.waitUntil(lambda: message_box(pane).mode == "continue")  # finished: it continues
    assert message_box(pane).button.text() == "Continue"

    llm_server.queue(Reply.answer("Three test files."))
    qtbot.keyClicks(message_box(pane).editor, "How many?")
    qtbot.keyClick(message_box(pane).editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    continued = wait_for_session(qtbot, window, count=2)
    assert wait_until_finished(qtbot, continued) == "ok"
    third = llm_server.requests[2]
    assert third.messages[-4:] == [  # the message said while the answer streamed, after it
        {"role": "assistant", "content": "Looking around…"},
        {"role": "user", "content": MESSAGE},
        {"role": "assistant", "content": "Tests only."},
        {"role": "user", "content": "How many?"},
    ]
    new_pane = continued.view.pane(0)
    qtbot.waitUntil(lambda: shown_messages(new_pane) == ["➤  You: How many?"])
    origin = f"continues run {session.run_id}, step 1"
    assert continued.view.header.origin.full_text() == f"·  {origin}"


def test_shift_enter_is_a_new_line_and_a_refusal_is_shown(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer
) -> None:
    release = threading.Event()
    llm_server.queue(Reply.answer("Working", hold=release))
    session = start_held_run(qtbot, make_window(), llm_server)
    box = message_box(session.view.pane(0))
    qtbot.keyClicks(box.editor, "one")
    qtbot.keyClick(box.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box.editor, "two")
    assert box.editor.toPlainText() == "one\ntwo"  # not sent

    session.runner._running[0].inbox.close()  # the step is finishing: messages are refused
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(box.problem.isVisible)
    assert box.problem.text() == (
        "Not sent: the step is finishing; continue it once it has finished."
    )
    assert shown_messages(session.view.pane(0)) == []
    release.set()
    assert wait_until_finished(qtbot, session) == "ok"
    assert len(llm_server.requests) == 1


def test_a_refusal_is_shown_as_written(qtbot: QtBot) -> None:
    """Why a message was refused comes from the backend: shown as text, never as HTML."""
    box = StepMessageBox()
    qtbot.addWidget(box)
    box.show_problem('the agent said <img src="/etc/x.png"> no')
    assert box.problem.text() == 'the agent said <img src="/etc/x.png"> no'
    assert not renders_as_html(box.problem)
