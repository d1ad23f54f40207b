"""The run view: watch a run live, or read a saved one — the same widget for both.

:class:`RunView` is the single entry point the main window needs::

    view = RunView()
    view.cancelRequested.connect(runner.cancel)   # the owner decides how to cancel
    runner.listeners.append(view.add_event)       # live: events as they happen
    view.load_events(core.record.run_files.load_run(path))    # or a saved run, replayed at once

One view shows one run: make a new one per run.

Events go through a :class:`~gui.run.run_model.RunModel`, which folds them into a
:class:`~core.record.run_state.RunState` at most ~20 times a second and says which steps changed;
the
view then syncs one :class:`~gui.run.step_pane.StepPane` per changed step. A run of more than
one step shows its pipeline as a graph under the header (:class:`~gui.widgets.graph_canvas.
GraphView`, fed by the model's :class:`~gui.run.graph_progress.GraphProgress`): each node in its
live status; clicking a node opens and scrolls to its latest pane. Under a header
(:class:`~gui.run.run_header.RunHeader`) the panes sit in a scroll area that follows the stream
while the reader is at the bottom, and stays put once they scroll up to read (it follows again
when they scroll back down). Ctrl+O expands or collapses the pane that has the focus.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core.config.atomic import atomic_write_text
from core.history.run_export import state_to_markdown
from core.model.events import Event
from core.record.run_state import RunState, StepState
from gui.run.gate_panel import GatePanel
from gui.run.markdown_stream import warm_up
from gui.run.run_header import RunHeader
from gui.run.run_model import RunModel
from gui.run.step_pane import StepPane
from gui.theme import set_tone
from gui.widgets.graph_canvas import GraphView
from gui.widgets.turn_work import later, turn_deadline

TICK_MS = 250
"""How often the elapsed time and running step durations are redrawn while live."""
MEASURE_CHARS = 220
"""The widest a step's column gets, in average characters: up to a 1600 px window the panes use
the whole width (tool output, diffs and tables need it); only on a wider screen does the column
stop growing and sit centred, so lines stay within reach of the eye."""
PARALLEL_MIN_WIDTH = 480
"""The narrowest a parallel task's column gets before the panes stack instead."""
PANE_CHROME = 80
"""A pane's own margins and the indent of its items, around the prose."""
SIDE_MARGIN = 16
FOLLOW_SLACK = 24
"""Pixels from the bottom that still count as "at the bottom" for auto-scroll."""
GRAPH_MAX_HEIGHT = 220
"""The run's graph scrolls beyond this: the panes stay the larger part of the view."""
NEW_WIDGETS_PER_TURN = 1
"""New item widgets (a tool call's row, the text after it) a live sync builds in one turn. A
widget costs more after the turn than in it — Qt polishes, lays out and paints it then, where
the turn's budget cannot see: ~10 ms each on a slow machine — and eight parallel steps that
call a tool together built sixteen in two turns of 45–50 ms (benchmarks/live.py; one a turn:
30–38 ms). The rest are built at the next turns, a few milliseconds apart."""


class RunView(QWidget):
    """One run: header plus a pane per step. GUI thread only.

    Signals: :attr:`cancelRequested` when the person clicks Cancel (the owner calls
    ``Runner.cancel()``; the view shows "Cancelling…" until ``run_finished`` arrives).
    """

    cancelRequested = Signal()
    rerunRequested = Signal()
    """The header's Re-run (also in a failed run's banner)."""
    resumeRequested = Signal()
    """A failed or cancelled run's "Resume from step N"."""
    rerunFromRequested = Signal(int)
    """(0-based step): "Re-run from here…" on that step's pane."""
    steerRequested = Signal(int, str)
    """``(step, text)``: a message for a running step (the owner calls ``Runner.steer``)."""
    continueRequested = Signal(int, str)
    """``(step, text)``: a follow-up to a finished step, to run as a continuation."""
    commentRequested = Signal(int)
    """(0-based step): "Comment on this step…" on that step's pane."""
    gateDecisionRequested = Signal(str, str, object, object)
    """``(gate_id, decision, text, note)``: the person answered a waiting gate (the owner calls
    ``Runner.decide_gate``; a refusal comes back through :meth:`show_gate_problem`)."""
    diffCommentsSent = Signal(int, object)
    """``(step, list[ReviewComment])``: "Send comments" in a diff viewer of this run."""

    def __init__(self, parent: QWidget | None = None, *, model: RunModel | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunView")
        self.model = model or RunModel(self)
        self._panes: list[StepPane] = []
        self._fresh: set[int] = set()  # panes built in this batch: already in sync
        self._unsynced: set[int] = set()
        """Changed steps whose panes wait for the next turn (see :func:`turn_deadline`)."""
        self._last_synced = -1  # the next turn starts after it: every pane gets its turn
        self._sync_scheduled = False
        self._generation = 0
        self._gradual_pending = False
        """Panes of the run's start still being built a few per turn."""
        """Counts runs shown: panes still to build for an earlier one are not built."""
        self._fill_gradually = False  # a run opened from a file: panes fill over a few turns
        self._panes_fill_gradually = False  # ...for every pane of it, built in later turns too
        self._follow = True
        self._pending_focus: (
            tuple[int, str | None, bool, Callable[[StepPane], object] | None] | None
        ) = None
        """A step (and tool call) to show once the panes exist (:meth:`focus_step`)."""
        self._scrolling = False
        self._anchor: QWidget | None = None
        """The pane (or row) a focus_step went to: kept in view while the panes around it fill
        in, a few per turn, until the person scrolls."""

        self.header = RunHeader()
        self.header.cancelRequested.connect(self.cancelRequested)
        self.header.rerunRequested.connect(self.rerunRequested)
        self.header.resumeRequested.connect(self.resumeRequested)
        self.header.copyRequested.connect(self.copy_markdown)
        self.header.exportRequested.connect(self._ask_export)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Plain)
        set_tone(line, "secondary")
        line.setMaximumHeight(1)

        self._container = QWidget()
        self._container.setObjectName("RunViewPanes")
        self._panes_layout = QVBoxLayout(self._container)
        self._panes_layout.setContentsMargins(SIDE_MARGIN, 12, SIDE_MARGIN, 16)
        self._panes_layout.setSpacing(10)
        self.placeholder = QLabel("Waiting for the run to start…")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        set_tone(self.placeholder, "secondary")
        self._panes_layout.addWidget(self.placeholder)
        # Parallel tasks side by side when there is room (see _arrange); stacked otherwise.
        self._grid_host = QWidget()
        self._grid = QGridLayout(self._grid_host)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(10)
        self._grid_host.hide()
        self._panes_layout.addWidget(self._grid_host)
        self._columns = 1
        self._panes_layout.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self._container)
        bar = self.scroll_area.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(line)
        self.graph_view = GraphView(GRAPH_MAX_HEIGHT)
        self.graph_view.canvas.set_clickable(True)
        self.graph_view.canvas.nodeClicked.connect(self.open_node)
        self.graph_view.setContentsMargins(SIDE_MARGIN, 0, SIDE_MARGIN, 0)
        self.graph_view.hide()
        layout.addWidget(self.graph_view)
        self._gate_panel: GatePanel | None = None  # made when a gate first waits
        self._gate_row = QHBoxLayout()
        # No margin above or below: a hidden panel's row would still keep it (an empty band
        # under the graph); the graph's own margin and the panes' spacing frame a shown one.
        self._gate_row.setContentsMargins(SIDE_MARGIN, 0, SIDE_MARGIN, 0)
        layout.addLayout(self._gate_row)
        layout.addWidget(self.scroll_area, 1)

        self._ticker = QTimer(self)
        self._ticker.setInterval(TICK_MS)
        self._ticker.timeout.connect(self._tick)
        shortcut = QShortcut(QKeySequence("Ctrl+O"), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.toggle_focused_pane)
        warm_up()
        self.model.runStarted.connect(self._rebuild_panes)
        self.model.stepsChanged.connect(self._sync_steps)
        self.model.runChanged.connect(self._sync_run)
        self.model.graphChanged.connect(self._sync_graph)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    # ---------------------------------------------------------------- public API

    @property
    def gate_panel(self) -> GatePanel:
        """The panel a gate that waits for the person asks in, made when first needed: most
        runs have no gate, and its editor and five buttons were a tenth of opening a run."""
        if self._gate_panel is None:
            self._gate_panel = GatePanel()
            self._gate_panel.decided.connect(self.gateDecisionRequested)
            self._gate_row.addWidget(self._gate_panel)
        return self._gate_panel

    def add_event(self, event: Event) -> None:
        """A live event (any thread; see :class:`RunModel`)."""
        self.model.add_event(event)

    def add_events(self, events: Iterable[Event]) -> None:
        self.model.add_events(events)

    def load_events(self, events: Iterable[Event]) -> None:
        """Show a saved run: replayed in one batch, shown before this returns. A saved run
        is read from the top, so the view does not follow the end."""
        self._follow = False
        self.model.load_events(events)
        self.scroll_area.verticalScrollBar().setValue(0)

    def load_state(self, state: RunState) -> None:
        """Show a run folded elsewhere (read off the GUI thread), from the top."""
        self._follow = False
        self._fill_gradually = True
        self.model.load_state(state)
        self._fill_gradually = False
        self.scroll_area.verticalScrollBar().setValue(0)

    def show_reading(self, name: str) -> None:
        """Say the run is being read (shown until :meth:`load_state`)."""
        self.placeholder.setText(f"Reading {name}…")

    def state(self) -> RunState:
        return self.model.state

    def panes(self) -> list[StepPane]:
        return list(self._panes)

    def pane(self, index: int) -> StepPane:
        return self._panes[index]

    def is_following(self) -> bool:
        """True while the view scrolls along with new content."""
        return self._follow

    def to_markdown(self) -> str:
        return state_to_markdown(self.model.state)

    def copy_markdown(self) -> None:
        """Put the run on the clipboard as Markdown; the button says so for a moment."""
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.to_markdown())
            self.header.flash_copied()

    def export_markdown(self, path: Path) -> None:
        """Write the run as Markdown to ``path`` (atomically)."""
        atomic_write_text(path, self.to_markdown())

    def focus_step(
        self,
        step: int,
        call_id: str | None = None,
        *,
        highlight: bool = True,
        then: Callable[[StepPane], object] | None = None,
    ) -> None:
        """Scroll to ``step``'s pane (open, highlighted, with ``call_id``'s row open), now or —
        for a run still being read, its panes built a few per turn — as soon as its pane
        exists; ``then(pane)`` is called at that moment (a search marks its matches)."""
        self._pending_focus = (step, call_id, highlight, then)
        self._apply_focus()

    def _apply_focus(self) -> None:
        if self._pending_focus is None:
            return
        step, call_id, highlight, then = self._pending_focus
        if not 0 <= step < len(self._panes):
            return
        self._pending_focus = None
        pane = self._panes[step]
        pane.set_folded(False)
        row = pane.reveal_call(call_id) if call_id else None
        if highlight:
            pane.flash()
        if then is not None:
            then(pane)
        self._anchor = row or pane
        self._follow = False  # reading there now, not the end
        QTimer.singleShot(0, self, self._show_anchor)

    def _show_anchor(self) -> None:
        anchor = self._anchor
        if anchor is None or not isValid(anchor):
            self._anchor = None
            return
        self._scrolling = True
        self.scroll_area.ensureWidgetVisible(anchor, 0, 40)
        self._scrolling = False

    def open_node(self, node: str) -> None:
        """A click on ``node`` in the graph: its latest step's pane, opened and in view."""
        step = self.model.graph.step_for(node)
        if step is not None:
            self.focus_step(step)

    def focused_pane(self) -> StepPane | None:
        """The pane holding the keyboard focus, if any."""
        return self._pane_of(QApplication.focusWidget())

    def toggle_focused_pane(self) -> None:
        """Ctrl+O: expand or collapse the pane with the focus, else the current step's."""
        pane = self.focused_pane() or self._current_pane()
        if pane is not None:
            pane.toggle_expanded()

    # ---------------------------------------------------------------- model → widgets

    def _rebuild_panes(self) -> None:
        for pane in self._panes:
            self._panes_layout.removeWidget(pane)
            self._grid.removeWidget(pane)
            pane.deleteLater()
        self._panes = []
        self._fresh = set()
        self._unsynced = set()
        self._generation += 1
        self._columns = 0  # arrange anew
        steps = len(self.model.state.steps)
        # A pane costs 5-20 ms to build: eight built at once held the window ~0.3 s. Built one
        # a turn (beside the panes' own items, within one budget: turn_work), the first shows
        # at once and input is answered between the others — live, and for a run read from a
        # file (load_state; is_building says when it is whole). A replay (load_events) is
        # shown whole before it returns, as its callers expect.
        self._panes_fill_gradually = self._fill_gradually
        whole = not self.model.is_live() and not self._fill_gradually
        self.placeholder.setVisible(not steps)
        if self._fill_gradually and steps:
            # A run read from a file: its header, graph and tab are adopted in this turn, its
            # first pane is built in the next (together they cost 35 ms of CPU at once).
            self._gradual_pending = True
            later(self, partial(self._build_panes, self._generation))
            return
        self._build_panes(self._generation, whole=whole)

    def is_building(self) -> bool:
        """True while the panes of a run just opened or started are still being built."""
        return self._gradual_pending

    def _build_panes(self, generation: int, *, whole: bool = False) -> None:
        """Build the next pane (of the run ``generation`` was started for), or all of them
        (``whole``), then schedule the rest for the next turn."""
        if generation != self._generation:
            return  # another run started meanwhile
        state = self.model.state
        running = state.status == "running" and self.model.is_live()
        first = len(self._panes)
        while len(self._panes) < len(state.steps):
            self._panes.append(self._make_pane(state.steps[len(self._panes)], running))
            if not whole:
                break  # one a turn: the turn's budget is shared (turn_work)
        built = self._panes[first:]
        if first == 0:  # built in the batch that started the run: its sync would repeat it
            self._fresh = set(range(len(self._panes)))
        columns = self._columns
        self._arrange(self.width())  # all panes anew when the number of columns changed
        if self._columns == columns:
            self._place(first)  # else only the new ones
        for pane in built:
            pane.show()  # now, not at the layout's next turn: the view is complete on return
        self._apply_focus()
        self._gradual_pending = len(self._panes) < len(state.steps)
        if self._gradual_pending:
            later(self, partial(self._build_panes, generation))

    def _make_pane(self, step: StepState, running: bool) -> StepPane:
        # A live run's state is the runner's, ahead of the view: a pane made now may find
        # thousands of items already, so it fills over a few turns too (a saved run's does).
        gradual = self._panes_fill_gradually or self.model.is_live()
        pane = StepPane(step, run_running=running, fill_gradually=gradual)
        if self.model.state.mode == "graph":  # a planned step not started yet: its node
            pane.planned_node = self.model.graph.node_of_step.get(step.index, "")
            pane.sync(step, run_running=running)
        pane.menu_button.rerunRequested.connect(self.rerunFromRequested)
        pane.messageSent.connect(partial(self._message_sent, pane.index))
        pane.menu_button.commentRequested.connect(self.commentRequested)
        pane.commentsSent.connect(self.diffCommentsSent)
        return pane

    def _add_grown_panes(self, running: bool) -> None:
        """A graph run adds steps as it goes (a loop's next iteration, a best-of's attempts):
        each gets its pane, after the others, in the order the run started them."""
        state = self.model.state
        while len(self._panes) < len(state.steps):
            pane = self._make_pane(state.steps[len(self._panes)], running)
            self._panes.append(pane)
            self._fresh.add(pane.index)
            if self._columns == 1:
                self._panes_layout.insertWidget(len(self._panes), pane)
            else:
                self._columns = 0  # arrange anew with the new pane
                self._arrange(self.width())
            pane.show()
        self.placeholder.setVisible(not self._panes)

    def show_message_problem(self, step: int, text: str) -> None:
        """Say under step ``step``'s message box why its message was not delivered."""
        if 0 <= step < len(self._panes):
            self._panes[step].show_message_problem(text)

    def _message_sent(self, step: int, mode: str, text: str) -> None:
        signal = self.steerRequested if mode == "steer" else self.continueRequested
        signal.emit(step, text)

    def _sync_steps(self, indexes: frozenset[int]) -> None:
        state = self.model.state
        running = state.status == "running" and self.model.is_live()
        if len(state.steps) > len(self._panes) and not self._gradual_pending:
            self._add_grown_panes(running)  # a graph run's new iteration or attempt
        fresh, self._fresh = self._fresh, set()
        self._unsynced |= indexes - fresh
        if not self._sync_scheduled:  # else the turn's queued sync takes these too: two
            self._sync_some()  # budgets' worth in one turn held the window 25-35 ms

    def _sync_some(self) -> None:
        """Bring changed panes up to date for one turn's budget (:func:`turn_deadline`; eight
        streaming steps that all changed cost 40 ms at once) and at most
        :data:`NEW_WIDGETS_PER_TURN` new item widgets, the rest at the next turn — starting
        after the last one synced, so a busy first step cannot starve the others."""
        self._sync_scheduled = False
        state = self.model.state
        running = state.status == "running" and self.model.is_live()
        after = self._last_synced
        order = sorted(self._unsynced, key=lambda index: (index <= after, index))
        limit = turn_deadline()
        built = 0
        for index in order:
            self._unsynced.discard(index)
            if 0 <= index < len(self._panes):  # a pane still to build is built up to date
                pane = self._panes[index]
                made = pane.widgets_made
                pane.sync(state.steps[index], run_running=running)
                built += pane.widgets_made - made
                self._last_synced = index
                if time.perf_counter() > limit or built >= NEW_WIDGETS_PER_TURN:
                    break
        if self._unsynced and not self._sync_scheduled:
            self._sync_scheduled = True
            later(self, self._sync_some)

    def _sync_graph(self) -> None:
        progress = self.model.graph
        canvas = self.graph_view.canvas
        if canvas.graph() is not progress.graph:
            self.graph_view.set_graph(progress.graph)
            self.graph_view.setVisible(len(progress.graph.nodes) > 1)
        for name, view in progress.nodes.items():
            canvas.set_node(name, view)
        for name, loop in progress.loops.items():
            canvas.set_loop(name, loop)
        # A replayed run cannot be answered: only a live run's gate asks.
        waiting = next(iter(progress.gates.values()), None) if self.model.is_live() else None
        if waiting is not None or self._gate_panel is not None:
            self.gate_panel.show_gate(waiting, self.model.elapsed())

    def show_gate_problem(self, text: str) -> None:
        """Say in the gate panel why an answer was refused (the gate had already gone…)."""
        self.gate_panel.show_problem(text)

    def _sync_run(self) -> None:
        state = self.model.state
        live = self.model.is_live()
        self.header.update_from(state, live=live, elapsed=self.model.elapsed())
        ticking = live and state.status == "running"
        if ticking and not self._ticker.isActive():
            self._ticker.start()
            self._tick()
        elif not ticking:
            self._ticker.stop()

    def _tick(self) -> None:
        elapsed = self.model.elapsed()
        self.header.set_elapsed(elapsed)
        if self._gate_panel is not None:
            self._gate_panel.tick(elapsed)
        for pane in self._panes:
            pane.tick(elapsed)

    # ---------------------------------------------------------------- scrolling and focus

    def column_width(self) -> int:
        """The widest the steps' column gets (see :data:`MEASURE_CHARS`), measured on ordinary
        prose in the view's font: an average character is narrower than a letter of text."""
        sample = "The quick brown fox jumps over the lazy dog, then writes the plan. "
        prose = self.fontMetrics().horizontalAdvance(sample) * MEASURE_CHARS // len(sample)
        return prose + PANE_CHROME

    def columns(self) -> int:
        """How many panes stand side by side (parallel tasks on a wide window), else 1."""
        return self._columns

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange(event.size().width())

    def _arrange(self, width: int) -> None:
        """Stack the panes, or put parallel tasks in columns when at least two fit at
        :data:`PARALLEL_MIN_WIDTH`; the whole block keeps a readable width, centred."""
        column = self.column_width()
        parallel = self.model.state.mode == "parallel" and len(self._panes) > 1
        room = width - 2 * SIDE_MARGIN
        columns = min(len(self._panes), room // PARALLEL_MIN_WIDTH) if parallel else 1
        columns = max(1, columns)
        wanted = column if columns == 1 else columns * column
        side = max(SIDE_MARGIN, (width - wanted) // 2)
        self._panes_layout.setContentsMargins(side, 12, side, 16)
        if columns == self._columns:
            return
        self._columns = columns
        for pane in self._panes:
            self._panes_layout.removeWidget(pane)
            self._grid.removeWidget(pane)
        self._place(0)
        if columns > 1:
            for index in range(self._grid.columnCount()):
                self._grid.setColumnStretch(index, 1 if index < columns else 0)
        self._grid_host.setVisible(columns > 1)

    def _place(self, first: int) -> None:
        """Put the panes from ``first`` on in the current arrangement (a stack, or columns)."""
        columns = self._columns
        # In columns every pane gets the same width, whatever its contents would like.
        horizontal = QSizePolicy.Policy.Preferred if columns == 1 else QSizePolicy.Policy.Ignored
        for position in range(first, len(self._panes)):
            pane = self._panes[position]
            pane.setSizePolicy(horizontal, QSizePolicy.Policy.Maximum)
            if columns == 1:
                self._panes_layout.insertWidget(1 + position, pane)
            else:
                self._grid.addWidget(
                    pane, position // columns, position % columns, Qt.AlignmentFlag.AlignTop
                )

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._anchor is not None:  # the panes above it grew: it stays in view
            self._show_anchor()
        elif self._follow:
            self._scrolling = True
            self.scroll_area.verticalScrollBar().setValue(maximum)
            self._scrolling = False

    def _on_scrolled(self, value: int) -> None:
        if not self._scrolling:
            self._anchor = None  # the person scrolled: they read where they want
            self._follow = value >= self.scroll_area.verticalScrollBar().maximum() - FOLLOW_SLACK

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        focused = self._pane_of(new)
        for pane in self._panes:
            pane.set_focus_within(pane is focused)

    def _pane_of(self, widget: QWidget | None) -> StepPane | None:
        while widget is not None:
            if isinstance(widget, StepPane) and widget in self._panes:
                return widget
            widget = widget.parentWidget()
        return None

    def _current_pane(self) -> StepPane | None:
        active = [
            p
            for p, s in zip(self._panes, self.model.state.steps, strict=False)
            if s.phase in ("running", "waiting")
        ]
        started = [
            p
            for p, s in zip(self._panes, self.model.state.steps, strict=False)
            if s.phase != "pending" and s.phase != "not_run"
        ]
        candidates = active or started or self._panes
        return candidates[-1] if candidates else None

    def _ask_export(self) -> None:
        state = self.model.state
        suggested = f"{state.run_id or 'run'}.md"
        path, _filter = QFileDialog.getSaveFileName(
            self, "Export run as Markdown", suggested, "Markdown (*.md)"
        )
        if not path:
            return
        try:
            self.export_markdown(Path(path))
        except OSError as error:
            reason = error.strerror or str(error)
            QMessageBox.warning(
                self, "Export failed", f"The run could not be saved to {path}: {reason}."
            )
