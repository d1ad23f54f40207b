"""Pipeline graphs in the window: the layout, every preset drawn in the Presets view, the run's
graph above its panes with live status, and a click on a node opening its pane."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.definitions.pipeline_graph import GraphEdge, GraphNode, LoopGroup, PipelineGraph
from gui.definitions.presets_view import PresetsView
from gui.run.run_view import RunView
from gui.widgets.graph_canvas import GraphCanvas, LoopView, NodeView
from gui.widgets.graph_layout import Box, layout_graph
from gui.window.main_window import MainWindow
from tests.gui.run_events import RunBuilder, finished_chain

Window = Callable[..., MainWindow]


def _opened(view: PresetsView, path: Path) -> bool:
    return view.editor.path() == path


def _measure(text: str) -> float:
    return 7.0 * len(text)


def _overlap(a: Box, b: Box) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


def review_loop() -> PipelineGraph:
    """The graph of the contract's example: work, a check/fix loop, a gated ship, best-of."""
    return PipelineGraph(
        nodes=(
            GraphNode(name="work", agent="worker"),
            GraphNode(name="check", agent="reviewer", loop="review"),
            GraphNode(name="fix", agent="worker", loop="review"),
            GraphNode(name="ship", agent="worker", gate=True),
            GraphNode(name="attempt", agent="worker", best_of=3),
        ),
        edges=(
            GraphEdge(source="work", target="check"),
            GraphEdge(source="check", target="fix", condition="check.max_severity >= major"),
            GraphEdge(source="fix", target="ship"),
            GraphEdge(source="ship", target="attempt"),
        ),
        loops=(
            LoopGroup(
                name="review",
                members=("check", "fix"),
                until="check.count(critical) == 0",
                max_iterations=3,
            ),
        ),
    )


def layered(width: int, depth: int) -> PipelineGraph:
    """``depth`` columns of ``width`` nodes, each joined to every node of the next column."""
    nodes = [
        GraphNode(name=f"n{c}-{r}", agent="worker") for c in range(depth) for r in range(width)
    ]
    edges = [
        GraphEdge(source=f"n{c}-{r}", target=f"n{c + 1}-{s}")
        for c in range(depth - 1)
        for r in range(width)
        for s in range(width)
    ]
    return PipelineGraph(nodes=tuple(nodes), edges=tuple(edges))


# -- layout -------------------------------------------------------------------------------


def test_a_step_stands_right_of_every_step_it_waits_for_and_no_boxes_overlap() -> None:
    graph = layered(4, 25)  # 100 nodes
    layout = layout_graph(graph, _measure)
    for edge in graph.edges:
        assert layout.nodes[edge.source].right < layout.nodes[edge.target].x
    for a, b in combinations(layout.nodes.values(), 2):
        assert not _overlap(a, b)


def test_steps_with_no_arrows_between_them_stand_side_by_side_in_file_order() -> None:
    graph = layered(4, 1)  # a parallel run: four steps, no edges
    layout = layout_graph(graph, _measure)
    boxes = [layout.nodes[node.name] for node in graph.nodes]
    assert len({box.y for box in boxes}) == 1
    assert all(a.right < b.x for a, b in pairwise(boxes))
    assert layout.height < 2 * boxes[0].height  # one row high, not a column of four
    assert layout.width > boxes[-1].right


def test_barycentric_ordering_uncrosses_a_fan() -> None:
    # a → (x, y); listed so that the file order would cross: p waits for y, q for x
    graph = PipelineGraph(
        nodes=tuple(GraphNode(name=n, agent="worker") for n in ("a", "b", "x", "y", "p", "q")),
        edges=(
            GraphEdge(source="a", target="x"),
            GraphEdge(source="b", target="y"),
            GraphEdge(source="x", target="q"),
            GraphEdge(source="y", target="p"),
        ),
    )
    layout = layout_graph(graph, _measure)
    assert layout.nodes["q"].y < layout.nodes["p"].y  # q beside x, p beside y: no crossing


def test_a_loop_is_a_frame_around_its_members_that_nothing_else_enters() -> None:
    graph = review_loop()
    layout = layout_graph(graph, _measure)
    frame = layout.loops["review"]
    for member in ("check", "fix"):
        box = layout.nodes[member]
        assert frame.x < box.x and box.right < frame.right
        assert frame.y < box.y and box.bottom < frame.bottom
    for other in ("work", "ship", "attempt"):
        assert not _overlap(frame, layout.nodes[other])


def test_a_cycle_in_a_broken_file_still_draws() -> None:
    graph = PipelineGraph(
        nodes=(GraphNode(name="a", agent="w"), GraphNode(name="b", agent="w")),
        edges=(GraphEdge(source="a", target="b"), GraphEdge(source="b", target="a")),
    )
    layout = layout_graph(graph, _measure)
    assert set(layout.nodes) == {"a", "b"}


# -- the canvas ---------------------------------------------------------------------------


def test_the_canvas_shows_loops_gates_best_of_and_skipped_conditions(qtbot: QtBot) -> None:
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.set_graph(review_loop())
    assert canvas.describe() == "work → review[check → fix]×3 → ship → attempt×3"
    assert canvas.loop_text("review") == ("⟲ review  ×3", "until check.count(critical) == 0")
    assert "gate" in canvas.node_text("ship")
    assert "best of 3" in canvas.node_text("attempt")
    fix_edge = next(e for e in canvas.graph().edges if e.target == "fix")
    assert canvas.edge_label(fix_edge) == "check.max_severity >= major"

    canvas.set_loop("review", LoopView(iteration=2))
    canvas.set_node("fix", NodeView("skipped", iteration=2, note="skipped: condition false"))
    assert canvas.loop_text("review")[0] == "⟲ review  iteration 2/3"
    assert canvas.edge_label(fix_edge) == "skipped: check.max_severity >= major"
    assert canvas.node_text("fix").endswith("#2 · skipped · skipped: condition false")
    canvas.set_loop("review", LoopView(3, "stopped after 3 iterations: 1 critical left"))
    assert canvas.loop_text("review")[1] == "stopped after 3 iterations: 1 critical left"
    canvas.set_loop("review", LoopView(iteration=4))  # a gate after it sent it back
    assert canvas.loop_text("review")[0] == "⟲ review  iteration 4 (sent back)"


# -- the Presets view ---------------------------------------------------------------------


def test_every_built_in_preset_is_drawn_as_its_graph(qtbot: QtBot, make_window: Window) -> None:
    window = make_window()
    view = window.presets_view
    window.show_view("presets")
    built_ins = [p for p in view.catalog.presets if p.source == "builtin"]
    assert built_ins
    for preset in built_ins:
        assert preset.path is not None
        view.preset_list.select_path(preset.path)
        qtbot.waitUntil(partial(_opened, view, Path(preset.path)))
        canvas = view.header.graph.canvas
        assert view.header.graph.isVisible()
        assert len(canvas.graph().nodes) == len(preset.steps)
        drawn = " ".join(canvas.node_text(n.name) for n in canvas.graph().nodes)
        for step in preset.steps:
            assert step.agent in drawn
        assert canvas.width() > 0 and canvas.height() > 0


# -- the run view -------------------------------------------------------------------------


def test_a_chain_run_shows_its_graph_with_each_node_in_its_status(
    qtbot: QtBot, view: RunView
) -> None:
    b = RunBuilder()
    b.start("chain", [("scout", "look", "m"), ("planner", "plan", "m"), ("worker", "do", "m")])
    b.step_started(0, "look", "m").text(0, "Found it.").step_finished(0, output="Found it.")
    b.step_started(1, "plan", "m")
    view.add_events(b.events)
    canvas = view.graph_view.canvas
    qtbot.waitUntil(lambda: canvas.node_view("step-2").status == "running")
    assert view.graph_view.isVisible()
    assert canvas.describe() == "scout → planner → worker"
    assert canvas.node_view("step-1").status == "done"
    assert canvas.node_view("step-3").status == "queued"

    more = RunBuilder(b.run_id)
    more._agents, more.now = b._agents, b.now
    more.step_finished(1, status="error", error="boom").run_finished("error", "boom")
    view.add_events(more.events)
    qtbot.waitUntil(lambda: canvas.node_view("step-2").status == "failed")


def test_clicking_a_node_opens_its_pane(qtbot: QtBot, view: RunView) -> None:
    view.load_events(finished_chain())
    view.resize(900, 500)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(0)
    canvas = view.graph_view.canvas
    view.pane(2).set_folded(True)
    qtbot.mouseClick(
        canvas, Qt.MouseButton.LeftButton, pos=canvas.node_rect("step-3").center().toPoint()
    )
    assert not view.pane(2).is_folded()
    assert view.pane(2).is_highlighted()
    qtbot.waitUntil(lambda: bar.value() > 0)


def test_a_single_step_run_has_no_graph(qtbot: QtBot, view: RunView) -> None:
    b = RunBuilder().start("single", [("worker", "do it", "m")])
    b.step_started(0, "do it", "m").step_finished(0, output="ok").run_finished()
    view.load_events(b.events)
    assert not view.graph_view.isVisible()


# -- the step editor ----------------------------------------------------------------------

COMMENTED = """\
# Our review pipeline: keep this comment
name: house-review
description: Look, then judge
mode: chain   # scout first
steps:
  - agent: scout
    task: "Find what matters for: $@"
  # the reviewer reads the scout's notes
  - agent: reviewer
    task: |
      Judge this:
      {previous}
"""


def _click_preset(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    presets = window.presets_view.preset_list
    qtbot.waitUntil(lambda: presets.item_for_path(str(path)) is not None, timeout=5000)
    item = presets.item_for_path(str(path))
    assert item is not None
    presets.scrollToItem(item)
    rect = presets.visualItemRect(item)
    qtbot.mouseClick(presets.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.presets_view.editor.path() == path


def test_the_step_editor_edits_the_yaml_keeping_comments_and_saves_it(
    qtbot: QtBot, make_window: Window, user_presets: Path
) -> None:
    path = user_presets / "house-review.yaml"
    path.write_text(COMMENTED, encoding="utf-8")
    window = make_window()
    window.show_view("presets")
    view = window.presets_view
    _click_preset(qtbot, window, path)
    form = view.step_form
    assert [s.label() for s in form.steps()] == ["step 1", "step 2"]

    form.select_step(0)  # a person picks the first step and gives it another agent
    line = form.agent_field.lineEdit()
    assert line is not None
    line.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, "planner")
    qtbot.waitUntil(lambda: "agent: planner" in view.editor.text())
    assert view.editor.is_dirty()
    assert view.header.graph.describe() == "planner → reviewer"

    qtbot.mouseClick(form.add_button, Qt.MouseButton.LeftButton)  # a third step
    qtbot.waitUntil(lambda: len(form.steps()) == 3)
    form.task_field.setFocus()
    form.task_field.selectAll()
    qtbot.keyClicks(form.task_field, "Apply: {previous}")
    qtbot.waitUntil(lambda: "task: 'Apply: {previous}'" in view.editor.text())
    assert view.header.graph.describe() == "planner → reviewer → planner"

    qtbot.mouseClick(view.header.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.editor.is_dirty())
    saved = path.read_text(encoding="utf-8")
    assert saved.startswith("# Our review pipeline: keep this comment\n")
    assert "mode: chain   # scout first" in saved
    assert "  # the reviewer reads the scout's notes\n" in saved
    assert "    task: |\n      Judge this:\n      {previous}\n" in saved
    assert '  - agent: planner\n    task: "Find what matters for: $@"\n' in saved
    assert saved.endswith("  - agent: planner\n    task: 'Apply: {previous}'\n")

    qtbot.mouseClick(view.header.graph.canvas, Qt.MouseButton.LeftButton)  # nothing to open
    form.select_step(1)
    qtbot.mouseClick(form.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.header.graph.describe() == "planner → planner")
    view.editor.text_edit.undo()  # one undo brings the removed step back
    qtbot.waitUntil(lambda: view.header.graph.describe() == "planner → reviewer → planner")


def test_the_step_editor_follows_the_file_changing_on_disk(
    qtbot: QtBot, make_window: Window, user_presets: Path
) -> None:
    path = user_presets / "house-review.yaml"
    path.write_text(COMMENTED, encoding="utf-8")
    window = make_window()
    window.show_view("presets")
    view = window.presets_view
    _click_preset(qtbot, window, path)
    path.write_text(COMMENTED.replace("agent: reviewer", "agent: worker"), encoding="utf-8")
    qtbot.waitUntil(lambda: "worker" in [s.agent for s in view.step_form.steps()], timeout=5000)
    assert view.header.graph.describe() == "scout → worker"


def test_a_built_in_is_read_only_in_the_step_editor(qtbot: QtBot, make_window: Window) -> None:
    window = make_window()
    window.show_view("presets")
    view = window.presets_view
    preset = view.catalog.get("implement")
    assert preset is not None and preset.path is not None
    _click_preset(qtbot, window, Path(preset.path))
    form = view.step_form
    assert [s.agent for s in form.steps()] == [s.agent for s in preset.steps]
    assert not form.add_button.isEnabled() and not form.fields.isEnabled()
    assert form.note.text().startswith("Read-only")


GRAPH_PRESET = """\
name: review-loop
description: Work, review until clean, ship
mode: graph
steps:
  - name: work
    agent: worker
    task: "$@"
  - loop:
      name: review
      max_iterations: 3
      until: "check.status == done"
      steps:
        - name: check
          agent: reviewer
          task: "Review this work: {previous}"
        - name: fix
          agent: worker
          task: "Fix these: {step.check}"
  # ship when the loop is over
  - name: ship
    agent: worker
    task: "Ship: {previous}"
"""


def test_the_step_editor_connects_steps_and_gates_them_in_a_graph_preset(
    qtbot: QtBot, make_window: Window, user_presets: Path
) -> None:
    path = user_presets / "review-loop.yaml"
    path.write_text(GRAPH_PRESET, encoding="utf-8")
    window = make_window()
    window.show_view("presets")
    view = window.presets_view
    _click_preset(qtbot, window, path)
    form = view.step_form
    assert [s.label() for s in form.steps()] == ["work", "check", "fix", "ship"]
    assert [s.loop for s in form.steps()] == [None, "review", "review", None]
    canvas = view.header.graph.canvas
    assert canvas.describe() == "work → review[check → fix]×3 → ship"

    form.select_step(3)  # ship: a person's gate before it, with a question
    qtbot.mouseClick(form.gate_box, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "    gate: true\n" in view.editor.text())
    assert "gate" in canvas.node_text("ship")
    form.question_field.setFocus()
    qtbot.keyClicks(form.question_field, "Ship it?")
    qtbot.keyClick(form.question_field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "    gate: {question: Ship it?}\n" in view.editor.text())

    form.after_field.setFocus()  # connect it to a step that does not exist: the check says so
    qtbot.keyClicks(form.after_field, "nowhere")
    qtbot.keyClick(form.after_field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "    after: [nowhere]\n" in view.editor.text())
    view.editor.validate_now()
    problems = view.editor.problems()
    assert any("nowhere" in p.message and p.line is not None for p in problems), problems

    form.after_field.selectAll()  # and to the first step: ship now waits for work only
    qtbot.keyClicks(form.after_field, "work")
    qtbot.keyClick(form.after_field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: canvas.describe() == "work → review[check → fix]×3 + ship")
    view.editor.validate_now()
    assert not [p for p in view.editor.problems() if p.severity == "error"]
    qtbot.keyClick(view.editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not view.editor.is_dirty())
    saved = path.read_text(encoding="utf-8")
    assert "  # ship when the loop is over\n" in saved
    assert saved.endswith(
        '    task: "Ship: {previous}"\n    after: [work]\n    gate: {question: Ship it?}\n'
    )


def _graph_run_events(live_end: bool) -> list[Any]:
    """A review loop as the graph runner reports it: two iterations, the second skipping
    ``fix``, converged; the loop's second iteration gets new steps after the planned ones."""
    from core.definitions.pipeline_graph import pipeline_graph
    from core.definitions.presets import parse_preset_text
    from core.model.events import (
        LoopFinished,
        LoopIterationStarted,
        PlannedStep,
        RunStarted,
        StepFinished,
        StepSkipped,
        StepStarted,
    )

    graph = pipeline_graph(parse_preset_text(GRAPH_PRESET.replace("check.status == done",
                                                                  "check.passed")))  # fmt: skip
    run = "run-graph"
    planned = [PlannedStep(agent=n.agent, task="t", cwd="/tmp", node=n.name) for n in graph.nodes]
    events: list[Any] = [
        RunStarted(run_id=run, mode="graph", steps=planned, cwd="/tmp", started_at="2026-12-04",
                   graph=graph.model_dump())
    ]  # fmt: skip
    ts = [0.0]

    def step(index: int, node: str, agent: str, iteration: int | None = None) -> None:
        ts[0] += 1
        events.append(StepStarted(run_id=run, step=index, ts=ts[0], agent=agent, task="t",
                                  cwd="/tmp", node=node, iteration=iteration))  # fmt: skip
        events.append(StepFinished(run_id=run, step=index, ts=ts[0] + 0.5, status="ok",
                                   output=node, node=node, iteration=iteration))  # fmt: skip

    step(0, "work", "worker")
    events.append(LoopIterationStarted(run_id=run, loop="review", iteration=1))
    step(1, "check", "reviewer", 1)
    step(2, "fix", "worker", 1)
    events.append(LoopIterationStarted(run_id=run, loop="review", iteration=2))
    step(4, "check", "reviewer", 2)
    events.append(StepSkipped(run_id=run, step=5, node="fix", iteration=2,
                              condition="check.max_severity >= major", reason="false"))  # fmt: skip
    events.append(LoopFinished(run_id=run, loop="review", iterations=2, status="converged",
                               summary="converged after 2 iterations"))  # fmt: skip
    if live_end:
        step(3, "ship", "worker")
    return events


def test_a_graph_run_draws_its_loop_and_gives_each_iteration_its_pane(
    qtbot: QtBot, view: RunView
) -> None:
    view.load_events(_graph_run_events(live_end=True))
    canvas = view.graph_view.canvas
    assert canvas.describe() == "work → review[check → fix]×3 → ship"
    assert canvas.loop_text("review") == ("⟲ review  ×3", "converged after 2 iterations")
    assert canvas.node_view("check") == NodeView("done", iteration=2)
    assert canvas.node_view("fix").status == "skipped"
    assert canvas.node_view("ship").status == "done"
    assert len(view.panes()) == 6  # four planned, and the second iteration's two
    places = [pane.node.text() for pane in view.panes()]
    assert places[:5] == [
        "work",
        "check · iteration 1",
        "fix · iteration 1",
        "ship",
        "check · iteration 2",
    ]
    assert view.pane(4).agent.text() == "reviewer"
    view.pane(4).set_folded(True)
    qtbot.mouseClick(  # check's latest run is the second iteration's
        canvas, Qt.MouseButton.LeftButton, pos=canvas.node_rect("check").center().toPoint()
    )
    assert not view.pane(4).is_folded()


def test_a_graph_run_grows_panes_live(qtbot: QtBot, view: RunView) -> None:
    events = _graph_run_events(live_end=False)
    view.add_events(events[:8])  # up to the end of the first iteration
    qtbot.waitUntil(lambda: view.graph_view.canvas.node_view("fix").status == "done")
    assert len(view.panes()) == 4
    view.add_events(events[8:])
    qtbot.waitUntil(lambda: len(view.panes()) == 6)
    qtbot.waitUntil(lambda: view.graph_view.canvas.loop_view("review").summary != "")
    assert view.pane(4).node.text() == "check · iteration 2"


def test_a_graph_run_read_off_the_gui_thread_draws_its_nodes(qtbot: QtBot, view: RunView) -> None:
    from core.record.run_state import RunState

    state = RunState()
    for event in _graph_run_events(live_end=True):
        state.apply(event)
    view.load_state(state)
    qtbot.waitUntil(lambda: not view.is_building())  # its panes, a few per turn
    canvas = view.graph_view.canvas
    assert {n.name for n in canvas.graph().nodes} == {"work", "check", "fix", "ship"}
    assert canvas.node_view("check") == NodeView("done", iteration=2)
    assert canvas.node_view("ship").status == "done"
    assert view.model.graph.step_for("check") == 4


def test_a_graph_runs_planned_steps_say_their_node_before_they_start(
    qtbot: QtBot, view: RunView
) -> None:
    events = _graph_run_events(live_end=False)
    view.load_events(events[:1])  # only the start: every planned step still pending
    assert [pane.node.text() for pane in view.panes()] == ["work", "check", "fix", "ship"]
