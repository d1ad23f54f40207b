"""A pipeline graph drawn: boxes for steps, arrows for hand-offs, frames for loops.

One widget for every place a pipeline is shown — the Presets view draws a preset's shape, the
run view the same shape with each step's live status — so a person learns one picture. Painted
with QPainter from a :class:`~gui.widgets.graph_layout.GraphLayout` computed once per graph;
a status change only repaints (architecture: "Graph view").

What is drawn:

* a step: its name, its agent below, a status dot; a best-of step as a stack of boxes with
  ``×N``; a gated step with a gate mark (two bars) on its left edge;
* an edge: a curve from the step to the one that waits for it; a ``when:`` condition is
  written on it; when the condition was false the edge is dashed and grey, and the skipped step
  says which condition skipped it;
* a loop: a dashed frame around its steps titled ``⟲ name ×N`` (``iteration 2/3`` while it
  runs), its ``until`` condition underneath (its summary once it ended).

Colours come from the palette (:mod:`gui.theme`), so light and dark themes both read well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy, QToolTip, QWidget

from core.definitions.pipeline_graph import GraphEdge, PipelineGraph
from gui.theme import SEVERITY_HUES, is_dark, mix, secondary_text
from gui.widgets.graph_layout import (
    BEST_OF_OFFSET,
    LABEL_SCALE,
    LOOP_FOOTER,
    Box,
    GraphLayout,
    describe,
    is_unnamed,
    layout_graph,
    short_condition,
)

NodeStatus = Literal["idle", "queued", "running", "done", "failed", "skipped", "waiting", "stopped"]
"""``idle``: a preset's drawing (no run); ``waiting``: held at its gate for a person."""

STATUS_WORDS: dict[NodeStatus, str] = {
    "idle": "",
    "queued": "queued",
    "running": "running",
    "done": "done",
    "failed": "failed",
    "skipped": "skipped",
    "waiting": "waiting at its gate",
    "stopped": "stopped",
}
_STATUS_HUES: dict[NodeStatus, int] = {
    "running": SEVERITY_HUES["info"],
    "done": SEVERITY_HUES["ok"],
    "failed": SEVERITY_HUES["error"],
    "waiting": SEVERITY_HUES["warning"],
}


@dataclass(frozen=True)
class NodeView:
    """What the drawing shows of one node's run."""

    status: NodeStatus = "idle"
    iteration: int | None = None
    """The loop iteration it is in (or last ran in), 1-based."""
    attempts: str = ""
    """A best-of node's progress, e.g. ``2/3``, or its winner."""
    note: str = ""
    """One line under the agent: why it was skipped, the gate's question…"""


@dataclass(frozen=True)
class LoopView:
    iteration: int | None = None
    summary: str = ""
    """How the loop ended ("stopped after 3 iterations: 1 critical left"), once it did."""


class GraphCanvas(QWidget):
    """Paints one :class:`PipelineGraph`. GUI thread only.

    :attr:`nodeClicked` carries the node's name; the owner decides what a click opens.
    """

    nodeClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GraphCanvas")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self._graph = PipelineGraph(nodes=())
        self._layout = GraphLayout()
        self._nodes: dict[str, NodeView] = {}
        self._loops: dict[str, LoopView] = {}
        self._unknown_agents: set[str] = set()
        self._clickable = False

    # -- public API ----------------------------------------------------------------------

    def set_graph(self, graph: PipelineGraph, unknown_agents: set[str] | None = None) -> None:
        """Draw ``graph`` (statuses reset); ``unknown_agents`` get a red dashed outline."""
        self._graph = graph
        self._unknown_agents = set(unknown_agents or ())
        self._nodes = {}
        self._loops = {}
        metrics = QFontMetricsF(self._name_font())
        self._layout = layout_graph(graph, metrics.horizontalAdvance)
        self.setAccessibleDescription(self.describe())
        self.resize(self.sizeHint())
        self.updateGeometry()
        self.update()

    def graph(self) -> PipelineGraph:
        return self._graph

    def graph_layout(self) -> GraphLayout:
        return self._layout

    def set_clickable(self, clickable: bool) -> None:
        """Nodes open something when clicked (the run view's panes): show a hand over them."""
        self._clickable = clickable

    def set_node(self, name: str, view: NodeView) -> None:
        if self._nodes.get(name) != view:
            self._nodes[name] = view
            self.update()

    def set_loop(self, name: str, view: LoopView) -> None:
        if self._loops.get(name) != view:
            self._loops[name] = view
            self.update()

    def node_view(self, name: str) -> NodeView:
        return self._nodes.get(name, NodeView())

    def loop_view(self, name: str) -> LoopView:
        return self._loops.get(name, LoopView())

    def node_rect(self, name: str) -> QRectF:
        """Where ``name``'s box is drawn, in widget coordinates (empty when unknown)."""
        box = self._layout.nodes.get(name)
        return QRectF(box.x, box.y, box.width, box.height) if box else QRectF()

    def describe(self) -> str:
        """The drawing in words (see :func:`gui.widgets.graph_layout.describe`)."""
        return describe(self._graph, self._layout)

    def node_text(self, name: str) -> str:
        """Everything written in and next to ``name``'s box, for tests and the tooltip."""
        node = self._graph.node(name)
        if node is None:
            return ""
        view = self.node_view(name)
        parts = [name, node.agent]
        if node.best_of > 1:
            parts.append(f"best of {node.best_of}")
        if node.gate:
            parts.append("gate")
        if view.iteration is not None:
            parts.append(f"#{view.iteration}")
        if view.attempts:
            parts.append(view.attempts)
        if STATUS_WORDS[view.status]:
            parts.append(STATUS_WORDS[view.status])
        if view.note:
            parts.append(view.note)
        return " · ".join(parts)

    def edge_label(self, edge: GraphEdge) -> str:
        """The text written on ``edge`` ("" for an unconditional one)."""
        if not edge.condition:
            return ""
        text = short_condition(edge.condition)
        return f"skipped: {text}" if self.node_view(edge.target).status == "skipped" else text

    def loop_text(self, name: str) -> tuple[str, str]:
        """A loop frame's title and footer as drawn."""
        loop = next((lp for lp in self._graph.loops if lp.name == name), None)
        if loop is None:
            return "", ""
        view = self.loop_view(name)
        title = f"⟲ {name}  ×{loop.max_iterations}"
        if view.iteration is not None and not view.summary:
            # A person's send-back runs one iteration past the bound: "3/2" would read as a bug.
            extra = view.iteration > loop.max_iterations
            of = " (sent back)" if extra else f"/{loop.max_iterations}"
            title = f"⟲ {name}  iteration {view.iteration}{of}"
        footer = view.summary or f"until {short_condition(loop.until)}"
        return title, footer

    # -- size ----------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        return QSize(int(self._layout.width) + 2, int(self._layout.height) + 2)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    # -- events --------------------------------------------------------------------------

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        over = self._layout.node_at(event.position().x(), event.position().y())
        shape = Qt.CursorShape.PointingHandCursor if over and self._clickable else None
        if shape is None:
            self.unsetCursor()
        else:
            self.setCursor(shape)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            name = self._layout.node_at(event.position().x(), event.position().y())
            if name is not None:
                self.nodeClicked.emit(name)
                event.accept()
                return
        super().mouseReleaseEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            name = self._layout.node_at(event.pos().x(), event.pos().y())
            if name is not None:
                QToolTip.showText(event.globalPos(), self._tooltip(name), self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def _tooltip(self, name: str) -> str:
        text = self.node_text(name)
        node = self._graph.node(name)
        if node is not None and node.agent in self._unknown_agents:
            text += " · unknown agent"
        conditions = [e.condition for e in self._graph.edges if e.target == name and e.condition]
        if conditions:
            text += "\nwhen " + " and ".join(conditions)
        return text

    # -- painting ------------------------------------------------------------------------

    def _name_font(self) -> QFont:
        font = QFont(self.font())
        font.setWeight(QFont.Weight.DemiBold)
        return font

    def _small_font(self) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * LABEL_SCALE))
        return font

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._graph.nodes:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        for name, box in self._layout.loops.items():
            self._paint_loop(painter, palette, name, box)
        for edge in self._layout.edges:
            self._paint_edge(painter, palette, edge)
        for node in self._graph.nodes:
            node_box = self._layout.nodes.get(node.name)
            if node_box is not None:
                self._paint_node(painter, palette, node.name, node_box)
        for edge in self._layout.edges:
            self._paint_edge_label(painter, palette, edge)
        painter.end()

    def _status_color(self, palette: QPalette, status: NodeStatus) -> QColor:
        hue = _STATUS_HUES.get(status)
        if hue is None:
            return secondary_text(palette)
        return QColor.fromHslF(hue / 360, 0.62, 0.56 if is_dark(palette) else 0.45)

    def _edge_path(self, edge: GraphEdge) -> QPainterPath | None:
        source = self._layout.nodes.get(edge.source)
        target = self._layout.nodes.get(edge.target)
        if source is None or target is None:
            return None
        start = QPointF(source.right, source.center_y)
        end = QPointF(target.x - 1, target.center_y)
        if end.x() <= start.x():  # an edge back into a column on the left: around the bottom
            below = max(source.bottom, target.bottom) + 10
            path = QPainterPath(QPointF(source.x + source.width / 2, source.bottom))
            path.cubicTo(
                QPointF(source.x + source.width / 2, below),
                QPointF(target.x + target.width / 2, below),
                QPointF(target.x + target.width / 2, target.bottom),
            )
            return path
        bend = max(24.0, (end.x() - start.x()) / 2)
        path = QPainterPath(start)
        path.cubicTo(QPointF(start.x() + bend, start.y()), QPointF(end.x() - bend, end.y()), end)
        return path

    def _paint_edge(self, painter: QPainter, palette: QPalette, edge: GraphEdge) -> None:
        path = self._edge_path(edge)
        if path is None:
            return
        skipped = self.node_view(edge.target).status == "skipped"
        color = secondary_text(palette)
        if skipped:
            color = mix(color, palette.color(QPalette.ColorRole.Window), 0.45)
        pen = QPen(color, 1.4, Qt.PenStyle.DashLine if skipped else Qt.PenStyle.SolidLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        end = path.currentPosition()
        before = path.pointAtPercent(0.97)
        direction = end - before
        length = max(1e-6, (direction.x() ** 2 + direction.y() ** 2) ** 0.5)
        unit = QPointF(direction.x() / length, direction.y() / length)
        normal = QPointF(-unit.y(), unit.x())
        head = QPainterPath(end)
        head.lineTo(end - unit * 7 + normal * 3.8)
        head.lineTo(end - unit * 7 - normal * 3.8)
        head.closeSubpath()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawPath(head)

    def _paint_edge_label(self, painter: QPainter, palette: QPalette, edge: GraphEdge) -> None:
        text = self.edge_label(edge)
        path = self._edge_path(edge)
        if not text or path is None:
            return
        painter.setFont(self._small_font())
        metrics = QFontMetricsF(painter.font())
        middle = path.pointAtPercent(0.5)
        width = metrics.horizontalAdvance(text) + 10
        rect = QRectF(
            middle.x() - width / 2,
            middle.y() - metrics.height() / 2 - 2,
            width,
            metrics.height() + 4,
        )
        skipped = self.node_view(edge.target).status == "skipped"
        base = palette.color(QPalette.ColorRole.Base)
        window = palette.color(QPalette.ColorRole.Window)
        border = mix(window, palette.color(QPalette.ColorRole.Text), 0.2)
        painter.setPen(QPen(border, 1))
        painter.setBrush(mix(window, base, 0.5))
        painter.drawRoundedRect(rect, 4, 4)
        color = secondary_text(palette)
        painter.setPen(mix(color, window, 0.35) if skipped else color)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_loop(self, painter: QPainter, palette: QPalette, name: str, box: Box) -> None:
        text = palette.color(QPalette.ColorRole.Text)
        window = palette.color(QPalette.ColorRole.Window)
        accent = QColor.fromHslF(SEVERITY_HUES["info"] / 360, 0.5, 0.5)
        rect = QRectF(box.x + 0.5, box.y + 0.5, box.width - 1, box.height - 1)
        painter.setPen(QPen(mix(window, accent, 0.7), 1.3, Qt.PenStyle.DashLine))
        painter.setBrush(mix(window, accent, 0.12 if is_dark(palette) else 0.06))
        painter.drawRoundedRect(rect, 10, 10)
        title, footer = self.loop_text(name)
        painter.setFont(self._name_font())
        painter.setPen(mix(text, accent, 0.45))
        painter.drawText(
            QRectF(box.x + 12, box.y + 4, box.width - 24, 18),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            title,
        )
        painter.setFont(self._small_font())
        painter.setPen(secondary_text(palette))
        metrics = QFontMetricsF(painter.font())
        shown = metrics.elidedText(footer, Qt.TextElideMode.ElideRight, box.width - 24)
        painter.drawText(
            QRectF(box.x + 12, box.bottom - LOOP_FOOTER - 2, box.width - 24, LOOP_FOOTER),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            shown,
        )

    def _paint_node(self, painter: QPainter, palette: QPalette, name: str, box: Box) -> None:
        node = self._graph.node(name)
        if node is None:
            return
        view = self.node_view(name)
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        window = palette.color(QPalette.ColorRole.Window)
        status = self._status_color(palette, view.status)
        dark = is_dark(palette)
        skipped = view.status in ("skipped", "stopped")
        stacked = node.best_of > 1
        width = box.width - (2 * BEST_OF_OFFSET if stacked else 0)
        height = box.height - (2 * BEST_OF_OFFSET if stacked else 0)
        rect = QRectF(box.x + 0.5, box.y + 0.5, width - 1, height - 1)
        if view.status in _STATUS_HUES:
            border = mix(base, status, 0.85)
            fill = mix(base, status, 0.22 if dark else 0.12)
        else:
            border = mix(window, text, 0.28)
            fill = mix(base, window, 0.5) if skipped else base
        if node.agent in self._unknown_agents:
            border = QColor.fromHslF(SEVERITY_HUES["error"] / 360, 0.7, 0.5)
        pen_style = (
            Qt.PenStyle.DashLine
            if skipped or node.agent in self._unknown_agents
            else Qt.PenStyle.SolidLine
        )
        if stacked:  # the other attempts, peeking out below and to the right
            for copy in (2, 1):
                shifted = rect.translated(BEST_OF_OFFSET * copy, BEST_OF_OFFSET * copy)
                painter.setPen(QPen(border, 1))
                painter.setBrush(mix(fill, window, 0.25 * copy))
                painter.drawRoundedRect(shifted, 7, 7)
        painter.setPen(QPen(border, 2.0 if view.status == "running" else 1.2, pen_style))
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, 7, 7)

        # status dot, then the name; the agent (or the note) below in smaller type
        dot = QRectF(rect.x() + 10, rect.y() + 10, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(status if view.status != "idle" else mix(base, text, 0.3))
        painter.drawEllipse(dot)
        ink = mix(text, window, 0.45) if skipped else text
        painter.setFont(self._name_font())
        painter.setPen(ink)
        name_rect = QRectF(rect.x() + 24, rect.y() + 3, rect.width() - 30, 20)
        badges = []
        if view.iteration is not None:
            badges.append(f"#{view.iteration}")
        if stacked:
            badges.append(view.attempts or f"×{node.best_of}")
        metrics = QFontMetricsF(painter.font())
        badge_text = "  ".join(badges)
        badge_width = metrics.horizontalAdvance(badge_text) + 4 if badges else 0.0
        title, second = name, node.agent
        if is_unnamed(name):  # a step of a single/parallel/chain preset: known by its agent
            title, second = node.agent, name.replace("-", " ")
        painter.drawText(
            name_rect.adjusted(0, 0, -badge_width, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(title, Qt.TextElideMode.ElideRight, name_rect.width() - badge_width),
        )
        if badges:
            painter.setPen(mix(ink, window, 0.3))
            painter.drawText(
                name_rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, badge_text
            )
        painter.setFont(self._small_font())
        quiet = secondary_text(palette)
        painter.setPen(mix(quiet, window, 0.3) if skipped else quiet)
        if node.kind != "step":
            second = f"{second} · {node.kind}"
        second = view.note or second
        small = QFontMetricsF(painter.font())
        line_rect = QRectF(rect.x() + 10, rect.y() + 23, rect.width() - 16, 18)
        painter.drawText(
            line_rect,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            small.elidedText(second, Qt.TextElideMode.ElideRight, line_rect.width()),
        )
        if node.gate:
            self._paint_gate(painter, palette, rect, view.status == "waiting")

    def _paint_gate(
        self, painter: QPainter, palette: QPalette, rect: QRectF, waiting: bool
    ) -> None:
        """Two bars on a round badge astride the box's left edge: a person holds it here."""
        amber = QColor.fromHslF(SEVERITY_HUES["warning"] / 360, 0.8, 0.5)
        base = palette.color(QPalette.ColorRole.Base)
        centre = QPointF(rect.x(), rect.center().y())
        painter.setPen(QPen(amber, 1.4))
        painter.setBrush(amber if waiting else base)
        painter.drawEllipse(centre, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(base if waiting else amber)
        painter.drawRect(QRectF(centre.x() - 3.5, centre.y() - 4, 2.4, 8))
        painter.drawRect(QRectF(centre.x() + 1.1, centre.y() - 4, 2.4, 8))


class GraphView(QScrollArea):
    """A :class:`GraphCanvas` as tall as its graph (a one-row chain leaves no empty band under
    it), up to :attr:`max_height`; a bigger graph scrolls (a 100-step preset still fits the
    header). A horizontal scroll bar is given room only while the graph is wider than the view:
    the panes below move once when the window gets too narrow for the graph, not otherwise."""

    def __init__(self, max_height: int = 260, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GraphView")
        self.canvas = GraphCanvas()
        self.max_height = max_height
        self._bar_shown = False
        self.setWidget(self.canvas)
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # transparent: the application style sheet (QScrollArea#GraphView)
        self.viewport().setAutoFillBackground(False)
        self.canvas.setAutoFillBackground(False)

    def set_graph(self, graph: PipelineGraph, unknown_agents: set[str] | None = None) -> None:
        self.canvas.set_graph(graph, unknown_agents)
        self._bar_shown = self._needs_bar(self.width())
        self.updateGeometry()

    def describe(self) -> str:
        return self.canvas.describe()

    def _needs_bar(self, width: int) -> bool:
        margins = self.contentsMargins()
        room = width - margins.left() - margins.right()
        if self.canvas.sizeHint().height() + 2 > self.max_height:  # a vertical bar takes room
            room -= self.verticalScrollBar().sizeHint().width()
        return self.canvas.sizeHint().width() > room

    def _wanted_height(self) -> int:
        """The whole graph, and a horizontal scroll bar when the graph is wider than the view."""
        margins = self.contentsMargins()
        bar = self.horizontalScrollBar().sizeHint().height() if self._bar_shown else 0
        return self.canvas.sizeHint().height() + bar + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        return QSize(
            self.canvas.sizeHint().width() + 2, min(self.max_height, self._wanted_height())
        )

    def minimumSizeHint(self) -> QSize:
        return QSize(80, min(self.max_height, self.sizeHint().height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        shown = self._needs_bar(event.size().width())
        if shown != self._bar_shown:
            self._bar_shown = shown
            self.updateGeometry()
