"""MCP servers that misbehave, for real: one that crashes at start-up or during a call, hangs,
prints garbage, lists 1,000 tools or starts a process of its own; and a run cancelled during a
call. Each is a clear step warning or call error, the run goes on, and no process is left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest

from core.model.events import ApprovalResolved, Event
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all
from core.safety.sandbox import sandbox_status
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import (
    configure,
    finished_calls,
    run,
    sdk_server,
    server_processes,
    wait_no_server_left,
    warnings,
    write_agent,
)
from tests.waiting import wait_until


async def test_cancel_during_a_call_stops_the_server(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__sleep", {"seconds": 3600}), Reply.answer("never"))
    calling = asyncio.Event()

    def note(event: Event) -> None:
        if isinstance(event, ApprovalResolved):
            calling.set()

    request = RunRequest(mode="single", steps=[StepSpec(agent="mcp-user", task="x")], cwd=tmp_path)
    runner = Runner(
        request, settings=llm_server.settings(), responder=approve_all, listeners=[note]
    )
    task = asyncio.create_task(runner.run())
    await asyncio.wait_for(calling.wait(), 120)
    assert server_processes()
    runner.cancel()
    result = await asyncio.wait_for(task, 120)
    assert result.status == "aborted"
    await asyncio.to_thread(wait_no_server_left)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unconfined"])
def test_what_a_server_starts_ends_with_the_run(
    llm_server: LLMServer, tmp_path: Path, sandboxed: bool
) -> None:
    """The server starts a child in a session of its own (it leaves the process group the
    SDK ends): the sandbox's PID namespace, or Baton's tag, ends it all the same."""
    if sandboxed and not sandbox_status().active:
        pytest.skip("needs the bash sandbox")
    configure("t", sdk_server("spawn", sandbox=sandboxed))
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.answer("done"))
    status, _ = run(llm_server, tmp_path)
    assert status == "ok"
    assert (tmp_path / "child.pid").is_file()
    wait_no_server_left()
    # Anywhere: an orphan is no child of the test's.
    wait_until(lambda: not _spawned_in(tmp_path), lambda: f"left running: {_spawned_in(tmp_path)}")


def _spawned_in(folder: Path) -> list[int]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or ())
        if f"spawned in {folder}" in line and process.status() != psutil.STATUS_ZOMBIE:
            found.append(process.pid)
    return found


def test_a_crashing_server_is_a_warning_and_the_step_goes_on(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t", sdk_server("crash"))
    write_agent("mcp-user", "mcp: [t]\ntools: read")
    llm_server.queue(Reply.answer("went on"))
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    (warning,) = warnings(events)
    assert "MCP server t failed: the server exited" in warning
    assert "refuses to start" in warning  # its stderr, quoted
    assert llm_server.requests[0].tool_names == ["read"]


def test_a_server_that_exits_during_a_call_is_that_calls_error(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__exit_now"), Reply.answer("went on"))
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    (call,) = finished_calls(events)
    assert call.status == "error" and "exited during the call" in call.result
    wait_no_server_left()


def test_a_hanging_server_times_out(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t", sdk_server("hang", startupTimeout=1))
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.answer("went on"))
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    assert any("did not start within 1 s" in w for w in warnings(events))
    wait_no_server_left()


def test_garbage_on_stdout_is_a_warning(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t", sdk_server("garbage"))
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__echo", {"text": "still"}), Reply.answer("ok"))
    _, events = run(llm_server, tmp_path)
    assert any("not MCP messages" in w for w in warnings(events))
    (call,) = finished_calls(events)
    assert call.result == "echo: still"


def test_a_thousand_tools_are_cut_to_what_a_request_can_carry(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t", sdk_server("many"))
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.answer("ok"))
    _, events = run(llm_server, tmp_path)
    offered = llm_server.requests[0].tool_names
    assert len([name for name in offered if name.startswith("mcp__t__")]) == 100
    assert any("has 1000 tools; the first 100 are offered" in w for w in warnings(events))
