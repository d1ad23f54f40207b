"""Live Markdown for text that is still arriving: a model's answer as it streams.

Re-rendering the whole answer for every token is how chat UIs freeze. :class:`MarkdownStream`
renders incrementally instead:

* :class:`~gui.run.markdown_render.BlockSplitter` says how much of the text is *finished* (no later
  text can change how it renders). Newly finished blocks are rendered once and appended to a
  document (:meth:`~gui.run.markdown_view.MarkdownView.append_markdown`); what is shown stays put.
* Only the open *tail* — the block still being written — is rendered again, into a small view
  below, at most every :data:`STREAM_INTERVAL_MS` (a :class:`~gui.widgets.throttle.Throttle`:
  the first delta after a quiet spell renders on the next loop turn, the rest are coalesced).
  New words that cannot change any markup (:func:`~gui.run.markdown_render.extends_plainly`) are
  appended to the tail's document as they are, without rendering Markdown at all.
* While the tail is scrolled out of sight (the reader went up to read), neither it nor newly
  finished blocks are rendered: blocks wait until a batch (:data:`HIDDEN_BATCH_CHARS`)
  has finished or the reader scrolls down to them, since every append, however small, makes
  Qt re-fit heights and repaint.
* Finished text goes into *segments* of about :data:`SEGMENT_CHARS` each, one view per
  segment, so a 200 KB answer never makes Qt lay out and paint one enormous document at every
  update; only the last segment and the tail change.
* Segments out of sight are *parked* (:meth:`~gui.run.markdown_view.MarkdownView.park`) when a
  new one opens, the text is finished or segments were painted (a scroll): their rendering is
  dropped, their height kept, and they are rendered again on the turn after they are next
  painted. Qt's rendering of a 2 MB
  answer took 170 MB; parked, memory follows what is on screen.

:meth:`MarkdownStream.finish` renders the final state at once; the tail's view becomes the
last segment (rendered again only when it does not already show the text rendered whole), so a
short answer lives in one view from its first word to its last, and none is made before text
finishes: a view is about a third of a new text item's cost, and a live run makes many.
:meth:`MarkdownStream.set_text` shows a complete text (replays): a short one with a single
render, a long one (a reopened 2 MB answer) lazily — the first slice, which is what a reader
sees first, at once, the rest a slice per event-loop turn, each cut between blocks and sized to
what the turn's budget has left (:mod:`gui.run.slice_cost`), so the window never stalls on it.
A flood of deltas that finishes many blocks at once is laid out the same way, and its open tail
waits until the backlog is laid out: what is shown stays a prefix of the text. Deltas are kept
in a
:class:`~core.record.text_buffer.TextBuffer`; a render reads only the open tail, never the whole
text.
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

from core.record.text_buffer import TextBuffer
from gui.run.markdown_render import BlockSplitter, extends_plainly, prepare_highlighting
from gui.run.markdown_view import MarkdownView
from gui.run.slice_cost import SliceCost
from gui.widgets.throttle import Throttle
from gui.widgets.turn_work import later, turn_deadline

STREAM_INTERVAL_MS = 50
"""The open tail is re-rendered at most this often (20 Hz): fast enough to read as live."""
SEGMENT_CHARS = 12_000
"""Finished Markdown per view; the next finished block opens a new view."""
LAZY_SLICE_CHARS = 2_000
"""The most finished text laid out in one event-loop turn when more is waiting (a reopened
long answer, a flood of deltas); less when what it holds would not fit what the turn's budget
has left (:func:`~gui.widgets.turn_work.turn_deadline`, :mod:`gui.run.slice_cost`: 2,000
characters took 4 ms of prose, 15 of tables and code). At least one block: a backlog moves."""
_SCAN_CHARS = 400
"""How far each look for the next block boundary reaches while a slice is cut."""
HIDDEN_BATCH_CHARS = 3_000
"""Finished blocks out of sight wait until this much has finished, then go in one append
(up to twice as much, ~10 ms): each append costs Qt a fixed re-fit and repaint, whatever its
size."""
_NOT_A_SEGMENT_START = ("|", ">", "```", "~~~", " ", "\t")
"""A chunk starting like this (a table, a quote, code, an indented line) stays with the
previous segment: Qt puts an empty line before a document that starts with a table."""


class MarkdownStream(QWidget):
    """Live Markdown; GUI thread only. :attr:`rendered` is emitted after each render."""

    rendered = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, interval_ms: int = STREAM_INTERVAL_MS
    ) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        # The views of finished text, made when text finishes: a live answer's first words
        # are shown by the tail alone, and a view is a third of a new text item's cost.
        self._segments: list[MarkdownView] = []
        self._tail: MarkdownView | None = None
        self._struck = False
        self._throttle = Throttle(self._render, interval_ms, self)
        self._whole = TextBuffer()  # everything fed so far
        self._unmerged: list[str] = []  # deltas since the last render
        self._open = ""  # the text after the rendered blocks: the open tail
        self._splitter = BlockSplitter()  # offsets count from the start of ``_open``
        self._tail_source = ""
        self._tail_rendered = ""  # what the tail last rendered whole (then plain words follow)
        self._tail_stale = False  # renders were skipped while the tail was out of sight
        self._finished = False
        self._ready = ""  # finished text waiting to be laid out, a slice per loop turn
        self._ready_pos = 0  # how much of it is laid out (always at a block boundary)
        self._ready_splitter = BlockSplitter()  # finds the cuts in ``_ready``
        self._slice_queued = False  # the next slice waits for a turn (gui.widgets.turn_work)
        self.block_renders = 0
        """How many times newly finished blocks were rendered and appended."""
        self.tail_renders = 0
        """How many times the open tail was rendered."""
        self.tail_appends = 0
        """How many times plain text was appended to the tail without rendering Markdown."""
        self.layout_slices = 0
        """Slices a long text set at once was laid out in (one per event-loop turn)."""
        self.parked = 0
        """How many times a segment out of sight was parked."""
        self._tending_queued = False
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Only views are drawn here, no background of its own: when the stream grows at the
        # bottom, Qt need not repaint the views already on screen (it did at every append).
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents)

    # ---------------------------------------------------------------- public API

    @property
    def view(self) -> MarkdownView:
        """The first document view (the whole text once finished or set at once); made now
        if no text has finished yet."""
        return self._segments[0] if self._segments else self._new_segment()

    def views(self) -> list[MarkdownView]:
        """Every view showing finished text, in order (the open tail is not among them)."""
        return list(self._segments)

    def feed(self, delta: str) -> None:
        """Add ``delta`` to the text; the screen catches up within one interval."""
        if not delta:
            return
        if self._finished:  # reopened: rare, so simply start over with the longer text
            self.set_text(self.text() + delta, finished=False)
            return
        self._whole.append(delta)
        self._unmerged.append(delta)
        self._throttle.request()

    def finish(self) -> None:
        """The text is complete: render what is left now and drop the tail view."""
        if self._finished:
            return
        self._throttle.cancel()
        self._merge()
        if self._open.strip() and not self._promote_tail():
            self._queue(self._open)
        self._open = ""
        self._drop_tail()
        self._show_segments()
        self._finished = True
        self._park_unseen()
        self.rendered.emit()

    def set_text(self, text: str, *, finished: bool) -> None:
        """Show ``text`` from scratch (a replayed or re-shown block): one render, or for a
        long finished text the first slice now and the rest a slice per event-loop turn."""
        self._throttle.restart()
        self._ready, self._ready_pos = "", 0
        self._whole = TextBuffer(text)
        self._unmerged = []
        self._splitter = BlockSplitter()
        self._finished = finished
        self._drop_tail()
        while len(self._segments) > 1:
            self._drop_view(self._segments.pop())
        cut = len(text) if finished else self._splitter.advance(text)
        self._splitter.rebase(cut)
        self._open = text[cut:]
        if cut > LAZY_SLICE_CHARS:
            if self._segments:
                self.view.set_markdown("")
            self._queue(text[:cut])
        elif cut or self._segments:
            self.view.set_markdown(text[:cut])
            self.block_renders += 1
        if not finished:
            self._render_tail(self._open)
        self._show_segments()
        self.rendered.emit()

    def set_struck(self, struck: bool) -> None:
        """Grey and strike through the text (see :meth:`MarkdownView.set_struck`)."""
        self._struck = struck
        for view in [*self._segments, self._tail]:
            if view is not None:
                view.set_struck(struck)

    def text(self) -> str:
        return self._whole.text

    def is_finished(self) -> bool:
        return self._finished

    def is_laid_out(self) -> bool:
        """False while a long text set at once is still being laid out, slice by slice."""
        return not self._ready

    def flush(self) -> None:
        """Render pending deltas now instead of at the next tick (tests, benchmarks)."""
        self._throttle.flush()

    def shown_text(self) -> str:
        """What a reader sees, as plain text: the finished views, then the open tail (brought
        up to date if it was out of sight: what they would see on scrolling there)."""
        if self._tail_stale:
            self._render_tail(self._open, force=True)
        parts = [view.plain_text() for view in self._segments if view.source_length()]
        if self._tail is not None and self._tail_source.strip():
            parts.append(self._tail.toPlainText())
        return "\n".join(parts)

    # ---------------------------------------------------------------- private

    def _merge(self) -> None:
        if self._unmerged:
            self._open += "".join(self._unmerged)
            self._unmerged = []

    def _render(self, *, force: bool = False) -> None:
        """Render newly finished blocks once, then the open tail: the cost follows the size
        of what changed, not of the whole text (which is never joined here). ``force``: also
        what is out of sight (the reader is about to see it)."""
        if self._finished:  # a catch-up scheduled before finish(): nothing is left to do
            return
        self._merge()
        finished = self._splitter.advance(self._open)
        hidden = not force and self._tail_out_of_sight()
        if finished > 0 and (not hidden or finished >= HIDDEN_BATCH_CHARS):
            # Out of sight (the reader went up to read), finished blocks wait for a batch:
            # each append makes Qt re-fit the heights and repaint the scroll bars (~4 ms)
            # whatever its size, so 330-character blocks one by one cost 5x more.
            self._queue(
                self._open[:finished], 2 * HIDDEN_BATCH_CHARS if hidden else LAZY_SLICE_CHARS
            )
            self._open = self._open[finished:]
            self._splitter.rebase(finished)
            self._show_segments()
        self._render_tail(self._open, force=force)
        self.rendered.emit()

    def _queue(self, finished: str, at_once: int = LAZY_SLICE_CHARS) -> None:
        """Lay out finished blocks: at once when they are no more than ``at_once``
        characters, else a slice per loop turn (a flood, or a long text set at once) so that
        no turn renders more than a slice."""
        if not self._ready and len(finished) <= at_once:
            self._append(finished)
            return
        self._ready = self._ready[self._ready_pos :] + finished
        self._ready_pos = 0
        self._ready_splitter = BlockSplitter()  # the backlog starts at a block boundary
        if not self._slice_queued:
            self._lay_out_slice()

    def _lay_out_slice(self) -> None:
        """Render the next slice of the backlog, as long as the turn's budget allows
        (:data:`LAZY_SLICE_CHARS` at most), cut between blocks; the next slice follows on the
        next event-loop turn. Once the backlog is laid out, the open tail catches up."""
        text, start = self._ready, self._ready_pos
        if not text:
            return
        left = turn_deadline() - time.perf_counter()
        limit, cut = start, start
        while cut < len(text) and (cut == start or limit - start < LAZY_SLICE_CHARS):
            limit = min(len(text), limit + _SCAN_CHARS)
            found = len(text) if limit == len(text) else self._ready_splitter.advance(text, limit)
            if found <= cut:
                continue  # no block ends within the limit yet (a block longer than a slice)
            if cut > start and _cost.estimate(text, start, found) > left:
                break  # the next blocks would not fit: they come first in the next turn
            cut = found
        began = time.perf_counter()
        self._append(text[start:cut])
        _cost.learn(text, start, cut, time.perf_counter() - began)
        self._ready_pos = cut
        self.layout_slices += 1
        self._show_segments()
        if cut < len(text):
            if not self._slice_queued:
                self._slice_queued = True
                later(self, self._next_slice)
            return
        self._ready, self._ready_pos = "", 0
        if self._tail_stale and not self._finished:
            self._throttle.request(urgent=True)
        self.rendered.emit()

    def _next_slice(self) -> None:
        self._slice_queued = False
        self._lay_out_slice()

    def _append(self, source: str) -> None:
        last = self._segments[-1] if self._segments else self._new_segment()
        if last.source_length() >= SEGMENT_CHARS and not source.startswith(_NOT_A_SEGMENT_START):
            last = self._new_segment()
        last.append_markdown(source)
        self.block_renders += 1

    def _new_segment(self) -> MarkdownView:
        self._park_unseen()
        view = MarkdownView(self, auto_height=True)
        if self._struck:
            view.set_struck(True)
        view.viewport().installEventFilter(self)
        self._layout.insertWidget(len(self._segments), view)  # before the tail
        self._segments.append(view)
        return view

    def _park_unseen(self) -> None:
        """Park the finished segments nobody can see (scrolled away, a folded pane, another
        tab) in a window that is shown; the last one stays: the next blocks go there."""
        if len(self._segments) < 2 or not self.window().isVisible():
            return
        for view in self._segments[:-1]:
            if not view.is_parked() and view.visibleRegion().isEmpty():
                view.park()
                self.parked += 1

    def unpark_matching(self, finder: re.Pattern[str]) -> int:
        """Render again the parked segments whose Markdown has a match of ``finder`` (a search
        is about to mark and scroll to it); how many were."""
        woken = [v for v in self._segments if v.is_parked() and finder.search(v.markdown())]
        for view in woken:
            view.unpark()
        return len(woken)

    def _tend_segments(self) -> None:
        """After segments were painted (a scroll, a pane unfolded): render the parked ones now
        in sight, park the others out of sight again."""
        self._tending_queued = False
        for view in self._segments:
            if view.is_parked() and not view.visibleRegion().isEmpty():
                view.unpark()
        self._park_unseen()

    def _show_segments(self) -> None:
        """An empty document still takes a line: hide views with nothing to show."""
        for view in self._segments:
            has_text = view.source_length() > 0
            if view.isHidden() == has_text:
                view.setVisible(has_text)

    def _render_tail(self, tail: str, *, force: bool = False) -> None:
        if tail == self._tail_source:
            return
        if self._ready and not force:
            # Behind a backlog still being laid out (a flood), the tail would show words after
            # a gap of text not shown yet, at a render per interval that the backlog's slices
            # need: it goes until the last slice is laid out (what is shown stays a prefix of
            # the text), then catches up.
            self._drop_tail()
            self._tail_stale = True
            return
        if not force and self._tail_out_of_sight():
            # Scrolled away (the reader went up to read): nothing to draw. The tail catches up
            # when it is painted again (see eventFilter) or when the block is finished.
            self._tail_stale = True
            return
        self._tail_stale = False
        previous, self._tail_source = self._tail_source, tail
        if (
            self._tail is not None
            and tail.startswith(previous)
            and not self._splitter.in_fence
            and extends_plainly(previous, tail[len(previous) :])
            and self._tail.append_plain(tail[len(previous) :])
        ):
            self.tail_appends += 1  # plain words: no Markdown, no new document
            return
        if not tail.strip():
            if self._tail is not None:
                self._tail.hide()
            return
        if self._tail is None:
            self._tail = MarkdownView(self, auto_height=True)
            self._tail.installEventFilter(self)
            if self._struck:
                self._tail.set_struck(True)
            self._layout.addWidget(self._tail)
        self._tail.set_markdown(tail, open_fence=self._splitter.in_fence)
        self._tail_rendered = tail
        self._tail.show()
        self.tail_renders += 1

    def _tail_out_of_sight(self) -> bool:
        """The tail is shown but scrolled away: what changes at the end is not seen. A tail
        outside the stream's rectangle is waiting for a layout pass (the stream has just
        grown), not scrolled away."""
        tail = self._tail
        return (
            tail is not None
            and tail.isVisible()
            and self.rect().contains(tail.geometry())
            and tail.visibleRegion().isEmpty()
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Something is about to be painted again (scrolled back into view, a pane unfolded):
        bring the tail up to date if renders were skipped while it was out of sight, and tend
        a long text's segments (see :meth:`_tend_segments`) — on a coming turn, never inside
        a paint."""
        if event.type() != QEvent.Type.Paint:
            return False
        if watched is self._tail and self._tail_stale:
            self._tail_stale = False
            QTimer.singleShot(0, self, lambda: self._render(force=True))
            return False
        if (
            not self._tending_queued
            and len(self._segments) > 2
            and isinstance(watched.parent(), MarkdownView)
        ):
            self._tending_queued = True  # many paints, one pass
            later(self, self._tend_segments)
        return False

    def _promote_tail(self) -> bool:
        """Keep the tail's view as the last segment, showing the open text as finished: the
        view on screen stays (no new one made, no old one deleted, nothing moves), rendered
        again only if it does not show exactly that text rendered whole. Not when a backlog is
        still being laid out (it comes first), nor for text that must stay with the segment
        before it (see :data:`_NOT_A_SEGMENT_START`)."""
        tail = self._tail
        if tail is None or self._ready:
            return False
        if self._segments and self._open.startswith(_NOT_A_SEGMENT_START):
            return False
        if self._tail_rendered != self._open or self._splitter.in_fence:
            tail.set_markdown(self._open)  # the last words, a closed fence's colours
            self.block_renders += 1
        self._tail = None
        tail.removeEventFilter(self)
        tail.viewport().installEventFilter(self)
        self._segments.append(tail)
        return True

    def _drop_tail(self) -> None:
        self._tail_stale = False
        self._tail_source = self._tail_rendered = ""
        if self._tail is not None:
            self._drop_view(self._tail)
            self._tail = None

    def _drop_view(self, view: MarkdownView) -> None:
        self._layout.removeWidget(view)
        view.hide()
        view.deleteLater()


_cost = SliceCost()


def warm_up() -> None:
    """Do the one-time work of the first view now (fonts, colours, PySide6 building its enum
    types on first use): a view about to stream a run calls this, so its first answer does
    not stall the window for tens of milliseconds. Cheap after the first call."""
    global _warm
    if not _warm:
        _warm = True
        prepare_highlighting()
        stream = MarkdownStream()
        stream.set_text("*warm* `up`", finished=True)
        # The first QStyle Python sees makes PySide6 build that class's ~15 enum types
        # (16 ms); else the first pane to change its look (repolish) pays it mid-run.
        stream.style()
        stream.deleteLater()


_warm = False
