"""Talking to a running step through Baton's own loop: the real runner, real HTTP, the
scripted server counting requests. (pi and Claude Code: their integration tests.)"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from core.backends.steering import SteerError, StepInbox
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import Event, StepFinished, TextDelta, ToolCallFinished, UserMessage
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.safety.redaction import Redactor, StreamRedactor
from tests.llm_server import LLMServer, Reply

STEER = "Also say which word you found."


def runner_for(server: LLMServer, work: Path, **kwargs: Any) -> tuple[Runner, list[Event]]:
    events: list[Event] = []
    worker = AgentDefinition(name="worker", description="w", tools=("read",), system_prompt="W")
    request = RunRequest(mode="single", steps=[StepSpec(agent="worker", task="Read it")], cwd=work)
    runner = Runner(
        request,
        settings=server.settings(policy={"read": "ask"}),
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=[worker]),
        **kwargs,
    )
    return runner, events


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("The word is marigold.\n", encoding="utf-8")
    return tmp_path


async def test_a_message_during_a_tool_call_is_in_the_very_next_request(
    llm_server: LLMServer, work: Path
) -> None:
    llm_server.queue(Reply.tool("read", {"path": "notes.txt"}), Reply.answer("marigold"))
    holder: list[Runner] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        holder[0].steer(0, f"  {STEER}\n")  # while the call waits: mid tool call
        return ApprovalAnswer(decision="approve")

    runner, events = runner_for(llm_server, work, responder=responder)
    holder.append(runner)
    result = await runner.run()

    assert result.status == "ok"
    first, second = llm_server.requests  # no extra request, nothing re-sent
    assert [m["role"] for m in second.messages][-3:] == ["assistant", "tool", "user"]
    assert second.messages[-1]["content"] == STEER
    assert "marigold" in second.tool_messages[0]["content"]
    (done,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.status == "ok"  # the call ran to its end
    (said,) = [e for e in events if isinstance(e, UserMessage)]
    assert (said.step, said.text, said.delivery) == (0, STEER, "steer")
    assert events.index(said) < events.index(done)  # shown where it was said
    assert STEER not in first.user_text


async def test_a_message_during_the_final_answer_gets_one_more_request(
    llm_server: LLMServer, work: Path
) -> None:
    release = threading.Event()
    llm_server.queue(Reply.answer("First answer", hold=release), Reply.answer("Second answer"))
    runner, events = runner_for(llm_server, work)
    running = asyncio.create_task(runner.run())
    await llm_server.wait_requests_async(1)
    runner.steer(0, STEER)
    release.set()
    result = await running

    assert result.status == "ok"
    _, second = llm_server.requests
    assert [(m["role"], m["content"]) for m in second.messages[-2:]] == [
        ("assistant", "First answer"),
        ("user", STEER),
    ]
    (finished,) = [e for e in events if isinstance(e, StepFinished)]
    assert finished.output == "Second answer"


async def test_a_step_that_is_not_running_refuses_messages(
    llm_server: LLMServer, work: Path
) -> None:
    llm_server.queue(Reply.answer("done"))
    runner, events = runner_for(llm_server, work)
    with pytest.raises(SteerError, match="step 1 is not running"):
        runner.steer(0, "too early")
    await runner.run()
    with pytest.raises(SteerError, match="not running"):
        runner.steer(0, "too late")
    assert not [e for e in events if isinstance(e, UserMessage)]
    assert len(llm_server.requests) == 1


async def test_an_empty_message_is_refused(llm_server: LLMServer, work: Path) -> None:
    llm_server.queue(Reply.tool("read", {"path": "notes.txt"}), Reply.answer("ok"))
    holder: list[Runner] = []
    refused: list[str] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        with pytest.raises(SteerError) as error:
            holder[0].steer(0, "  \n ")
        refused.append(str(error.value))
        return ApprovalAnswer(decision="approve")

    runner, _ = runner_for(llm_server, work, responder=responder)
    holder.append(runner)
    await runner.run()
    assert refused == ["the message is empty"]
    assert all(m["content"] for m in llm_server.requests[1].messages if m["role"] == "user")


def test_a_message_ends_the_text_block_before_it_in_the_run_file() -> None:
    """A text tail held back by the redactor (it might start a secret) comes out before the
    message, where it was written, not after it."""
    streaming = StreamRedactor(Redactor(["sk-live-4f9a8b7c6d5e4f3a2b1c"]))
    assert streaming.feed(TextDelta(run_id="r", step=0, text="Reading sk-live")) == [
        TextDelta(run_id="r", step=0, text="Reading ")
    ]
    said = UserMessage(run_id="r", step=0, text="stop")
    assert streaming.feed(said) == [TextDelta(run_id="r", step=0, text="sk-live"), said]


async def test_the_inbox_says_why_it_is_closed() -> None:
    inbox = StepInbox()
    with pytest.raises(SteerError, match="not talking to its model yet"):
        inbox.put("x")
    inbox.open()
    inbox.put("a")
    inbox.put("b")
    assert inbox.has_pending
    assert inbox.take() == ["a", "b"] and not inbox.has_pending
    inbox.close()
    with pytest.raises(SteerError, match="finishing"):
        inbox.put("c")
