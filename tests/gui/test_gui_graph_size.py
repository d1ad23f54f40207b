"""The graph view is as tall as its graph: a one-row chain leaves no empty band under it, a
graph wider than the view gets room for its scroll bar, a very tall one scrolls."""

from __future__ import annotations

from itertools import pairwise

import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from core.definitions.pipeline_graph import GraphEdge, GraphNode, PipelineGraph
from gui.run.run_view import RunView
from gui.widgets.graph_canvas import GraphView
from tests.gui.run_events import finished_chain


def chain(length: int) -> PipelineGraph:
    names = [f"step{i}" for i in range(length)]
    return PipelineGraph(
        nodes=tuple(GraphNode(name=name, agent="worker") for name in names),
        edges=tuple(GraphEdge(source=a, target=b) for a, b in pairwise(names)),
    )


def fan(width: int) -> PipelineGraph:
    """One node handing on to ``width`` others: a column ``width`` boxes tall."""
    return PipelineGraph(
        nodes=(
            GraphNode(name="scout", agent="scout"),
            *(GraphNode(name=f"w{i}", agent="worker") for i in range(width)),
        ),
        edges=tuple(GraphEdge(source="scout", target=f"w{i}") for i in range(width)),
    )


@pytest.fixture
def holder(qtbot: QtBot) -> QWidget:
    """A window the view sits at the top of, with room to spare below it."""
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


def _shown(qtbot: QtBot, holder: QWidget, graph: PipelineGraph, width: int) -> GraphView:
    view = GraphView(max_height=220)
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(view)
    layout.addStretch(1)
    view.set_graph(graph)
    holder.resize(width, 600)
    holder.show()
    qtbot.waitExposed(holder)
    return view


def test_a_one_row_chain_takes_only_its_own_height(qtbot: QtBot, holder: QWidget) -> None:
    view = _shown(qtbot, holder, chain(3), 1200)
    canvas = view.canvas
    qtbot.waitUntil(lambda: view.height() == canvas.height())
    assert not view.horizontalScrollBar().isVisible()


def test_a_graph_wider_than_the_view_gets_room_for_its_scroll_bar(
    qtbot: QtBot, holder: QWidget
) -> None:
    view = _shown(qtbot, holder, chain(12), 500)
    bar = view.horizontalScrollBar()
    qtbot.waitUntil(bar.isVisible)
    qtbot.waitUntil(lambda: view.height() >= view.canvas.height() + bar.height())
    assert bar.maximum() > 0  # the last steps are one scroll away, not cut off

    holder.resize(view.canvas.width() + 40, 600)  # room again: the band goes
    qtbot.waitUntil(lambda: view.height() == view.canvas.height())


def test_a_tall_graph_stops_at_the_maximum_and_scrolls(qtbot: QtBot, holder: QWidget) -> None:
    view = _shown(qtbot, holder, fan(8), 1200)
    assert view.canvas.height() > view.max_height
    qtbot.waitUntil(lambda: view.height() == view.max_height)
    assert view.verticalScrollBar().maximum() > 0


def test_the_run_view_s_panes_start_right_under_a_chain_s_graph(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(finished_chain())
    graph = view.graph_view
    assert graph.isVisible()
    qtbot.waitUntil(lambda: graph.height() == graph.canvas.height())
    # no band under it for the hidden gate panel either
    qtbot.waitUntil(lambda: view.scroll_area.y() == graph.geometry().bottom() + 1)
