"""A graph run's trace: each step span says which node, loop iteration and best-of attempt it
ran; gates (the wait and the person's decision), skipped steps, loop iterations and a best-of's
pick are events on the workflow span; what a person typed at a gate is a length unless message
content is captured, and a secret in it reaches no span either way."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.extras import extra_missing

try:
    from opentelemetry.sdk.trace import ReadableSpan
except ImportError as error:
    extra_missing("otel", error)

from core.model.events import (
    BestOfPicked,
    Event,
    GateDecided,
    GateWaiting,
    LoopFinished,
    LoopIterationStarted,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
)
from core.telemetry.export import otlp_json
from core.telemetry.spans import spans_of_run
from tests.graph_runs import by_agent, graph_runner
from tests.llm_server import LLMServer

pytestmark = pytest.mark.otel
RUN = "r-otel-graph"
PERSON_OPTIONS = ["continue", "edit", "send_back", "stop"]
EDIT = "rewritten by hand for the release"
NOTE = "shorter, and name the owner"
QUESTION = "Ship the draft?"


def step(number: int, ts: float, node: str, **where: Any) -> list[Event]:
    """A step that ran (started and finished) as ``node``, in a loop's iteration or as an
    attempt (``branch``)."""
    agent = "reviewer" if node == "review" else "worker"
    return [
        StepStarted(
            run_id=RUN, step=number, ts=ts, agent=agent, task=f"{node} task", cwd=".",
            node=node, **where,
        ),
        StepFinished(
            run_id=RUN, step=number, ts=ts + 0.05, status="ok", output=f"{node} answer",
            node=node, **where,
        ),
    ]  # fmt: skip


def graph_run(edit: str = EDIT, note: str = NOTE, handoff: str = "work answer") -> list[Event]:
    """A review loop that converges in its second iteration, a step skipped by its condition,
    a gate sent back once and then edited, and a best-of-2 the person picks from."""
    planned = [PlannedStep(agent="worker", task="t", cwd=".", node=n) for n in ("work", "ship")]
    return [
        RunStarted(
            run_id=RUN, mode="graph", preset="review-then-ship", steps=planned, cwd=".",
            started_at="2026-01-01T00:00:00+00:00",
        ),
        LoopIterationStarted(run_id=RUN, ts=0.1, loop="fix", iteration=1),
        *step(0, 0.1, "work", iteration=1),
        *step(1, 0.2, "review", iteration=1),
        LoopIterationStarted(run_id=RUN, ts=0.3, loop="fix", iteration=2),
        *step(2, 0.3, "work", iteration=2),
        *step(3, 0.4, "review", iteration=2),
        LoopFinished(
            run_id=RUN, ts=0.5, loop="fix", iterations=2, status="converged",
            summary="converged after 2 iterations",
        ),
        StepSkipped(
            run_id=RUN, step=4, ts=0.5, node="escalate", condition="review.count(critical) > 0",
            reason="the condition is false",
        ),
        GateWaiting(
            run_id=RUN, step=5, ts=0.6, gate_id="ship#1", node="ship", question=QUESTION,
            handoff=handoff, timeout_s=600, default="stop", options=PERSON_OPTIONS,
        ),
        GateDecided(
            run_id=RUN, step=5, ts=0.7, gate_id="ship#1", decision="send_back", note=note,
        ),
        *step(6, 0.7, "work"),
        GateWaiting(
            run_id=RUN, step=5, ts=0.8, gate_id="ship#2", node="ship", question=QUESTION,
            handoff=handoff, default="stop", options=PERSON_OPTIONS,
        ),
        GateDecided(
            run_id=RUN, step=5, ts=0.9, gate_id="ship#2", decision="edit", text=edit,
        ),
        *step(5, 0.9, "ship"),
        *step(7, 1.0, "polish", branch="polish#1"),
        *step(8, 1.0, "polish", branch="polish#2"),
        GateWaiting(
            run_id=RUN, step=7, ts=1.1, gate_id="polish#3", node="polish",
            question="Which attempt of 'polish' should be kept?",
            handoff="## polish#1\n\npolish answer", options=["polish#1", "polish#2"],
        ),
        GateDecided(
            run_id=RUN, step=7, ts=1.2, gate_id="polish#3", decision="continue", text="polish#2",
        ),
        BestOfPicked(run_id=RUN, ts=1.2, node="polish", winner="polish#2", by="person"),
        RunFinished(run_id=RUN, ts=1.3, status="ok"),
    ]  # fmt: skip


def workflow(spans: list[ReadableSpan]) -> ReadableSpan:
    (root,) = [span for span in spans if span.parent is None]
    return root


def run_events(spans: list[ReadableSpan], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    return [
        (event.name, dict(event.attributes or {}))
        for event in workflow(spans).events
        if event.name.startswith(prefix)
    ]


def test_step_spans_say_which_node_iteration_and_attempt_they_ran() -> None:
    spans = spans_of_run(graph_run())
    ran = sorted(
        (
            span.attributes.get("baton.step.index"),
            span.attributes.get("baton.step.node"),
            span.attributes.get("baton.step.iteration"),
            span.attributes.get("baton.step.branch"),
        )
        for span in spans
        if span.attributes is not None and span.name.startswith("invoke_agent")
    )
    assert ran == [
        (0, "work", 1, None),
        (1, "review", 1, None),
        (2, "work", 2, None),
        (3, "review", 2, None),
        (5, "ship", None, None),
        (6, "work", None, None),
        (7, "polish", None, "polish#1"),
        (8, "polish", None, "polish#2"),
    ]


def test_loops_skipped_steps_and_a_best_of_pick_are_events_on_the_workflow_span() -> None:
    spans = spans_of_run(graph_run())
    assert run_events(spans, "baton.loop") == [
        ("baton.loop.iteration", {"baton.loop.name": "fix", "baton.loop.iteration": 1}),
        ("baton.loop.iteration", {"baton.loop.name": "fix", "baton.loop.iteration": 2}),
        (
            "baton.loop.finished",
            {
                "baton.loop.name": "fix",
                "baton.loop.iterations": 2,
                "baton.loop.status": "converged",
                "baton.loop.summary": "converged after 2 iterations",
            },
        ),
    ]
    assert run_events(spans, "baton.step.skipped") == [
        (
            "baton.step.skipped",
            {
                "baton.step.node": "escalate",
                "baton.step.index": 4,
                "baton.skip.condition": "review.count(critical) > 0",
                "baton.skip.reason": "the condition is false",
            },
        )
    ]
    assert run_events(spans, "baton.best_of") == [
        (
            "baton.best_of.picked",
            {
                "baton.best_of.node": "polish",
                "baton.best_of.winner": "polish#2",
                "baton.best_of.picked_by": "person",
            },
        )
    ]
    root = workflow(spans)
    start, end = root.start_time or 0, root.end_time or 0
    assert all(start <= (event.timestamp or 0) <= end for event in root.events)


def test_a_gate_is_its_wait_and_the_persons_decision_with_lengths_not_text() -> None:
    spans = spans_of_run(graph_run())
    gates = run_events(spans, "baton.gate")
    assert [name for name, _ in gates] == ["baton.gate.waiting", "baton.gate.decided"] * 3
    waiting = gates[0][1]
    assert waiting == {
        "baton.gate.id": "ship#1",
        "baton.gate.node": "ship",
        "baton.gate.default": "stop",
        "baton.gate.handoff_length": len("work answer"),
        "baton.step.index": 5,
        "baton.gate.timeout_s": 600,
    }
    sent_back, edited, picked = gates[1][1], gates[3][1], gates[5][1]
    assert sent_back == {
        "baton.gate.id": "ship#1",
        "baton.gate.decision": "send_back",
        "baton.gate.decided_by": "person",
        "baton.gate.node": "ship",
        "baton.step.index": 5,
        "baton.gate.note_length": len(NOTE),
    }
    assert (edited["baton.gate.decision"], edited["baton.gate.edit_length"]) == ("edit", len(EDIT))
    assert "baton.gate.edit" not in edited
    assert (picked["baton.gate.picked"], picked["baton.gate.node"]) == ("polish#2", "polish")
    everything = "\n".join(span.to_json() for span in spans)
    for content in (EDIT, NOTE, QUESTION, "work answer"):
        assert content not in everything


def test_with_content_captured_the_gate_says_what_the_person_wrote() -> None:
    gates = run_events(spans_of_run(graph_run(), capture_content=True), "baton.gate")
    assert gates[0][1]["baton.gate.question"] == QUESTION
    assert gates[1][1]["baton.gate.note"] == NOTE
    assert gates[3][1]["baton.gate.edit"] == EDIT
    assert "baton.gate.handoff" not in gates[0][1]  # the previous step's answer is on its span


@pytest.mark.parametrize("capture", [False, True])
def test_attack_a_secret_planted_in_a_gate_edit_reaches_no_span(
    monkeypatch: pytest.MonkeyPatch, capture: bool
) -> None:
    """The events come unredacted (an imported file): the edit, the note and the hand-off
    carry a key, and only the export's own scrubbing stands between it and the receiver."""
    secret = f"sk-gate-{secrets.token_hex(12)}"
    monkeypatch.setenv("GATE_TEST_API_KEY", secret)
    events = graph_run(
        edit=f"{EDIT}; deploy with {secret}", note=f"use {secret}", handoff=f"key {secret}"
    )
    document = otlp_json(events, capture_content=capture)
    assert '"baton.gate.edit_length"' in document
    assert secret not in document and secret[-12:] not in document
    assert (EDIT in document) is capture  # the words around the key only as content
    if capture:
        assert "deploy with [redacted]" in document


async def test_a_gated_graph_run_exports_the_persons_edit_as_a_length(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through the runner: a person edits the hand-off at a real gate, pasting a
    key; the trace says an edit of that length was handed on, and nowhere the key."""
    secret = f"tok-gate-{secrets.token_hex(12)}"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    gated = (
        "name: gated\nmode: graph\nsteps:\n"
        '  - {name: draft, agent: worker, task: "Draft: $@"}\n'
        '  - {name: ship, agent: worker, task: "Ship: {previous}", gate: {question: "Ship?"}}\n'
    )
    runner, events = graph_runner(llm_server, gated, tmp_path)
    run = asyncio.create_task(runner.run())
    while not any(isinstance(e, GateWaiting) for e in events):
        assert not run.done(), "the run ended without its gate"
        await events.next_arrival(run)
    (waiting,) = [e for e in events if isinstance(e, GateWaiting)]
    runner.decide_gate(waiting.gate_id, "edit", text=f"{EDIT}, key {secret}")
    assert (await run).status == "ok"
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert decided.text is not None and secret not in decided.text
    for capture in (False, True):
        document = otlp_json(events, capture_content=capture)
        spans = [
            s
            for r in json.loads(document)["resourceSpans"]
            for sc in r["scopeSpans"]
            for s in sc["spans"]
        ]
        root = next(s for s in spans if not s.get("parentSpanId"))
        gate_events = {e["name"]: e for e in root["events"] if e["name"].startswith("baton.gate")}
        attributes = {a["key"]: a["value"] for a in gate_events["baton.gate.decided"]["attributes"]}
        assert attributes["baton.gate.decision"] == {"stringValue": "edit"}
        assert attributes["baton.gate.decided_by"] == {"stringValue": "person"}
        assert attributes["baton.gate.edit_length"] == {"intValue": str(len(decided.text))}
        assert "baton.gate.waiting" in gate_events
        nodes = [
            a["value"]["stringValue"]
            for s in spans
            for a in s["attributes"]
            if s["name"] == "invoke_agent worker" and a["key"] == "baton.step.node"
        ]
        assert sorted(nodes) == ["draft", "ship"]
        assert secret not in document
        assert (EDIT in document) is capture
