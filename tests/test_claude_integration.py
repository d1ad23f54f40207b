"""The real Claude Code CLI through Baton, fully offline, against tests/anthropic_server.py.

Every real-CLI test runs against Claude Code 2.0.76 and the newest release ``.ci/run``
installs, found by ``tests/real_clis.py`` (skipped without them, failed under ``CI=true``). The
scripted-server tests at the top need no CLI and always run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.backends.base import RunClock, StepContext
from core.backends.claude_cli import ClaudeBackend
from core.config.paths import data_dir
from core.config.settings import Limits, Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    RunFinished,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
)
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest
from tests import real_clis
from tests.anthropic_server import (
    AnthropicServer,
    ErrorReply,
    Thinking,
    ToolUse,
    reply,
    tool_result_text,
)

DENIAL = "Not in this test: shell commands are off."
DENIED = f"Denied by the user: {DENIAL}"
"""What the model reads when a person denies with ``DENIAL`` as the reason."""


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as started:
        yield started


@pytest.fixture(params=real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
def offline_claude(
    request: pytest.FixtureRequest, server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The CLI, with the environment of PROTOCOL.md pointing it at ``server`` (HOME is already
    a temporary folder, see conftest)."""
    path = real_clis.find(request.param, monkeypatch)
    real_clis.point_claude_at(server.url, monkeypatch)
    return path


# ------------------------------------------------------------------------------- the server


def _sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in response.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_server_streams_anthropic_events_and_records_requests(server: AnthropicServer) -> None:
    server.script = [
        reply(Thinking("hmm"), "Hi there", ToolUse("Bash", {"command": "ls -la"}), output_tokens=9)
    ]
    body = {"model": "m", "stream": True, "tools": [{"name": "Bash"}], "messages": []}
    response = httpx.post(f"{server.url}/v1/messages?beta=true", json=body)
    events = _sse(response)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas) == "hmm"
    assert "".join(d.get("text", "") for d in deltas) == "Hi there"
    tool_json = "".join(d.get("partial_json", "") for d in deltas)
    assert json.loads(tool_json) == {"command": "ls -la"}
    assert sum(d["type"] == "input_json_delta" for d in deltas) > 1
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "tool_use"
    assert final["usage"] == {"output_tokens": 9}
    assert [r.main for r in server.requests] == [True]


def test_server_errors_side_calls_and_json_replies(server: AnthropicServer) -> None:
    server.script = [ErrorReply(status=529, message="overloaded", error_type="overloaded_error")]
    main = {"model": "m", "tools": [{"name": "Read"}], "messages": []}
    failed = httpx.post(f"{server.url}/v1/messages", json=main)
    assert failed.status_code == 529
    assert failed.json()["error"] == {"type": "overloaded_error", "message": "overloaded"}
    side = httpx.post(f"{server.url}/v1/messages", json={"model": "haiku", "messages": []})
    assert side.json()["content"] == [{"type": "text", "text": "Side answer"}]
    exhausted = httpx.post(f"{server.url}/v1/messages", json=main).json()
    assert "no more replies" in exhausted["content"][0]["text"]
    assert [r.main for r in server.requests] == [True, False, True]
    assert len(server.main_requests) == 2


# ------------------------------------------------------------------------------- the real CLI


def _denials(results: list[dict[str, Any]]) -> list[str]:
    """The error results' texts, without the ``<system-reminder>`` newer CLIs append."""
    assert all(r.get("is_error") for r in results)
    return [tool_result_text(r).split("\n\n<system-reminder>")[0] for r in results]


def _tool_names(body: dict[str, Any]) -> set[str]:
    """Tools offered to the model (2.1.x adds a ``DeferredToolPlaceholder`` of its own)."""
    return {t["name"] for t in body.get("tools", []) if t["name"] != "DeferredToolPlaceholder"}


def _system(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "\n".join(part.get("text", "") for part in system)
    return str(system or "")


async def _run_step(
    claude: Path,
    work: Path,
    policy: dict[str, Any],
    agent: AgentDefinition | tuple[str, ...] | None,
    responder: Any,
    task: str = "Look at hello.txt",
) -> list[Event]:
    """One step through the real CLI; ``agent``: a definition, or a scout's declared tools."""
    if not isinstance(agent, AgentDefinition):
        agent = AgentDefinition(name="scout", description="d", declared_tools=agent)
    events: list[Event] = []
    settings = Settings(claude_path=str(claude), policy=policy)
    clock = RunClock()
    ctx = StepContext(
        run_id="r1",
        step=0,
        agent=agent,
        task=task,
        cwd=work,
        model="claude-sonnet-4-5",
        tools=("read", "bash"),
        settings=settings,
        approvals=ApprovalGate(settings.effective_policy(), responder, events.append, clock.now),
        clock=clock,
    )
    async with contextlib.aclosing(ClaudeBackend().run(ctx)) as stream:
        async for event in stream:
            events.append(event)
    return events


BASH_CALL = ToolUse("Bash", {"command": "cp hello.txt copy.txt", "description": "Copy the file"})


@pytest.mark.integration
async def test_real_cli_denied_bash_reaches_the_model_with_the_reason(
    offline_claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    server.script = [reply("I'll copy it.", BASH_CALL), reply("Understood, not copying.")]
    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello\n")
    asked: list[ApprovalRequest] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny", reason=DENIAL)

    scout = AgentDefinition(
        name="scout",
        description="d",
        declared_tools=("Bash", "read"),
        system_prompt="You are the scout agent.",
    )
    events = await _run_step(
        offline_claude, work, {}, scout, responder, task="Copy hello.txt to copy.txt"
    )

    finished = events[-1]
    assert isinstance(finished, StepFinished)
    assert (finished.status, finished.output) == ("ok", "Understood, not copying.")
    assert [(r.tool, r.arguments["command"]) for r in asked] == [("bash", "cp hello.txt copy.txt")]
    kinds = [
        type(e).__name__
        for e in events
        if isinstance(e, ToolCallStarted | ApprovalRequested | ApprovalResolved | ToolCallFinished)
    ]
    assert kinds == ["ToolCallStarted", "ApprovalRequested", "ApprovalResolved", "ToolCallFinished"]
    done = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (done[0].status, done[0].result) == ("error", DENIED)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "I'll copy it.Understood, not copying."
    )
    assert not (work / "copy.txt").exists()

    # What the model saw: the reason as the Bash call's error result, and Baton's flags.
    first, second = server.main_requests
    results = second.tool_results()
    assert _denials(results) == [DENIED]
    assert first.body["model"] == "claude-sonnet-4-5"
    assert _tool_names(first.body) == {"Bash", "Read"}
    assert "You are the scout agent." in _system(first.body)
    usage = UsageStats()
    for event in events:
        if isinstance(event, Usage):
            usage = usage + event.usage
    assert usage.input == 24 and usage.output == 14  # the server's 12 + 7 per reply
    assert usage.cost > 0


SCOUT = """---
name: scout
description: Looks around and copies files
tools: Bash, Read
model: claude-sonnet-4-5
---
You are the scout agent.
"""

WRITER = """---
name: writer
description: Writes the summary
tools: read
---
You are the writer agent.
"""


@pytest.mark.integration
async def test_real_cli_two_step_chain_through_the_runner(
    offline_claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    server.script = [
        reply("I'll copy it.", BASH_CALL),
        reply("Scout report: the copy was refused."),
        reply("Summary: nothing was copied."),
    ]
    work = tmp_path / "project"
    (work / ".claude" / "agents").mkdir(parents=True)
    (work / ".claude" / "agents" / "scout.md").write_text(SCOUT)
    (work / ".claude" / "agents" / "writer.md").write_text(WRITER)
    (work / "hello.txt").write_text("hello\n")

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="deny", reason=DENIAL)

    events: list[Event] = []
    runner = Runner(
        RunRequest(
            mode="chain",
            steps=[
                StepSpec(agent="scout", task="Copy hello.txt to copy.txt"),
                StepSpec(agent="writer", task="Summarize this report: {previous}"),
            ],
            cwd=work,
            backend="claude",
            trust_project=True,
        ),
        settings=Settings(claude_path=str(offline_claude)),
        responder=responder,
        listeners=[events.append],
        record=False,
    )
    finished = await runner.run()

    assert isinstance(finished, RunFinished)
    assert finished.status == "ok", finished.error
    started = [e for e in events if isinstance(e, StepStarted)]
    assert [(s.agent, s.backend) for s in started] == [("scout", "claude"), ("writer", "claude")]
    steps = [e for e in events if isinstance(e, StepFinished)]
    assert [(s.status, s.output) for s in steps] == [
        ("ok", "Scout report: the copy was refused."),
        ("ok", "Summary: nothing was copied."),
    ]
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.reason) for r in resolved] == [("deny", DENIAL)]
    assert finished.usage.cost > 0 and finished.usage.turns >= 3

    scout_first, scout_second, writer = server.main_requests
    assert _denials(scout_second.tool_results()) == [DENIED]
    assert "You are the scout agent." in _system(scout_first.body)
    assert _tool_names(scout_first.body) == {"Bash", "Read"}
    assert "You are the writer agent." in _system(writer.body)
    assert _tool_names(writer.body) == {"Read"}
    assert "Summarize this report: Scout report: the copy was refused." in writer.text()


@pytest.mark.integration
async def test_real_cli_cancel_during_an_approval_interrupts_it(
    offline_claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    """Cancel while the dialog is open: the dialog closes as denied, the CLI takes the
    ``interrupt`` itself (no signal needed) and the step ends aborted."""
    server.script = [reply("I'll copy it.", BASH_CALL), reply("never sent")]
    events: list[Event] = []
    settings = Settings(claude_path=str(offline_claude))
    clock = RunClock()
    cancelled = asyncio.Event()

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        cancelled.set()  # the person presses Cancel while the dialog is open
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    ctx = StepContext(
        run_id="r1",
        step=0,
        agent=AgentDefinition(name="scout", description="d", declared_tools=("Bash",)),
        task="Copy hello.txt to copy.txt",
        cwd=tmp_path,
        model="claude-sonnet-4-5",
        tools=("bash",),
        settings=settings,
        approvals=ApprovalGate(settings.effective_policy(), responder, events.append, clock.now),
        clock=clock,
        cancelled=cancelled,
    )
    backend = ClaudeBackend()
    backend.interrupt_grace_s = 30.0  # generous: a slow machine must not turn this into a kill
    async with contextlib.aclosing(backend.run(ctx)) as stream:
        async for event in stream:
            events.append(event)

    finished = events[-1]
    assert isinstance(finished, StepFinished)
    assert (finished.status, finished.output) == ("aborted", "I'll copy it.")
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.reason) for r in resolved] == [("deny", "run cancelled")]
    done = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [d.status for d in done] == ["error"]
    logs = [e.message for e in events if isinstance(e, Log)]
    assert "[Request interrupted by user for tool use]" in logs  # the CLI's own interrupt
    assert len(server.main_requests) == 1


def _read_of_hello(folder: Path) -> ToolUse:
    """A ``Read`` of ``hello.txt`` inside ``folder`` (written now): in Claude's safe set."""
    (folder / "hello.txt").write_text("hello\n")
    return ToolUse("Read", {"file_path": str(folder / "hello.txt")})


@pytest.mark.integration
async def test_real_cli_a_read_in_claude_s_safe_set_reaches_the_gate_when_the_policy_asks(
    offline_claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    read_call = _read_of_hello(tmp_path)
    server.script = [reply("Reading.", read_call), reply("Not allowed to read.")]
    asked: list[ApprovalRequest] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny", reason=DENIAL)

    events = await _run_step(offline_claude, tmp_path, {"read": "ask"}, ("Read",), responder)
    assert [(r.tool, r.arguments.get("file_path")) for r in asked] == [
        ("read", str(tmp_path / "hello.txt"))
    ]
    finished = events[-1]
    assert isinstance(finished, StepFinished) and finished.status == "ok"
    results = server.main_requests[1].tool_results()
    assert _denials(results) == [DENIED]


@pytest.mark.integration
@pytest.mark.parametrize("declared", [("Bash", "Read"), None], ids=["declared", "all-tools"])
async def test_real_cli_a_denied_tool_is_never_offered(
    offline_claude: Path,
    server: AnthropicServer,
    tmp_path: Path,
    declared: tuple[str, ...] | None,
) -> None:
    server.script = [reply("Nothing to run.")]

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        raise AssertionError(f"nothing should be asked: {request}")

    events = await _run_step(offline_claude, tmp_path, {"bash": "deny"}, declared, responder)
    finished = events[-1]
    assert isinstance(finished, StepFinished) and finished.status == "ok"
    offered = _tool_names(server.main_requests[0].body)
    assert "Read" in offered and "Bash" not in offered


@pytest.mark.integration
async def test_real_cli_turn_limit_is_an_error_never_an_answer(
    offline_claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    """2.0.76 reports ``error_max_turns`` with ``is_error: false``; 2.1.x with true."""
    read_call = _read_of_hello(tmp_path)
    server.script = [reply("Half an answer.", read_call), reply("never reached")]
    request = RunRequest(
        mode="chain",
        steps=[StepSpec("scout", "Look"), StepSpec("scout", "Go on with {previous}")],
        cwd=tmp_path,
        backend="claude",
    )
    events: list[Event] = []
    scout = AgentDefinition(name="scout", description="d", declared_tools=("Read",))
    runner = Runner(
        request,
        settings=Settings(claude_path=str(offline_claude), limits=Limits(max_turns=1)),
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=[scout]),
    )
    result = await asyncio.wait_for(runner.run(), 120)
    assert result.status == "error"
    steps = [e for e in events if isinstance(e, StepFinished)]
    assert len(steps) == 1  # the half answer is not handed on
    assert steps[0].status == "error" and "turn" in (steps[0].error or "")


@pytest.mark.integration
async def test_real_cli_never_reads_baton_s_own_folders(
    offline_claude: Path, server: AnthropicServer, isolated_home: Path
) -> None:
    """Working folder = home (holding Baton's data folder); reads are allowed by the policy."""
    secret = data_dir() / "runs" / "forged.jsonl"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("SECRET-RUN-LINE\n", encoding="utf-8")
    server.script = [reply("Reading.", ToolUse("Read", {"file_path": str(secret)})), reply("ok")]

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="approve")  # even a person saying yes does not open it

    events = await _run_step(offline_claude, isolated_home, {"read": "allow"}, ("Read",), responder)
    finished = events[-1]
    assert isinstance(finished, StepFinished) and finished.status == "ok"
    (result,) = server.main_requests[1].tool_results()
    assert result.get("is_error") is True
    assert all("SECRET-RUN-LINE" not in json.dumps(r.body) for r in server.main_requests)
