"""Graph pipelines on the real CLIs: a review loop of real pi steps (structured reviews,
a condition, two iterations) and a fan-in of real Claude Code steps (two planners side by
side, a merger getting both under their names). Offline: the scripted servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.definitions.presets import parse_preset_text
from core.definitions.structured import OutputSpec
from core.model.events import Event, LoopFinished, StepFinished, StepSkipped, StepStarted
from core.run.run_request import request_from_preset
from core.run.runner import Runner
from tests import real_clis
from tests.anthropic_server import AnthropicServer, reply
from tests.graph_runs import agent_of, review
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.integration

LOOP = """\
name: pi-loop
mode: graph
steps:
  - {name: work, agent: worker, task: "Build: $@"}
  - loop:
      name: review
      until: "check.count(major) == 0"
      steps:
        - {name: check, agent: reviewer, task: "Review: {previous}"}
        - name: fix
          agent: worker
          task: "Fix: {step.check}"
          when: "check.max_severity >= major"
"""

FAN = """\
name: claude-fan
mode: graph
steps:
  - {name: scout, agent: scout, task: "Look at: $@"}
  - {name: plan-a, agent: planner, task: "Plan A from {previous}", after: [scout]}
  - {name: plan-b, agent: planner, task: "Plan B from {previous}", after: [scout]}
  - {name: merge, agent: planner, task: "Merge:\\n{outputs}", after: [plan-a, plan-b]}
"""


def agent(name: str, output: str | None = None) -> AgentDefinition:
    return AgentDefinition(
        name=name,
        description=name,
        tools=("read",),
        system_prompt=f"You are a {name}. Answer briefly.",
        output=OutputSpec.parse(output) if output else None,
    )


def graph_runner(
    text: str, folder: Path, backend: str, settings: Settings, agents: list[AgentDefinition]
) -> tuple[Runner, list[Event]]:
    request = request_from_preset(
        parse_preset_text(text), ["x"], folder, backend=backend, trust_project=True
    )
    events: list[Event] = []
    runner = Runner(
        request,
        settings=settings,
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=agents),
    )
    return runner, events


@pytest.fixture(params=real_clis.PI_CLIS, ids=lambda cli: cli.name)
def real_pi(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, Path]:
    executable = real_clis.find(request.param, monkeypatch)
    return executable, real_clis.configure_pi(tmp_path, llm_server, monkeypatch)


async def test_a_review_loop_of_real_pi_steps(
    real_pi: tuple[Path, Path], llm_server: LLMServer
) -> None:
    executable, work = real_pi
    reviews = iter([review("major"), review("minor")])

    def respond(body: dict[str, Any]) -> Reply:
        return Reply.answer(next(reviews) if agent_of(body) == "reviewer" else "changed it")

    llm_server.responder = respond
    runner, events = graph_runner(
        LOOP,
        work,
        "pi",
        Settings(pi_path=str(executable)),
        [agent("worker"), agent("reviewer", "review")],
    )
    result = await asyncio.wait_for(runner.run(), 240)
    assert result.status == "ok", result.error
    assert [(e.node, e.iteration) for e in events if isinstance(e, StepStarted)] == [
        ("work", None),
        ("check", 1),
        ("fix", 1),
        ("check", 2),
    ]
    assert [e.node for e in events if isinstance(e, StepSkipped)] == ["fix"]
    (end,) = [e for e in events if isinstance(e, LoopFinished)]
    assert (end.status, end.iterations) == ("converged", 2)


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    with AnthropicServer() as started:
        yield started


@pytest.fixture(params=real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
def offline_claude(
    request: pytest.FixtureRequest, anthropic: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    path = real_clis.find(request.param, monkeypatch)
    real_clis.point_claude_at(anthropic.url, monkeypatch)
    return path


async def test_a_fan_in_of_real_claude_code_steps(
    offline_claude: Path, anthropic: AnthropicServer, tmp_path: Path
) -> None:
    anthropic.script = [
        reply("scout notes"),
        reply("plan one"),
        reply("plan two"),
        reply("merged plan"),
    ]
    runner, events = graph_runner(
        FAN,
        tmp_path,
        "claude",
        Settings(claude_path=str(offline_claude)),
        [agent("scout"), agent("planner")],
    )
    result = await asyncio.wait_for(runner.run(), 240)
    assert result.status == "ok", result.error
    merge = next(e for e in events if isinstance(e, StepStarted) and e.node == "merge")
    plans = {
        e.node: e.output
        for e in events
        if isinstance(e, StepFinished) and e.node in ("plan-a", "plan-b")
    }
    assert sorted(plans.values()) == ["plan one", "plan two"]
    for name, answer in plans.items():
        assert f"## {name}\n\n{answer}" in merge.task
