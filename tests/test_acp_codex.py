"""The real Codex through ``codex-acp`` as a Baton step, offline against a scripted Responses
API server (tests/responses_server.py): Codex speaks no Chat Completions, and unlike Gemini CLI
it can be pointed at any base URL over plain HTTP on 127.0.0.1. Codex ends its turn
``cancelled`` when a call is refused; Baton still sends the reason as the next prompt.
Skipped without codex-acp, failed under ``CI=true`` (tests/acp_agents.py)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog
from core.model.events import ApprovalResolved, Event, RunFinished, StepFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.safety.rule_store import RuleStore
from core.terminal.approval_prompt import TerminalApprover
from tests.acp_agents import codex_agent
from tests.conftest import FIXTURES
from tests.responses_server import ResponsesReply, ResponsesServer
from tests.waiting import until

TIMEOUT_S = 300.0
DENIAL = "do not delete anything"
STEER = "Please also mention the word pelican."


def _outputs(body: dict[str, Any]) -> list[str]:
    items = body.get("input", [])
    return [str(i.get("output")) for i in items if i.get("type") == "function_call_output"]


def _user_text(body: dict[str, Any]) -> str:
    texts = []
    for item in body.get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            texts += [str(part.get("text", "")) for part in item.get("content", [])]
    return "\n".join(texts)


@pytest.mark.integration
async def test_codex_asks_through_the_terminal_a_rule_allows_a_denial_reason_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    RuleStore().add(work, "allow", "Bash(cp:*)")

    def respond(body: dict[str, Any]) -> ResponsesReply:
        if DENIAL in _user_text(body):
            return ResponsesReply(text="Understood, nothing deleted.")
        if not _outputs(body):
            return ResponsesReply(call=("exec_command", {"cmd": "cp notes.txt copy.txt"}))
        return ResponsesReply(call=("exec_command", {"cmd": "rm notes.txt"}))

    with ResponsesServer(respond) as server:
        agent = codex_agent(tmp_path / "cx-home", server.base_url, monkeypatch)
        out = io.StringIO()
        answers = iter(["d", DENIAL])
        events: list[Event] = []
        loop = asyncio.get_running_loop()

        def read_line(prompt: str) -> str:
            if prompt.startswith("Approve"):  # a person types to the step while asked
                asyncio.run_coroutine_threadsafe(_steer(), loop).result(30)
            return next(answers)

        async def _steer() -> None:
            runner.steer(0, STEER)

        runner = Runner(
            RunRequest(mode="chain", steps=[StepSpec("codex", "Tidy notes.txt")], cwd=work),
            settings=Settings(policy={"bash": "ask"}),
            responder=TerminalApprover(out=out, read_line=read_line),
            listeners=[events.append],
            record=False,
            agents=AgentCatalog(agents=[agent]),
        )
        finished = await asyncio.wait_for(runner.run(), TIMEOUT_S)

    assert isinstance(finished, RunFinished) and finished.status == "ok", finished.error
    assert (work / "notes.txt").exists()
    assert (work / "copy.txt").read_text(encoding="utf-8") == "alpha beta\n"
    step = next(e for e in events if isinstance(e, StepFinished))
    assert step.output.endswith("Understood, nothing deleted.")
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.decided_by) for r in resolved] == [
        ("approve", "rule"),
        ("deny", "person"),
    ]
    assert "rm notes.txt" in out.getvalue()
    # The reason and the person's message went in as the next prompt of the same session.
    follow_up = next(r["body"] for r in server.requests if DENIAL in _user_text(r["body"]))
    assert STEER in _user_text(follow_up) and "Tidy notes.txt" in _user_text(follow_up)


@pytest.mark.integration
async def test_codex_cancel_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = "6071.7"

    def respond(body: dict[str, Any]) -> ResponsesReply:
        return ResponsesReply(call=("exec_command", {"cmd": f"sleep {marker}"}))

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="approve")

    with ResponsesServer(respond) as server:
        agent = codex_agent(tmp_path / "cx-home", server.base_url, monkeypatch)
        runner = Runner(
            RunRequest(mode="single", steps=[StepSpec("codex", "wait")], cwd=work),
            settings=Settings(policy={"bash": "ask"}),
            responder=approve,
            record=False,
            agents=AgentCatalog(agents=[agent]),
        )
        task = asyncio.create_task(runner.run())
        async with asyncio.timeout(TIMEOUT_S):
            await until(lambda: _sleepers(marker), "the agent's command never ran", TIMEOUT_S)
        runner.cancel()
        finished = await asyncio.wait_for(task, TIMEOUT_S)

    assert finished.status == "aborted"
    assert _sleepers(marker) == []
    assert [p for p in psutil.process_iter(["name"]) if p.info["name"] == "codex-acp"] == []


def _sleepers(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if any(marker in word for word in cmdline) and process.status() != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def test_the_responses_server_streams_what_the_recorded_codex_asks_for() -> None:
    """No Codex needed: the recorded request shapes (tests/fixtures/record_codex.py) are what
    the scripted server reads, and its stream is the Responses event sequence."""
    recorded = json.loads((FIXTURES / "codex" / "requests.json").read_text(encoding="utf-8"))
    assert all(r["stream"] is True and "exec_command" in r["tools"] for r in recorded)
    assert "function_call_output" in recorded[-1]["input"]
    with ResponsesServer(lambda body: ResponsesReply(call=("exec_command", {"cmd": "ls"}))) as s:
        reply = httpx.post(f"{s.base_url}/responses", json={"model": "m", "stream": True})
    kinds = [line[7:] for line in reply.text.splitlines() if line.startswith("event: ")]
    assert kinds == [
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.output_item.done",
        "response.completed",
    ]
