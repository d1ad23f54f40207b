"""Every preset form has a drawable graph: single, parallel and chain presets as before."""

from __future__ import annotations

from core.definitions.pipeline_graph import pipeline_graph
from core.definitions.presets import parse_preset_text


def test_a_chain_is_a_line_of_numbered_steps() -> None:
    preset = parse_preset_text(
        "name: c\nmode: chain\nsteps:\n"
        "  - {agent: scout, task: a}\n  - {agent: planner, task: b}\n  - {agent: worker, task: c}\n"
    )
    graph = pipeline_graph(preset)
    assert [node.name for node in graph.nodes] == ["step-1", "step-2", "step-3"]
    assert [(e.source, e.target) for e in graph.edges] == [
        ("step-1", "step-2"),
        ("step-2", "step-3"),
    ]
    assert graph.predecessors("step-3") == ["step-2"]


def test_parallel_steps_stand_side_by_side_without_edges() -> None:
    preset = parse_preset_text(
        "name: p\nmode: parallel\nsteps:\n  - {agent: a, task: x}\n  - {agent: b, task: y}\n"
    )
    graph = pipeline_graph(preset)
    assert [node.agent for node in graph.nodes] == ["a", "b"]
    assert graph.edges == ()
