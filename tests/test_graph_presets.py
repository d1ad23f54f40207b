"""The graph form of presets: named steps, after:, when:, loops, gates, best_of — and what
validation refuses, with the line of the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.definitions.agents import discover_agents
from core.definitions.pipeline_graph import pipeline_graph
from core.definitions.preset_files import validate_preset_text
from core.definitions.presets import PresetError, check_agents, parse_preset_text
from core.model.events import (
    BestOfPicked,
    Event,
    GateDecided,
    GateWaiting,
    LoopFinished,
    LoopIterationStarted,
    StepSkipped,
    StepStarted,
    event_from_json,
    event_to_json,
)

REVIEW_LOOP = """\
name: review-loop
mode: graph
steps:
  - name: work
    agent: worker
    task: "$@"
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
    task: "Summarise {outputs}"
    after: [review]
    gate: {question: "Ship it?", timeout: 600, default: stop}
  - name: attempt
    agent: worker
    task: "Try: $@"
    after: []
    best_of: {n: 3, judge: pick}
  - name: pick
    agent: reviewer
    task: "Pick the best: {outputs}"
"""


def graph(body: str) -> str:
    return "name: g\nmode: graph\nsteps:\n" + body


def refused(text: str) -> PresetError:
    with pytest.raises(PresetError) as caught:
        parse_preset_text(text)
    return caught.value


def test_the_contract_example_parses_into_a_drawable_graph() -> None:
    preset = parse_preset_text(REVIEW_LOOP)
    assert [s.name for s in preset.steps] == ["work", "check", "fix", "ship", "attempt", "pick"]
    assert [s.loop for s in preset.steps] == [None, "review", "review", None, None, None]
    drawn = pipeline_graph(preset)
    edges = {(e.source, e.target): e.condition for e in drawn.edges}
    assert edges == {
        ("work", "check"): None,
        ("check", "fix"): "check.max_severity >= major",
        ("fix", "ship"): None,
        ("attempt", "pick"): None,
    }
    ship, attempt, pick = drawn.node("ship"), drawn.node("attempt"), drawn.node("pick")
    assert ship is not None and ship.gate
    assert attempt is not None and attempt.best_of == 3
    assert pick is not None and pick.kind == "judge"
    (loop,) = drawn.loops
    assert loop.members == ("check", "fix") and loop.max_iterations == 3


def test_gate_true_and_best_of_a_number_are_shorthands() -> None:
    preset = parse_preset_text(
        graph(
            "  - {name: a, agent: worker, task: x, best_of: 2}\n"
            "  - {name: b, agent: worker, task: y, gate: true}\n"
        )
    )
    assert preset.steps[0].best_of is not None and preset.steps[0].best_of.n == 2
    assert preset.steps[1].gate is not None and preset.steps[1].gate.default == "stop"


def test_fan_out_and_fan_in_make_a_merge_node() -> None:
    preset = parse_preset_text(
        graph(
            "  - {name: scout, agent: scout, task: x}\n"
            "  - {name: plan-a, agent: planner, task: a, after: [scout]}\n"
            "  - {name: plan-b, agent: planner, task: b, after: [scout]}\n"
            "  - {name: merge, agent: planner, task: '{outputs}', after: [plan-a, plan-b]}\n"
        )
    )
    drawn = pipeline_graph(preset)
    assert drawn.predecessors("merge") == ["plan-a", "plan-b"]
    merge = drawn.node("merge")
    assert merge is not None and merge.kind == "merge"


def test_old_forms_are_unchanged_and_refuse_graph_fields() -> None:
    chain = parse_preset_text("name: c\nsteps:\n  - {agent: a, task: x}\n  - {agent: b, task: y}\n")
    assert chain.mode == "chain" and chain.loops == []
    error = refused("name: c\nmode: chain\nsteps:\n  - {agent: a, task: x, when: 'a.passed'}\n")
    assert "belong to mode: graph" in str(error)


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        (
            "  - {name: a, agent: w, task: x, after: [c]}\n  - {name: b, agent: w, task: y}\n"
            "  - {name: c, agent: w, task: z}\n",
            None,
            "a cycle outside a loop",
        ),
        ("  - {name: a, agent: w, task: x, after: [nope]}\n", 4, "names 'nope'"),
        ("  - {name: a, agent: w, task: x}\n  - {agent: w, task: y}\n", None, "needs a name"),
        ("  - {name: Bad Name, agent: w, task: x}\n", None, "is not a step name"),
        ("  - {name: a, agent: w, task: x}\n  - {name: a, agent: w, task: y}\n", 4, "two items"),
        ("  - {name: a, agent: w, task: '{step.zz}'}\n", 4, "{step.zz} names no step"),
        (
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, after: [], when: 'a.passed'}\n",
            5,
            "does not run before it",
        ),
        (
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, when: 'a.max_severity >= 2'}\n",
            5,
            "cannot compare a severity with a number (column 56)",
        ),
        (
            "".join(f"  - {{name: s{i}, agent: w, task: x, after: []}}\n" for i in range(9)),
            None,
            "more than 8 steps would run at once",
        ),
        (
            "  - {name: a, agent: w, task: x, best_of: 5}\n"
            "  - {name: b, agent: w, task: y, best_of: 4, after: []}\n",
            None,
            "more than 8",
        ),
        (
            "  - loop:\n      name: l\n      max_iterations: 11\n      until: a.passed\n"
            "      steps:\n        - {name: a, agent: w, task: x}\n",
            None,
            "less than or equal to 10",
        ),
        (
            "  - loop:\n      name: l\n      until: zz.passed\n"
            "      steps:\n        - {name: a, agent: w, task: x}\n",
            6,
            "until: reads 'zz'",
        ),
        ("  - {name: a, agent: w, task: x, best_of: {n: 2, judge: a}}\n", None, "no other step"),
        (
            "  - loop:\n      name: l\n      until: b.passed\n      steps:\n"
            "        - {name: a, agent: w, task: x}\n"
            "        - {name: b, agent: w, task: y, after: [x]}\n"
            "  - {name: x, agent: w, task: z, after: [a]}\n",
            None,
            "a loop runs as a whole, but",
        ),
        (  # a step that can never run is named, not what waits only for it
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, when: 'a.status == skipped'}\n"
            "  - {name: c, agent: w, task: z}\n",
            5,
            "step 'b' can never run: when: 'a.status == skipped' is false however 'a' ends",
        ),
        (
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, when: 'a.status == done and a.status != done'}\n",
            5,
            "is false however 'a' ends",
        ),
        ("  - {name: a, agent: w, task: x, when: 'false'}\n", 4, "when: 'false' is always false"),
        (
            "  - {name: work, agent: w, task: x}\n"
            "  - loop:\n      name: review\n      until: check.passed\n      steps:\n"
            "        - {name: fix, agent: w, task: y, when: 'check.max_severity >= major'}\n"
            "        - {name: check, agent: r, task: z}\n",
            9,
            "step 'fix' can never run: when: 'check.max_severity >= major' is false however "
            "'check' ends ('check' comes after it in the loop: the first time, that has not run)",
        ),
        (
            "  - loop:\n      name: l\n      until: a.passed\n      steps:\n"
            "        - {name: a, agent: w, task: x, when: 'a.status == done'}\n",
            8,
            "(it reads itself in the loop: the first time, that has not run)",
        ),
    ],
)
def test_validation_refuses_with_the_line(body: str, line: int | None, words: str) -> None:
    error = refused(graph(body))
    assert words in str(error)
    if line is not None:
        assert error.line == line


@pytest.mark.parametrize(
    "body",
    [
        (  # an on-failure step: the step it reads may fail
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, when: 'a.status == failed'}\n"
        ),
        (  # a step with a condition may be skipped, and what reads that may run
            "  - {name: a, agent: w, task: x}\n"
            "  - {name: b, agent: w, task: y, when: 'a.passed'}\n"
            "  - {name: c, agent: w, task: z, after: [a, b], when: 'b.status == skipped'}\n"
        ),
        (  # the first time, the later member has not run: not passed, so the first step runs
            "  - loop:\n      name: l\n      until: check.passed\n      steps:\n"
            "        - {name: fix, agent: w, task: x, when: 'not check.passed'}\n"
            "        - {name: check, agent: r, task: y}\n"
        ),
        (  # a loop whose steps may all be skipped still ends, and what comes after runs
            "  - {name: a, agent: w, task: x}\n"
            "  - loop:\n      name: l\n      until: b.passed\n      steps:\n"
            "        - {name: b, agent: w, task: y, when: 'a.passed'}\n"
            "  - {name: c, agent: w, task: z, after: [l]}\n"
        ),
    ],
)
def test_a_step_some_outcome_starts_is_not_refused(body: str) -> None:
    parse_preset_text(graph(body))


def test_a_condition_error_has_its_column_in_the_file() -> None:
    text = graph(
        "  - {name: a, agent: w, task: x}\n"
        '  - name: b\n    agent: w\n    task: y\n    when: "a.status >= done"\n'
    )
    error = refused(text)
    assert error.line == 8
    assert error.column == text.split("\n")[7].index("a.status") + 1 + len("a.status ")


def test_conditions_on_steps_without_structured_output_are_refused(tmp_path: Path) -> None:
    agents = discover_agents(tmp_path, "user")
    text = graph(
        "  - {name: a, agent: scout, task: x}\n"
        "  - {name: b, agent: worker, task: y, when: 'a.count(major) > 0'}\n"
    )
    preset = parse_preset_text(text)
    with pytest.raises(PresetError, match="agent 'scout' declares no output"):
        check_agents(preset, agents)
    problems = validate_preset_text(text, agents)
    assert any("declares no output" in p.message and p.severity == "error" for p in problems)
    status_only = graph(
        "  - {name: a, agent: scout, task: x}\n"
        "  - {name: b, agent: worker, task: y, when: 'a.status == done'}\n"
    )
    check_agents(parse_preset_text(status_only), agents)


def test_the_editor_check_knows_previous_in_a_graph(tmp_path: Path) -> None:
    agents = discover_agents(tmp_path, "user")
    problems = validate_preset_text(
        graph(
            "  - {name: a, agent: scout, task: '{previous}'}\n"
            "  - {name: b, agent: worker, task: '{previous}'}\n"
        ),
        agents,
    )
    assert [p.message for p in problems] == [
        "Step 'a': {previous} has no value: nothing runs before it"
    ]


def test_graph_events_round_trip_and_step_events_carry_node_iteration_branch() -> None:
    events: list[Event] = [
        StepStarted(run_id="r", step=3, agent="w", task="t", cwd="/", node="fix", iteration=2),
        StepStarted(run_id="r", step=5, agent="w", task="t", cwd="/", branch="attempt#2"),
        StepSkipped(run_id="r", step=2, node="fix", condition="check.passed", reason="false"),
        LoopIterationStarted(run_id="r", loop="review", iteration=2),
        LoopFinished(
            run_id="r",
            loop="review",
            iterations=3,
            status="max_iterations",
            summary="stopped after 3 iterations: 1 critical left",
        ),
        GateWaiting(
            run_id="r",
            gate_id="ship#1",
            node="ship",
            question="Ship it?",
            handoff="h",
            timeout_s=600,
            default="stop",
            options=["continue", "edit", "send_back", "stop"],
        ),
        GateDecided(run_id="r", gate_id="ship#1", decision="edit", text="mine", by="person"),
        BestOfPicked(run_id="r", node="attempt", winner="attempt#2", by="judge"),
    ]
    for event in events:
        assert event_from_json(event_to_json(event)) == event


def test_a_hostile_long_chain_is_read_without_exhausting_the_stack() -> None:
    """Each step after the one listed below it: walked naively, 950 levels deep."""
    count = 950
    steps = "".join(
        f"  - {{name: s{i}, agent: w, task: x, after: [s{i + 1}]}}\n" for i in range(count - 1)
    )
    last = f"  - {{name: s{count - 1}, agent: w, task: x, after: []}}\n"
    drawn = pipeline_graph(parse_preset_text(graph(steps + last)))
    assert len(drawn.edges) == count - 1
    cyclic = last.replace("after: []", "after: [s0]")
    assert "a cycle outside a loop" in str(refused(graph(steps + cyclic)))


def test_baton_presets_lists_graphs_by_step_names_and_problems_show(
    user_presets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.cli import main
    from core.definitions.presets import agent_diagnostics, discover_presets

    (user_presets / "g.yaml").write_text(
        graph(
            "  - {name: look, agent: scout, task: x}\n"
            "  - {name: act, agent: worker, task: y, when: 'look.passed'}\n"
        ),
        encoding="utf-8",
    )
    assert main(["presets", "--cwd", str(tmp_path)]) == 0
    assert "look (scout), act (worker)" in capsys.readouterr().out
    catalog = discover_presets(tmp_path, "user")
    (problem,) = agent_diagnostics(catalog, discover_agents(tmp_path, "user"))
    assert problem.path.endswith("g.yaml") and "declares no output" in problem.message
