"""One MCP server for both kinds of step: a chain whose first step, on Baton's own loop, calls a
tool of the project's ``.mcp.json`` server, and whose second step, a real Claude Code, uses the
same server through Claude's own MCP support — once the project is trusted. Both calls go
through Baton's gate; both models are scripted servers on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import paths
from core.model.events import ApprovalResolved, Event, StepFinished, ToolCallFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all
from core.safety.trust import TrustStore
from tests import real_clis
from tests.anthropic_server import AnthropicServer, ToolUse, reply, tool_result_text
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import REPO, wait_no_server_left

pytestmark = pytest.mark.integration

OWN = """---
name: mcp-own
description: uses the project's server on Baton's loop
backend: openai
mcp: [proj]
tools: read
---
You are the own-loop agent.
"""

CLAUDE = """---
name: mcp-claude
description: uses the project's server in Claude Code
backend: claude
---
You are the Claude agent.
"""


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    with AnthropicServer() as started:
        yield started


@pytest.fixture(params=real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
def claude(
    request: pytest.FixtureRequest, anthropic: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    path = real_clis.find(request.param, monkeypatch)
    real_clis.point_claude_at(anthropic.url, monkeypatch)
    return path


def project(folder: Path) -> Path:
    folder.mkdir()
    servers = {
        "proj": {
            "command": sys.executable,
            "args": ["-m", "tests.mcp_test_server"],
            "env": {"PYTHONPATH": str(REPO)},
        }
    }
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    # Claude Code asks before it starts a project's servers; the trusted project says yes.
    settings = {"enableAllProjectMcpServers": True}
    (folder / ".claude").mkdir()
    (folder / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    agents = folder / ".claude" / "agents"
    agents.mkdir()
    (agents / "mcp-own.md").write_text(OWN, encoding="utf-8")
    (agents / "mcp-claude.md").write_text(CLAUDE, encoding="utf-8")
    return folder


async def test_own_loop_then_claude_code_use_the_same_trusted_server(
    claude: Path, anthropic: AnthropicServer, llm_server: LLMServer, tmp_path: Path
) -> None:
    work = project(tmp_path / "work")
    TrustStore().trust(work)
    llm_server.queue(
        Reply.tool("mcp__proj__echo", {"text": "from Baton"}), Reply.answer("Baton said hello.")
    )
    anthropic.script = [
        reply("Calling the server.", ToolUse("mcp__proj__echo", {"text": "from Claude"})),
        reply("Claude said hello too."),
    ]
    events: list[Event] = []
    runner = Runner(
        RunRequest(
            mode="chain",
            steps=[
                StepSpec(agent="mcp-own", task="Say hello through the server."),
                StepSpec(agent="mcp-claude", task="Do the same: {previous}"),
            ],
            cwd=work,
        ),
        settings=llm_server.settings(claude_path=str(claude)),
        responder=approve_all,
        listeners=[events.append],
        record=False,
    )
    finished = await runner.run()
    assert finished.status == "ok", finished.error
    steps = [e for e in events if isinstance(e, StepFinished)]
    assert [s.output for s in steps] == ["Baton said hello.", "Claude said hello too."]

    own_call = next(e for e in events if isinstance(e, ToolCallFinished) and e.step == 0)
    assert own_call.result == "echo: from Baton"
    approved = [e.tool for e in events if isinstance(e, ApprovalResolved)]
    assert approved[0] == "mcp__proj__echo" and len(approved) == 2  # both through Baton's gate

    first, second = anthropic.main_requests
    offered = {tool["name"] for tool in first.body.get("tools", [])}
    # Claude Code started the same server itself: the older CLI offers its tools up front,
    # the newer defers MCP tools behind ToolSearch (the call by name still works).
    assert "mcp__proj__echo" in offered or "ToolSearch" in offered
    (result,) = second.tool_results()
    assert "echo: from Claude" in tool_result_text(result)
    wait_no_server_left()


async def test_before_trust_claude_code_loads_no_project_server(
    claude: Path, anthropic: AnthropicServer, llm_server: LLMServer, tmp_path: Path
) -> None:
    work = project(tmp_path / "work")
    anthropic.script = [reply("Nothing to call.")]
    runner = Runner(
        RunRequest(
            mode="single",
            steps=[StepSpec(agent="mcp-claude", task="hello")],
            cwd=work,
            scope="user",
            backend="claude",
        ),
        settings=llm_server.settings(claude_path=str(claude)),
        responder=approve_all,
        record=False,
    )
    # scope=user: the project's agents and settings stay out; the agent is the user's copy
    agents = paths.config_dir() / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "mcp-claude.md").write_text(CLAUDE, encoding="utf-8")
    finished = await runner.run()
    assert finished.status == "ok", finished.error
    (first,) = anthropic.main_requests
    assert not any(t["name"].startswith("mcp__") for t in first.body.get("tools", []))
    wait_no_server_left()
