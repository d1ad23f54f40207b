"""Where each box of a pipeline graph goes: layered, left to right, with few crossings.

The drawing reads like the run: a step stands to the right of every step it waits for. Layers
are longest paths from the roots (a step sits one column after its latest predecessor), and the
boxes of a column are ordered by the mean row of their neighbours, sweeping left and right a few
times (the barycentric heuristic) — cheap, and it removes most crossings a person would notice.

A loop group is laid out as one box of its own (its members laid out inside it by the same
algorithm), so its frame never overlaps another step and the outer graph never weaves through
it. This module knows no Qt: text widths come from the caller's ``measure`` function, so the
layout is computed once per graph and reused for every repaint (architecture: "Graph view").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from core.definitions.pipeline_graph import GraphEdge, LoopGroup, PipelineGraph

NODE_HEIGHT = 46.0
NODE_MIN_WIDTH = 96.0
NODE_PAD = 14.0
"""Space left and right of a box's text (plus room for the status dot)."""
BEST_OF_OFFSET = 4.0
"""How far each of a best-of node's stacked copies is shifted (down and right)."""
COLUMN_GAP = 44.0
LABEL_GAP_MAX = 240.0
"""The widest a gap between columns grows to make room for a condition's label."""
LABEL_SCALE = 0.86
"""Edge labels are drawn this much smaller than the names ``measure`` measures."""
ROW_GAP = 18.0
LOOP_PAD = 12.0
LOOP_TITLE = 22.0
"""Room above a loop's members for its title (name, ×N)."""
LOOP_FOOTER = 20.0
"""Room below a loop's members for its ``until`` condition."""
MARGIN = 8.0
SWEEPS = 4
LABEL_LIMIT = 34
"""Characters of a condition shown on its edge; the rest is in the tooltip."""


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def center_y(self) -> float:
        return self.y + self.height / 2

    def moved(self, dx: float, dy: float) -> Box:
        return Box(self.x + dx, self.y + dy, self.width, self.height)

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.right and self.y <= y <= self.bottom


@dataclass
class GraphLayout:
    """Boxes for nodes and loop frames, in one coordinate space starting at (0, 0)."""

    nodes: dict[str, Box] = field(default_factory=dict)
    loops: dict[str, Box] = field(default_factory=dict)
    edges: list[GraphEdge] = field(default_factory=list)
    """The edges to draw (those whose ends both exist), in the graph's order."""
    columns: list[list[str]] = field(default_factory=list)
    """The outer graph's columns, top to bottom, loops by name (for :func:`describe`)."""
    width: float = 0.0
    height: float = 0.0

    def node_at(self, x: float, y: float) -> str | None:
        return next((name for name, box in self.nodes.items() if box.contains(x, y)), None)


def short_condition(text: str) -> str:
    """A condition as written on an edge: whitespace folded, long ones cut with an ellipsis."""
    folded = " ".join(text.split())
    return folded if len(folded) <= LABEL_LIMIT else folded[: LABEL_LIMIT - 1] + "…"


def is_unnamed(name: str) -> bool:
    """A node named for its position (``step-2``): a step of a preset without names."""
    return name.startswith("step-") and name[5:].isdigit()


def node_width(graph: PipelineGraph, name: str, measure: Callable[[str], float]) -> float:
    node = graph.node(name)
    if node is None:
        return NODE_MIN_WIDTH
    badges = ""  # drawn right of the name: the iteration, a best-of's progress
    if node.loop is not None:
        badges += "  #10"
    if node.best_of > 1:
        badges += f"  {node.best_of}/{node.best_of}"
    text = max(measure(name + badges) + 26, measure(node.agent) + 14)  # the dot before the name
    extra = BEST_OF_OFFSET * 2 if node.best_of > 1 else 0.0
    return max(NODE_MIN_WIDTH, text + 2 * NODE_PAD + extra)


def layout_graph(graph: PipelineGraph, measure: Callable[[str], float]) -> GraphLayout:
    """Lay out ``graph``; ``measure(text)`` is the drawn width of ``text`` in the box font."""
    names = [node.name for node in graph.nodes]
    known = set(names)
    edges = [
        edge
        for edge in graph.edges
        if edge.source in known and edge.target in known and edge.source != edge.target
    ]
    loop_of: dict[str, LoopGroup] = {}
    for loop in graph.loops:
        for member in loop.members:
            if member in known and member not in loop_of:
                loop_of[member] = loop
    layout = GraphLayout(edges=edges)

    # Each loop is one unit of the outer graph: lay out its inside first.
    units: dict[str, tuple[float, float]] = {}  # unit name -> (width, height)
    inner: dict[str, GraphLayout] = {}
    for loop in graph.loops:
        members = [m for m in names if loop_of.get(m) is loop]
        if not members:
            continue
        inside = [e for e in edges if e.source in members and e.target in members]
        sub = _layered(members, inside, lambda n: node_width(graph, n, measure), {}, edges, measure)
        title = measure(f"⟲ {loop.name}  ×{loop.max_iterations}") + 2 * LOOP_PAD
        footer = measure("until " + short_condition(loop.until)) + 2 * LOOP_PAD
        width = max(sub.width + 2 * LOOP_PAD, title, footer)
        height = sub.height + LOOP_TITLE + LOOP_FOOTER + LOOP_PAD
        inner[loop.name] = sub
        units[loop.name] = (width, height)

    def unit(name: str) -> str:
        loop = loop_of.get(name)
        return loop.name if loop is not None and loop.name in inner else name

    outer_names = list(dict.fromkeys(unit(n) for n in names))
    outer_edges: list[GraphEdge] = []
    seen: set[tuple[str, str]] = set()
    for edge in edges:
        pair = (unit(edge.source), unit(edge.target))
        if pair[0] != pair[1] and pair not in seen:
            seen.add(pair)
            outer_edges.append(GraphEdge(source=pair[0], target=pair[1], condition=edge.condition))

    def outer_width(name: str) -> float:
        return units[name][0] if name in units else node_width(graph, name, measure)

    outer = _layered(
        outer_names,
        outer_edges,
        outer_width,
        {n: units[n][1] for n in units},
        outer_edges,
        measure,
    )
    for name, box in outer.nodes.items():
        box = box.moved(MARGIN, MARGIN)
        if name in inner:
            layout.loops[name] = box
            for member, member_box in inner[name].nodes.items():
                layout.nodes[member] = member_box.moved(
                    box.x + (box.width - inner[name].width) / 2, box.y + LOOP_TITLE
                )
        else:
            layout.nodes[name] = box
    layout.columns = outer.columns
    layout.width = outer.width + 2 * MARGIN
    layout.height = outer.height + 2 * MARGIN
    return layout


def _layered(
    names: list[str],
    edges: list[GraphEdge],
    width_of: Callable[[str], float],
    heights: dict[str, float],
    labelled: Iterable[GraphEdge],
    measure: Callable[[str], float],
) -> GraphLayout:
    """The layered layout of one level (the outer graph, or one loop's inside)."""
    successors: dict[str, list[str]] = {n: [] for n in names}
    predecessors: dict[str, list[str]] = {n: [] for n in names}
    for edge in edges:
        if edge.source in successors and edge.target in successors:
            successors[edge.source].append(edge.target)
            predecessors[edge.target].append(edge.source)
    layer = _longest_path_layers(names, successors, predecessors)
    count = max(layer.values(), default=-1) + 1
    columns: list[list[str]] = [[] for _ in range(count)]
    for name in names:  # file order first: a stable start for the sweeps
        columns[layer[name]].append(name)
    _order_columns(columns, successors, predecessors)

    # A column's gap on its left grows to fit the labels of the conditions entering it (as
    # long as when they say "skipped: …"; the label font is a little smaller than the names').
    label_width: dict[int, float] = {}
    for edge in labelled:
        if edge.condition and edge.target in layer:
            width = measure("skipped: " + short_condition(edge.condition)) * LABEL_SCALE
            into = layer[edge.target]
            label_width[into] = max(label_width.get(into, 0.0), width)

    result = GraphLayout(edges=list(edges), columns=columns)
    if not edges and len(names) > 1:
        return _in_a_row(result, names, width_of, heights)
    x = 0.0
    tallest = 0.0
    for index, column in enumerate(columns):
        if index:
            gap = COLUMN_GAP
            if index in label_width:
                gap = min(LABEL_GAP_MAX, max(COLUMN_GAP, label_width[index] + 28))
            x += gap
        column_width = max((width_of(n) for n in column), default=0.0)
        y = 0.0
        for name in column:
            height = heights.get(name, NODE_HEIGHT)
            width = width_of(name)
            result.nodes[name] = Box(x + (column_width - width) / 2, y, width, height)
            y += height + ROW_GAP
        tallest = max(tallest, y - ROW_GAP)
        x += column_width
    # Centre each column vertically: short columns sit on the middle line of the tall ones.
    for column in columns:
        bottom = max((result.nodes[n].bottom for n in column), default=0.0)
        shift = (tallest - bottom) / 2
        for name in column:
            result.nodes[name] = result.nodes[name].moved(0, shift)
    result.width = x
    result.height = tallest
    return result


def _in_a_row(
    result: GraphLayout,
    names: list[str],
    width_of: Callable[[str], float],
    heights: dict[str, float],
) -> GraphLayout:
    """Steps with no arrows between them (a parallel run) side by side, in file order: one
    column of them stood as tall as the panes' first row and said nothing more."""
    x = 0.0
    for name in names:
        height = heights.get(name, NODE_HEIGHT)
        result.nodes[name] = Box(x, 0.0, width_of(name), height)
        x += width_of(name) + ROW_GAP
    tallest = max(box.height for box in result.nodes.values())
    for name, box in result.nodes.items():  # on one middle line
        result.nodes[name] = box.moved(0, (tallest - box.height) / 2)
    result.width = x - ROW_GAP
    result.height = tallest
    return result


def _longest_path_layers(
    names: list[str], successors: dict[str, list[str]], predecessors: dict[str, list[str]]
) -> dict[str, int]:
    """Column of each name: one more than its latest predecessor's. An edge that closes a
    cycle (an invalid file the validator reports) is ignored rather than looping forever."""
    remaining = {n: len(predecessors[n]) for n in names}
    layer = dict.fromkeys(names, 0)
    ready = [n for n in names if remaining[n] == 0]
    placed: set[str] = set()
    while len(placed) < len(names):
        if not ready:  # a cycle: release the first name still waiting
            ready = [next(n for n in names if n not in placed)]
        name = ready.pop(0)
        if name in placed:
            continue
        placed.add(name)
        for after in successors[name]:
            if after in placed:
                continue
            layer[after] = max(layer[after], layer[name] + 1)
            remaining[after] -= 1
            if remaining[after] == 0:
                ready.append(after)
    return layer


def _order_columns(
    columns: list[list[str]],
    successors: dict[str, list[str]],
    predecessors: dict[str, list[str]],
) -> None:
    """Reorder each column by the mean position of its neighbours in the column before (sweeping
    right) or after (sweeping left); keeps the order with the fewest crossings seen."""
    best = [list(c) for c in columns]
    best_crossings = _crossings(columns, successors)
    for sweep in range(SWEEPS):
        rightwards = sweep % 2 == 0
        indexes = range(1, len(columns)) if rightwards else range(len(columns) - 2, -1, -1)
        for index in indexes:
            neighbour = columns[index - 1] if rightwards else columns[index + 1]
            position = {name: row for row, name in enumerate(neighbour)}
            links = predecessors if rightwards else successors
            column = columns[index]
            keyed = [(_barycentre(n, row, links, position), row, n) for row, n in enumerate(column)]
            columns[index] = [n for _key, _row, n in sorted(keyed)]
        crossings = _crossings(columns, successors)
        if crossings < best_crossings:
            best, best_crossings = [list(c) for c in columns], crossings
    columns[:] = best


def _barycentre(
    name: str, row: int, links: dict[str, list[str]], position: dict[str, int]
) -> float:
    """The mean row of ``name``'s neighbours in the next column; its own row if it has none."""
    rows = [position[n] for n in links[name] if n in position]
    return sum(rows) / len(rows) if rows else float(row)


def _crossings(columns: list[list[str]], successors: dict[str, list[str]]) -> int:
    """Edge crossings between adjacent columns (edges that skip columns are not counted)."""
    total = 0
    for left, right in pairwise(columns):
        row = {name: index for index, name in enumerate(right)}
        pairs = [
            (i, row[target])
            for i, source in enumerate(left)
            for target in successors[source]
            if target in row
        ]
        for first, (a, b) in enumerate(pairs):
            for c, d in pairs[first + 1 :]:
                if (a - c) * (b - d) < 0:
                    total += 1
    return total


def describe(graph: PipelineGraph, layout: GraphLayout) -> str:
    """The drawing in words, column by column: ``scout → planner + reviewer → merge``.

    A node of an unnamed step (``step-N``) is called by its agent, as people know it; a loop
    is ``review[check → fix]×3``. Used by tests and as the canvas's accessible description.
    """

    def label(name: str) -> str:
        loop = next((lp for lp in graph.loops if lp.name == name), None)
        if loop is not None and name in layout.loops:
            members = [n for n in (node.name for node in graph.nodes) if n in loop.members]
            return f"{name}[{' → '.join(label(m) for m in members)}]×{loop.max_iterations}"
        node = graph.node(name)
        if node is None:
            return name
        text = node.agent if is_unnamed(name) else name
        return text + (f"×{node.best_of}" if node.best_of > 1 else "")

    return " → ".join(" + ".join(label(n) for n in column) for column in layout.columns)
