"""Graph runs stopped inside a loop — cancelled, or the process killed with SIGKILL — resume in
the iteration they stopped in, reusing what finished; a cancel with several branches running
ends every one of them, and resume runs them again; re-run from a step inside a loop; a
budget cap reached in the second iteration stops the run there."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.cli import main
from core.config.settings import save_settings
from core.model.events import (
    Event,
    GateWaiting,
    LoopFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from core.record.run_files import RunIndex, load_run
from core.record.run_state import fold
from core.run.gates import GateAnswer
from core.run.rerun import rerun_from_request, resume_request
from core.run.runner import Runner
from tests.graph_runs import agent_of, graph_runner, review
from tests.llm_server import LLMServer, Reply, Tokens, last_user_text

LOOP = """\
name: review-loop
mode: graph
steps:
  - name: work
    agent: worker
    task: "Build: $@"
  - loop:
      name: review
      max_iterations: 3
      until: "check.count(critical) == 0 and check.count(major) == 0"
      steps:
        - name: check
          agent: reviewer
          task: "Review this work: {previous}"
        - name: fix
          agent: worker
          task: "Fix these: {step.check}"
          when: "check.max_severity >= major"
  - name: ship
    agent: worker
    task: "Ship it: {previous}"
    after: [review]
"""
REPO = Path(__file__).resolve().parents[1]


def stalls_in_the_second_review(server: LLMServer) -> None:
    """Iteration 1 finds a major problem; the second review never answers."""
    reviews = itertools.count(1)

    def respond(body: dict[str, Any]) -> Reply:
        if agent_of(body) == "reviewer":
            return Reply.answer(review("major")) if next(reviews) == 1 else Reply.hang()
        return Reply.answer(f"did: {last_user_text(body)[:20]}")

    server.responder = respond


def passes_now(server: LLMServer) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if agent_of(body) == "reviewer":
            return Reply.answer(review())
        return Reply.answer(f"did: {last_user_text(body)[:20]}")

    server.responder = respond


def labels(events: list[Event]) -> list[tuple[str | None, int | None, bool]]:
    return [
        (e.node, e.iteration, e.reused_from is not None)
        for e in events
        if isinstance(e, StepStarted)
    ]


async def resumed(server: LLMServer, parent: str, folder: Path) -> tuple[list[Event], int]:
    before = len(server.requests)
    request = resume_request(load_run(Path(str(RunIndex().get(parent).path))))  # type: ignore[union-attr]
    events: list[Event] = []
    runner = Runner(request, settings=server.settings(), listeners=[events.append])
    result = await runner.run()
    assert result.status == "ok", result.error
    return events, len(server.requests) - before


async def test_cancel_inside_a_loop_then_resume_goes_on_in_that_iteration(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    stalls_in_the_second_review(llm_server)
    runner, events = graph_runner(llm_server, LOOP, tmp_path)
    run = asyncio.create_task(runner.run())
    await llm_server.wait_requests_async(4)  # work, check 1, fix 1, check 2 (stalled)
    runner.cancel()
    assert (await run).status == "aborted"
    (loop_end,) = [e for e in events if isinstance(e, LoopFinished)]
    assert loop_end.status == "aborted"

    passes_now(llm_server)
    again, requests = await resumed(llm_server, runner.run_id, tmp_path)
    assert labels(again) == [
        ("work", None, True),
        ("check", 1, True),
        ("fix", 1, True),
        ("check", 2, False),
        ("ship", None, False),
    ]
    assert requests == 2
    first_fix = next(e for e in events if isinstance(e, StepFinished) and e.node == "fix")
    assert llm_server.requests[-2].user_text == f"Review this work: {first_fix.output}"


FAN_OUT = """\
name: fan-out
mode: graph
steps:
  - {name: scout, agent: scout, task: "Look at: $@"}
  - {name: plan-a, agent: planner, task: "Plan A from {previous}", after: [scout]}
  - {name: plan-b, agent: planner, task: "Plan B from {previous}", after: [scout]}
  - {name: plan-c, agent: planner, task: "Plan C from {previous}", after: [scout]}
  - {name: merge, agent: planner, task: "Merge these:\\n{outputs}", after: [plan-a, plan-b, plan-c]}
"""
BRANCHES = ("plan-a", "plan-b", "plan-c")


async def test_cancel_ends_every_running_branch_then_resume_runs_them_and_the_merge(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Three branches in flight at once, each stalled on the server: cancel ends all three
    (their requests closed by the client, no task left), and resume runs them again."""

    def stalls(body: dict[str, Any]) -> Reply:
        task = last_user_text(body)
        return Reply.hang() if task.startswith("Plan") else Reply.answer("found main.py")

    llm_server.responder = stalls
    runner, events = graph_runner(llm_server, FAN_OUT, tmp_path)
    run = asyncio.create_task(runner.run())
    await llm_server.wait_requests_async(4)  # scout, then the three plans at once
    stalled = [r for r in llm_server.requests if r.user_text.startswith("Plan")]
    assert len(stalled) == 3
    runner.cancel()
    result = await run
    assert (result.status, result.error) == ("aborted", "the run was cancelled")
    for request in stalled:  # the client went away: nothing is left streaming
        await llm_server.wait_until_async(request.closed.is_set)
        assert request.client_disconnected
    await llm_server.wait_until_async(lambda: llm_server.in_flight == 0)
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    ended = {e.node: (e.status, e.error) for e in events if isinstance(e, StepFinished)}
    assert ended == {
        "scout": ("ok", None),
        **{branch: ("aborted", "cancelled") for branch in BRANCHES},
    }
    steps = {s.node: s.phase for s in fold(events).steps}
    assert steps == {
        "scout": "ok",
        **{branch: "aborted" for branch in BRANCHES},
        "merge": "not_run",
    }
    record = RunIndex().get(runner.run_id)
    assert record is not None and load_run(Path(record.path)) == events

    llm_server.responder = lambda body: Reply.answer(
        "merged" if last_user_text(body).startswith("Merge") else last_user_text(body).upper()
    )
    again, requests = await resumed(llm_server, runner.run_id, tmp_path)
    assert requests == 4  # the three plans and the merge; scout's answer is reused
    runs = labels(again)
    assert runs[0] == ("scout", None, True) and runs[-1] == ("merge", None, False)
    assert sorted(runs[1:-1]) == [(branch, None, False) for branch in BRANCHES]
    finished = {e.node: e.status for e in again if isinstance(e, StepFinished)}
    assert finished == dict.fromkeys(["scout", *BRANCHES, "merge"], "ok")  # reused: named too
    merge = llm_server.requests[-1].user_text
    for letter in "ABC":
        assert f"## plan-{letter.lower()}\n\nPLAN {letter} FROM FOUND MAIN.PY" in merge


async def test_rerun_from_a_step_inside_a_loop(llm_server: LLMServer, tmp_path: Path) -> None:
    reviews = iter([review("major"), review()])
    llm_server.responder = lambda body: (
        Reply.answer(next(reviews)) if agent_of(body) == "reviewer" else Reply.answer("did")
    )
    runner, events = graph_runner(llm_server, LOOP, tmp_path)
    assert (await runner.run()).status == "ok"
    second_check = next(e.step for e in events if isinstance(e, StepStarted) and e.iteration == 2)
    assert second_check is not None
    passes_now(llm_server)
    before = len(llm_server.requests)
    request = rerun_from_request(events, second_check + 1, task="Review harder: {previous}")
    again: list[Event] = []
    result = await Runner(request, settings=llm_server.settings(), listeners=[again.append]).run()
    assert result.status == "ok"
    assert [(n, i) for n, i, reused in labels(again) if reused] == [
        ("work", None),
        ("check", 1),
        ("fix", 1),
    ]
    assert llm_server.requests[before].user_text == "Review harder: did"
    assert len(llm_server.requests) - before == 2  # check 2 and ship


def test_kill_9_inside_a_loop_then_resume(
    llm_server: LLMServer, tmp_path: Path, user_presets: Path
) -> None:
    save_settings(llm_server.settings())
    (user_presets / "review-loop.yaml").write_text(LOOP, encoding="utf-8")
    stalls_in_the_second_review(llm_server)
    child = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "run", "review-loop", "x", "--cwd", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    try:
        llm_server.wait_requests(4, timeout=120)
    finally:
        child.kill()  # SIGKILL: no handler, no last line
        child.wait()
    (record,) = RunIndex().list()
    passes_now(llm_server)
    before = len(llm_server.requests)
    assert main(["runs", "resume", record.id, "--json"]) == 0
    again = [r for r in RunIndex().list() if r.id != record.id]
    (child_record,) = again
    events = load_run(Path(child_record.path))
    assert labels(events) == [
        ("work", None, True),
        ("check", 1, True),
        ("fix", 1, True),
        ("check", 2, False),
        ("ship", None, False),
    ]
    assert len(llm_server.requests) - before == 2
    started = events[0]
    assert isinstance(started, RunStarted) and started.lineage is not None
    assert started.lineage.kind == "resume"


async def test_a_budget_reached_in_the_second_iteration_stops_there(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        text = review("major") if agent_of(body) == "reviewer" else "did"
        return Reply.answer(text, tokens=Tokens(100_000, 0))  # $0.015 each

    llm_server.responder = respond
    text = LOOP.replace("mode: graph", "mode: graph\nbudget: {run: {max_cost: 0.05}}")
    runner, events = graph_runner(llm_server, text, tmp_path, model="gpt-4o-mini")
    result = await runner.run()
    assert result.status == "error"
    stopped = [e for e in events if isinstance(e, StepFinished) and e.status == "error"]
    assert [(e.node, e.iteration) for e in stopped] == [("fix", 2)]
    assert "budget reached" in (stopped[0].error or "")
    assert len(llm_server.requests) == 4  # work, check 1, fix 1, check 2
    (loop_end,) = [e for e in events if isinstance(e, LoopFinished)]
    assert (loop_end.status, loop_end.iterations) == ("error", 2)


GATED = """\
name: gated
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - name: ship
    agent: worker
    task: "Ship: {previous}"
    gate: {question: "Ship it?"}
"""


async def test_resume_after_a_gate_hands_on_the_persons_edit_without_asking_again(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    ships = itertools.count(1)

    def respond(body: dict[str, Any]) -> Reply:
        if last_user_text(body).startswith("Ship") and next(ships) == 1:
            return Reply.error(400, "context too long")
        return Reply.answer("done")

    llm_server.responder = respond

    async def edits(waiting: Any) -> Any:
        return GateAnswer("edit", text="the person's version")

    runner, _ = graph_runner(llm_server, GATED, tmp_path, gate_asker=edits)
    assert (await runner.run()).status == "error"
    request = resume_request(load_run(Path(str(RunIndex().get(runner.run_id).path))))  # type: ignore[union-attr]

    async def nobody(waiting: Any) -> Any:
        raise AssertionError("the gate was asked again")

    events: list[Event] = []
    resumed_run = Runner(
        request, settings=llm_server.settings(), listeners=[events.append], gate_asker=nobody
    )
    result = await resumed_run.run()
    assert result.status == "ok", result.error
    assert llm_server.requests[-1].user_text == "Ship: the person's version"
    assert labels(events) == [("draft", None, True), ("ship", None, False)]


async def resume_past_a_send_back(
    server: LLMServer, text: str, folder: Path, fails_first: str
) -> tuple[list[Event], list[str]]:
    """Run ``text``, its gate sent back once then continued, the step after the gate failing
    once (its task starting ``fails_first``); resume it with nobody to ask. The resumed
    run's events and the tasks it sent."""
    failures = itertools.count(1)
    rounds = itertools.count(1)

    def respond(body: dict[str, Any]) -> Reply:
        task = last_user_text(body)
        if task.startswith(fails_first) and next(failures) == 1:
            return Reply.error(400, "context too long")
        if agent_of(body) == "reviewer":
            return Reply.answer(f"review {next(rounds)}\n{review()}")
        return Reply.answer(f"answer {next(rounds)}")

    server.responder = respond
    answers = iter(
        [GateAnswer("send_back", note="look at the error paths"), GateAnswer("continue")]
    )

    async def person(waiting: GateWaiting) -> GateAnswer:
        return next(answers)

    runner, _ = graph_runner(server, text, folder, gate_asker=person)
    assert (await runner.run()).status == "error"
    request = resume_request(load_run(Path(str(RunIndex().get(runner.run_id).path))))  # type: ignore[union-attr]

    async def nobody(waiting: GateWaiting) -> GateAnswer:
        raise AssertionError("the gate was asked again")

    before = len(server.requests)
    events: list[Event] = []
    resumed_run = Runner(
        request, settings=server.settings(), listeners=[events.append], gate_asker=nobody
    )
    result = await resumed_run.run()
    assert result.status == "ok", result.error
    return events, [r.user_text for r in server.requests[before:]]


async def test_resume_past_a_step_sent_back_hands_on_what_came_back(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events, tasks = await resume_past_a_send_back(llm_server, GATED, tmp_path, "Ship")
    assert tasks == ["Ship: answer 2"]  # not the answer the person sent back
    assert labels(events) == [("draft", None, True), ("draft", None, True), ("ship", None, False)]


async def test_resume_past_a_gated_step_that_finished_still_sends_back_as_before(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The gated step is reused, but what comes later reads the step sent back."""
    text = GATED + '  - {name: publish, agent: worker, task: "Publish {step.draft}"}\n'
    events, tasks = await resume_past_a_send_back(llm_server, text, tmp_path, "Publish")
    assert tasks == ["Publish answer 2"]
    assert [reused for _, _, reused in labels(events)] == [True, True, True, False]


async def test_resume_past_a_loop_sent_back_hands_on_its_extra_iteration(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    gated = LOOP.replace(
        "    after: [review]\n", '    after: [review]\n    gate: {question: "Ok?"}\n'
    )
    events, tasks = await resume_past_a_send_back(llm_server, gated, tmp_path, "Ship")
    assert len(tasks) == 1 and tasks[0].startswith("Ship it: review 3")
    assert labels(events) == [
        ("work", None, True),
        ("check", 1, True),
        ("check", 2, True),  # the iteration the person sent the loop back for
        ("ship", None, False),
    ]
