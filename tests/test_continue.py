"""Continue: a follow-up to a finished step of Baton's own loop goes on with the saved
conversation, as a linked one-step run (real runner, real HTTP, real run files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.errors import RunError
from core.model.events import (
    Event,
    RunStarted,
    StepFinished,
    StepStarted,
    UserMessage,
)
from core.record.run_files import RunIndex, load_run, run_file
from core.run.continuation import continue_request
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest, Responder, deny_all
from tests.llm_server import LLMServer, Reply

WORKER = AgentDefinition(name="worker", description="w", tools=("read",), system_prompt="W")


async def run(
    server: LLMServer,
    request: RunRequest,
    responder: Responder = deny_all,
    started: list[Runner] | None = None,
) -> Runner:
    """Run ``request`` to its end (recorded); ``started`` gets the runner before it runs."""
    runner = Runner(
        request,
        settings=server.settings(policy={"read": "ask"}),
        responder=responder,
        agents=AgentCatalog(agents=[WORKER]),
    )
    if started is not None:
        started.append(runner)
    await runner.run()
    return runner


def saved(runner: Runner) -> list[Event]:
    return load_run(run_file(runner.run_id))


def without_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] != "system"]


async def test_continue_sends_the_saved_conversation_then_the_follow_up(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("The word is marigold.\n", encoding="utf-8")
    llm_server.queue(
        Reply.tool("read", {"path": "notes.txt"}), Reply.answer("marigold", reasoning="short")
    )

    runners: list[Runner] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        runners[0].steer(0, "Answer in one word.")
        return ApprovalAnswer(decision="approve")

    first = await run(
        llm_server,
        RunRequest(mode="single", steps=[StepSpec("worker", "Find the word")], cwd=tmp_path),
        responder,
        runners,
    )
    llm_server.queue(Reply.answer("souci"))
    request = continue_request(saved(first), 0, "  And in French?  ")
    second = await run(llm_server, request)

    assert second.result is not None and second.result.status == "ok"
    assert len(llm_server.requests) == 3  # one for the follow-up, none to replay the past
    before, follow_up = llm_server.requests[1], llm_server.requests[2]
    assert follow_up.messages[0] == {"role": "system", "content": "W"}
    assert without_system(follow_up.messages) == [
        *without_system(before.messages),
        {"role": "assistant", "content": "marigold"},
        {"role": "user", "content": "And in French?"},
    ]
    events = saved(second)
    start = events[0]
    assert isinstance(start, RunStarted) and start.lineage is not None
    assert (start.lineage.run_id, start.lineage.step, start.lineage.kind) == (
        first.run_id,
        0,
        "continue",
    )
    (step,) = [e for e in events if isinstance(e, StepStarted)]
    assert (step.agent, step.backend, step.task) == ("worker", "openai", "And in French?")
    (said,) = [e for e in events if isinstance(e, UserMessage)]
    assert (said.text, said.delivery) == ("And in French?", "continue")
    (done,) = [e for e in events if isinstance(e, StepFinished)]
    assert done.output == "souci"
    record = RunIndex().get(second.run_id)
    assert record is not None and record.origin is not None
    assert record.origin.describe() == f"continues run {first.run_id}, step 1"

    # a continuation continues with everything before it
    llm_server.queue(Reply.answer("Ringelblume"))
    third = await run(llm_server, continue_request(saved(second), 0, "German?"))
    assert third.result is not None and third.result.status == "ok"
    assert without_system(llm_server.requests[3].messages) == [
        *without_system(follow_up.messages),
        {"role": "assistant", "content": "souci"},
        {"role": "user", "content": "German?"},
    ]


async def test_what_cannot_be_continued_says_why(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.queue(Reply.error(400, "bad request"))
    request = RunRequest(
        mode="chain",
        steps=[StepSpec("worker", "one"), StepSpec("worker", "two")],
        cwd=tmp_path,
    )
    failed = await run(llm_server, request)
    events = saved(failed)
    with pytest.raises(RunError, match=r"step 2 of run .* did not finish"):
        continue_request(events, 1, "go on")
    with pytest.raises(RunError, match="the follow-up is empty"):
        continue_request(events, 0, "   ")
    imported = [
        e.model_copy(update={"backend": ""}) if isinstance(e, StepStarted) else e for e in events
    ]
    with pytest.raises(RunError, match="ran on an unknown backend, whose steps cannot be"):
        continue_request(imported, 0, "go on")
    on_pi = [
        e.model_copy(update={"backend": "pi"}) if isinstance(e, StepStarted) else e for e in events
    ]
    with pytest.raises(RunError, match="no recorded pi session"):
        continue_request(on_pi, 0, "go on")
    on_claude = [
        e.model_copy(update={"backend": "claude"}) if isinstance(e, StepStarted) else e
        for e in events
    ]
    with pytest.raises(RunError, match="no recorded Claude Code session"):
        continue_request(on_claude, 0, "go on")
