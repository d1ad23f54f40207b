"""The real pi CLI (0.73.1, as ``.ci/run`` installs it) driven through Baton's runner.

pi is configured in a temporary ``PI_CODING_AGENT_DIR`` whose ``models.json`` points at the
scripted OpenAI-compatible server of ``tests/llm_server.py``; nothing leaves 127.0.0.1.
Where pi is looked for: ``$BATON_PI_BIN``, then ``<repo>/.tools/npm/node_modules/.bin/pi``
(CI), then ``/tmp/npmtest/node_modules/.bin/pi`` (the development machine). Without pi or
Node the tests skip and say why.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from llm_server import MODEL, LLMServer, Reply

from core.agents import AgentCatalog, AgentDefinition
from core.backends.pi_cli import descendants
from core.events import (
    Event,
    Log,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from core.runner import Runner, RunRequest, StepSpec
from core.settings import Settings

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
CANDIDATES = [
    REPO / ".tools" / "npm" / "node_modules" / ".bin" / "pi",
    Path("/tmp/npmtest/node_modules/.bin/pi"),
]


def find_real_pi() -> Path:
    override = os.environ.get("BATON_PI_BIN")
    candidates = [Path(override)] if override else CANDIDATES
    found = next((path for path in candidates if path.is_file()), None)
    if found is None:
        where = ", ".join(str(path) for path in candidates)
        pytest.skip(f"the real pi CLI is not installed (looked at {where}; .ci/run installs it)")
    if shutil.which("node") is None:
        pytest.skip("Node.js is not on PATH: the real pi CLI cannot run")
    return found


@pytest.fixture
def real_pi(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """The pi executable and a working folder; pi's config points at ``llm_server``."""
    executable = find_real_pi()
    agent_dir = tmp_path / "pi-agent"
    agent_dir.mkdir()
    cost = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    model = {"id": MODEL, "contextWindow": 128000, "maxTokens": 4096, "cost": cost}
    provider = {"baseUrl": llm_server.base_url, "api": "openai-completions", "apiKey": "any"}
    models = {"providers": {"local": {**provider, "models": [model]}}}
    (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "local", "defaultModel": MODEL, "retry": {"enabled": False}}
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("PI_OFFLINE", "1")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("The launch code word is: marigold.\n", encoding="utf-8")
    return executable, work


def agent(name: str, tools: tuple[str, ...], prompt: str) -> AgentDefinition:
    return AgentDefinition(name=name, description=name, tools=tools, system_prompt=prompt)


def runner_for(
    request: RunRequest, executable: Path, agents: list[AgentDefinition]
) -> tuple[Runner, list[Event]]:
    events: list[Event] = []
    runner = Runner(
        request,
        settings=Settings(pi_path=str(executable)),
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
    (pi_process,) = descendants(os.getpid())  # pi names itself "pi" (process.title)
    assert process_name(pi_process) == "pi"
    runner.cancel()
    result = await asyncio.wait_for(running, 30)
    assert result.status == "aborted"
    (step,) = of(events, StepFinished)
    assert step.status == "aborted"
    with pytest.raises(ProcessLookupError):  # stopped and reaped
        os.kill(pi_process, 0)
    # and the model request it had open was dropped with it
    await llm_server.wait_until_async(lambda: llm_server.in_flight == 0, timeout=10)


def process_name(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip()
