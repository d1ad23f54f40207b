"""MCP servers in Baton's own loop, against real servers: the SDK's FastMCP test server over
stdio and streamable HTTP, and servers that crash, hang, print garbage or list 1,000 tools.
The model is the scripted server; everything else is real (processes, sandbox, gate, rules)."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from core.config.mcp_servers import McpServer, ServerEntry, set_enabled, user_file
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    ToolCallFinished,
)
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    approve_all,
    deny_all,
)
from core.safety.rule_store import RuleStore
from core.safety.sandbox import sandbox_status
from core.tools.mcp_hub import Confinement, McpHub, McpServerError
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import (
    REPO,
    WAIT_S,
    configure,
    finished_calls,
    http_server,
    require_bwrap,
    run,
    sdk_server,
    server_processes,
    wait_no_server_left,
    warnings,
    write_agent,
)


def test_tools_are_listed_called_with_approval_and_the_server_ends_with_the_run(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__echo", {"text": "hello"}), Reply.answer("done"))
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    offered = llm_server.requests[0].tool_names
    assert {"mcp__t__echo", "mcp__t__weather", "mcp__t__picture"} <= set(offered)
    assert "bash" in offered  # mcp: adds servers; no tools: still means every built-in one
    (call,) = finished_calls(events)
    assert call.status == "ok" and call.result == "echo: hello"
    assert llm_server.requests[1].tool_messages[0]["content"] == "echo: hello"
    wait_no_server_left()


def test_nothing_is_offered_by_default(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("plain", "tools: read")
    llm_server.queue(Reply.answer("done"))
    status, _ = run(llm_server, tmp_path, agent="plain")
    assert status == "ok"
    assert llm_server.requests[0].tool_names == ["read"]
    assert server_processes() == []


def test_single_tools_by_claude_code_name(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "tools: [read, mcp__t__weather]")
    llm_server.queue(Reply.answer("done"))
    run(llm_server, tmp_path)
    assert llm_server.requests[0].tool_names == ["read", "mcp__t__weather"]


def test_a_denied_call_reaches_the_model_and_the_step_goes_on(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__delete_everything", {"confirm": True}), Reply.answer("ok"))
    status, events = run(llm_server, tmp_path, responder=deny_all)
    assert status == "ok"
    (call,) = finished_calls(events)
    assert call.status == "error" and "Denied" in call.result
    assert "deleted" not in llm_server.requests[1].tool_messages[0]["content"]


def test_a_project_rule_allows_a_whole_server(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    RuleStore().add(tmp_path, "allow", "mcp__t__*")
    llm_server.queue(Reply.tool("mcp__t__echo", {"text": "by rule"}), Reply.answer("ok"))
    status, events = run(llm_server, tmp_path, responder=deny_all)  # nobody to ask
    assert status == "ok"
    (call,) = finished_calls(events)
    assert call.status == "ok" and call.result == "echo: by rule"
    (decision,) = [e for e in events if isinstance(e, ApprovalResolved)]
    assert decision.decided_by == "rule" and decision.rule == "allow mcp__t__*"


def test_a_deny_rule_names_one_tool(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    RuleStore().add(tmp_path, "deny", "mcp__t__delete_everything")
    RuleStore().add(tmp_path, "allow", "mcp__t")
    llm_server.queue(
        Reply.tool("mcp__t__delete_everything", {"confirm": True}),
        Reply.tool("mcp__t__echo", {"text": "fine"}),
        Reply.answer("ok"),
    )
    _, events = run(llm_server, tmp_path, responder=approve_all)
    denied, allowed = finished_calls(events)
    assert denied.status == "error" and "mcp__t__delete_everything" in denied.result
    assert allowed.status == "ok"


def test_the_approval_shows_the_server_and_its_hints(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    asked: list[ApprovalRequest] = []

    async def record(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approve")

    llm_server.queue(
        Reply.tool("mcp__t__echo", {"text": "a"}),
        Reply.tool("mcp__t__delete_everything", {"confirm": False}),
        Reply.answer("ok"),
    )
    _, events = run(llm_server, tmp_path, responder=record)
    read_only, destructive = asked
    assert read_only.arguments == {"text": "a"}
    assert read_only.note is not None and "read-only" in read_only.note
    assert "A test server for Baton" in read_only.note
    assert destructive.note is not None and "destructive" in destructive.note
    requested = [e for e in events if isinstance(e, ApprovalRequested)]
    assert [e.note for e in requested] == [read_only.note, destructive.note]


def test_images_and_structured_content_reach_the_step_pane(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(
        Reply.tool("mcp__t__picture"),
        Reply.tool("mcp__t__weather", {"city": "Oslo"}),
        Reply.answer("ok"),
    )
    _, events = run(llm_server, tmp_path)
    picture, weather = finished_calls(events)
    assert picture.result == "[image: image/png, 70 bytes]"
    (image,) = picture.attachments
    assert image.kind == "image" and image.mime_type == "image/png" and image.data
    assert '"celsius": 21.5' in weather.result
    assert [a.kind for a in weather.attachments] == ["structured"]


def test_an_error_result_and_invalid_arguments_are_the_tools_errors(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(
        Reply.tool("mcp__t__fail"), Reply.tool("mcp__t__echo", {"text": 5}), Reply.answer("ok")
    )
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    failed, invalid = finished_calls(events)
    assert failed.status == "error" and "always fails" in failed.result
    assert invalid.status == "error" and "invalid arguments" in invalid.result


def test_the_server_is_shared_by_the_steps_of_a_run(llm_server: LLMServer, tmp_path: Path) -> None:
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    pids: list[int] = []

    def note_server(event: Event) -> None:
        if isinstance(event, ToolCallFinished):
            pids.extend(p.pid for p in server_processes())

    llm_server.queue(
        Reply.tool("mcp__t__echo", {"text": "1"}),
        Reply.answer("one"),
        Reply.tool("mcp__t__echo", {"text": "2"}),
        Reply.answer("two"),
    )
    request = RunRequest(
        mode="chain",
        steps=[StepSpec(agent="mcp-user", task="a"), StepSpec(agent="mcp-user", task="b")],
        cwd=tmp_path,
    )
    runner = Runner(
        request, settings=llm_server.settings(), responder=approve_all, listeners=[note_server]
    )
    assert asyncio.run(runner.run()).status == "ok"
    assert len(set(pids)) >= 1 and set(pids[: len(pids) // 2]) == set(pids[len(pids) // 2 :])
    wait_no_server_left()


@pytest.mark.skipif(not sandbox_status().active, reason="needs the bash sandbox")
def test_a_stdio_server_is_sandboxed_and_sees_no_secrets(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2-hunter2-hunter2")
    configure("t")
    write_agent("mcp-user", "mcp: [t]")
    outside = REPO / f".sandbox-probe-{tmp_path.name}"  # writable for the test, not the server
    llm_server.queue(
        Reply.tool("mcp__t__environment", {"name": "DATABASE_PASSWORD"}),
        Reply.tool("mcp__t__write_file", {"path": str(outside), "text": "x"}),
        Reply.tool("mcp__t__write_file", {"path": "inside.txt", "text": "x"}),
        Reply.answer("ok"),
    )
    _, events = run(llm_server, tmp_path)
    secret, escape, inside = finished_calls(events)
    assert secret.result == "<unset>"
    try:
        assert escape.result.startswith("refused") and not outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    assert inside.result == "written" and (tmp_path / "inside.txt").is_file()


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
def test_network_false_cuts_a_sandboxed_server_off_the_network(
    llm_server: LLMServer, tmp_path: Path, network: bool
) -> None:
    """A server with ``"network": false`` gets a network namespace of its own: its connection
    to a listener on the host's 127.0.0.1 fails and the listener sees nothing. With the network
    left on, the same call reaches the listener (so a server that cannot connect at all, for
    any other reason, does not pass as cut off)."""
    require_bwrap()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        configure("t", sdk_server(network=network))
        write_agent("mcp-user", "mcp: [t]")
        llm_server.queue(Reply.tool("mcp__t__connect", {"port": port}), Reply.answer("ok"))
        status, events = run(llm_server, tmp_path)
        assert status == "ok"
        (call,) = finished_calls(events)
        # The call has returned: a connection that reached the listener waits in its backlog.
        listener.setblocking(False)
        if network:
            assert call.status == "ok" and call.result == "connected"
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(WAIT_S)
                assert connection.recv(100) == b"hello from the MCP server\n"
        else:
            assert call.status == "ok" and call.result.startswith("refused"), call.result
            with pytest.raises(BlockingIOError):
                listener.accept()


def test_an_unknown_server_and_a_server_switched_off_here_are_warnings(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    configure("t")
    set_enabled(tmp_path, "t", False)
    data = json.loads(user_file().read_text(encoding="utf-8"))
    data["mcpServers"]["broken"] = {"args": ["no command"]}
    user_file().write_text(json.dumps(data), encoding="utf-8")
    write_agent("mcp-user", "mcp: [t, ghost, broken]")
    llm_server.queue(Reply.answer("ok"))
    _, events = run(llm_server, tmp_path)
    said = warnings(events)
    assert "server broken has neither a command nor a url" in said[0]
    assert len(said) == 4 and all("is not configured" in w for w in said[1:])
    assert server_processes() == []


def test_streamable_http_server(llm_server: LLMServer, tmp_path: Path) -> None:
    """Listed, a call allowed by a rule, one denied, one approved, pictures and structured
    content: the same as stdio; the configured header never shows."""
    RuleStore().add(tmp_path, "allow", "mcp__web__echo")
    RuleStore().add(tmp_path, "deny", "mcp__web__delete_everything")
    with http_server() as url:
        configure(
            "web", McpServer(type="http", url=url, headers={"X-Api-Key": "web-secret-0123456789"})
        )
        write_agent("mcp-user", "mcp: [web]")
        llm_server.queue(
            Reply.tool("mcp__web__echo", {"text": "over http"}),
            Reply.tool("mcp__web__delete_everything", {"confirm": True}),
            Reply.tool("mcp__web__picture"),
            Reply.answer("ok"),
        )
        status, events = run(llm_server, tmp_path, task="the key is web-secret-0123456789")
    assert status == "ok"
    assert "mcp__web__weather" in llm_server.requests[0].tool_names
    echo, denied, picture = finished_calls(events)
    assert echo.result == "echo: over http"
    assert denied.status == "error" and "Denied by the project rule" in denied.result
    assert picture.status == "ok" and picture.attachments[0].kind == "image"
    decided = [(e.decided_by, e.decision) for e in events if isinstance(e, ApprovalResolved)]
    assert decided == [("rule", "approve"), ("rule", "deny"), ("setting", "approve")]
    assert "web-secret-0123456789" not in llm_server.requests[0].user_text  # redacted
    assert all("web-secret-0123456789" not in e.model_dump_json() for e in events)


async def test_a_runs_hub_that_started_no_server_is_closed_at_its_end(tmp_path: Path) -> None:
    async with McpHub() as hub:
        pass
    assert hub.closed
    entry = ServerEntry(
        "late", McpServer(command="true"), origin="user", source=tmp_path / "mcp.json"
    )
    with pytest.raises(McpServerError, match="the run has ended"):
        await hub.connect(entry, Confinement(cwd=tmp_path))
