"""Baton's approval gate inside pi, through the fake pi's RPC mode (``tests/fake_pi.py``):
every tool call pi is about to run is asked about, and Baton's answer — the policy, the
responder, an edited command, a deny reason — is what pi gets back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.backends import pi_cli
from core.backends.pi_rpc import NOT_LOADED
from core.config.paths import config_dir
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    StepFinished,
    ToolCallFinished,
)
from core.safety.approvals import (
    NO_ONE_TO_ASK,
    ApprovalAnswer,
    ApprovalGate,
    ApprovalRequest,
    deny_all,
)
from tests.fake_pi import make_fake_pi
from tests.test_pi_backend import AGENT_END, answer_lines, collect, gone, make_ctx, of, recorded

CALL = {"toolCallId": "c1", "toolName": "bash", "input": {"command": "rm -rf build"}}
START = {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash"}


def gated_step(tmp_path: Path, **script: Any) -> tuple[Path, Path]:
    record = tmp_path / "record.json"
    steps = [{"out": json.dumps({**START, "args": CALL["input"]})}, {"ask": CALL}]
    steps += answer_lines("done")
    return make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps, **script}), record


async def run_with(
    tmp_path: Path, pi: Path, responder: Any, **settings: Any
) -> tuple[list[Event], list[Event]]:
    ctx = make_ctx(tmp_path, pi, **settings)
    gate_events: list[Event] = []
    ctx.approvals = ApprovalGate(
        ctx.settings.effective_policy(), responder, gate_events.append, ctx.clock.now
    )
    return await collect(ctx), gate_events


async def test_nobody_to_ask_blocks_the_call_with_the_reason(tmp_path: Path) -> None:
    pi, record = gated_step(tmp_path)
    events, gate = await run_with(tmp_path, pi, deny_all)
    (answer,) = recorded(record)["answers"]
    assert answer == {"allow": False, "reason": NO_ONE_TO_ASK}
    (asked,) = of(gate, ApprovalRequested)
    assert (asked.tool, asked.call_id, asked.arguments) == ("bash", "c1", CALL["input"])
    (done,) = of(events, ToolCallFinished)
    assert (done.status, done.result) == ("error", NO_ONE_TO_ASK)
    assert isinstance(events[-1], StepFinished) and events[-1].status == "ok"


async def test_an_edited_command_is_what_pi_runs(tmp_path: Path) -> None:
    async def edit(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="approve", updated_arguments={"command": "ls build"})

    pi, record = gated_step(tmp_path)
    events, gate = await run_with(tmp_path, pi, edit)
    assert recorded(record)["answers"] == [{"allow": True, "input": {"command": "ls build"}}]
    (done,) = of(events, ToolCallFinished)
    assert done.status == "ok" and done.result == 'ran {"command": "ls build"}'
    assert [e.decision for e in of(gate, ApprovalResolved)] == ["approve"]


async def test_a_person_s_deny_reason_reaches_pi(tmp_path: Path) -> None:
    async def deny(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="deny", reason="keep the build folder")

    pi, _record = gated_step(tmp_path)
    events, _ = await run_with(tmp_path, pi, deny)
    (done,) = of(events, ToolCallFinished)
    assert (done.status, done.result) == ("error", "Denied by the user: keep the build folder")


@pytest.mark.parametrize(("verdict", "allowed"), [("allow", True), ("deny", False)])
async def test_the_policy_answers_without_asking(
    tmp_path: Path, verdict: str, allowed: bool
) -> None:
    pi, record = gated_step(tmp_path)
    _events, gate = await run_with(tmp_path, pi, deny_all, policy={"bash": verdict})
    (answer,) = recorded(record)["answers"]
    assert answer["allow"] is allowed
    assert of(gate, ApprovalRequested) == []
    if not allowed:
        assert answer["reason"] == "Denied by the user's policy: bash is set to deny"


async def test_without_the_gate_loaded_the_task_is_never_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pi_cli, "gate_extension", lambda: tmp_path / "missing" / "baton-gate.js")
    pi, record = gated_step(tmp_path)
    events, _gate = await run_with(tmp_path, pi, deny_all)
    step = events[-1]
    assert isinstance(step, StepFinished) and (step.status, step.error) == ("error", NOT_LOADED)
    assert "task" not in recorded(record)
    assert of(events, ToolCallFinished) == []


async def test_a_retry_after_agent_end_is_waited_for(tmp_path: Path) -> None:
    """pi writes ``auto_retry_start`` in the same tick as ``agent_end``: the step goes on."""
    failed = {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "500 x"}
    retry = {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 1}
    first = [
        json.dumps({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json.dumps({"type": "message_end", "message": failed}),
    ]
    steps: list[dict[str, Any]] = [{"out": first}, {"out": [AGENT_END["out"], json.dumps(retry)]}]
    steps += answer_lines("second time lucky")
    pi = make_fake_pi(tmp_path / "bin", {"steps": steps})
    events, _ = await run_with(tmp_path, pi, deny_all)
    step = events[-1]
    assert isinstance(step, StepFinished)
    assert (step.status, step.output) == ("ok", "second time lucky")


async def test_baton_s_own_folders_are_refused_to_pi_s_file_tools(tmp_path: Path) -> None:
    """Even a read the policy allows, with the working folder holding Baton's config folder."""
    secret = config_dir() / "config.yaml"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("policy: {}\n", encoding="utf-8")
    call = {"toolCallId": "c1", "toolName": "read", "input": {"path": str(secret)}}
    steps = [{"ask": call}, *answer_lines("done")]
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps})
    _events, gate = await run_with(tmp_path, pi, deny_all, policy={"read": "allow"})
    (answer,) = recorded(record)["answers"]
    assert answer["allow"] is False and "Baton's own settings or data folder" in answer["reason"]
    assert of(gate, ApprovalRequested) == []


async def test_a_refused_task_fails_the_step_with_pi_s_reason(tmp_path: Path) -> None:
    """pi 0.73.1 and 1.x without a key: the RPC ``prompt`` answer is ``success: false``."""
    pi = make_fake_pi(tmp_path / "bin", {"refuse_prompt": "No API key found for the model."})
    events, _ = await run_with(tmp_path, pi, deny_all)
    step = events[-1]
    assert isinstance(step, StepFinished) and step.status == "error"
    assert step.error == "pi refused the task: No API key found for the model."


async def test_cancel_while_a_person_decides_closes_the_question_and_stops_pi(
    tmp_path: Path,
) -> None:
    asked = asyncio.Event()

    async def wait_forever(request: ApprovalRequest) -> ApprovalAnswer:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    pi, record = gated_step(tmp_path)
    ctx = make_ctx(tmp_path, pi)
    gate_events: list[Event] = []
    ctx.approvals = ApprovalGate(
        ctx.settings.effective_policy(), wait_forever, gate_events.append, ctx.clock.now
    )
    running = asyncio.ensure_future(collect(ctx))
    await asyncio.wait_for(asked.wait(), 30)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert [(e.decision, e.reason) for e in of(gate_events, ApprovalResolved)] == [
        ("deny", "run cancelled")
    ]
    assert gone(recorded(record)["pid"])
