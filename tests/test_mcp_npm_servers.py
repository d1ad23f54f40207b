"""The own loop against the reference MCP servers from npm: ``server-filesystem`` and
``server-everything`` (installed pinned by ``.ci/run``; skipped locally without them, a failure
under ``CI=true``). Tools listed, a call approved, denied and allowed by a rule, every kind of
output shown, the server ended at run end and on cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest

from core.config.mcp_servers import McpServer
from core.model.events import ApprovalResolved, Event, ToolCallFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import Responder, approve_all, deny_all
from core.safety.rule_store import RuleStore
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import configure, write_agent
from tests.real_clis import find_mcp_server

pytestmark = pytest.mark.integration
WAIT_S = 60.0


def _run(
    llm: LLMServer, cwd: Path, responder: Responder = approve_all
) -> tuple[str, list[ToolCallFinished], list[Event]]:
    events: list[Event] = []
    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="go")], cwd=cwd)
    runner = Runner(
        request, settings=llm.settings(), responder=responder, listeners=[events.append]
    )
    status = asyncio.run(runner.run()).status
    return status, [e for e in events if isinstance(e, ToolCallFinished)], events


def _no_child_left(before: set[int]) -> None:
    """No process this test started is still running (node servers included)."""
    me = psutil.Process()
    new = [p for p in me.children(recursive=True) if p.pid not in before]
    _gone, alive = psutil.wait_procs(new, timeout=WAIT_S)
    assert alive == [], [p.cmdline() for p in alive]


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_filesystem_server_read_approved_write_denied_and_a_rule(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    program = find_mcp_server("filesystem")
    (tmp_path / "notes.txt").write_text("marigold\n", encoding="utf-8")
    configure("fs", McpServer(command=str(program), args=[str(tmp_path)]))
    write_agent("mcp-user", "mcp: [fs]")
    before = _children()
    llm_server.queue(
        Reply.tool("mcp__fs__read_text_file", {"path": str(tmp_path / "notes.txt")}),
        Reply.tool("mcp__fs__write_file", {"path": str(tmp_path / "x.txt"), "content": "x"}),
        Reply.answer("done"),
    )
    RuleStore().add(tmp_path, "allow", "mcp__fs__read_text_file")
    status, calls, events = _run(llm_server, tmp_path, deny_all)
    assert status == "ok"
    assert "mcp__fs__list_directory" in llm_server.requests[0].tool_names
    read, write = calls
    assert read.status == "ok" and "marigold" in read.result
    assert write.status == "error" and "Denied" in write.result
    assert not (tmp_path / "x.txt").exists()
    decided = [e.decided_by for e in events if isinstance(e, ApprovalResolved)]
    assert decided == ["rule", "no_one"]
    _no_child_left(before)


def test_everything_server_text_image_structured_resources_and_no_secrets(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = find_mcp_server("everything")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2-hunter2-hunter2")
    configure("ev", McpServer(command=str(program)))
    write_agent("mcp-user", "mcp: [ev]")
    before = _children()
    llm_server.queue(
        Reply.tool("mcp__ev__echo", {"message": "hi"}),
        Reply.tool("mcp__ev__get-tiny-image"),
        Reply.tool("mcp__ev__get-structured-content", {"location": "New York"}),
        Reply.tool("mcp__ev__get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
        Reply.tool("mcp__ev__get-env"),
        Reply.answer("done"),
    )
    status, calls, _ = _run(llm_server, tmp_path)
    assert status == "ok"
    echo, image, structured, resource, env = calls
    assert echo.status == "ok" and "hi" in echo.result
    assert image.status == "ok" and any(a.kind == "image" and a.data for a in image.attachments)
    assert structured.status == "ok"
    assert any(a.kind == "structured" for a in structured.attachments)
    assert resource.status == "ok" and any(a.kind == "resource" for a in resource.attachments)
    assert env.status == "ok" and "hunter2" not in env.result
    _no_child_left(before)


async def test_cancel_while_the_everything_server_runs_a_long_operation(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    program = find_mcp_server("everything")
    configure("ev", McpServer(command=str(program)))
    write_agent("mcp-user", "mcp: [ev]")
    before = _children()
    llm_server.queue(
        Reply.tool("mcp__ev__trigger-long-running-operation", {"duration": 3600, "steps": 3600}),
        Reply.answer("never"),
    )
    calling = asyncio.Event()

    def note(event: Event) -> None:
        if isinstance(event, ApprovalResolved):
            calling.set()

    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="x")], cwd=tmp_path)
    runner = Runner(
        request, settings=llm_server.settings(), responder=approve_all, listeners=[note]
    )
    task = asyncio.create_task(runner.run())
    await asyncio.wait_for(calling.wait(), WAIT_S)
    runner.cancel()
    assert (await asyncio.wait_for(task, 120)).status == "aborted"
    await asyncio.to_thread(_no_child_left, before)
