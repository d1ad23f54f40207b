"""The real pi CLIs (0.73.1 and the current 1.x, as ``.ci/run`` installs them) driven through
Baton's runner; every test runs against both.

pi is configured in a temporary ``PI_CODING_AGENT_DIR`` whose ``models.json`` points at the
scripted OpenAI-compatible server of ``tests/llm_server.py``; nothing leaves 127.0.0.1.
Where pi is looked for: ``tests/real_clis.py`` (skips without it, fails under ``CI=true``).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import psutil
import pytest

from core.config.paths import config_dir
from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition, parse_agent_text
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    OutputFileWritten,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import (
    NO_ONE_TO_ASK,
    ApprovalAnswer,
    ApprovalRequest,
    Responder,
    deny_all,
)
from tests import real_clis
from tests.llm_server import MODEL, LLMServer, Reply

pytestmark = pytest.mark.integration


@pytest.fixture(params=real_clis.PI_CLIS, ids=lambda cli: cli.name)
def real_pi(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, Path]:
    """The pi executable and a working folder; pi's config points at ``llm_server``."""
    executable = real_clis.find(request.param, monkeypatch)
    return executable, real_clis.configure_pi(tmp_path, llm_server, monkeypatch)


def agent(name: str, tools: tuple[str, ...], prompt: str) -> AgentDefinition:
    return AgentDefinition(name=name, description=name, tools=tools, system_prompt=prompt)


def runner_for(
    request: RunRequest,
    executable: Path,
    agents: list[AgentDefinition],
    responder: Responder = deny_all,
) -> tuple[Runner, list[Event]]:
    events: list[Event] = []
    runner = Runner(
        request,
        settings=Settings(pi_path=str(executable)),
        responder=responder,
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=agents),
    )
    return runner, events


def of(events: list[Event], kind: type[Any], step: int | None = None) -> list[Any]:
    return [e for e in events if isinstance(e, kind) and (step is None or e.step == step)]


async def test_a_chain_of_two_pi_steps_hands_over_the_final_text(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    scout = agent("scout", ("read", "ls"), "You are SCOUT-7. Report what you find.")
    planner = agent("planner", ("read",), "You are PLANNER-9. Write a short plan.")
    context = "## Context\n\n`notes.txt` names the code word **marigold**."
    llm_server.queue(
        Reply.tool("read", {"path": "notes.txt"}, call_id="call_read_notes"),
        Reply.answer(context, reasoning="The file is short."),
        Reply.answer("## Plan\n\n1. Use *marigold*."),
    )
    request = RunRequest(
        mode="chain",
        steps=[
            StepSpec("scout", "Find the code word"),
            StepSpec("planner", "Plan with this context:\n\n{previous}"),
        ],
        cwd=work,
        backend="pi",
    )
    runner, events = runner_for(request, executable, [scout, planner])
    result = await asyncio.wait_for(runner.run(), 120)

    assert result.status == "ok", [e for e in events if isinstance(e, Log | StepFinished)]
    assert llm_server.problems == []
    # what Baton shows
    start = events[0]
    assert isinstance(start, RunStarted)
    assert [s.backend for s in start.steps] == ["pi", "pi"]
    assert [(e.step, e.agent, e.backend) for e in of(events, StepStarted)] == [
        (0, "scout", "pi"),
        (1, "planner", "pi"),
    ]
    (call,) = of(events, ToolCallStarted, 0)
    assert (call.call_id, call.tool, call.arguments) == (
        "call_read_notes",
        "read",
        {"path": "notes.txt"},
    )
    (done,) = of(events, ToolCallFinished, 0)
    assert (done.status, done.result) == ("ok", "The launch code word is: marigold.\n")
    assert "".join(e.text for e in of(events, TextDelta, 0)) == context
    usage = of(events, Usage)
    assert [(u.step, u.usage.turns, u.usage.model) for u in usage] == [
        (0, 1, MODEL),
        (0, 1, MODEL),
        (1, 1, MODEL),
    ]
    assert all(u.usage.input > 0 and u.usage.cost > 0 for u in usage)
    first, second = of(events, StepFinished)
    assert (first.status, first.output) == ("ok", context)
    assert (second.status, second.output) == ("ok", "## Plan\n\n1. Use *marigold*.")
    assert first.usage.turns == 2 and second.usage.turns == 1
    assert isinstance(events[-1], RunFinished) and events[-1].usage.turns == 3
    # what pi sent
    requests = llm_server.requests
    assert len(requests) == 3
    assert "SCOUT-7" in requests[0].messages[0]["content"]
    assert sorted(requests[0].tool_names) == ["ls", "read"]
    assert requests[0].user_text == "Task: Find the code word"
    assert requests[2].tool_names == ["read"]
    assert "PLANNER-9" in requests[2].messages[0]["content"]
    assert requests[2].user_text == f"Task: Plan with this context:\n\n{context}"


async def test_a_failing_provider_fails_the_step_although_pi_exits_0(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    # pi's OpenAI client retries by itself too: every attempt fails
    llm_server.responder = lambda body: Reply.error(500, "upstream exploded")
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Say hi")], cwd=work, backend="pi")
    runner, events = runner_for(request, executable, [agent("solo", ("read",), "Be brief.")])
    result = await asyncio.wait_for(runner.run(), 120)
    (step,) = of(events, StepFinished)
    assert step.status == "error"
    assert "upstream exploded" in (step.error or "")
    assert result.status == "error"


async def test_cancel_stops_the_real_pi(real_pi: tuple[Path, Path], llm_server: LLMServer) -> None:
    executable, work = real_pi
    llm_server.queue(Reply.hang())
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Wait")], cwd=work, backend="pi")
    runner, events = runner_for(request, executable, [agent("solo", ("read",), "Be brief.")])
    running = asyncio.create_task(runner.run())
    await llm_server.wait_requests_async(1, timeout=60)  # pi is waiting for the model
    (pi_process,) = [c.pid for c in psutil.Process().children(recursive=True)]  # pi: 'pi'
    assert process_name(pi_process) == "pi"
    runner.cancel()
    result = await asyncio.wait_for(running, 30)
    assert result.status == "aborted"
    (step,) = of(events, StepFinished)
    assert step.status == "aborted"
    with pytest.raises(ProcessLookupError):  # stopped and reaped
        os.kill(pi_process, 0)
    # and the model request it had open was dropped with it
    await llm_server.wait_until_async(lambda: llm_server.in_flight == 0)


def process_name(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip()


async def test_bash_under_approve_deny_is_blocked_and_the_reason_reaches_the_model(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    llm_server.queue(
        Reply.tool("bash", {"command": "touch pwned.txt"}, call_id="call_bash"),
        Reply.answer("I could not run it."),
    )
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Go")], cwd=work, backend="pi")
    runner, events = runner_for(request, executable, [agent("solo", ("bash",), "Be brief.")])
    result = await asyncio.wait_for(runner.run(), 120)

    assert result.status == "ok", [e for e in events if isinstance(e, Log | StepFinished)]
    assert not (work / "pwned.txt").exists()
    (asked,) = of(events, ApprovalRequested)
    assert (asked.tool, asked.call_id) == ("bash", "call_bash")
    assert [e.decision for e in of(events, ApprovalResolved)] == ["deny"]
    (done,) = of(events, ToolCallFinished)
    assert (done.status, done.result) == ("error", NO_ONE_TO_ASK)
    assert llm_server.requests[1].tool_messages[0]["content"] == NO_ONE_TO_ASK


async def test_an_approved_edited_command_is_what_the_real_pi_runs(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    asked: list[ApprovalRequest] = []

    async def edit(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approve", updated_arguments={"command": "echo right > o"})

    llm_server.queue(
        Reply.tool("bash", {"command": "echo wrong > o"}, call_id="call_bash"),
        Reply.answer("done"),
    )
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Go")], cwd=work, backend="pi")
    runner, events = runner_for(request, executable, [agent("solo", ("bash",), "B.")], edit)
    result = await asyncio.wait_for(runner.run(), 120)

    assert result.status == "ok", [e for e in events if isinstance(e, Log | StepFinished)]
    assert [r.arguments for r in asked] == [{"command": "echo wrong > o"}]
    assert (work / "o").read_text(encoding="utf-8") == "right\n"


async def test_a_subagent_tool_is_never_given_to_the_real_pi(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    llm_server.queue(Reply.answer("ok"))
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Go")], cwd=work, backend="pi")
    tools = ("read", "subagent")
    runner, events = runner_for(request, executable, [agent("solo", tools, "B.")])
    result = await asyncio.wait_for(runner.run(), 120)
    assert result.status == "ok"
    assert llm_server.requests[0].tool_names == ["read"]
    assert any("not given to pi: subagent" in e.message for e in of(events, Log))


async def test_the_real_pi_never_reads_baton_s_own_folders(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    secret = config_dir() / "config.yaml"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("policy: {bash: allow}  # SECRET-CONFIG\n", encoding="utf-8")
    llm_server.queue(Reply.tool("read", {"path": str(secret)}), Reply.answer("ok"))
    request = RunRequest(mode="single", steps=[StepSpec("solo", "Go")], cwd=work, backend="pi")
    runner, events = runner_for(request, executable, [agent("solo", ("read",), "B.")])
    result = await asyncio.wait_for(runner.run(), 120)
    assert result.status == "ok"
    (done,) = of(events, ToolCallFinished)
    assert done.status == "error" and "Baton's own settings or data folder" in done.result
    assert all("SECRET-CONFIG" not in json.dumps(r.messages) for r in llm_server.requests)


async def test_pi_subagents_fields_reach_the_real_pi(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    """A pi-subagents agent file through the real pi: ``systemPromptMode: replace`` gives pi
    the body as its whole system prompt, ``inheritProjectContext: false`` keeps AGENTS.md out,
    ``thinking`` is accepted, and ``output: research.md`` leaves the answer in the folder."""
    executable, work = real_pi
    (work / "AGENTS.md").write_text("PROJECT-CONTEXT-MARKER\n", encoding="utf-8")
    researcher = parse_agent_text(
        "---\nname: researcher\ndescription: d\ntools: read\nthinking: high\n"
        "systemPromptMode: replace\ninheritProjectContext: false\noutput: research.md\n"
        "---\nYou are RESEARCHER-3.\n"
    )
    plain = parse_agent_text("---\nname: plain\ndescription: d\ntools: read\n---\nYou are PLAIN.\n")
    llm_server.queue(Reply.answer("## Found\n\nNothing."), Reply.answer("Done."))
    request = RunRequest(
        mode="chain",
        steps=[StepSpec("researcher", "Look"), StepSpec("plain", "Again")],
        cwd=work,
        backend="pi",
        trust_project=True,  # an untrusted folder's AGENTS.md never reaches pi
    )
    runner, events = runner_for(request, executable, [researcher, plain])
    result = await asyncio.wait_for(runner.run(), 120)

    assert result.status == "ok", [e for e in events if isinstance(e, Log | StepFinished)]
    replaced, appended = (r.messages[0]["content"] for r in llm_server.requests)
    assert replaced.startswith("You are RESEARCHER-3.")  # pi's own prompt is not before it
    assert "PROJECT-CONTEXT-MARKER" not in replaced
    assert not appended.startswith("You are PLAIN.") and "You are PLAIN." in appended
    assert "PROJECT-CONTEXT-MARKER" in appended  # pi's default, trusted: it reads AGENTS.md
    assert (work / "research.md").read_text(encoding="utf-8") == "## Found\n\nNothing.\n"
    (written,) = of(events, OutputFileWritten)
    assert (written.step, written.path) == (0, str(work / "research.md"))
