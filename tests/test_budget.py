"""Budgets against the scripted server: a cap lets no request through once reached, asks
first when someone can answer, and stops the run cleanly ("budget reached", exit 1) when not."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.budget import Budget, BudgetQuestion, Caps, budget_of
from core.model.events import BudgetAnswered, BudgetAsked, Event, RunCaps, RunStarted
from core.record.run_files import RunIndex, load_run, run_file
from core.record.run_state import Notice, fold
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.terminal.budget_prompt import ask_on_terminal
from tests.llm_server import LLMServer, Reply, Tokens

# gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
EXPENSIVE = Tokens(prompt=200_000, completion=50_000)  # $0.03 + $0.03 = $0.06


def _tool_then_answer(server: LLMServer) -> None:
    server.queue(Reply.tool("ls", {"path": "."}, tokens=EXPENSIVE), Reply.answer("done"))


def test_a_cost_cap_lets_no_request_through_after_it(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    _tool_then_answer(llm_server)
    task = ["--agent", "scout", "--task", "look", "--model", "gpt-4o-mini"]
    code = main(["run", *task, "--max-cost", "0.05", "--cwd", str(tmp_path)])
    assert code == 1
    assert len(llm_server.requests) == 1
    assert "budget reached: $0.0600 spent of a $0.0500 cap" in capsys.readouterr().out


async def test_the_question_can_raise_the_cap(llm_server: LLMServer, tmp_path: Path) -> None:
    _tool_then_answer(llm_server)
    asked: list[BudgetQuestion] = []

    async def raise_it(question: BudgetQuestion) -> Caps:
        asked.append(question)
        return question.caps.model_copy(update={"max_cost": 1.0})

    runner = Runner(
        RunRequest(
            mode="single",
            steps=[StepSpec(agent="scout", task="look")],
            cwd=tmp_path,
            model="gpt-4o-mini",
            budget=Budget(run=Caps(max_cost=0.05)),
        ),
        settings=llm_server.settings(),
        budget_asker=raise_it,
    )
    result = await runner.run()
    assert result.status == "ok"
    assert len(llm_server.requests) == 2
    (question,) = asked
    assert (question.step, question.scope, question.kind) == (0, "run", "cost")


def test_a_step_token_cap_from_a_preset(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    presets = tmp_path / ".baton" / "presets"
    presets.mkdir(parents=True)
    (presets / "frugal.yaml").write_text(
        "name: frugal\nmode: single\nbudget: {step: {max_tokens: 1000}}\n"
        "steps:\n  - {agent: scout, task: look}\n",
        encoding="utf-8",
    )
    llm_server.queue(Reply.tool("ls", {"path": "."}, tokens=Tokens(2000, 10)))
    code = main(["run", "frugal", "--cwd", str(tmp_path), "--trust-project"])
    assert code == 1
    assert len(llm_server.requests) == 1
    assert "2,010 tokens used of a 1,000 cap" in capsys.readouterr().out


async def test_the_terminal_question(capsys: pytest.CaptureFixture[str]) -> None:
    question = BudgetQuestion("r", 1, "run", "cost", "$0.06 of $0.05", Caps(max_cost=0.05))
    answers = iter(["nonsense", "$0.20"])
    raised = await ask_on_terminal(question, lambda _prompt: next(answers))
    assert raised == Caps(max_cost=0.2)
    assert "Budget reached in step 2 (run cap)" in capsys.readouterr().err
    assert await ask_on_terminal(question, lambda _prompt: "") is None


async def test_the_question_and_its_answer_are_in_the_run_file(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    _tool_then_answer(llm_server)

    async def raise_it(question: BudgetQuestion) -> Caps:
        return question.caps.model_copy(update={"max_cost": 1.0})

    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="scout", task="look")],
        cwd=tmp_path,
        model="gpt-4o-mini",
        budget=Budget(run=Caps(max_cost=0.05)),
    )
    runner = Runner(request, settings=llm_server.settings(), budget_asker=raise_it)
    await runner.run()
    events = load_run(run_file(runner.run_id))
    asked = [e for e in events if isinstance(e, BudgetAsked)]
    answered = [e for e in events if isinstance(e, BudgetAnswered)]
    assert [(a.step, a.scope, a.kind, a.reason) for a in asked] == [
        (0, "run", "cost", "$0.0600 spent of a $0.0500 cap")
    ]
    assert [(a.stopped, a.max_cost) for a in answered] == [(False, 1.0)]
    notices = [i.text for i in fold(events).steps[0].items if isinstance(i, Notice)]
    assert notices == ["budget reached: $0.0600 spent of a $0.0500 cap", "cap raised to $1.00"]


def test_a_run_stopped_at_its_cap_resumes_with_the_same_cap(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resume never lifts a cap silently: the resumed run stops at the same cap again."""
    save_settings(llm_server.settings())
    llm_server.queue(Reply.tool("ls", {"path": "."}, tokens=Tokens(2000, 10)))
    task = ["--agent", "scout", "--task", "look", "--model", "gpt-4o-mini"]
    assert main(["run", *task, "--max-tokens", "1000", "--cwd", str(tmp_path)]) == 1
    (parent,) = RunIndex().list()
    started = load_run(Path(parent.path))[0]
    assert isinstance(started, RunStarted) and started.budget is not None
    assert started.budget.run_max_tokens == 1000
    capsys.readouterr()

    llm_server.queue(Reply.tool("ls", {"path": "."}, tokens=Tokens(2000, 10)))
    assert main(["runs", "resume", parent.id]) == 1
    assert len(llm_server.requests) == 2  # one request, then the cap stopped it again
    assert "budget reached: 2,010 tokens used of a 1,000 cap" in capsys.readouterr().out
    child = next(r for r in RunIndex().list() if r.id != parent.id)
    resumed = load_run(Path(child.path))[0]
    assert isinstance(resumed, RunStarted) and resumed.budget == started.budget


def test_the_caps_a_saved_run_ended_with_include_the_raised_ones(tmp_path: Path) -> None:
    started = RunStarted(
        run_id="r",
        ts=0,
        mode="single",
        steps=[],
        cwd=str(tmp_path),
        started_at="2026-12-04T00:00:00+00:00",
        budget=RunCaps(run_max_cost=0.05, step_max_tokens=9000),
    )
    events: list[Event] = [
        started,
        BudgetAsked(run_id="r", step=0, ts=1, scope="run", kind="cost", reason="$0.06 of $0.05"),
        BudgetAnswered(run_id="r", step=0, ts=2, stopped=False, max_cost=0.5),
    ]
    assert budget_of(events) == Budget(run=Caps(max_cost=0.5), step=Caps(max_tokens=9000))
    assert budget_of(events[:1]) == Budget(run=Caps(max_cost=0.05), step=Caps(max_tokens=9000))
    no_caps = started.model_copy(update={"budget": None})
    assert budget_of([no_caps]) is None
