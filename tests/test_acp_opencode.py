"""The real OpenCode (``opencode acp``) as a Baton step, offline against tests/llm_server.py.

OpenCode is slow to start (seconds for ``initialize`` and ``session/new``), so the tests are
few and each covers much: a chain whose ACP step reads, edits and runs bash under the terminal
approval prompt, with a denial whose reason reaches the model as the next prompt, a project rule
that allows a command, and a person's message steering the step; then a cancel that leaves no
process behind. Skipped without OpenCode, failed under ``CI=true`` (tests/acp_agents.py).
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import psutil
import pytest

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import (
    ApprovalResolved,
    Event,
    RunFinished,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallStarted,
)
from core.record.run_files import load_run, run_file
from core.run.continuation import continue_request
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.rule_store import RuleStore
from core.terminal.approval_prompt import TerminalApprover
from tests.acp_agents import opencode_agent
from tests.llm_server import LLMServer, Reply, last_user_text
from tests.waiting import until

TIMEOUT_S = 300.0
"""OpenCode under a loaded 2-core machine: tens of seconds a step; generous on purpose."""
DENIAL = "do not delete anything"
STEER = "Please also mention the word pelican."


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]


def _user_texts(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(str(content))
    return "\n".join(parts)


def _chain_model(work: Path) -> Any:
    """The scripted model of the chain's ACP step, by conversation state (OpenCode also asks
    for a title, without tools): read, edit, a delete that is denied; after the denial's prompt,
    ``cat`` (a rule allows it) and the answer; the second step just answers."""

    def respond(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply.answer("A title")
        users = _user_texts(body)
        if "Summarize" in users:
            return Reply.answer("Summary: " + last_user_text(body)[-60:])
        results = _tool_results(body)
        notes = str(work / "notes.txt")
        if DENIAL in users:
            if len(results) < 4:
                return Reply.tool("bash", {"command": "cat notes.txt", "description": "Show it"})
            return Reply.answer(f"Done: {results[-1].strip()} pelican")
        if not results:
            return Reply.tool("read", {"filePath": notes})
        if len(results) == 1:
            return Reply.tool(
                "edit", {"filePath": notes, "oldString": "alpha", "newString": "omega"}
            )
        return Reply.tool("bash", {"command": "rm notes.txt", "description": "Delete it"})

    return respond


@pytest.mark.integration
async def test_opencode_chain_reads_edits_runs_bash_under_the_terminal_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    RuleStore().add(work, "allow", "Bash(cat:*)")
    with LLMServer() as server:
        server.responder = _chain_model(work)
        coder = opencode_agent(tmp_path / "oc-home", server, monkeypatch)
        writer = opencode_agent(tmp_path / "oc-home", server, monkeypatch, name="writer")
        out = io.StringIO()
        answers = iter(["o", "o", "d", DENIAL])
        steered: list[str] = []
        runner: Runner | None = None

        def read_line(prompt: str) -> str:
            if not steered and runner is not None:  # a person types while the step runs
                steered.append(STEER)
                asyncio.run_coroutine_threadsafe(_steer(runner), loop)
            return next(answers)

        async def _steer(active: Runner) -> None:
            active.steer(0, STEER)

        loop = asyncio.get_running_loop()
        events: list[Event] = []
        runner = Runner(
            RunRequest(
                mode="chain",
                steps=[
                    StepSpec(agent="coder", task="Change alpha to omega in notes.txt"),
                    StepSpec(agent="writer", task="Summarize: {previous}"),
                ],
                cwd=work,
            ),
            settings=Settings(policy={"read": "ask", "edit": "ask", "bash": "ask"}),
            responder=TerminalApprover(out=out, read_line=read_line),
            listeners=[events.append],
            record=False,
            agents=AgentCatalog(agents=[coder, writer]),
        )
        finished = await asyncio.wait_for(runner.run(), TIMEOUT_S)

    assert isinstance(finished, RunFinished)
    assert finished.status == "ok", finished.error
    assert (work / "notes.txt").read_text(encoding="utf-8") == "omega beta\n"
    started = [e for e in events if isinstance(e, StepStarted)]
    assert [(s.agent, s.backend) for s in started] == [("coder", "acp"), ("writer", "acp")]
    steps = [e for e in events if isinstance(e, StepFinished)]
    assert steps[0].output == "Done: omega beta pelican"
    assert steps[1].output.startswith("Summary: ")
    calls = [e for e in events if isinstance(e, ToolCallStarted) and e.step == 0]
    assert [c.tool for c in calls][:3] == ["read", "edit", "bash"]
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.tool, r.decision, r.decided_by) for r in resolved] == [
        ("read", "approve", "person"),
        ("edit", "approve", "person"),
        ("bash", "deny", "person"),
        ("bash", "approve", "rule"),
    ]
    assert resolved[2].reason == DENIAL
    shown = out.getvalue()
    assert "rm notes.txt" in shown and "alpha" in shown  # the command, the edit's diff
    # The denial's reason and the person's message reached the model as the next prompt.
    requests = [r.body for r in server.requests if r.body.get("tools")]
    after = [b for b in requests if DENIAL in _user_texts(b)]
    assert after and STEER in _user_texts(after[0])


@pytest.mark.integration
async def test_opencode_cancel_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = "6071.5"  # sleep's argument: this test's process, and no other

    def respond(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply.answer("A title")
        return Reply.tool("bash", {"command": f"sleep {marker}", "description": "Wait"})

    with LLMServer() as server:
        server.responder = respond
        agent: AgentDefinition = opencode_agent(tmp_path / "oc-home", server, monkeypatch)
        events: list[Event] = []
        sleeping = asyncio.Event()

        def watch(event: Event) -> None:
            events.append(event)
            if isinstance(event, ApprovalResolved):
                sleeping.set()

        async def approve(request: Any) -> Any:
            from core.safety.approvals import ApprovalAnswer

            return ApprovalAnswer(decision="approve")

        runner = Runner(
            RunRequest(mode="single", steps=[StepSpec(agent="coder", task="wait")], cwd=work),
            settings=Settings(),
            responder=approve,
            listeners=[watch],
            record=False,
            agents=AgentCatalog(agents=[agent]),
        )
        task = asyncio.create_task(runner.run())
        async with asyncio.timeout(TIMEOUT_S):
            await sleeping.wait()
            await until(lambda: _sleepers(marker), "the agent's command never ran", TIMEOUT_S)
        runner.cancel()
        finished = await asyncio.wait_for(task, TIMEOUT_S)

    assert isinstance(finished, RunFinished) and finished.status == "aborted"
    assert _sleepers(marker) == []
    assert _opencode_processes(tmp_path) == []


def _sleepers(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if marker in cmdline and process.status() != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def _opencode_processes(home: Path) -> list[psutil.Process]:
    """Processes whose environment names this test's OpenCode home."""
    found = []
    for process in psutil.process_iter():
        try:
            mine = str(home) in process.environ().get("HOME", "")
            if mine and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.mark.integration
async def test_continuing_an_opencode_step_goes_on_in_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()

    def respond(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply.answer("A title")
        users = _user_texts(body)
        return Reply.answer("In French: souci" if "French" in users else "marigold")

    with LLMServer() as server:
        server.responder = respond
        agent = opencode_agent(tmp_path / "oc-home", server, monkeypatch)
        catalog = AgentCatalog(agents=[agent])
        first = Runner(
            RunRequest(mode="single", steps=[StepSpec("coder", "Name a flower")], cwd=work),
            settings=Settings(),
            agents=catalog,
        )
        await asyncio.wait_for(first.run(), TIMEOUT_S)
        follow_up = continue_request(load_run(run_file(first.run_id)), 0, "And in French?")
        events: list[Event] = []
        second = Runner(follow_up, settings=Settings(), agents=catalog, listeners=[events.append])
        finished = await asyncio.wait_for(second.run(), TIMEOUT_S)

    assert finished.status == "ok", finished.error
    step = next(e for e in events if isinstance(e, StepFinished))
    assert step.output == "In French: souci"
    assert "marigold" not in "".join(e.text for e in events if isinstance(e, TextDelta))
    last = [r.body for r in server.requests if r.body.get("tools")][-1]
    said = _user_texts(last)
    assert "Name a flower" in said and "And in French?" in said  # the same session goes on
