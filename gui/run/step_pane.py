"""One step of a run as a card: a header that says how it is doing, and its stream of items.

The header reads ``▾ ● 2  planner  claude-sonnet-4-5   waiting for approval   3 turns ↑1.2k
↓850 $0.0123  12.4 s``. The body shows the step's items (text, thinking, tool calls, notices).

The chevron (or a click on the header) folds a pane to its header and a one-line summary —
status, tool calls, items, the answer's first words — and opens it again; it points down
whenever items are shown. Open, a pane shows the last :data:`COLLAPSED_ITEMS` items
("Show all N items" or Ctrl+O shows everything; that is "expanded") — but
widgets exist only for a window at the end of the list, :data:`EXPANDED_PAGE` items at first
(:data:`LIVE_PAGE` for a running step that expanded by itself), grown a page at a time by
"Show earlier items". One live update creates at most :data:`MAX_NEW_WIDGETS` widgets: in a
flood the window jumps to the newest items instead of building every one of them on the way.
Everything else stays in the model (:class:`~core.record.run_state.StepState`), so a step with
50,000
items costs a few hundred widgets at most, and a collapsed one ten. Items are only ever
appended, so the window slides: new items get widgets at the end, the oldest widgets are
dropped at the front.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QRectF, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.model.cost import cost_reason
from core.model.events import UsageStats
from core.record.run_state import Item, StepState, TextBlock
from gui.changes import ChangesSection
from gui.run.review_table import ReviewTable, counts_text
from gui.run.run_header import home_relative
from gui.run.step_items import TextItem, make_item_widget, refresh_item_widget
from gui.run.step_menu import StepMenuButton
from gui.run.step_message_box import StepMessageBox, box_mode
from gui.run.tool_call_row import ToolCallRow
from gui.theme import NORMAL, SEMIBOLD, mix, set_font, set_tone
from gui.widgets import ElidedLabel, HeaderToggleMixin, PlainLabel
from gui.widgets.plain_text import markdown_line, plain_tip
from gui.widgets.run_status import (
    PHASE_LABELS,
    StatusIcon,
    fill_color,
    format_seconds,
    status_tone,
)
from gui.widgets.turn_work import later

AGENT_KEPT = 180
"""Width (px) of an agent's name kept whole in a narrow pane header while the rest give way."""
MODEL_KEPT = 60
"""Width (px) of the model's name kept while the usage figures give way (``claude…``): little,
so that a parallel task's column still has room for the agent's whole name."""
HIGHLIGHT_MS = 2500
"""How long a pane reached through a link stays highlighted."""
COLLAPSED_ITEMS = 10
EXPANDED_PAGE = 200
"""Widgets an expanded pane starts with; "Show earlier items" adds this many more."""
LIVE_PAGE = 50
"""Widgets of a running step's pane that expanded by itself (it follows the newest items;
nobody reads fifty items back while they stream in)."""
MAX_NEW_WIDGETS = 2
"""Widgets one update may create (a text item and its Markdown view take 2-4 ms to build, show
and lay out; four of them were the largest part of a flood's longest turns). When more items
arrived at once (a flood: over 40 a second at 20 updates a second), the window restarts at the
newest ones; the others stay one click away ("Show earlier items")."""
GROW_PER_TURN = 1
"""Widgets a pane adds per job while it fills in by itself (a run just opened, a step folding
back), at 4-10 ms a Markdown view: the jobs of every pane share one budget a turn
(:mod:`gui.widgets.turn_work`), which a job of two widgets overran by as much again."""


def graph_place(step: StepState) -> str:
    """Where a step of a graph run stands, as the graph above the panes names it: its node,
    its loop iteration, its best-of attempt ("" for steps of other runs)."""
    if not step.node:
        return ""
    place = step.branch or step.node
    return f"{place} · iteration {step.iteration}" if step.iteration else place


CARD_RADIUS = 8
"""The card's corner radius; its outline, corners and accent bar lie within this of its edge."""


class StepPane(HeaderToggleMixin, QFrame):
    """A step's card. Built from a :class:`StepState`; :meth:`sync` updates it from the same
    step later. GUI thread only. :attr:`expandedChanged` reports the new expanded state."""

    expandedChanged = Signal(bool)
    commentsSent = Signal(int, object)
    """``(step, list[ReviewComment])``: review comments made on this step's diff (or in the
    run's Changes view), to send in a follow-up step."""
    messageSent = Signal(str, str)
    """``(mode, text)``: sent from the step's message box (see :class:`StepMessageBox`)."""

    def __init__(
        self,
        step: StepState,
        *,
        run_running: bool,
        fill_gradually: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        """``fill_gradually``: build the item widgets over a few event-loop turns (a run just
        opened with many panes) instead of before this returns."""
        super().__init__(parent)
        self.setObjectName("StepPane")
        self._fill_gradually = fill_gradually
        self._bare = fill_gradually  # the first sync builds no item widgets (see _sync_items)
        self._sync_pending = False
        self.index = step.index
        self._step = step
        self._expanded = False
        self._folded = False
        self._user_chose = False
        self._limit = EXPANDED_PAGE
        self._first = 0  # item index of self._widgets[0]
        self._widgets: list[QWidget] = []
        self._retired: list[TextItem] = []
        """Text items a flood slid out of the window, kept to show the next ones."""
        self.widgets_made = 0
        """Item widgets this pane has built so far (the run view spreads new ones over turns)."""
        self._focus_within = False
        self._highlighted = False
        self._phase = ""
        self._usage: UsageStats | None = None
        self._run_running = False
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        # Every pixel is painted here, the corners outside the card too (see paintEvent): Qt
        # paints nothing behind a card (the view's background, a fifth of a live run's paint
        # events).
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.header = QWidget()
        self.header.setCursor(Qt.CursorShape.PointingHandCursor)
        self.chevron = QToolButton()
        self.chevron.setAutoRaise(True)
        self.chevron.setArrowType(Qt.ArrowType.DownArrow)
        self.chevron.setToolTip("Fold to the header")
        self.chevron.clicked.connect(self.toggle_folded)
        self.icon = StatusIcon(step.phase, 18)
        self.number = QLabel(str(step.index + 1))
        set_font(self.number, weight=SEMIBOLD)
        set_tone(self.number, "secondary")
        # Agent, model and usage give way with an ellipsis (whole in the tooltip) when the
        # pane is narrow, as a parallel task's column is: the usage figures and the model
        # first, the agent's name last (it says whose pane this is).
        self.agent = ElidedLabel(
            step.agent, Qt.TextElideMode.ElideRight, prefer_full=True, keep=AGENT_KEPT
        )
        set_font(self.agent, weight=SEMIBOLD, pixel_size=14)
        self.node = PlainLabel("")
        """Where in a graph run this step is: ``check · iteration 2``, ``attempt#2``."""
        self.node.setObjectName("StepNode")
        set_font(self.node, weight=SEMIBOLD)
        set_tone(self.node, "secondary")
        self.node.hide()
        self.planned_node = ""
        """The node a graph run planned for this step, shown until the step says its own."""
        self.model = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True, keep=MODEL_KEPT)
        set_tone(self.model, "secondary")
        self.phase = QLabel("")
        self.issues = QLabel("")
        self.issues.setObjectName("StepIssues")
        self.issues.hide()
        self.review: ReviewTable | None = None
        self.changes: ChangesSection | None = None
        self.output_file: QLabel | None = None
        """The file the answer was also written to (``output: <file name>``), as a link."""
        self.usage = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True)
        set_tone(self.usage, "secondary")
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.duration = QLabel("")
        set_tone(self.duration, "secondary")
        self.duration.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.duration.setMinimumWidth(48)
        row = QHBoxLayout(self.header)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.chevron)
        row.addWidget(self.icon)
        row.addWidget(self.number)
        row.addWidget(self.agent)
        row.addWidget(self.node)
        row.addWidget(self.model)
        row.addWidget(self.phase)
        row.addWidget(self.issues)
        row.addStretch(1)
        row.addWidget(self.usage)
        row.addWidget(self.duration)
        self.menu_button = StepMenuButton(step.index)
        row.addWidget(self.menu_button)

        self.task = ElidedLabel("", Qt.TextElideMode.ElideRight)
        set_tone(self.task, "secondary")
        self.task.setContentsMargins(30, 0, 0, 0)
        # A step working in its own folder says where: the run header shows only the run's.
        self.folder = ElidedLabel("", Qt.TextElideMode.ElideMiddle)
        self.folder.setObjectName("StepFolder")
        set_tone(self.folder, "secondary")
        self.folder.setContentsMargins(30, 0, 0, 0)
        self.folder.hide()
        # What Baton's loop added to the system prompt: context files, skills, their cost.
        self.context = ElidedLabel("", Qt.TextElideMode.ElideRight)
        self.context.setObjectName("StepContext")
        set_tone(self.context, "secondary")
        self.context.setContentsMargins(30, 0, 0, 0)
        self.context.hide()

        self.summary = ElidedLabel("", Qt.TextElideMode.ElideRight)
        self.summary.setObjectName("StepSummary")
        set_tone(self.summary, "secondary")
        self.summary.setContentsMargins(30, 0, 0, 0)
        self.summary.hide()

        self.body = QWidget()
        self._body_layout = QVBoxLayout(self.body)
        self._body_layout.setContentsMargins(30, 4, 0, 0)
        self._body_layout.setSpacing(4)
        self.earlier = QPushButton("")
        self.earlier.setFlat(True)
        self.earlier.setCursor(Qt.CursorShape.PointingHandCursor)
        set_tone(self.earlier, "link")
        self.earlier.clicked.connect(self._show_earlier)
        self.earlier.hide()
        self.error = PlainLabel("")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        self._body_layout.addWidget(self.earlier, 0, Qt.AlignmentFlag.AlignLeft)
        self._body_layout.addWidget(self.error)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 14, 10)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(self.task)
        layout.addWidget(self.folder)
        layout.addWidget(self.context)
        layout.addWidget(self.summary)
        layout.addWidget(self.body)
        self.message_box: StepMessageBox | None = None
        """Talk to the running step, or continue the finished one (:attr:`messageSent`);
        under the items, so a folded pane hides it too. Made at the turn after the pane,
        when the step has one: a text editor and its button were a sixth of a pane's cost,
        in the turn that built the pane (open a run: one pane a turn)."""
        self._box_pending = False
        self.sync(step, run_running=run_running)

    # ---------------------------------------------------------------- public API

    def is_expanded(self) -> bool:
        return self._expanded

    def is_folded(self) -> bool:
        return self._folded

    def set_folded(self, folded: bool) -> None:
        """Fold to the header and a one-line summary, or show the items again."""
        if folded == self._folded:
            return
        self._folded = folded
        self._user_chose = True
        self.chevron.setArrowType(Qt.ArrowType.RightArrow if folded else Qt.ArrowType.DownArrow)
        self.chevron.setToolTip("Show the items" if folded else "Fold to the header")
        self.body.setVisible(not folded)
        self.summary.setVisible(folded)
        if folded:
            self.summary.set_full_text(step_summary(self._step))
        else:
            self._sync_items()

    def toggle_folded(self) -> None:
        self.set_folded(not self._folded)

    def reveal_call(self, call_id: str) -> QWidget | None:
        """Make the tool call ``call_id`` shown and open; its row, if the step has it."""
        index = next(
            (
                i
                for i, item in enumerate(self._step.items)
                if getattr(item, "call_id", "") == call_id
            ),
            None,
        )
        if index is None:
            return None
        self.set_folded(False)
        self.set_expanded(True)
        while self._first > index:
            self._show_earlier()
        row = self._widgets[index - self._first]
        if isinstance(row, ToolCallRow):
            row.set_expanded(True)
        return row

    def flash(self) -> None:
        """Highlight the pane for a few seconds: "this is where you were sent"."""
        self._highlighted = True
        self.update()
        QTimer.singleShot(HIGHLIGHT_MS, self, self._end_highlight)

    def is_highlighted(self) -> bool:
        return self._highlighted

    def _end_highlight(self) -> None:
        self._highlighted = False
        self.update()

    def set_expanded(self, expanded: bool, *, by_user: bool = True) -> None:
        """Show all items (expanded) or the last few; ``by_user`` stops automatic changes."""
        self._user_chose = self._user_chose or by_user
        if expanded == self._expanded:
            return
        self._expanded = expanded
        self._limit = EXPANDED_PAGE if by_user else LIVE_PAGE
        if by_user and self._folded:
            self.set_folded(False)
        # An automatic change to a pane already showing items (a step that just started or
        # finished, live) keeps what it has: no rebuilding of widgets in the middle of a run.
        self._sync_items(bounded=not by_user and (self._live_window() or bool(self._widgets)))
        self.expandedChanged.emit(expanded)

    def toggle_expanded(self) -> None:
        self.set_expanded(not self._expanded)

    def item_widgets(self) -> list[QWidget]:
        """The widgets shown, oldest first (for tests and keyboard navigation)."""
        return list(self._widgets)

    def first_shown_item(self) -> int:
        """Index in ``step.items`` of the first item that has a widget."""
        return self._first

    def sync(self, step: StepState, *, run_running: bool) -> None:
        """Bring the pane up to date with ``step`` (cheap when little changed)."""
        self._step = step
        self._run_running = run_running
        if self.agent.full_text() != step.agent:  # a graph run's extra iterations: unnamed
            self.agent.set_full_text(step.agent)
        node = graph_place(step) or self.planned_node
        if node != self.node.text():
            self.node.setText(node)
            self.node.setVisible(bool(node))
        phase: str = step.phase
        if phase in ("running", "waiting") and not run_running:
            phase = "interrupted"  # a saved run that stopped mid-step: it will never finish
        if phase != self._phase:
            self._phase = phase
            self._on_phase_changed(phase)
            self.menu_button.comment_action.setEnabled(phase == "ok")
        model = step.model or ""
        if step.reused_from:
            model = f"reused from run {step.reused_from}"
        if self.model.full_text() != model:
            self.model.set_full_text(model)
        if step.usage is not self._usage:  # frozen: a new object means new figures
            self._usage = step.usage
            line = step.usage.model_copy(update={"model": None}).line()
            self.usage.set_full_text(line)
            reason = cost_reason(step.usage.cost, step.usage.priced)
            if reason:  # "$—" or "≥$…": say why
                self.usage.setToolTip(f"{line}\n{reason}")
        task = " ".join(step.task.split())
        if task != self.task.full_text():
            self.task.set_full_text(task)
        self.task.setVisible(bool(task))  # an imported transcript may have no task
        folder = f"in {home_relative(step.folder)}" if step.folder else ""
        if folder != self.folder.full_text():
            self.folder.set_full_text(folder)
            self.folder.setToolTip(plain_tip(step.folder))
            self.folder.setVisible(bool(folder))
        context = step.context.line() if step.context is not None else ""
        if context != self.context.full_text():
            self.context.set_full_text(context)
            self.context.setToolTip(plain_tip(context))
            self.context.setVisible(bool(context))
        if step.started is not None and step.finished is not None:
            self.duration.setText(format_seconds(step.finished - step.started))
        error = step.error or ""
        if step.phase == "aborted" and error:
            error = f"Aborted: {error}"
        elif error:
            error = f"Error: {error}"
        if error != self.error.text():
            self.error.setText(error)
            self.error.setVisible(bool(error))
        self._show_structured(step)
        self._show_output_file(step)
        self._update_message_box(step, run_running)
        if step.changes is not None and step.changes.files:
            if self.changes is None:
                self.changes = ChangesSection()
                self.changes.commentsSent.connect(self.commentsSent)
                self._add_above_box(self.changes)
            self.changes.set_changes(step.changes, run_running=run_running)
        if self._folded:  # no widgets are kept up to date while nobody can see them
            self.summary.set_full_text(step_summary(step))
            return
        self._sync_items(bounded=self._live_window(), gradual=True)

    def tick(self, elapsed: float) -> None:
        """Update the running duration from the run's elapsed time."""
        step = self._step
        if step.started is not None and step.finished is None and self._run_running:
            self.duration.setText(format_seconds(max(0.0, elapsed - step.started)))

    def set_focus_within(self, focused: bool) -> None:
        if focused != self._focus_within:
            self._focus_within = focused
            self.update()

    # ---------------------------------------------------------------- Qt overrides

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        background = base if self._phase != "not_run" else mix(base, text, 0.03)
        inside = self.rect().adjusted(CARD_RADIUS, CARD_RADIUS, -CARD_RADIUS, -CARD_RADIUS)
        if inside.contains(event.rect()):
            # A child repainting (a growing answer, a spinner) shows only the card's plain
            # inside: no antialiased outline and accent to draw over the card's whole size,
            # which cost ~0.24 ms a paint, a thousand paints in 8 s of a live run.
            painter.fillRect(event.rect(), background)
            painter.end()
            return
        # The corners outside the rounded card: what the run view shows around the panes.
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Window))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        border = (
            palette.color(QPalette.ColorRole.Highlight)
            if self._focus_within or self._highlighted
            else mix(base, text, 0.16)
        )
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QPen(border, 2.5 if self._highlighted else 1.0))
        painter.setBrush(background)
        painter.drawRoundedRect(rect, CARD_RADIUS, CARD_RADIUS)
        if self._phase in ("running", "waiting", "error"):
            accent = fill_color(palette, self._phase)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(accent)
            painter.drawRoundedRect(QRectF(1.5, 8, 3, max(0.0, rect.height() - 16)), 1.5, 1.5)
        painter.end()

    def header_clicked(self) -> None:
        self.toggle_folded()

    # ---------------------------------------------------------------- private

    def _on_phase_changed(self, phase: str) -> None:
        self.icon.set_phase("aborted" if phase == "interrupted" else phase)
        label = PHASE_LABELS[phase] if phase != "ok" else ""
        self.phase.setText(label)
        set_tone(self.phase, status_tone(phase))
        set_font(self.phase, weight=SEMIBOLD if phase in ("waiting", "error") else NORMAL)
        greyed = phase in ("not_run", "pending")
        set_tone(self.agent, "secondary" if greyed else None)
        if self.error.isVisible() or phase == "error":
            set_tone(self.error, "error")
        if phase == "aborted":
            set_tone(self.error, "secondary")
        if not self._user_chose:  # the running step shows everything; finished ones a summary
            self.set_expanded(phase in ("running", "waiting"), by_user=False)
        self.update()

    def _show_structured(self, step: StepState) -> None:
        """A review result: its counts in the header, its table under the items."""
        result = step.structured
        if result is None or "issues" not in result:
            return
        text = counts_text(result)
        if text != self.issues.text():
            self.issues.setText(text)
            self.issues.setVisible(True)
        if self.review is None:
            self.review = ReviewTable()
            self._add_above_box(self.review)
            self.review.set_result(result)

    def _show_output_file(self, step: StepState) -> None:
        """``output: <file name>``: a link that opens the file (or why it was not written)."""
        written = step.output_file
        if written is None:
            return
        if self.output_file is None:
            self.output_file = QLabel()
            self.output_file.setObjectName("outputFile")
            self.output_file.setWordWrap(True)
            self.output_file.setOpenExternalLinks(True)
            self.output_file.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
            self._add_above_box(self.output_file)
        self.output_file.setText(output_file_text(written.path, written.error))
        self.output_file.setToolTip(plain_tip(written.path))

    def show_message_problem(self, text: str) -> None:
        """Say under the message box why the last message was not delivered."""
        self._make_message_box().show_problem(text)

    def _update_message_box(self, step: StepState, run_running: bool) -> None:
        if self.message_box is not None:
            self.message_box.update_for(step, run_running=run_running)
        elif not self._box_pending and box_mode(step, run_running=run_running) is not None:
            self._box_pending = True
            later(self, self._make_message_box)

    def _make_message_box(self) -> StepMessageBox:
        """The box, made now if it was not yet, showing what the step needs now."""
        if self.message_box is None:
            self.message_box = StepMessageBox()
            self.message_box.sent.connect(self.messageSent)
            self._body_layout.addWidget(self.message_box)
            self.message_box.update_for(self._step, run_running=self._run_running)
        return self.message_box

    def _add_above_box(self, widget: QWidget) -> None:
        """Add a section under the items; the message box stays the pane's last row."""
        if self.message_box is None:
            self._body_layout.addWidget(widget)
        else:
            self._body_layout.insertWidget(self._body_layout.indexOf(self.message_box), widget)

    def _show_earlier(self) -> None:
        if not self._expanded:
            self.set_expanded(True)
            return
        self._limit = len(self._widgets) + EXPANDED_PAGE
        self._sync_items()

    def _sync_items(self, *, bounded: bool = False, gradual: bool = False) -> None:
        """Slide the widget window to the end of the items and refresh what it shows.

        ``bounded`` (live updates) creates at most :data:`MAX_NEW_WIDGETS` widgets and never
        grows the window backwards; user actions (expand, show earlier) build it in full.
        """
        if self._folded:
            return  # built when the pane opens again
        items = self._step.items
        count = len(items)
        limit = self._limit if self._expanded else COLLAPSED_ITEMS
        start = max(0, count - limit)
        if bounded and self._widgets:
            start = max(start, self._first)
        cut = self._phase == "interrupted"
        if start < self._first and self._widgets and gradual and not bounded:
            self._grow_backwards(start, cut)
        elif start < self._first:  # the window grew backwards: rebuild it
            self._clear_widgets()
        built_to = self._first + len(self._widgets) if self._widgets else start
        if bounded and count - max(start, built_to) > MAX_NEW_WIDGETS:
            start = count - MAX_NEW_WIDGETS  # a flood: keep up with the newest items only
        while self._widgets and self._first < start:
            self._retire(self._widgets.pop(0), keep=bounded)
            self._first += 1
        if not self._widgets:
            self._first = start
            if self._fill_gradually and not bounded and count - start > GROW_PER_TURN:
                # A pane shown for the first time (a run just opened) is built bare, its
                # newest items at a later turn and the ones before them over the next ones,
                # like _grow_backwards: a pane with its items at once cost 25 ms.
                self._first = count if self._bare else count - GROW_PER_TURN
                self._sync_later()
        live = self._run_running and self._step.phase in ("running", "waiting")
        last = count - 1
        for offset, widget in enumerate(self._widgets):
            index = self._first + offset
            refresh_item_widget(widget, items[index], live and index == last, interrupted=cut)
        for index in range(self._first + len(self._widgets), count):
            item, item_live = items[index], live and index == last
            widget = self._reused_for(item, item_live) or make_item_widget(
                item, item_live, interrupted=cut
            )
            self._body_layout.insertWidget(1 + len(self._widgets), widget)
            widget.show()
            self._widgets.append(widget)
            self.widgets_made += 1
        if not bounded:
            self._drop_retired()
        if self._bare:
            self._bare = False  # the next sync builds the newest items, then grows back
        else:
            self._fill_gradually = False
        self._update_earlier(self._first)

    def _sync_later(self) -> None:
        self._sync_pending = True
        later(self, self._sync_pending_items)

    def _sync_pending_items(self) -> None:
        self._sync_pending = False
        self._sync_items(bounded=self._live_window(), gradual=True)

    def is_filled(self) -> bool:
        """False while the item widgets of a pane just shown are still built, a few per turn
        (a search waits for them before marking its match)."""
        return not self._bare and not self._sync_pending

    def _grow_backwards(self, start: int, cut: bool) -> None:
        """Add the widgets before the window, :data:`GROW_PER_TURN` per event-loop turn.

        A step that finishes after a flood folds back to its last items, most of which were
        never built; creating them all at once (Markdown views cost ~4 ms each) stalled the
        window for 40 ms, so the rest follows on the next turns.
        """
        items = self._step.items
        until = max(start, self._first - GROW_PER_TURN)
        for index in range(self._first - 1, until - 1, -1):
            widget = make_item_widget(items[index], False, interrupted=cut)
            self._body_layout.insertWidget(1, widget)
            widget.show()
            self._widgets.insert(0, widget)
        self._first = until
        if until > start:
            self._sync_later()

    def _live_window(self) -> bool:
        """A running step's window follows new items; a finished one is built in full."""
        return self._run_running and self._step.phase in ("running", "waiting")

    def _update_earlier(self, hidden: int) -> None:
        if hidden <= 0:
            self.earlier.hide()
            return
        if self._expanded:
            more = min(EXPANDED_PAGE, hidden)
            self.earlier.setText(f"Show {more:,} earlier items ({hidden:,} hidden)")
        else:
            self.earlier.setText(f"Show all {hidden + len(self._widgets):,} items")
        self.earlier.show()

    def _clear_widgets(self) -> None:
        for widget in self._widgets:
            self._remove_widget(widget)
        self._widgets = []
        self._drop_retired()

    def _retire(self, widget: QWidget, *, keep: bool) -> None:
        """Take a widget out of the window; in a flood (``keep``), a text item waits, hidden,
        to show one of the next items (:meth:`_reused_for`): a new one with its Markdown view
        and the old one's deletion cost ~4 ms, showing another text in it ~2."""
        if keep and isinstance(widget, TextItem) and len(self._retired) < MAX_NEW_WIDGETS:
            self._body_layout.removeWidget(widget)
            widget.hide()
            self._retired.append(widget)
        else:
            self._remove_widget(widget)

    def _reused_for(self, item: Item, live: bool) -> QWidget | None:
        """A retired text item showing ``item`` now, if it is an answer's text and one waits."""
        if not self._retired or not isinstance(item, TextBlock) or item.kind != "text":
            return None
        widget = self._retired.pop()
        widget.show_block(item, live)
        return widget

    def _drop_retired(self) -> None:
        for widget in self._retired:
            widget.deleteLater()
        self._retired = []

    def _remove_widget(self, widget: QWidget) -> None:
        self._body_layout.removeWidget(widget)
        widget.hide()
        widget.deleteLater()


def output_file_text(path: str, error: str | None) -> str:
    """Rich text for the pane: a link to the written file, or plain words on why not."""
    name = html.escape(Path(path).name, quote=False)
    if error:
        return f"Answer not written to {name}: {html.escape(error, quote=False)}"
    url = html.escape(QUrl.fromLocalFile(path).toString(), quote=True)
    return f'Answer also written to <a href="{url}">{name}</a>'


def step_summary(step: StepState) -> str:
    """One line for a folded pane: how it went, how much it did, how its answer starts."""
    calls = len(step.calls)
    parts = [PHASE_LABELS.get(step.phase, step.phase)]
    if calls:
        parts.append(f"{calls} tool call{'s' if calls != 1 else ''}")
    parts.append(f"{len(step.items)} item{'s' if len(step.items) != 1 else ''}")
    answer = markdown_line(step.output) if step.output else ""
    line = " · ".join(parts)
    return f"{line} — {answer}" if answer else line
