"""Screenshots of steering for the README: the launch dialog's budget with an estimate from
earlier runs, the budget question, the inbox with the sidebar count, re-running from a step's
menu, and the usage per agent with a step's sub-agents.

Runs in temporary config and data folders (nothing of yours is read or changed); the earlier
runs behind the estimate are written to that temporary history. Run it under Xvfb so real
fonts are used::

    xvfb-run -a .venv/bin/python docs/make_steering_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import settle  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "gui"))

GOAL = "add a --json flag"


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["BATON_CONFIG_DIR"] = str(Path(home) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(home) / "data")
        os.environ["HOME"] = home
        project = Path(home) / "todo-app"
        project.mkdir()
        return _shoot(output, project)


def _earlier_runs(project: Path) -> None:
    """Three finished runs of ``implement`` in the history: the launch dialog's estimate."""
    from core.model.events import PlannedStep, RunFinished, RunStarted, UsageStats
    from core.record.run_files import RunIndex

    index = RunIndex()
    for number, (cost, tokens) in enumerate(((0.081, 41_000), (0.064, 35_500), (0.112, 58_200))):
        run_id = f"20261202-10{number}000-abc{number}"
        planned = [PlannedStep(agent="scout", task="t", cwd=str(project))]
        index.started(
            RunStarted(run_id=run_id, mode="chain", preset="implement", args=[GOAL],
                       steps=planned, cwd=str(project), started_at=f"2026-12-02T10:0{number}:00"),
            project / f"{run_id}.jsonl",
        )  # fmt: skip
        usage = UsageStats(turns=9, input=tokens - 4000, output=4000, cost=cost)
        index.finished(
            RunFinished(run_id=run_id, ts=60.0, status="ok", usage=usage),
            f"2026-12-02T10:0{number}:00",
        )


def _subagent_run() -> list[object]:
    from run_events import HAIKU, SONNET, RunBuilder

    from core.model.events import ToolCallFinished, ToolCallStarted

    b = RunBuilder()
    b.start(
        "chain",
        [("scout", f"Find all code relevant to: {GOAL}", HAIKU),
         ("planner", f'Create an implementation plan for "{GOAL}"', SONNET),
         ("worker", "Implement this plan", SONNET)],
        preset="implement", args=[GOAL],
    )  # fmt: skip
    b.step_started(0, f"Find all code relevant to: {GOAL}", HAIKU)
    b.tool(0, "grep", {"pattern": "add_argument", "path": "todo"}, "todo/cli.py:31")
    task = b.tool(0, "Task", {"subagent_type": "explorer", "prompt": "map the CLI"}, "mapped")
    for number, path in enumerate(("todo/cli.py", "todo/store.py", "tests/test_cli.py")):
        b.events.append(
            ToolCallStarted(run_id=b.run_id, step=0, ts=b.now + number, call_id=f"s{number}",
                            tool="read", arguments={"path": path}, parent_call_id=task)
        )  # fmt: skip
        b.events.append(
            ToolCallFinished(run_id=b.run_id, step=0, ts=b.now + number + 0.3,
                             call_id=f"s{number}", status="ok", result="…")
        )  # fmt: skip
    b.usage(0, "claude-haiku-4-5", 18_400, 1_100, 0.0239, parent_call_id=task)
    b.usage(0, HAIKU, 6_200, 640, 0.0094)
    b.text(0, "## Files Retrieved\n1. `todo/cli.py` — the argument parser")
    b.step_finished(0, output="Files Retrieved")
    b.step_started(1, f'Create an implementation plan for "{GOAL}"', SONNET)
    b.usage(1, SONNET, 9_800, 1_450, 0.0512)
    b.text(1, "## Plan\n1. Add `--json` to `list`.")
    b.step_finished(1, output="Plan")
    b.step_started(2, "Implement this plan", SONNET)
    b.tool(2, "edit", {"path": "todo/cli.py"}, "edited")
    b.tool(2, "bash", {"command": "python -m pytest -q"}, "12 passed")
    b.usage(2, SONNET, 14_100, 2_300, 0.0768)
    b.text(2, "## Completed\n`todo list --json` prints the items as JSON.")
    b.step_finished(2, output="Completed")
    b.run_finished()
    return list(b.events)


def _shoot(output: Path, project: Path) -> int:
    from PySide6.QtCore import QSettings

    from core.model.budget import BudgetQuestion, Caps
    from core.model.events import PlannedStep
    from core.run.attention import Attention
    from gui.app import create_application
    from gui.approvals.budget_dialog import BudgetDialog
    from gui.run.rerun_dialog import RerunDialog
    from gui.run.run_view import RunView
    from gui.window.main_window import MainWindow

    _app = create_application([])  # alive as long as this function runs
    _earlier_runs(project)

    window = MainWindow(
        project, QSettings(str(project.parent / "gui.ini"), QSettings.Format.IniFormat)
    )
    window.resize(1200, 720)
    window.show()
    dialog = window.open_launch_dialog("implement")
    dialog.args_edit.setText(GOAL)
    dialog.budget_fields.run_cost.setValue(0.25)
    dialog.budget_fields.step_tokens.setValue(40_000)
    dialog.resize(860, 760)
    settle(400)
    dialog.grab().save(str(output / "launch-budget.png"))
    dialog.close()

    question = BudgetQuestion("r", 2, "run", "cost", "$0.2513 spent of a $0.2500 cap",
                              Caps(max_cost=0.25))  # fmt: skip
    budget = BudgetDialog()
    budget.show_question(question, f"implement {GOAL}", 1)
    settle(400)
    budget.grab().save(str(output / "budget-question.png"))
    budget.clear_question()

    inbox = window.inbox
    for item in (
        Attention("budget", "b", "r1", 2, f"implement {GOAL}",
                  "the run cap is reached ($0.2513 spent of a $0.2500 cap)."),
        Attention("approval", "a", "r2", 0, "worker", "worker wants to use bash."),
        Attention("failed", "f", "r3", 1, "scout-and-plan retry logic",
                  "the provider answered 400: context too long"),
    ):  # fmt: skip
        inbox.items.add(item)
    inbox.changed.emit(inbox.count())
    window.show_view("inbox")
    settle(400)
    window.grab().save(str(output / "inbox.png"))

    task = "Implement this plan:\n\n{previous}"
    planned = PlannedStep(
        agent="worker", task=task, model="claude-sonnet-4-5", backend="claude", cwd=str(project)
    )
    rerun = RerunDialog(2, planned, ["scout", "planner", "worker", "reviewer"],
                        ["claude-sonnet-4-5", "claude-haiku-4-5"])  # fmt: skip
    rerun.show()
    settle(400)
    rerun.grab().save(str(output / "rerun-from-step.png"))
    rerun.close()

    view = RunView()
    view.resize(1100, 760)
    view.load_events(_subagent_run())  # type: ignore[arg-type]
    view.show()
    view.header.charts_button.click()
    settle(400)
    view.grab().save(str(output / "run-usage-rollup.png"))
    view.close()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
