"""The approval dialog and queue with the real runner, Baton's own agent loop, real bash, and
the scripted model server: what a person sees, and what reaches the model."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from core.model.events import ApprovalRequested, ApprovalResolved, Event, RunFinished
from core.record.run_files import load_run, run_file
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.safety.rule_store import RuleStore
from core.tools.approval_describe import MAX_DIFF_LINES, Description
from core.tools.approval_describe import describe as real_describe
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.approval_queue import ApprovalQueue
from tests.gui.labels import labels_with, renders_as_html
from tests.llm_server import LLMServer, Reply


@pytest.fixture
def quick_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests are about what happens after the guard; its own test uses the real delay."""
    monkeypatch.setattr(ApprovalDialog, "ENABLE_DELAY_MS", 10)


@pytest.fixture
def queue(qtbot: QtBot, quick_guard: None) -> Iterator[ApprovalQueue]:
    approvals = ApprovalQueue()
    yield approvals
    if approvals._dialog is not None:
        approvals._dialog.clear_request()
        approvals._dialog.deleteLater()


def _runner(
    server: LLMServer,
    cwd: Path,
    responder: ApprovalQueue,
    *tasks: str,
    events: list[Event] | None = None,
) -> Runner:
    steps = [StepSpec(agent="worker", task=task) for task in tasks or ("do it",)]
    request = RunRequest(mode="parallel" if len(steps) > 1 else "single", steps=steps, cwd=cwd)
    listeners = [events.append] if events is not None else []
    return Runner(request, settings=server.settings(), responder=responder, listeners=listeners)


def _click(qtbot: QtBot, dialog: ApprovalDialog, button: QPushButton) -> None:
    """Wait out the guard, then click as a person would."""
    qtbot.waitUntil(dialog.buttons_enabled)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _finish(qtbot: QtBot, task: asyncio.Task[RunFinished]) -> RunFinished:
    qtbot.waitUntil(task.done, timeout=10_000)
    return task.result()


@pytest.mark.usefixtures("qasync_loop")
def test_bash_raises_the_dialog_and_approve_once_runs_the_command(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    llm_server.queue(Reply.tool("bash", {"command": "echo hi > out.txt"}), Reply.answer("done"))
    events: list[Event] = []
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue, events=events).run())

    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.headline.text() == "worker wants to run a command"
    assert dialog.command_edit.toPlainText() == "echo hi > out.txt"
    assert str(tmp_path) in dialog.folder_label.full_text()
    assert "bash" in dialog.windowTitle() and "step 1" in dialog.windowTitle()
    assert not dialog.counter.isVisible()
    assert any(isinstance(e, ApprovalRequested) for e in events)
    assert not (tmp_path / "out.txt").exists()

    _click(qtbot, dialog, dialog.approve_once_button)

    assert _finish(qtbot, task).status == "ok"
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    assert not dialog.isVisible() and queue.pending() == []
    result = llm_server.requests[1].tool_messages[0]["content"]
    assert "Denied" not in result


@pytest.mark.usefixtures("qasync_loop")
def test_deny_with_a_reason_reaches_the_model_and_the_run_goes_on(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    llm_server.queue(
        Reply.tool("bash", {"command": "rm -rf build"}), Reply.answer("I will not delete it.")
    )
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue).run())
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)

    qtbot.keyClicks(dialog.reason_edit, "keep the build folder")
    _click(qtbot, dialog, dialog.deny_button)

    finished = _finish(qtbot, task)
    assert finished.status == "ok"
    tool_result = llm_server.requests[1].tool_messages[0]["content"]
    assert "Denied by the user: keep the build folder" in tool_result
    assert len(llm_server.requests) == 2  # the model was asked again: the run went on


@pytest.mark.usefixtures("qasync_loop")
def test_approve_for_this_run_does_not_ask_again(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    llm_server.queue(
        Reply.tool("bash", {"command": "echo one >> log.txt"}),
        Reply.tool("bash", {"command": "echo one >> log.txt"}),
        Reply.answer("done"),
    )
    shown: list[str] = []
    queue.requestShown.connect(lambda run_id, step, request_id: shown.append(request_id))
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue).run())
    qtbot.waitUntil(queue.dialog.isVisible)

    _click(qtbot, queue.dialog, queue.dialog.approve_run_button)

    assert _finish(qtbot, task).status == "ok"
    assert (tmp_path / "log.txt").read_text() == "one\none\n"
    assert len(shown) == 1


@pytest.mark.usefixtures("qasync_loop")
def test_an_edited_command_runs_instead_of_the_proposed_one(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    llm_server.queue(Reply.tool("bash", {"command": "echo wrong > out.txt"}), Reply.answer("ok"))
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue).run())
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert not dialog.edited_note.isVisible()

    dialog.command_edit.setPlainText("echo right > out.txt")
    assert dialog.edited_note.isVisible()
    _click(qtbot, dialog, dialog.approve_once_button)

    assert _finish(qtbot, task).status == "ok"
    assert (tmp_path / "out.txt").read_text() == "right\n"


@pytest.mark.usefixtures("qasync_loop")
def test_parallel_requests_queue_with_a_counter(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    def reply(body: dict[str, Any]) -> Reply:
        if any(m.get("role") == "tool" for m in body["messages"]):
            return Reply.answer("done")
        name = "a" if "task a" in json.dumps(body["messages"]) else "b"
        return Reply.tool("bash", {"command": f"echo {name} > {name}.txt"})

    llm_server.responder = reply
    shown: list[int] = []
    queue.requestShown.connect(lambda run_id, step, request_id: shown.append(step))
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue, "task a", "task b").run())
    dialog = queue.dialog
    qtbot.waitUntil(lambda: len(queue.pending()) == 2)
    assert dialog.counter.isVisible() and dialog.counter.text() == "1 of 2 waiting"
    first = dialog.request
    assert first is not None and first is queue.pending()[0]

    _click(qtbot, dialog, dialog.approve_once_button)
    qtbot.waitUntil(lambda: dialog.request is not None and dialog.request is not first)
    assert not dialog.counter.isVisible()
    assert not dialog.buttons_enabled()  # the guard starts again for the next request
    _click(qtbot, dialog, dialog.approve_once_button)

    assert _finish(qtbot, task).status == "ok"
    assert (tmp_path / "a.txt").read_text() == "a\n" and (tmp_path / "b.txt").read_text() == "b\n"
    assert sorted(shown) == [0, 1]
    assert not dialog.isVisible()


@pytest.mark.usefixtures("qasync_loop")
def test_cancelling_the_run_closes_the_pending_request(
    qtbot: QtBot,
    llm_server: LLMServer,
    queue: ApprovalQueue,
    tmp_path: Path,
) -> None:
    llm_server.queue(Reply.tool("bash", {"command": "echo hi > out.txt"}))
    resolved: list[str] = []
    queue.requestResolved.connect(lambda run_id, step, rid, decision: resolved.append(decision))
    runner = _runner(llm_server, tmp_path, queue)
    task = asyncio.ensure_future(runner.run())
    qtbot.waitUntil(queue.dialog.isVisible)

    runner.cancel()

    assert _finish(qtbot, task).status == "aborted"
    assert not queue.dialog.isVisible()
    assert queue.pending() == [] and resolved == ["cancelled"]
    assert not (tmp_path / "out.txt").exists()
    saved = load_run(run_file(runner.run_id))
    decisions = [getattr(e, "decision", None) for e in saved if e.type == "approval_resolved"]
    assert decisions == ["deny"]


# -- the dialog on its own ------------------------------------------------------------------


def _request(number: int = 1, tool: str = "bash", **arguments: Any) -> ApprovalRequest:
    return ApprovalRequest(
        request_id=f"run-a{number}",
        run_id="run",
        step=0,
        agent="worker",
        tool=tool,
        call_id=f"call-{number}",
        arguments=arguments or {"command": "make deploy"},
        cwd=str(Path.cwd()),
    )


def _ask(queue: ApprovalQueue, request: ApprovalRequest) -> asyncio.Future[ApprovalAnswer]:
    return asyncio.ensure_future(queue(request))


def test_buttons_wait_for_the_guard_and_enter_never_approves(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    assert ApprovalDialog.ENABLE_DELAY_MS >= 300  # the real delay, not a test's
    queue = ApprovalQueue()
    answer = _ask(queue, _request())
    dialog = queue.dialog
    qtbot.addWidget(dialog)
    qtbot.waitUntil(dialog.isVisible)

    assert not dialog.buttons_enabled()
    qtbot.mouseClick(dialog.approve_once_button, Qt.MouseButton.LeftButton)
    dialog.reject()  # Escape during the guard does nothing either
    assert not answer.done() and dialog.isVisible()

    qtbot.waitUntil(dialog.buttons_enabled, timeout=3000)
    assert dialog.focusWidget() is dialog.reason_edit
    assert all(not b.isDefault() and not b.autoDefault() for b in dialog._buttons())
    qtbot.keyClicks(dialog.reason_edit, "not now")
    qtbot.keyClick(dialog.reason_edit, Qt.Key.Key_Return)
    qtbot.keyClick(dialog, Qt.Key.Key_Enter)
    assert not answer.done()

    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # after the guard, Escape denies
    qtbot.waitUntil(answer.done)
    assert answer.result() == ApprovalAnswer(decision="deny", reason="not now")


def test_diff_requests_show_a_coloured_diff(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    request = _request(
        tool="edit", path="notes.txt", old_string="beta", new_string="gamma"
    ).model_copy(update={"cwd": str(tmp_path)})
    answer = _ask(queue, request)
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)

    assert dialog.diff_view.isVisible() and not dialog.command_edit.isVisible()
    assert dialog.headline.text() == "worker wants to edit notes.txt"
    kinds = dialog.diff_view.line_kinds()
    assert kinds.count("removed") == 1 and kinds.count("added") == 1
    text = dialog.diff_view.toPlainText()
    assert "-beta" in text and "+gamma" in text
    block = dialog.diff_view.document().findBlockByNumber(kinds.index("added"))
    assert block.blockFormat().background().color() == dialog.diff_view.colors().background["added"]

    _click(qtbot, dialog, dialog.approve_once_button)
    qtbot.waitUntil(answer.done)
    assert answer.result().decision == "approve"
    assert (tmp_path / "notes.txt").read_text() == "alpha\nbeta\n"  # only a preview


def test_a_path_written_as_html_is_shown_as_written(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue, tmp_path: Path
) -> None:
    """A model names the file; Qt would render a name that looks like HTML as HTML, and a
    styled span could hide the part of the path that matters. Every label says it as is."""
    path = 'notes.txt<span style="font-size:1px">/../../.bashrc</span>'
    request = _request(tool="write", path=path, content="x").model_copy(
        update={"cwd": str(tmp_path)}
    )
    answer = _ask(queue, request)
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)

    shown = labels_with(dialog, "<span")
    assert dialog.headline in shown
    assert not [label for label in shown if renders_as_html(label)]
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)


def test_other_tools_show_their_arguments_as_json(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue
) -> None:
    answer = _ask(queue, _request(tool="deploy", target="prod", replicas=3))
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.json_view.isVisible()
    assert json.loads(dialog.json_view.toPlainText()) == {"target": "prod", "replicas": 3}
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)
    assert answer.result() == ApprovalAnswer(decision="deny")


def test_document_delete_names_the_document(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue
) -> None:
    documents = pytest.importorskip("core.documents.store")
    stored = documents.DocumentStore.default().create(
        "Release notes", "# 1.0\n- first\n", tags=["release"]
    )
    request = _request(tool="document", action="delete", id=stored.id).model_copy(
        update={"action": "delete"}
    )
    answer = _ask(queue, request)
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.headline.text() == f"worker wants to delete document #{stored.id}"
    facts = dialog.presentation.facts if dialog.presentation else []
    assert ("Title", "Release notes") in facts and ("Tags", "release") in facts
    assert dialog.diff_view.line_kinds().count("removed") == 2
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)


def test_a_request_cancelled_while_queued_leaves_the_queue(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue
) -> None:
    first = _ask(queue, _request(1))
    second = _ask(queue, _request(2, command="make test"))
    dialog = queue.dialog
    qtbot.waitUntil(lambda: len(queue.pending()) == 2)

    first.cancel()
    qtbot.waitUntil(lambda: dialog.request is not None and dialog.request.request_id == "run-a2")
    assert dialog.command_edit.toPlainText() == "make test"
    second.cancel()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert queue.pending() == []


@pytest.mark.usefixtures("qasync_loop")
def test_always_allow_keeps_a_rule_and_the_next_call_is_not_asked(
    qtbot: QtBot, llm_server: LLMServer, queue: ApprovalQueue, tmp_path: Path
) -> None:
    llm_server.queue(
        Reply.tool("bash", {"command": "git init -q && touch first"}),
        Reply.tool("bash", {"command": "touch second"}),
        Reply.tool("bash", {"command": "touch third"}),
        Reply.answer("done"),
    )
    events: list[Event] = []
    task = asyncio.ensure_future(_runner(llm_server, tmp_path, queue, events=events).run())
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert not dialog.always_check.isVisible()  # two commands: no narrow rule to offer
    _click(qtbot, dialog, dialog.approve_once_button)

    qtbot.waitUntil(
        lambda: dialog.isVisible() and dialog.command_edit.toPlainText() == "touch second"
    )
    assert dialog.always_check.isVisible()
    assert (
        dialog.always_check.text()
        == "Always allow Bash(touch:*) in this project (when you approve)"
    )
    qtbot.mouseClick(dialog.always_check, Qt.MouseButton.LeftButton)
    _click(qtbot, dialog, dialog.approve_once_button)

    assert _finish(qtbot, task).status == "ok"
    assert (tmp_path / "third").exists()
    assert len([e for e in events if isinstance(e, ApprovalRequested)]) == 2  # third not asked
    project = tmp_path.resolve()
    assert RuleStore().for_project(project).texts()["allow"] == ["Bash(touch:*)"]
    decided = [
        (e.decided_by, e.rule, e.added_rule) for e in events if isinstance(e, ApprovalResolved)
    ]
    assert decided == [
        ("person", None, None),
        ("person", None, "Bash(touch:*)"),
        ("rule", "allow Bash(touch:*)", None),
    ]


def test_a_rule_that_asked_is_named_in_the_dialog(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue
) -> None:
    request = _request(tool="read", path="secrets/key").model_copy(
        update={"rule": "ask Read(secrets/**)"}
    )
    answer = _ask(queue, request)
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.rule_label.isVisible()
    assert dialog.rule_label.text() == "Asked by the project rule Read(secrets/**)"
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)


def test_a_huge_write_shows_diff_too_large(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, queue: ApprovalQueue, tmp_path: Path
) -> None:
    content = "line\n" * (MAX_DIFF_LINES + 500)
    request = _request(tool="write", path="big.txt", content=content).model_copy(
        update={"cwd": str(tmp_path)}
    )
    answer = _ask(queue, request)
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert (
        dialog.diff_view.toPlainText().strip() == f"(diff too large — {MAX_DIFF_LINES + 503} lines)"
    )
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)


def test_requests_are_described_off_the_gui_thread(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    queue: ApprovalQueue,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[threading.Thread] = []

    def describe(request: ApprovalRequest) -> Description:
        threads.append(threading.current_thread())
        return real_describe(request)

    monkeypatch.setattr("gui.approvals.approval_queue.describe", describe)
    answer = _ask(queue, _request())
    dialog = queue.dialog
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.command_edit.toPlainText() == "make deploy"
    assert threads and threads[0] is not threading.main_thread()
    _click(qtbot, dialog, dialog.deny_button)
    qtbot.waitUntil(answer.done)
