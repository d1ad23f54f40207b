"""Graph runs against the scripted server: loops that converge or hit their bound, conditions
that skip, fan-in hand-offs, gates answered by the window (decide_gate) and by an asker."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import TypeVar

import pytest

from core.history.run_export import run_to_markdown
from core.model.events import (
    Event,
    GateDecided,
    GateWaiting,
    LoopFinished,
    LoopIterationStarted,
    RunStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
)
from core.record.run_files import RunIndex, load_run
from core.record.run_state import fold
from core.run.gates import GateAnswer, GateUnanswerable
from tests.graph_runs import EventLog, by_agent, graph_runner, review
from tests.llm_server import LLMServer, Reply, last_user_text

LOOP = """\
name: review-loop
mode: graph
steps:
  - name: work
    agent: worker
    task: "Build: $@"
  - loop:
      name: review
      max_iterations: {bound}
      until: "check.count(critical) == 0 and check.count(major) == 0"
      steps:
        - name: check
          agent: reviewer
          task: "Review this work: {{previous}}"
        - name: fix
          agent: worker
          task: "Fix these: {{step.check}}"
          when: "check.max_severity >= major"
  - name: ship
    agent: worker
    task: "Ship it: {{previous}}"
    after: [review]
"""


T = TypeVar("T")


def of(events: list[Event], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


def started(events: list[Event]) -> list[tuple[str | None, int | None]]:
    return [(e.node, e.iteration) for e in events if isinstance(e, StepStarted)]


async def test_a_review_loop_converges_in_two_iterations(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    reviews = iter([review("major", "minor"), review("minor")])
    fixes = itertools.count(1)
    llm_server.responder = by_agent(
        {
            "worker": lambda task: (
                f"fixed round {next(fixes)}" if task.startswith("Fix") else f"did: {task}"
            ),
            "reviewer": lambda task: next(reviews),
        }
    )
    runner, events = graph_runner(llm_server, LOOP.format(bound=3), tmp_path)
    result = await runner.run()
    assert result.status == "ok", result.error
    assert started(events) == [
        ("work", None),
        ("check", 1),
        ("fix", 1),
        ("check", 2),
        ("ship", None),
    ]
    assert [(e.loop, e.iteration) for e in of(events, LoopIterationStarted)] == [
        ("review", 1),
        ("review", 2),
    ]
    (skipped,) = of(events, StepSkipped)
    assert isinstance(skipped, StepSkipped)
    assert (skipped.node, skipped.iteration) == ("fix", 2)
    assert skipped.condition == "check.max_severity >= major"
    (finished,) = of(events, LoopFinished)
    assert isinstance(finished, LoopFinished)
    assert (finished.status, finished.iterations) == ("converged", 2)
    tasks = [r.user_text for r in llm_server.requests]
    assert tasks[0] == "Build: the task"
    assert "a major problem" in tasks[2]  # fix got {step.check}
    assert tasks[3] == "Review this work: fixed round 1"  # the previous iteration's answer
    assert "a minor problem" in tasks[4]  # ship: the loop's last answer (check's)
    # Each execution has its own step, and the run file replays the labels.
    steps = fold(events).steps
    assert [s.node for s in steps] == ["work", "check", "fix", "ship", "check", "fix"]
    assert steps[5].phase == "not_run" and steps[5].iteration == 2
    assert steps[5].agent == "worker"  # a skipped iteration still says whose step it was
    assert steps[5].error == ("skipped: the condition is false (check.max_severity >= major)")
    record = RunIndex().get(runner.run_id)
    assert record is not None and load_run(Path(record.path)) == events
    exported = run_to_markdown(events)
    assert "## Step 5: check (reviewer), iteration 2 — ok" in exported
    assert "**Skipped:** the condition is false (check.max_severity >= major)" in exported
    first = events[0]
    assert isinstance(first, RunStarted) and first.mode == "graph"
    assert first.graph is not None and first.graph["loops"][0]["members"] == ["check", "fix"]


async def test_a_loop_at_its_bound_ends_with_a_status_not_a_failure(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.responder = by_agent(
        {"worker": lambda task: "done", "reviewer": lambda task: review("critical", "minor")}
    )
    runner, events = graph_runner(llm_server, LOOP.format(bound=2), tmp_path)
    result = await runner.run()
    assert result.status == "ok"
    (finished,) = of(events, LoopFinished)
    assert isinstance(finished, LoopFinished)
    assert finished.status == "max_iterations"
    assert finished.summary == "stopped after 2 iterations: 1 critical, 1 minor left"
    assert started(events)[-1] == ("ship", None)
    assert all(e.status == "ok" for e in of(events, StepFinished))


FAN = """\
name: fan-in
mode: graph
steps:
  - {{name: scout, agent: scout, task: "Look at: $@"}}
  - {{name: plan-a, agent: planner, task: "Plan A from {{previous}}", after: [scout]}}
  - name: plan-b
    agent: planner
    task: "Plan B from {{previous}}"
    after: [scout]
    when: "{when}"
  - name: merge
    agent: planner
    task: "Merge these:\\n{{outputs}}"
    after: [plan-a, plan-b]
"""


async def test_fan_in_gets_every_output_under_its_name(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.responder = by_agent(
        {
            "scout": lambda task: "found main.py",
            "planner": lambda task: "merged" if task.startswith("Merge") else task.upper(),
        }
    )
    runner, _ = graph_runner(llm_server, FAN.format(when="scout.status == done"), tmp_path)
    result = await runner.run()
    assert result.status == "ok", result.error
    merge = next(r.user_text for r in llm_server.requests if r.user_text.startswith("Merge"))
    assert "## plan-a\n\nPLAN A FROM FOUND MAIN.PY" in merge
    assert "## plan-b\n\nPLAN B FROM FOUND MAIN.PY" in merge


async def test_the_handoff_cap_applies_to_each_input(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.responder = by_agent(
        {
            "scout": lambda task: "found",
            "planner": lambda task: "merged" if task.startswith("Merge") else task[:6] * 400,
        }
    )
    settings = llm_server.settings(limits={"handoff_chars": 1000})
    runner, _ = graph_runner(
        llm_server, FAN.format(when="scout.status == done"), tmp_path, settings=settings
    )
    assert (await runner.run()).status == "ok"
    merge = next(r.user_text for r in llm_server.requests if r.user_text.startswith("Merge"))
    a, b = merge.split("## plan-b")
    for part, step in ((a, 2), (b, 3)):
        assert 1000 - 200 < len(part) < 1000 + 100  # each input capped on its own
        assert f"of step {step}'s answer left out here" in part


async def test_a_false_condition_skips_its_branch_and_says_which(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.responder = by_agent(
        {"scout": lambda task: "found", "planner": lambda task: task.upper()}
    )
    runner, events = graph_runner(llm_server, FAN.format(when="scout.status == failed"), tmp_path)
    result = await runner.run()
    assert result.status == "ok"
    (skipped,) = of(events, StepSkipped)
    assert isinstance(skipped, StepSkipped)
    assert (skipped.node, skipped.condition) == ("plan-b", "scout.status == failed")
    merge = next(r.user_text for r in llm_server.requests if r.user_text.startswith("Merge"))
    assert "## plan-a" in merge and "plan-b" not in merge
    assert fold(events).steps[2].phase == "not_run"


GATED = """\
name: gated
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - name: ship
    agent: worker
    task: "Ship: {previous}"
    gate: {question: "Ship it?", timeout: 600, default: stop}
"""


async def run_with_gate_answers(
    llm_server: LLMServer, tmp_path: Path, answers: list[tuple[str, str | None, str | None]]
) -> tuple[list[Event], list[str], str]:
    drafts = itertools.count(1)
    llm_server.responder = by_agent(
        {"worker": lambda task: f"draft {next(drafts)}" if task.startswith("Draft") else "shipped"}
    )
    runner, events = graph_runner(llm_server, GATED, tmp_path)
    run = asyncio.create_task(runner.run())
    answered: set[str] = set()
    for decision, text, note in answers:
        gate = await wait_for_gate(events, run, answered)
        answered.add(gate.gate_id)
        runner.decide_gate(gate.gate_id, decision, text=text, note=note)  # type: ignore[arg-type]
    result = await run
    return events, [r.user_text for r in llm_server.requests], result.status


async def wait_for_gate(
    events: EventLog, run: asyncio.Task[object], answered: set[str]
) -> GateWaiting:
    """The first gate not answered yet, looked for again at each event the run publishes."""
    while True:
        for event in events:
            if isinstance(event, GateWaiting) and event.gate_id not in answered:
                return event
        assert not run.done(), "the run ended without the gate"
        await events.next_arrival(run)


async def test_a_gate_continued_hands_on_what_was_there(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events, tasks, status = await run_with_gate_answers(
        llm_server, tmp_path, [("continue", None, None)]
    )
    assert status == "ok"
    (waiting,) = of(events, GateWaiting)
    assert isinstance(waiting, GateWaiting)
    assert (waiting.question, waiting.handoff, waiting.timeout_s) == ("Ship it?", "draft 1", 600)
    assert tasks == ["Draft: the task", "Ship: draft 1"]


async def test_a_gate_edit_is_handed_on_and_recorded_as_the_persons(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events, tasks, status = await run_with_gate_answers(
        llm_server, tmp_path, [("edit", "draft 1, but in French", None)]
    )
    assert status == "ok"
    assert tasks[-1] == "Ship: draft 1, but in French"
    (decided,) = of(events, GateDecided)
    assert isinstance(decided, GateDecided)
    assert (decided.decision, decided.text, decided.by) == (
        "edit",
        "draft 1, but in French",
        "person",
    )


async def test_a_gate_sent_back_reruns_the_previous_step_with_the_note(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events, tasks, status = await run_with_gate_answers(
        llm_server, tmp_path, [("send_back", None, "shorter please"), ("continue", None, None)]
    )
    assert status == "ok"
    assert tasks[1].startswith("Draft: the task") and "shorter please" in tasks[1]
    assert tasks[-1] == "Ship: draft 2"
    assert [e.handoff for e in of(events, GateWaiting)] == ["draft 1", "draft 2"]
    assert [s.node for s in fold(events).steps] == ["draft", "ship", "draft"]


async def test_a_gate_sends_back_at_most_five_times_then_stops_the_run(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The sixth send-back stops the run instead of running the step again unasked."""
    answers: list[tuple[str, str | None, str | None]] = [
        ("send_back", None, f"try {n}") for n in range(1, 7)
    ]
    events, tasks, status = await run_with_gate_answers(llm_server, tmp_path, answers)
    assert status == "aborted"
    assert "sent back 5 times" in (fold(events).error or "")
    assert tasks[0] == "Draft: the task"
    assert [t.rsplit("\n", 1)[-1] for t in tasks[1:]] == [f"try {n}" for n in range(1, 6)]
    assert len(of(events, GateWaiting)) == 6


async def test_a_gate_stopped_ends_the_run_before_the_step(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events, tasks, status = await run_with_gate_answers(
        llm_server, tmp_path, [("stop", None, None)]
    )
    assert status == "aborted"
    assert tasks == ["Draft: the task"]
    assert "stopped at the gate before 'ship'" in (fold(events).error or "")


async def test_a_gate_times_out_to_its_default(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.responder = by_agent({"worker": lambda task: "x"})
    text = GATED.replace("timeout: 600, default: stop", "timeout: 0.05, default: continue")
    runner, events = graph_runner(llm_server, text, tmp_path)
    result = await runner.run()
    assert result.status == "ok"
    (decided,) = of(events, GateDecided)
    assert isinstance(decided, GateDecided)
    assert (decided.decision, decided.by) == ("continue", "timeout")


async def test_an_asker_answers_and_an_unanswerable_gate_fails_with_the_reason(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.responder = by_agent({"worker": lambda task: "x"})

    async def nobody(waiting: GateWaiting) -> GateAnswer:
        raise GateUnanswerable("no terminal to ask on (pass --gate continue|stop)")

    runner, events = graph_runner(llm_server, GATED, tmp_path, gate_asker=nobody)
    result = await runner.run()
    assert result.status == "error"
    assert result.error == (
        "the gate before 'ship' needs a person: no terminal to ask on (pass --gate continue|stop)"
    )

    async def yes(waiting: GateWaiting) -> GateAnswer:
        return GateAnswer("continue", by="default")

    runner, events = graph_runner(llm_server, GATED, tmp_path, gate_asker=yes)
    assert (await runner.run()).status == "ok"
    (decided,) = of(events, GateDecided)
    assert isinstance(decided, GateDecided) and decided.by == "default"


@pytest.mark.parametrize("decision", ["send_back", "maybe"])
async def test_decide_gate_refuses_what_is_not_waiting(
    llm_server: LLMServer, tmp_path: Path, decision: str
) -> None:
    from core.run.gates import GateError

    runner, _ = graph_runner(llm_server, GATED, tmp_path)
    with pytest.raises(GateError, match="no gate 'ship#9' is waiting"):
        runner.decide_gate("ship#9", decision)  # type: ignore[arg-type]


async def test_cancel_ends_a_waiting_gate(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.responder = by_agent({"worker": lambda task: "x"})
    runner, events = graph_runner(llm_server, GATED, tmp_path)
    run = asyncio.create_task(runner.run())
    gate = await wait_for_gate(events, run, set())
    assert [g.gate_id for g in runner.gates.waiting] == [gate.gate_id]
    runner.cancel()
    result = await run
    assert (result.status, result.error) == ("aborted", "the run was cancelled")
    (decided,) = of(events, GateDecided)
    assert (decided.decision, decided.note) == ("stop", "the run was cancelled")
    assert runner.gates.waiting == []


async def test_a_gate_inside_a_loop_sends_back_the_step_before_it(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.responder = by_agent(
        {"reviewer": lambda task: review(), "worker": lambda task: "ok"}
    )
    text = LOOP.format(bound=2).replace(
        '          when: "check.max_severity >= major"',
        '          gate: {question: "Fix?"}',
    )
    runner, events = graph_runner(llm_server, text, tmp_path)
    run = asyncio.create_task(runner.run())
    answered: set[str] = set()
    for decision in ("send_back", "continue"):
        gate = await wait_for_gate(events, run, answered)
        answered.add(gate.gate_id)
        runner.decide_gate(gate.gate_id, decision, note="look again")
    assert (await run).status == "ok"
    assert started(events) == [
        ("work", None),
        ("check", 1),
        ("check", 1),  # sent back: the step before the gate, in the same iteration
        ("fix", 1),
        ("ship", None),
    ]
    assert "look again" in llm_server.requests[2].user_text


GATED_AFTER_LOOP = LOOP.format(bound=2).replace(
    "    after: [review]\n", '    after: [review]\n    gate: {question: "Ship it?"}\n'
)


async def test_a_gate_after_a_loop_sends_back_one_more_iteration_past_its_bound(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The loop converges at its bound (2); the person sends it back with a note: a third
    iteration runs (the bound limits the loop repeating on its own, not a person asking),
    its first step gets the note, and the gate asks again with the new answer."""
    reviews = iter([review("major"), review(), review()])
    rounds = itertools.count(1)
    llm_server.responder = by_agent(
        {
            "reviewer": lambda task: f"review {next(rounds)}\n{next(reviews)}",
            "worker": lambda task: "fixed" if task.startswith("Fix") else f"did: {task[:9]}",
        }
    )
    runner, events = graph_runner(llm_server, GATED_AFTER_LOOP, tmp_path)
    run = asyncio.create_task(runner.run())
    answered: set[str] = set()
    for decision, note in (("send_back", "look at the error paths"), ("continue", None)):
        gate = await wait_for_gate(events, run, answered)
        answered.add(gate.gate_id)
        runner.decide_gate(gate.gate_id, decision, note=note)  # type: ignore[arg-type]
    result = await run
    assert result.status == "ok", result.error

    assert started(events) == [
        ("work", None),
        ("check", 1),
        ("fix", 1),
        ("check", 2),
        ("check", 3),  # sent back: one more iteration, past max_iterations 2
        ("ship", None),
    ]
    assert [e.iteration for e in of(events, LoopIterationStarted)] == [1, 2, 3]
    assert [(e.status, e.iterations, e.summary) for e in of(events, LoopFinished)] == [
        ("converged", 2, "done after 2 iterations"),
        ("converged", 3, "done after 3 iterations"),
    ]
    checks = [r.user_text for r in llm_server.requests if r.user_text.startswith("Review")]
    assert "review 1" not in checks[2] and "review 2" in checks[2]  # the iteration before's
    assert checks[2].endswith(
        "A person sent this back to you with a note:\nlook at the error paths"
    )
    assert not any("error paths" in text for text in checks[:2])
    gates = of(events, GateWaiting)
    assert [g.handoff.split("\n")[0] for g in gates] == ["review 2", "review 3"]
    assert [(d.decision, d.note) for d in of(events, GateDecided)] == [
        ("send_back", "look at the error paths"),
        ("continue", None),
    ]
    assert llm_server.requests[-1].user_text.startswith("Ship it: review 3")
    # The run file replays every execution with its iteration.
    record = RunIndex().get(runner.run_id)
    assert record is not None and load_run(Path(record.path)) == events
    steps = fold(events).steps
    assert [(s.node, s.iteration, s.phase) for s in steps] == [
        ("work", None, "ok"),
        ("check", 1, "ok"),
        ("fix", 1, "ok"),
        ("ship", None, "ok"),
        ("check", 2, "ok"),
        ("fix", 2, "not_run"),
        ("check", 3, "ok"),
        ("fix", 3, "not_run"),
    ]


async def test_a_failed_branch_skips_what_waits_for_it_and_the_others_go_on(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    def respond(body: dict[str, object]) -> Reply:
        task = last_user_text(body)
        return Reply.error(400, "bad request") if task.startswith("Plan A") else Reply.answer("ok")

    llm_server.responder = respond
    runner, events = graph_runner(llm_server, FAN.format(when="scout.status == done"), tmp_path)
    result = await runner.run()
    assert result.status == "error"
    assert (result.error or "").startswith("step 'plan-a' failed")
    (skipped,) = of(events, StepSkipped)
    assert (skipped.node, skipped.reason) == ("merge", "it waits for 'plan-a', which failed")
    assert [e.node for e in of(events, StepFinished) if e.status == "ok"] == ["scout", "plan-b"]


async def test_an_answer_that_looks_like_placeholders_arrives_as_written(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    planted = "{outputs} {step.plan-a} {previous} $1 $@"
    llm_server.responder = by_agent(
        {"scout": lambda task: planted, "planner": lambda task: f"echo {task}"}
    )
    runner, _ = graph_runner(llm_server, FAN.format(when="scout.status == done"), tmp_path)
    assert (await runner.run()).status == "ok"
    tasks = [r.user_text for r in llm_server.requests]
    assert f"Plan A from {planted}" in tasks
    merge = next(t for t in tasks if t.startswith("Merge"))
    assert f"## plan-a\n\necho Plan A from {planted}" in merge


RESCUE = """\
name: rescue
mode: graph
steps:
  - {name: attempt, agent: worker, task: "Attempt: $@"}
  - name: rescue
    agent: worker
    task: "Rescue what was handed on: [{previous}] [{step.attempt}]"
    when: "attempt.status == failed"
"""


async def test_a_step_that_runs_after_a_failure_gets_no_placeholder_for_its_hand_off(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """A failed step hands nothing on: the step its failure starts reads an empty hand-off,
    never the template's ``{previous}`` (which a model would take for text to fill in)."""

    def respond(body: dict[str, object]) -> Reply:
        task = last_user_text(body)
        return Reply.error(400, "bad request") if task.startswith("Attempt") else Reply.answer("ok")

    llm_server.responder = respond
    runner, _events = graph_runner(llm_server, RESCUE, tmp_path)
    await runner.run()
    rescued = [r.user_text for r in llm_server.requests if r.user_text.startswith("Rescue")]
    assert rescued == ["Rescue what was handed on: [] []"]
