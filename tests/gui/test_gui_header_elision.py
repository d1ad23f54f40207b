"""A narrow run view cuts the usage figures before a step's agent name or the run's progress:
what a header is about stays readable; the figures are whole in their tooltips."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gui.run.run_view import RunView
from gui.run.step_pane import StepPane
from tests.gui.run_events import running_parallel


def test_usage_gives_way_before_the_agent_name_and_the_progress(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(running_parallel(done=3, running=0))
    view.resize(600, 700)  # the run view of an 800 px window with the sidebar
    panes = view.panes()

    def settled(pane: StepPane) -> bool:
        """Laid out at the narrow width: the usage cut, the agent's name and model whole."""
        whole = pane.agent.text() == "reviewer" and pane.model.text() == pane.model.full_text()
        return whole and pane.usage.text().endswith("…")

    qtbot.waitUntil(lambda: all(settled(pane) for pane in panes))
    assert all(pane.usage.toolTip() == pane.usage.full_text() for pane in panes)
    header = view.header
    qtbot.waitUntil(lambda: header.usage.text() != header.usage.full_text())
    assert header.progress.text() == header.progress.full_text() == "3/3 done"
    assert not header.cancel_button.isVisible()  # a finished run: its room goes to the title
