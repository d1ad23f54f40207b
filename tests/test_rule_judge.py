"""Judging a command never blocks the supervisor: a huge or deeply nested line is asked about
(never allowed), with the reason in the approval, while another task keeps streaming."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core.config.settings import DEFAULT_POLICY, load_settings, save_settings
from core.model.events import Event
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety import rule_judge
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest
from core.safety.rule_judge import MAX_COMMAND_CHARS, judge
from core.safety.rule_store import RuleStore
from core.safety.rules import RuleSet
from core.tools.approval_describe import describe
from tests.llm_server import LLMServer, Reply, ToolCall, last_user_text

ONE_MB = "git log " + "a" * (1_000_000 - 8)
DEEP = "git log " + "$(echo " * 2000 + "x" + ")" * 2000
DEEP_PLAIN = "git log " + " ".join(["a"] * 4000)  # large, readable: judged by the worker
MEDIUM = "git log " + " ".join(["a"] * 500)  # judged in a thread


async def test_huge_and_deep_lines_are_asked_about_while_another_task_streams(
    tmp_path: Path,
) -> None:
    store = RuleStore(tmp_path / "rules.json")
    store.add(tmp_path, "allow", "Bash")  # everything allowed, but nothing past the deny rule
    store.add(tmp_path, "deny", "Bash(rm:*)")
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny")

    events: list[Event] = []
    policy = {**DEFAULT_POLICY, "bash": "allow"}
    gate = ApprovalGate(policy, person, events.append, lambda: 0.0, rules=store)
    call: dict[str, Any] = {"run_id": "r", "step": 0, "agent": "w", "tool": "bash"}
    streamed: list[int] = []
    judging = asyncio.Event()
    loop = asyncio.get_running_loop()
    streaming_done: asyncio.Future[None] = loop.create_future()

    def stream() -> None:
        """Another step's output, a line per turn of the loop: it must keep flowing while
        the lines are judged."""
        if judging.is_set():
            streaming_done.set_result(None)
            return
        streamed.append(len(streamed))
        loop.call_soon(stream)  # the next line after the loop's other work

    loop.call_soon(stream)
    answers = await asyncio.gather(
        gate.check(call_id="1", arguments={"command": ONE_MB}, cwd=str(tmp_path), **call),
        gate.check(call_id="2", arguments={"command": DEEP}, cwd=str(tmp_path), **call),
    )
    judging.set()
    await streaming_done
    assert [a.decided_by for a in answers] == ["person", "person"]  # asked, not allowed
    reasons = {request.call_id: describe(request).rule_note for request in asked}
    assert "1,000,000 characters" in reasons["1"] and reasons["1"].startswith("Asked because")
    assert reasons["2"].startswith("Asked because")
    assert len(streamed) > 1


@pytest.mark.parametrize("line", [DEEP_PLAIN, MEDIUM], ids=["worker", "thread"])
async def test_a_large_readable_line_is_judged_off_the_loop(tmp_path: Path, line: str) -> None:
    rules = RuleSet.from_texts(tmp_path, {"allow": ["Bash(git log:*)"], "deny": ["Bash(rm:*)"]})
    allowed = await judge(rules, "bash", None, {"command": line}, tmp_path)
    assert allowed.verdict is not None and allowed.verdict.label() == "allow Bash(git log:*)"
    denied = await judge(rules, "bash", None, {"command": line + " && env rm x"}, tmp_path)
    assert denied.verdict is not None and denied.verdict.kind == "deny"


async def test_a_line_not_judged_in_time_is_asked_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_judge, "TIME_LIMIT_S", 0.0)  # no worker answers in no time
    rules = RuleSet.from_texts(tmp_path, {"allow": ["Bash"]})
    judged = await judge(rules, "bash", None, {"command": DEEP_PLAIN}, tmp_path)
    assert judged.verdict is not None and judged.verdict.kind == "ask"
    assert "took over 0 s" in judged.verdict.label()


async def test_a_line_over_the_size_limit_is_never_allowed(tmp_path: Path) -> None:
    rules = RuleSet.from_texts(tmp_path, {"allow": ["Bash"]})
    line = "ls " + "x" * MAX_COMMAND_CHARS
    judged = await judge(rules, "bash", None, {"command": line}, tmp_path)
    assert judged.verdict is not None and judged.verdict.kind == "ask"
    assert judged.suggestion is None


async def test_a_run_asks_about_huge_lines_while_another_run_streams(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """End to end: the model sends both lines in one turn of a real run, while a second run on
    the same loop streams its answer; both lines reach the person with the reason, neither
    runs, and the other run finishes."""
    save_settings(llm_server.settings())
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    store = RuleStore()
    store.add(project.resolve(), "allow", "Bash")
    store.add(project.resolve(), "deny", "Bash(rm:*)")

    def reply(body: dict[str, Any]) -> Reply:
        if "stream please" in last_user_text(body):
            return Reply.answer("word " * 2000)
        if body["messages"][-1]["role"] == "tool":
            return Reply.answer("done")
        return Reply.tools(
            ToolCall("bash", {"command": ONE_MB}, "big"),
            ToolCall("bash", {"command": DEEP}, "deep"),
        )

    llm_server.responder = reply
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny")

    settings = load_settings()
    judged = Runner(
        RunRequest(mode="single", steps=[StepSpec("worker", "go")], cwd=project),
        settings=settings,
        responder=person,
    )
    streaming = Runner(
        RunRequest(mode="single", steps=[StepSpec("worker", "stream please")], cwd=other),
        settings=settings,
    )
    results = await asyncio.gather(judged.run(), streaming.run())
    assert [r.status for r in results] == ["ok", "ok"]
    notes = {request.call_id: describe(request).rule_note for request in asked}
    assert set(notes) == {"big", "deep"}
    assert all(note.startswith("Asked because") for note in notes.values())
