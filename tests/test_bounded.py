"""Bounded by design, against the scripted server: a model that answers with 10 M tokens, asks
for 100,000 tool calls at once, or streams an endless answer cannot take the run past its
budget, run them all, or hold the step."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import Limits, save_settings
from core.model.budget import Budget, BudgetGuard, Caps, TokenPrices
from core.model.events import StepFinished, UsageStats
from core.record.run_files import load_run, run_file
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.llm_server import LLMServer, Reply, Tokens, ToolCall

# gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
MINI = TokenPrices(input=0.15e-6, output=0.6e-6)


def test_a_ten_million_token_answer_cannot_overshoot_the_cost_cap(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: the answer reports 10 M output tokens ($6, twelve times the cap). The request
    said how much the answer may be, and a provider stops there."""
    save_settings(llm_server.settings())
    greedy = Tokens(prompt=1_000, completion=10_000_000)
    llm_server.queue(Reply.tool("ls", {"path": "."}, tokens=greedy), Reply.answer("done"))
    task = ["--agent", "scout", "--task", "look", "--model", "gpt-4o-mini"]
    code = main(["run", *task, "--max-cost", "0.5", "--cwd", str(tmp_path), "--json"])
    first = llm_server.requests[0].body
    assert 0 < first["max_tokens"] <= 0.5 / MINI.output
    spent = sum(r.body["max_tokens"] * MINI.output for r in llm_server.requests)
    assert spent <= 0.5 + 1e-9
    assert code in (0, 1)
    capsys.readouterr()


async def test_each_request_carries_the_budget_left(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.queue(
        Reply.tool("ls", {"path": "."}, tokens=Tokens(prompt=100, completion=400)),
        Reply.answer("done", tokens=Tokens(prompt=100, completion=10)),
    )
    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="scout", task="look")],
        cwd=tmp_path,
        model="gpt-4o-mini",
        budget=Budget(step=Caps(max_tokens=2_000)),
    )
    result = await Runner(request, settings=llm_server.settings()).run()
    assert result.status == "ok"
    first, second = (r.body["max_tokens"] for r in llm_server.requests)
    assert first < 2_000 and second <= first - 500  # the first answer's 500 tokens are spent


async def test_no_budget_sends_no_ceiling(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.queue(Reply.answer("done"))
    request = RunRequest(mode="single", steps=[StepSpec(agent="scout", task="look")], cwd=tmp_path)
    assert (await Runner(request, settings=llm_server.settings()).run()).status == "ok"
    assert "max_tokens" not in llm_server.requests[0].body


def test_the_allowance_takes_the_tighter_cap_and_never_zero() -> None:
    spent = UsageStats(input=500, output=500, cost=0.4)
    guard = BudgetGuard(
        Budget(run=Caps(max_cost=0.5), step=Caps(max_tokens=200_000)), lambda step: (spent, spent)
    )
    assert guard.output_allowance(0, 0, MINI) == int(0.1 / MINI.output)  # $0.10 left
    assert guard.output_allowance(0, 98_000, None) == 101_000  # unpriced: the token cap only
    assert guard.output_allowance(0, 10_000_000, MINI) == 1  # a request that goes out may answer
    assert BudgetGuard(Budget(), lambda step: (spent, spent)).output_allowance(0, 0, MINI) is None


async def test_a_hundred_thousand_tool_calls_in_one_answer_run_only_the_limit(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    calls = [ToolCall("ls", {"path": "."}, id=f"c{n}") for n in range(100_000)]
    flood = Reply.tools(*calls)
    flood.calls_in_one_chunk = True
    llm_server.queue(flood, Reply.answer("done"))
    settings = llm_server.settings(limits=Limits(max_answer_bytes=100_000_000))
    request = RunRequest(mode="single", steps=[StepSpec(agent="scout", task="look")], cwd=tmp_path)
    runner = Runner(request, settings=settings)
    assert (await runner.run()).status == "ok"
    follow_up = llm_server.requests[1]
    assert len(follow_up.tool_messages) == 64
    assert len(follow_up.messages[-66]["tool_calls"]) == 64
    refusal = follow_up.messages[-1]
    assert refusal["role"] == "user"
    assert (
        "99936 more tool calls in your last answer were not run: at most 64" in (refusal["content"])
    )


async def test_an_endless_answer_fails_the_step_with_a_clear_message(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.queue(Reply.answer("x" * 1_000_000, pieces=20))
    settings = llm_server.settings(limits=Limits(max_answer_bytes=500_000))
    request = RunRequest(mode="single", steps=[StepSpec(agent="scout", task="look")], cwd=tmp_path)
    runner = Runner(request, settings=settings)
    assert (await runner.run()).status == "error"
    (finished,) = [e for e in load_run(run_file(runner.run_id)) if isinstance(e, StepFinished)]
    assert finished.error == (
        "the model's answer passed 0.5 MB (limits.max_answer_bytes); the step stops"
    )
