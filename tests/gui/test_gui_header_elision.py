"""A narrow run view cuts the usage figures before a step's agent name or the run's progress:
what a header is about stays readable; the figures are whole in their tooltips."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gui.run.run_view import RunView
from gui.run.step_pane import StepPane
from tests.gui.run_events import finished_chain, running_parallel


def test_usage_gives_way_before_the_agent_name_and_the_progress(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(running_parallel(done=3, running=0))
    view.resize(600, 700)  # the run view of an 800 px window with the sidebar
    panes = view.panes()

    def settled(pane: StepPane) -> bool:
        """Laid out at the narrow width: the usage cut, the agent's name whole."""
        return pane.agent.text() == "reviewer" and pane.usage.text().endswith("…")

    qtbot.waitUntil(lambda: all(settled(pane) for pane in panes))
    assert all(pane.usage.toolTip() == pane.usage.full_text() for pane in panes)
    header = view.header
    view.resize(420, 700)  # narrower still: the run's figures give way, its progress not
    qtbot.waitUntil(lambda: header.usage.text() != header.usage.full_text())
    assert header.progress.text() == header.progress.full_text() == "3/3 done"
    assert not header.cancel_button.isVisible()  # a finished run: its room goes to the title


def test_a_parallel_task_s_column_keeps_the_agent_name_whole(qtbot: QtBot, view: RunView) -> None:
    view.load_events(running_parallel(done=2, running=1))
    view.resize(1000, 700)  # two columns of about 470 px, as in a 1200 px window
    panes = view.panes()
    qtbot.waitUntil(lambda: all(p.usage.text().endswith("…") for p in panes))
    qtbot.waitUntil(lambda: all(p.agent.text() == "reviewer" for p in panes))
    assert panes[0].width() < 500


def test_the_start_time_reads_whole_under_the_figures_at_800_px(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(finished_chain())
    view.resize(600, 700)
    started = view.header.started
    qtbot.waitUntil(lambda: started.full_text().startswith("·  started"))
    qtbot.waitUntil(lambda: started.text() == started.full_text())
