"""How the pi and Claude Code backends hand a person's message to their CLI, against the fakes
(real child processes that speak the CLIs' protocols); the real CLIs:
``test_steer_real_clis.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.backends.pi_cli import PiBackend
from core.backends.steering import SteerError
from core.model.events import Event, Log, StepFinished, ToolCallStarted
from tests.fake_claude import init, result, tool_use
from tests.fake_pi import make_fake_pi
from tests.test_claude_backend import Harness
from tests.test_pi_backend import answer_lines, make_ctx

AGENT_START = {"out": json.dumps({"type": "agent_start"})}
TOOL_START = {
    "out": json.dumps(
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "ls", "args": {}}
    )
}


async def test_pi_gets_an_rpc_steer_while_its_agent_runs(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    steps: list[dict[str, Any]] = [
        AGENT_START,
        TOOL_START,
        {"wait_steer": 1},
        {"deliver_steering": True},
        *answer_lines("Noted."),
    ]
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps})
    ctx = make_ctx(tmp_path, pi)
    events: list[Event] = []
    async for event in PiBackend().run(ctx):
        events.append(event)
        if isinstance(event, ToolCallStarted):
            ctx.inbox.put("Look in src/ too.")
    finished = events[-1]
    assert isinstance(finished, StepFinished) and finished.output == "Noted."
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["steers"] == 1
    assert not [e for e in events if isinstance(e, Log) and e.level == "warning"]
    with pytest.raises(SteerError, match="finishing"):  # after agent_end: pi would not read it
        ctx.inbox.put("too late")


async def test_pi_refuses_messages_before_its_agent_started(tmp_path: Path) -> None:
    pi = make_fake_pi(tmp_path / "bin", {"steps": answer_lines("Hi.")})
    ctx = make_ctx(tmp_path, pi)
    refused: list[str] = []
    async for _event in PiBackend().run(ctx):
        try:
            ctx.inbox.put("hello?")
        except SteerError as error:
            refused.append(str(error))
    assert refused and set(refused) <= {
        "the step is not talking to its model yet",
        "the step is finishing; continue it once it has finished",
    }


async def test_claude_code_gets_a_user_message_on_its_input(tmp_path: Path) -> None:
    scenario = {
        "steps": [
            {"print": init()},
            {"print": tool_use("m1", "t1", "Read", {"file_path": "a.txt"})},
            {"await_user": 1},
            {"print": result("Noted.")},
        ]
    }
    harness = Harness(tmp_path, scenario)

    def on_event(event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            harness.ctx.inbox.put("Look in src/ too.")

    finished = await harness.run(on_event)
    assert (finished.status, finished.output) == ("ok", "Noted.")
    users = [m for m in harness.stdin() if m.get("type") == "user"]
    assert [m["message"]["content"] for m in users] == ["Copy hello.txt", "Look in src/ too."]
    assert users[1]["parent_tool_use_id"] is None
    with pytest.raises(SteerError, match="finishing"):  # stdin closed at the result
        harness.ctx.inbox.put("too late")
