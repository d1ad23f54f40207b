"""Usage charts: per-step bars in the run header, and History's days and agents — drawn with
the run's own numbers."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.cli import main
from core.config.settings import save_settings
from core.record.run_files import RunIndex
from gui.run.run_view import RunView
from gui.window.main_window import MainWindow
from tests.gui.run_events import finished_chain
from tests.llm_server import LLMServer, Reply, Tokens


def test_the_run_header_draws_each_steps_tokens_and_cost(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    header = view.header
    assert header.charts is None  # built on first use
    qtbot.mouseClick(header.charts_button, Qt.MouseButton.LeftButton)
    charts = header.charts
    assert charts is not None and charts.isVisible()
    steps = view.state().steps
    assert charts.tokens.labels() == [f"{s.index + 1} {s.agent}" for s in steps]
    drawn = charts.tokens.values()
    assert drawn["input"] == [s.usage.input for s in steps]
    assert drawn["output"] == [s.usage.output for s in steps]
    assert charts.cost.values() == {"cost": [s.usage.cost for s in steps]}
    qtbot.mouseClick(header.charts_button, Qt.MouseButton.LeftButton)
    assert not charts.isVisible()


def test_history_charts_days_and_agents_from_the_index(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer, tmp_path
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(
        Reply.answer("found", tokens=Tokens(1000, 100)),
        Reply.answer("planned", tokens=Tokens(3000, 300)),
    )
    chain = ["--chain", "scout=find", "planner=plan {previous}"]
    assert main(["run", *chain, "--cwd", str(tmp_path)]) == 0
    by_agent = RunIndex().usage_by_agent()
    assert (by_agent["scout"].input, by_agent["planner"].input) == (1000, 3000)

    window = make_window()
    window.show_view("runs")
    history = window.runs_view.history
    qtbot.mouseClick(history.charts_button, Qt.MouseButton.LeftButton)
    assert history.day_charts is not None and history.agent_charts is not None
    assert sorted(history.agent_charts.tokens.labels()) == ["planner", "scout"]
    inputs = dict(
        zip(
            history.agent_charts.tokens.labels(),
            history.agent_charts.tokens.values()["input"],
            strict=True,
        )
    )
    assert inputs == {"scout": 1000, "planner": 3000}
    assert len(history.day_charts.tokens.labels()) == 1
    assert history.day_charts.tokens.values()["input"] == [4000]
