"""Helpers for the MCP tests: configure the SDK test server (``tests/mcp_test_server.py``) as a
person would in ``<config>/mcp.json``, write agents that use it, start its HTTP form, and
check that no server process is left."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
import pytest

from core.config import paths
from core.config.mcp_servers import McpServer, user_file, write_server
from core.model.events import Event, Log, ToolCallFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import Responder, approve_all
from core.safety.sandbox import sandbox_status
from tests.llm_server import LLMServer
from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[1]
WAIT_S = 60.0


def sdk_server(mode: str = "normal", **fields: object) -> McpServer:
    """The SDK test server as a stdio entry (``mode``: see the server's docstring)."""
    return McpServer.model_validate(
        {
            "command": sys.executable,
            "args": ["-m", "tests.mcp_test_server", mode],
            "env": {"PYTHONPATH": str(REPO)},
            **fields,
        }
    )


def configure(name: str = "t", server: McpServer | None = None) -> McpServer:
    """Add a server to the user's ``mcp.json``."""
    chosen = server or sdk_server()
    write_server(user_file(), name, chosen)
    return chosen


def write_agent(name: str, front: str, body: str = "Use the tools.") -> None:
    """A user agent (``<config>/agents/<name>.md``) for the own loop."""
    folder = paths.config_dir() / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: uses MCP\nbackend: openai\n{front}\n---\n{body}\n"
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


def server_processes() -> list[psutil.Process]:
    """This process's descendants that run the test server (or something it started)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "mcp_test_server" in line or "time.sleep(3600)" in line:
            found.append(child)
    return found


def wait_no_server_left(timeout: float = WAIT_S) -> None:
    def left() -> str:
        described = [" ".join(p.cmdline()) for p in server_processes()]
        return f"MCP server processes left: {described}"

    wait_until(lambda: not server_processes(), left, timeout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=2)
    except httpx.TransportError:
        return False
    return True


@contextmanager
def http_server(access_log: Path | None = None) -> Iterator[str]:
    """The test server over streamable HTTP, in its own process; yields its URL. With
    ``access_log``, the server writes there what it prints on stderr: a line per request
    (``DELETE /mcp 200``: the client ended its session) and what its tools say."""
    port = free_port()
    argv = [sys.executable, "-m", "tests.mcp_test_server", "normal", "--http", str(port)]
    log = access_log.open("w", encoding="utf-8") if access_log else None
    process = subprocess.Popen(
        [*argv, "--access-log"] if log else argv,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=log or subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until(
            lambda: process.poll() is not None or _answers(url),
            "the HTTP test server did not start",
            WAIT_S,
        )
        assert process.poll() is None, "the HTTP test server ended at its start"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=WAIT_S)
        if log:
            log.close()


def sockets_to(port: int) -> list[str]:
    """This process's TCP sockets connected to ``port`` on this machine, described: an MCP
    client that closed its connection holds none (a closed socket leaves the process's
    files, whatever state the kernel keeps it in)."""
    return [
        f"{c.laddr.port} -> {c.raddr.port} {c.status}"
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port
    ]


def require_bwrap() -> None:
    """Skip without a working bubblewrap, except under ``CI=true`` (``.ci/run`` installs it):
    there the sandbox must be tested, never skipped."""
    status = sandbox_status()
    if status.kind == "bubblewrap":
        return
    reason = f"needs bubblewrap: {status.reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the sandbox tests must run, not skip)")
    pytest.skip(reason)


def run(
    llm: LLMServer,
    cwd: Path,
    agent: str = "mcp-user",
    responder: Responder = approve_all,
    task: str = "go",
) -> tuple[str, list[Event]]:
    """Run one own-loop step; returns the run's status and its events."""
    events: list[Event] = []
    request = RunRequest(mode="single", steps=[StepSpec(agent=agent, task=task)], cwd=cwd)
    runner = Runner(
        request,
        settings=llm.settings(),
        responder=responder,
        listeners=[events.append],
    )
    finished = asyncio.run(runner.run())
    return finished.status, events


def finished_calls(events: list[Event]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


def warnings(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Log) and e.level == "warning"]
