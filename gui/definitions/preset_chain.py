"""A preset drawn as its graph, wherever a preset is shown: the Presets view's header, the step
editor's live redraw and the launch dialog.

Every form of preset — single, parallel, chain and graph — becomes a
:class:`~core.definitions.pipeline_graph.PipelineGraph` and is painted by the one graph widget
(:class:`gui.widgets.graph_canvas.GraphView`), so a person sees the same picture before a run,
while editing and during the run. A step naming an agent that does not exist is outlined in red
(its tooltip says so).
"""

from __future__ import annotations

from core.definitions.agents import AgentCatalog
from core.definitions.pipeline_graph import PipelineGraph, pipeline_graph
from core.definitions.presets import Preset
from gui.widgets.graph_canvas import GraphView


def draw_preset(view: GraphView, preset: Preset | None, agents: AgentCatalog) -> None:
    """Show ``preset``'s graph in ``view`` (None: an empty drawing)."""
    if preset is None:
        view.set_graph(PipelineGraph(nodes=()))
        return
    graph = pipeline_graph(preset)
    view.set_graph(graph, {node.agent for node in graph.nodes if agents.get(node.agent) is None})
