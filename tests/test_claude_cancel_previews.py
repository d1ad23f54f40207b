"""Claude Code's file tools and cancel, with the real CLI (2.0.76 and the newest).

* A person approving Claude's ``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` sees the path
  and the diff, as for Baton's own tools — never "no preview" (the attack: approving blind).
* Cancel while Claude's bash runs a shell and its child: ten times in a row, nothing Claude
  started survives (Claude runs bash in a session of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from core.backends.base import RunClock, StepContext
from core.backends.claude_cli import ClaudeBackend
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.model.events import Event, StepFinished
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest, Responder
from core.tools.approval_describe import Description, describe
from tests import real_clis
from tests.anthropic_server import AnthropicServer, ToolUse, reply
from tests.waiting import until

pytestmark = pytest.mark.integration


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as started:
        yield started


@pytest.fixture(params=real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
def claude(
    request: pytest.FixtureRequest, server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    path = real_clis.find(request.param, monkeypatch)
    real_clis.point_claude_at(server.url, monkeypatch)
    return path


def _context(
    claude: Path,
    work: Path,
    responder: Responder,
    events: list[Event],
    tools: tuple[str, ...],
    cancelled: asyncio.Event | None = None,
) -> StepContext:
    policy: dict[str, Any] = {"read": "allow", "edit": "ask", "write": "ask", "bash": "ask"}
    settings = Settings(claude_path=str(claude), policy=policy)
    clock = RunClock()
    agent = AgentDefinition(name="scout", description="d", declared_tools=tools)
    return StepContext(
        run_id="r1",
        step=0,
        agent=agent,
        task="Do it",
        cwd=work,
        model="claude-sonnet-4-5",
        tools=("read", "edit", "write", "bash"),
        settings=settings,
        approvals=ApprovalGate(settings.effective_policy(), responder, events.append, clock.now),
        clock=clock,
        cancelled=cancelled or asyncio.Event(),
    )


async def _run(backend: ClaudeBackend, ctx: StepContext, events: list[Event]) -> StepFinished:
    async with contextlib.aclosing(backend.run(ctx)) as stream:
        async for event in stream:
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, StepFinished), events
    return finished


NOTEBOOK = {
    "cells": [{"id": "c1", "cell_type": "code", "metadata": {}, "source": ["print(1)\n"]}],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


async def test_claude_file_tool_approvals_show_the_path_and_the_diff(
    claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "f.txt").write_text("alpha\nbeta\ngamma\n")
    (work / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    f, nb = str(work / "f.txt"), str(work / "n.ipynb")
    calls = {
        "Write": ToolUse("Write", {"file_path": str(work / "new.txt"), "content": "fresh\n"}),
        "Edit": ToolUse("Edit", {"file_path": f, "old_string": "beta", "new_string": "BETA"}),
        "MultiEdit": ToolUse(
            "MultiEdit",
            {
                "file_path": f,
                "edits": [
                    {"old_string": "alpha", "new_string": "ALPHA"},
                    {"old_string": "gamma", "new_string": "GAMMA"},
                ],
            },
        ),
        "NotebookEdit": ToolUse(
            "NotebookEdit", {"notebook_path": nb, "cell_id": "c1", "new_source": "print(2)"}
        ),
    }
    server.script = [
        reply("Reading.", ToolUse("Read", {"file_path": f}), ToolUse("Read", {"file_path": nb})),
        *[reply(f"Now {name}.", call) for name, call in calls.items()],
        reply("Done."),
    ]
    shown: dict[str, Description] = {}

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        described = await asyncio.to_thread(describe, request)
        shown[
            str(request.arguments.get("file_path") or request.arguments.get("notebook_path"))
            + "|"
            + ("multi" if "edits" in request.arguments else request.tool)
        ] = described
        return ApprovalAnswer(decision="deny", reason="only looking")

    events: list[Event] = []
    tools = ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit")
    finished = await _run(ClaudeBackend(), _context(claude, work, responder, events, tools), events)
    assert finished.status == "ok", events

    offered = {t["name"] for t in server.main_requests[0].body.get("tools", [])}
    expected = {
        f"{work / 'new.txt'}|write": ["+++ b/new.txt", "+fresh"],
        f"{f}|edit": ["--- a/f.txt", "-beta", "+BETA"],
        f"{nb}|NotebookEdit": ["n.ipynb (cell c1)", "-print(1)", "+print(2)"],
    }
    if "MultiEdit" in offered:  # 2.0.x only; newer releases dropped the tool
        expected[f"{f}|multi"] = ["-alpha", "+ALPHA", "-gamma", "+GAMMA"]
    assert set(shown) == set(expected), shown.keys()
    for key, lines in expected.items():
        description = shown[key]
        assert description.kind == "diff"
        assert key.split("|")[0] in description.headline
        assert "no preview" not in description.diff
        diff_lines = description.diff.splitlines()
        for line in lines:
            assert any(line in shown_line for shown_line in diff_lines), (key, description.diff)
    assert (work / "f.txt").read_text() == "alpha\nbeta\ngamma\n"  # all denied: unchanged


def _survivors(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        with contextlib.suppress(psutil.Error):
            if process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(marker in part for part in process.info["cmdline"] or []):
                found.append(process)
    return found


async def test_cancel_while_claude_s_bash_runs_leaves_no_process_ten_times(
    claude: Path, server: AnthropicServer, tmp_path: Path
) -> None:
    for attempt in range(10):
        marker = f"98{attempt}71"
        command = f"sh -c 'sleep {marker}1 & sleep {marker}2; wait'"
        server.script = [reply("Running.", ToolUse("Bash", {"command": command})), reply("x")]
        cancelled = asyncio.Event()

        async def responder(request: ApprovalRequest) -> ApprovalAnswer:
            return ApprovalAnswer(decision="approve")

        events: list[Event] = []
        ctx = _context(claude, tmp_path, responder, events, ("Bash",), cancelled)
        backend = ClaudeBackend()
        backend.interrupt_grace_s = 2.0
        step = asyncio.create_task(_run(backend, ctx, events))
        # The shell and both sleeps run (started by Claude's bash, in its own session).
        running = _running(marker, step)
        await until(running, "the shell and both sleeps never ran")
        assert not step.done(), events
        cancelled.set()
        finished = await asyncio.wait_for(step, 60)
        assert finished.status == "aborted", (attempt, finished)
        assert _survivors(marker) == [], f"attempt {attempt}: processes survived the cancel"
        assert [
            p
            for p in psutil.Process().children(recursive=True)
            if "claude" in " ".join(_cmdline(p))
        ] == []


def _running(marker: str, step: asyncio.Task[StepFinished]) -> Any:
    """Whether the shell and both its sleeps run (or the step already ended)."""
    return lambda: len(_survivors(marker)) >= 3 or step.done()


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []
