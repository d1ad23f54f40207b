"""What the window says, in proper words: counted nouns, a single reused step, a one-step
chain, a budget stop the person chose, and every model a run used."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from core.model.events import PlannedStep
from core.model.words import counted, step_range
from gui.run.rerun_dialog import RerunDialog
from gui.run.run_view import RunView
from tests.gui.run_events import HAIKU, SONNET, RunBuilder


def test_counted_nouns_and_step_ranges() -> None:
    assert counted(1, "file") == "1 file" and counted(3, "file") == "3 files"
    assert counted(0, "step") == "0 steps" and counted(2, "child", "children") == "2 children"
    assert step_range(1, 1) == "Step 1" and step_range(1, 3) == "Steps 1 to 3"


def test_re_run_from_step_2_says_step_1_is_reused(qtbot: QtBot) -> None:
    planned = PlannedStep(agent="worker", task="fix it", model="m", cwd="/tmp")
    dialog = RerunDialog(1, planned, ["worker"], ["m"])
    qtbot.addWidget(dialog)
    texts = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "Step 1 is reused from this run" in texts
    assert "Steps 1 to 1" not in texts


def _one_step_chain(status: str = "ok", error: str | None = None) -> RunBuilder:
    b = RunBuilder("run-one")
    b.start("chain", [("worker", "do it", SONNET)])
    b.step_started(0, "do it", SONNET).usage(0, SONNET, 1000, 100, 0.01)
    b.step_finished(0, status=status, output="done" if status == "ok" else "", error=error)
    b.run_finished(status, error)
    return b


def test_a_one_step_chain_is_a_chain_of_1_step(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.load_events(_one_step_chain().events)
    assert view.header.progress.full_text() == "chain of 1 step"


def test_a_budget_stop_reads_stopped_at_budget_not_failed(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    reason = "budget reached: 2,100 tokens used of a 2,000 cap"
    view.load_events(_one_step_chain("error", reason).events)
    assert view.state().stopped_at_budget()
    assert view.header.status_text() == "Stopped at budget"
    assert view.header.banner.kind() == "info"  # not the red failure banner


def test_a_real_failure_still_reads_failed(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.load_events(_one_step_chain("error", "HTTP 500 three times").events)
    assert view.header.status_text() == "Failed"


def test_the_header_names_every_model_the_steps_used(qtbot: QtBot) -> None:
    b = RunBuilder("run-two-models")
    b.start("chain", [("scout", "look", HAIKU), ("worker", "do", SONNET)])
    for step, model in enumerate((HAIKU, SONNET)):
        b.step_started(step, "x", model).usage(step, model, 1000, 100, 0.01)
        b.step_finished(step, output="ok")
    b.run_finished()
    view = RunView()
    qtbot.addWidget(view)
    view.load_events(b.events)
    assert view.header.usage.full_text().endswith(f"{HAIKU}, {SONNET}")
