"""Talking to a running step through the REAL pi and Claude Code CLIs, against the scripted
servers: the message is in the very next model request and no tool call is aborted.

The message is sent while the step's only tool call waits for its approval, so it is
certainly "during a tool call" without any timing: the CLI holds the call until Baton
answers. Where the CLIs are: ``tests/real_clis.py`` (skipped without them, failed under
``CI=true``); they are set up against the scripted servers by the integration tests' own
fixtures, imported here (ruff takes a fixture parameter for a redefinition: F811 is off).
"""

# ruff: noqa: F811

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.backends.pi_sessions import sessions_dir
from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import Event, Log, StepFinished, ToolCallFinished, UserMessage
from core.record.run_files import RunIndex, load_run, run_file
from core.run.continuation import continue_request
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from tests.anthropic_server import AnthropicServer, ToolUse, reply, tool_result_text
from tests.llm_server import LLMServer, Reply
from tests.test_claude_integration import offline_claude, server  # noqa: F401 (fixtures)
from tests.test_pi_integration import real_pi  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration

STEER = "Also name the colour of the flower."


def steering_runner(
    backend: str, work: Path, settings: Settings, tool: str, declared: str | None = None
) -> tuple[Runner, list[Event]]:
    """A one-step run whose first approval question steers the step, then approves."""
    events: list[Event] = []
    worker = AgentDefinition(
        name="worker",
        description="w",
        tools=(tool,),
        declared_tools=(declared,) if declared else None,
        system_prompt="W",
    )
    request = RunRequest(
        mode="single", steps=[StepSpec("worker", "Find the code word")], cwd=work, backend=backend
    )
    holder: list[Runner] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        holder[0].steer(0, STEER)
        return ApprovalAnswer(decision="approve")

    runner = Runner(
        request,
        settings=settings,
        responder=responder,
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=[worker]),
    )
    holder.append(runner)
    return runner, events


def check_events(events: list[Event]) -> StepFinished:
    (said,) = [e for e in events if isinstance(e, UserMessage)]
    assert (said.step, said.text, said.delivery) == (0, STEER, "steer")
    (done,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.status == "ok", done  # the call ran to its end
    (finished,) = [e for e in events if isinstance(e, StepFinished)]
    assert finished.status == "ok", [e for e in events if isinstance(e, Log)]
    return finished


async def test_pi_gets_the_message_in_its_very_next_request(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    llm_server.queue(Reply.tool("read", {"path": "notes.txt"}), Reply.answer("marigold, yellow"))
    settings = Settings(pi_path=str(executable), policy={"read": "ask"})
    runner, events = steering_runner("pi", work, settings, "read")
    result = await asyncio.wait_for(runner.run(), 120)

    assert result.status == "ok", events
    first, second = llm_server.requests  # the message cost no request of its own
    roles = [m["role"] for m in second.messages]
    assert roles[-2:] == ["tool", "user"]
    assert "marigold" in str(second.messages[-2]["content"])
    assert STEER in str(second.messages[-1]["content"])
    assert STEER not in str(first.messages)
    assert check_events(events).output == "marigold, yellow"


def _texts(message: dict[str, Any]) -> str:
    """Everything a user message of the Messages API says, tool results included."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        parts.append(tool_result_text(block) if block.get("type") == "tool_result" else "")
        parts.append(str(block.get("text", "")))
    return "\n".join(parts)


@pytest.fixture
def claude_work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("The launch code word is: marigold.\n", encoding="utf-8")
    return work


async def test_claude_code_gets_the_message_in_its_very_next_request(
    offline_claude: Path, server: AnthropicServer, claude_work: Path
) -> None:
    bash = ToolUse("Bash", {"command": "cat notes.txt", "description": "Read the notes"})
    server.script = [reply("Reading.", bash), reply("marigold, yellow")]
    settings = Settings(claude_path=str(offline_claude), policy={"bash": "ask"})
    runner, events = steering_runner("claude", claude_work, settings, "bash", "Bash")
    result = await asyncio.wait_for(runner.run(), 120)
    requests = server.main_requests

    assert result.status == "ok", events
    first, second = requests[:2]
    last_user = second.body["messages"][-1]
    assert last_user["role"] == "user"
    said = _texts(last_user)
    assert "marigold" in said  # the tool's result: the call ran to its end
    assert STEER in said  # … and the message is in the same, very next request
    assert STEER not in str(first.body["messages"])
    check_events(events)


async def test_claude_code_continues_a_fork_of_the_finished_session(
    offline_claude: Path, server: AnthropicServer, claude_work: Path
) -> None:
    worker = AgentDefinition(name="worker", description="w", system_prompt="W")
    settings = Settings(claude_path=str(offline_claude))

    async def run(request: RunRequest) -> Runner:
        runner = Runner(request, settings=settings, agents=AgentCatalog(agents=[worker]))
        await asyncio.wait_for(runner.run(), 120)
        return runner

    server.script = [reply("The word is marigold."), reply("souci")]
    first = await run(
        RunRequest(
            mode="single", steps=[StepSpec("worker", "Find it")], cwd=claude_work, backend="claude"
        )
    )
    events = load_run(run_file(first.run_id))
    (finished,) = [e for e in events if isinstance(e, StepFinished)]
    assert finished.status == "ok" and finished.session
    second = await run(continue_request(events, 0, "And in French?"))
    requests = server.main_requests

    assert second.result is not None and second.result.status == "ok"
    assert len(requests) == 2
    history = json.dumps(requests[1].body["messages"])
    said = [history.index(text) for text in ("Find it", "marigold", "And in French?")]
    assert said == sorted(said)  # the finished conversation, then the follow-up
    assert "And in French?" in _texts(requests[1].body["messages"][-1])
    continued = load_run(run_file(second.run_id))
    (step,) = [e for e in continued if isinstance(e, StepFinished)]
    assert step.output == "souci"
    assert step.session and step.session != finished.session  # a fork, the old one kept


async def test_pi_continues_a_fork_of_the_finished_session(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    worker = AgentDefinition(name="worker", description="w", tools=("read",), system_prompt="W")
    settings = Settings(pi_path=str(executable))

    async def run(request: RunRequest) -> Runner:
        runner = Runner(request, settings=settings, agents=AgentCatalog(agents=[worker]))
        await asyncio.wait_for(runner.run(), 120)
        return runner

    llm_server.queue(Reply.answer("The word is marigold."), Reply.answer("souci"))
    first = await run(
        RunRequest(mode="single", steps=[StepSpec("worker", "Find it")], cwd=work, backend="pi")
    )
    events = load_run(run_file(first.run_id))
    (finished,) = [e for e in events if isinstance(e, StepFinished)]
    assert finished.status == "ok" and finished.session
    saved_session = Path(finished.session)
    before = saved_session.read_bytes()  # noqa: ASYNC240 (a small file, in a test)
    second = await run(continue_request(events, 0, "And in French?"))

    assert second.result is not None and second.result.status == "ok"
    assert len(llm_server.requests) == 2
    said = [(m["role"], str(m["content"])) for m in llm_server.requests[1].messages[1:]]
    assert said[0] == ("user", str([{"type": "text", "text": "Task: Find it"}]))
    assert said[1] == ("assistant", "The word is marigold.")
    assert said[2] == ("user", str([{"type": "text", "text": "And in French?"}]))
    continued = load_run(run_file(second.run_id))
    (step,) = [e for e in continued if isinstance(e, StepFinished)]
    assert step.output == "souci"
    assert step.session and step.session != finished.session  # a fork
    assert saved_session.read_bytes() == before  # noqa: ASYNC240 (the finished one is kept)

    # Both files are in Baton's data folder, none in the working folder; each goes with its run.
    fork = Path(step.session)
    assert saved_session.parent == fork.parent == sessions_dir()
    assert not [p for p in work.rglob("*.jsonl")]
    RunIndex().delete(second.run_id)
    assert not fork.exists() and saved_session.exists()  # noqa: ASYNC240
    RunIndex().delete(first.run_id)
    assert not saved_session.exists()  # noqa: ASYNC240
