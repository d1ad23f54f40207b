"""Screenshots of graph pipelines for docs/guide/pipelines.md: a review loop in the Presets view,
a run waiting at a gate, and a best-of-3 run whose judge is picking.

The preset is a real file in a temporary user folder, opened in the real window. The runs are
the events a graph run publishes (``run_started`` with its graph, step events with ``node``,
``iteration`` and ``branch``, ``loop_*``, ``step_skipped``, ``gate_waiting``), fed live to a run
view, so the pictures show what the window shows during such a run. Everything happens in
temporary folders; run it under Xvfb so real fonts are used::

    xvfb-run -a .venv/bin/python docs/make_pipeline_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import open_window, scratch_home, settle  # noqa: E402

HOME = scratch_home("baton-pipelines")
GOAL = "add a --json flag"
SONNET = "claude-sonnet-4-5"

REVIEW_LOOP = """\
name: review-loop
description: The worker does it; a reviewer checks until nothing serious is left
argument-hint: "<what to do>"
mode: graph
steps:
  - name: work
    agent: worker
    task: "$@"
  # review → fix, at most three times, until no critical or major finding is left
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
    task: "Commit the change: {previous}"
    gate: {question: "Ship it?", timeout: 600, default: stop}
"""

BEST_OF = """\
name: best-of-3
description: Three attempts in three worktrees; a reviewer picks the one to keep
mode: graph
steps:
  - name: attempt
    agent: worker
    task: "$@"
    best_of: {n: 3, judge: pick}
  - name: pick
    agent: reviewer
    task: "Pick the best attempt: {outputs}"
  - name: keep
    agent: worker
    task: "Tidy up the kept change: {previous}"
    gate: {question: "Keep the winner's changes?"}
"""


class GraphRun:
    """Events of a graph run, as the runner publishes them (ts advancing a fake clock)."""

    def __init__(self, preset_text: str) -> None:
        from core.definitions.pipeline_graph import pipeline_graph
        from core.definitions.presets import parse_preset_text
        from core.model.events import PlannedStep, RunStarted
        from tests.gui.run_events import RunBuilder

        preset = parse_preset_text(preset_text)
        self.graph = pipeline_graph(preset)
        self.b = RunBuilder()
        self.b._agents = [node.agent for node in self.graph.nodes]
        self.agents = {node.name: node.agent for node in self.graph.nodes}
        cwd = str(HOME / "todo-app")
        planned = [
            PlannedStep(agent=node.agent, task=GOAL, model=SONNET, cwd=cwd, node=node.name)
            for node in self.graph.nodes
        ]
        self.b.events.append(
            RunStarted(run_id=self.b.run_id, mode="graph", preset=preset.name, args=[GOAL],
                       steps=planned, cwd=cwd, started_at="2026-12-04T10:14:05+01:00",
                       graph=self.graph.model_dump())
        )  # fmt: skip
        self.first_run = {node.name: index for index, node in enumerate(self.graph.nodes)}
        """A node's first run is its planned step; later runs (iterations, attempts) are new
        steps after the planned ones, as the graph runner numbers them."""
        self.steps = len(self.graph.nodes)

    def step(
        self,
        node: str,
        answer: str,
        *,
        iteration: int | None = None,
        branch: str | None = None,
        finish: bool = True,
        structured: dict[str, Any] | None = None,
    ) -> int:
        from core.model.events import StepStarted

        b = self.b
        if node in self.first_run:
            index = self.first_run.pop(node)
        else:
            index = self.steps
            self.steps += 1
            b._agents.append(self.agents[node])
        b.events.append(
            StepStarted(run_id=b.run_id, step=index, ts=b._ts(0.5), agent=self.agents[node],
                        task=GOAL, model=SONNET, cwd=str(HOME / "todo-app"), node=node,
                        iteration=iteration, branch=branch)
        )  # fmt: skip
        b.text(index, answer, size=40)
        b.usage(index, SONNET, 2400, 380, 0.0093)
        if finish:
            b.step_finished(index, output=answer, structured=structured)
        return index

    def add(self, event_type: str, **fields: Any) -> None:
        from core.model import events

        cls = {
            "loop_iteration_started": events.LoopIterationStarted,
            "loop_finished": events.LoopFinished,
            "step_skipped": events.StepSkipped,
            "gate_waiting": events.GateWaiting,
        }[event_type]
        self.b.events.append(cls(run_id=self.b.run_id, ts=self.b._ts(0.1), **fields))


def review_loop_at_the_gate() -> list[Any]:
    run = GraphRun(REVIEW_LOOP)
    run.step("work", "Added `--json` to `todo list`; the items print as a JSON array.")
    run.add("loop_iteration_started", loop="review", iteration=1)
    run.step("check", "**1 major**: `--json` ignores `--done`.", iteration=1)
    run.step("fix", "`--json` now honours `--done`; added a test.", iteration=1)
    run.add("loop_iteration_started", loop="review", iteration=2)
    run.step("check", "No critical or major findings. 1 minor: a docstring.", iteration=2)
    run.add("step_skipped", node="fix", iteration=2, condition="check.max_severity >= major",
            reason="check.max_severity >= major is false (minor)")  # fmt: skip
    run.add("loop_finished", loop="review", iterations=2, status="converged",
            summary="converged after 2 iterations: 1 minor left")  # fmt: skip
    run.add(
        "gate_waiting",
        gate_id="ship#1",
        node="ship",
        question="Ship it?",
        handoff=(
            "No critical or major findings.\n\n- minor: `cmd_list` lacks a docstring for the "
            "new flag.\n\nThe change: `todo list --json [--done]` prints the items as a JSON "
            "array; tests in tests/test_cli.py."
        ),
        timeout_s=600,
        default="stop",
        options=["continue", "edit", "send_back", "stop"],
    )
    return run.b.events


def best_of_judging() -> list[Any]:
    run = GraphRun(BEST_OF)
    answers = (
        "Added `--json` with `json.dumps(items)`; 2 tests.",
        "Added `--json` and `--pretty`; refactored the printer; 5 tests.",
        "Added `--json`; it fails on items with dates (not serialisable).",
    )
    for number, answer in enumerate(answers, start=1):
        run.step("attempt", answer, branch=f"attempt#{number}")
    run.step("pick", "Attempt 2 is the most complete and its tests pass.", finish=False)
    return run.b.events


def shoot_preset(output: Path) -> None:
    presets = HOME / "home/.config/baton/presets"
    presets.mkdir(parents=True, exist_ok=True)
    path = presets / "review-loop.yaml"
    path.write_text(REVIEW_LOOP, encoding="utf-8")
    window = open_window(HOME, "presets", 1300, 840)
    view = window.presets_view
    view.splitter.setSizes([250, 1050])  # room for the whole graph above the text
    settle(300, lambda: view.preset_list.item_for_path(str(path)) is not None)
    view.preset_list.select_path(str(path))
    settle(400, lambda: view.editor.path() == path)
    view.step_form.select_step(2)
    settle(200)
    window.grab().save(str(output / "pipeline-loop.png"))
    print(output / "pipeline-loop.png")
    window.close()


def shoot_run(output: Path, name: str, events: list[Any], height: int) -> None:
    from gui.run.run_view import RunView

    view = RunView()
    view.resize(1200, height)
    view.show()
    view.add_events(events)
    settle(500, lambda: view.state().events == len(events))
    view.scroll_area.verticalScrollBar().setValue(0)
    settle(200)
    view.grab().save(str(output / name))
    print(output / name)
    view.close()


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    (HOME / "todo-app").mkdir(exist_ok=True)
    from PySide6.QtWidgets import QApplication

    from gui.app import create_application

    app = create_application(sys.argv[:1])
    assert isinstance(app, QApplication)
    shoot_preset(output)
    shoot_run(output, "pipeline-gate.png", review_loop_at_the_gate(), 820)
    shoot_run(output, "pipeline-best-of.png", best_of_judging(), 640)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
