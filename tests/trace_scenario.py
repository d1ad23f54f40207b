"""The run every trace test exports: a 3-step chain (scout → worker → planner) against the
scripted model, with a tool call the policy allows (read), one a person denies (bash) and two
hand-offs, and a provider key planted in the environment, the task, a tool's arguments and the
model's answer — it must appear in no span."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from pathlib import Path

import pytest

from core.model.events import Event, RunFinished
from core.record.publisher import EventListener
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from tests.llm_server import LLMServer, Reply, Tokens

KEY_VARIABLE = "TRACE_TEST_API_KEY"
DENIAL = "not on a Friday"


def plant_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    secret = f"sk-trace-{secrets.token_hex(12)}"
    monkeypatch.setenv(KEY_VARIABLE, secret)
    return secret


async def deny_bash(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(decision="deny", reason=DENIAL, decided_by="person")


async def run_chain(
    server: LLMServer, folder: Path, secret: str, listeners: Iterable[EventListener] = ()
) -> tuple[Runner, RunFinished, list[Event]]:
    """Run the chain; returns the runner, its result and every event it published."""
    (folder / "notes.txt").write_text("ship on Monday\n", encoding="utf-8")
    server.queue(
        Reply.tool("read", {"path": "notes.txt"}, tokens=Tokens(120, 20, cached=40)),
        Reply.answer(f"The notes say: ship on Monday. Key {secret}.", tokens=Tokens(160, 30)),
        Reply.tool("bash", {"command": f"deploy --key {secret}"}, tokens=Tokens(200, 25)),
        Reply.answer("I was not allowed to deploy.", tokens=Tokens(240, 12)),
        Reply.answer("Plan: deploy on Monday.", tokens=Tokens(90, 8)),
    )
    settings = server.settings(providers=[server.provider(api_key_env=KEY_VARIABLE)])
    request = RunRequest(
        mode="chain",
        steps=[
            StepSpec(agent="scout", task=f"Read notes.txt (the deploy key is {secret})"),
            StepSpec(agent="worker", task="{previous}\nDeploy it."),
            StepSpec(agent="planner", task="{previous}\nPlan the release."),
        ],
        cwd=folder,
    )
    seen: list[Event] = []
    runner = Runner(
        request,
        settings=settings,
        responder=deny_bash,
        listeners=[seen.append, *listeners],
    )
    result = await runner.run()
    return runner, result, seen
