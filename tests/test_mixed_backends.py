"""A preset mixing every backend — Baton's own loop → pi → Claude Code → an ACP agent — runs,
and its run file replays to the same steps.

All models are scripted servers (tests/llm_server.py for the own loop and pi,
tests/anthropic_server.py for Claude Code); the ACP step is the SDK-built agent of
tests/acp_agent.py. pi and Claude Code are the real CLIs (skipped without them, failed under
``CI=true``: tests/real_clis.py).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from core.history.run_reading import read_folded
from core.model.events import RunFinished
from core.record.run_files import run_file
from core.run.run_request import preset_request
from core.run.runner import Runner
from tests import real_clis
from tests.anthropic_server import AnthropicServer, reply
from tests.llm_server import LLMServer, Reply

ROOT = Path(__file__).resolve().parents[1]

PRESET = """\
name: mixed
description: every backend in one chain
mode: chain
steps:
  - agent: planner
    task: Plan the work
  - agent: builder
    task: "Build on: {previous}"
  - agent: reviewer
    task: "Review: {previous}"
  - agent: finisher
    task: "Finish: {previous}"
"""


def _agent(name: str, backend: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {name}\nbackend: {backend}\n{extra}---\nBe brief.\n"


@pytest.mark.integration
async def test_a_preset_over_all_backends_runs_and_replays(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pi = real_clis.find(real_clis.PI_CLIS[0], monkeypatch)
    claude = real_clis.find(real_clis.CLAUDE_CLIS[0], monkeypatch)
    work = real_clis.configure_pi(tmp_path, llm_server, monkeypatch)
    agents = work / ".baton" / "agents"
    agents.mkdir(parents=True)
    (agents / "planner.md").write_text(_agent("planner", "openai"), encoding="utf-8")
    (agents / "builder.md").write_text(_agent("builder", "pi"), encoding="utf-8")
    (agents / "reviewer.md").write_text(_agent("reviewer", "claude"), encoding="utf-8")
    acp = (
        f"acp:\n  command: {sys.executable}\n  args: [{ROOT / 'tests' / 'acp_agent.py'}]\n"
        f"  env: {{PYTHONPATH: {ROOT}}}\n"
    )
    (agents / "finisher.md").write_text(_agent("finisher", "acp", acp), encoding="utf-8")
    presets = work / ".baton" / "presets"
    presets.mkdir(parents=True)
    (presets / "mixed.yaml").write_text(PRESET, encoding="utf-8")

    llm_server.queue(Reply.answer("PLAN-1"), Reply.answer("BUILT-2"))
    with AnthropicServer() as anthropic:
        anthropic.script = [reply("REVIEWED-3")]
        real_clis.point_claude_at(anthropic.url, monkeypatch)
        settings = llm_server.settings(pi_path=str(pi), claude_path=str(claude))
        request, agent_catalog, preset_catalog = preset_request(
            "mixed", [], work, trust_project=True
        )
        runner = Runner(
            request,
            settings=settings,
            agents=agent_catalog,
            presets=preset_catalog,
        )
        finished = await asyncio.wait_for(runner.run(), 300)

    assert isinstance(finished, RunFinished)
    assert finished.status == "ok", finished.error
    replayed = read_folded(run_file(runner.run_id)).state
    steps = [(s.agent, s.backend, s.phase, s.output) for s in replayed.steps]
    assert steps == [
        ("planner", "openai", "ok", "PLAN-1"),
        ("builder", "pi", "ok", "BUILT-2"),
        ("reviewer", "claude", "ok", "REVIEWED-3"),
        # The agent file's body goes first: ACP has no system prompt.
        ("finisher", "acp", "ok", "echo: Be brief.\necho: Finish: REVIEWED-3"),
    ]
    assert replayed.status == "ok"
    assert "Review: BUILT-2" in anthropic.main_requests[0].text()
