"""`baton run`'s transcript says what the window says: each step's folder when it is not the
run's, "reused from run …", who allowed a call ("allowed by the project rule …"), and a
structured result as a table rather than a line of JSON."""

from __future__ import annotations

import io

from core.model.events import (
    ApprovalResolved,
    Event,
    PlannedStep,
    RunStarted,
    StepFinished,
    StepStarted,
)
from core.terminal.output import TranscriptPrinter
from core.terminal.result_table import CELL_CHARS, result_table

RUN = "run-1"


def _print(events: list[Event]) -> str:
    out = io.StringIO()
    printer = TranscriptPrinter(out)
    for event in events:
        printer(event)
    return out.getvalue()


def _started(steps: int = 2) -> RunStarted:
    planned = [PlannedStep(agent="worker", task="t", cwd="/repo") for _ in range(steps)]
    return RunStarted(run_id=RUN, mode="chain", steps=planned, cwd="/repo", started_at="x")


def test_a_step_says_its_folder_when_it_is_not_the_runs_and_when_it_was_reused() -> None:
    text = _print(
        [
            _started(),
            StepStarted(
                run_id=RUN, step=0, agent="scout", task="t", cwd="/repo", reused_from="run-0"
            ),
            StepStarted(run_id=RUN, step=1, agent="worker", task="t", cwd="/repo/services/api"),
        ]
    )
    assert "  reused from run run-0 (no request)" in text
    assert "  in /repo/services/api" in text
    assert "  in /repo\n" not in text  # the run's own folder is said once, at the top


def test_who_allowed_a_call_is_said_and_a_prompt_answer_is_not_echoed() -> None:
    text = _print(
        [
            _started(1),
            ApprovalResolved(
                run_id=RUN,
                step=0,
                ts=1.0,
                request_id="r1",
                decision="approve",
                automatic=True,
                decided_by="rule",
                rule="allow Bash(git diff:*)",
                tool="bash",
                call_id="c1",
            ),
            ApprovalResolved(
                run_id=RUN, step=0, ts=2.0, request_id="r2", decision="approve", decided_by="person"
            ),
            ApprovalResolved(
                run_id=RUN,
                step=0,
                ts=3.0,
                request_id="r3",
                decision="approve",
                decided_by="person",
                updated_arguments={"command": "rm -rf build/cache"},
            ),
        ]
    )
    assert "  ✓ allowed by the project rule Bash(git diff:*)" in text
    assert "  ✓ approved by you, edited to: rm -rf build/cache" in text
    assert text.count("✓") == 2


def test_a_structured_result_is_a_table_not_json() -> None:
    result = {
        "verdict": "needs work",
        "score": 3,
        "tags": ["api", "tests"],
        "findings": [
            {"file": "app.py", "line": 12, "issue": "broad except"},
            {"file": "db.py", "line": 40, "issue": "x" * 200},
        ],
    }
    text = _print(
        [
            _started(1),
            StepFinished(run_id=RUN, step=0, ts=1.0, status="ok", structured=result),
        ]
    )
    assert '{"' not in text  # no raw JSON
    lines = text.splitlines()
    assert "  verdict  needs work" in lines and "  score    3" in lines
    assert "  tags     api, tests" in lines
    assert "  findings (2):" in lines
    header = next(line for line in lines if line.strip().startswith("file"))
    assert header.split() == ["file", "line", "issue"]
    assert any(line.split()[:2] == ["app.py", "12"] for line in lines)
    widest = max(len(line) for line in result_table(result))
    assert widest < CELL_CHARS * 3  # a long field is cut, the table stays readable
