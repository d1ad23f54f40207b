"""Widgets for the items of a step's stream: text, thinking, notices (tool calls have their own
module, :mod:`gui.run.tool_call_row`).

Every item widget follows one small contract: it is built from a
:class:`~core.record.run_state.Item`, and :meth:`refresh(item, live)` brings it up to date with the
same (mutable) item later; ``live`` says the item may still grow (the last item of a running
step). Widgets keep only what they need to append the new part — the item stays the truth.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from core.record.run_state import Item, Notice, TextBlock, ToolCall
from gui.run.markdown_stream import MarkdownStream
from gui.run.tool_call_row import ToolCallRow
from gui.theme import SEMIBOLD, mix, secondary_text, set_font, set_tone
from gui.widgets import HeaderToggleMixin
from gui.widgets.run_status import status_tone

NOTICE_PIXELS = 12
THINKING_CHARS = 30_000
"""An expanded thinking block shows its last this many characters."""


def _muted_label(text: str = "", size_px: int = 0) -> QLabel:
    label = QLabel(text)
    if size_px:
        set_font(label, pixel_size=size_px)
    set_tone(label, "secondary")
    return label


class TextItem(QWidget):
    """An assistant text block as live Markdown. A superseded attempt (the model call failed
    and was retried) stays visible, greyed and struck through, under a small label."""

    def __init__(self, block: TextBlock, live: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream = MarkdownStream()
        self.superseded_label: QLabel | None = None  # made when first needed
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 2, 0, 2)
        self._layout.setSpacing(2)
        self._layout.addWidget(self.stream)
        self._superseded = False
        self.show_block(block, live)

    def show_block(self, block: TextBlock, live: bool) -> None:
        """Show ``block`` from scratch: this item's, or another's in a widget a step pane
        reuses (a flood's newest text in the widget of one that left the window)."""
        self._seen = len(block.content)
        self.stream.set_text(block.text, finished=not live)
        self.refresh(block, live)

    def refresh(self, item: Item, live: bool) -> None:
        assert isinstance(item, TextBlock)
        if len(item.content) > self._seen:  # only the new part: the block is never joined
            self.stream.feed(item.content.since(self._seen))
            self._seen = len(item.content)
        if not live and not self.stream.is_finished():
            self.stream.finish()
        if item.superseded != self._superseded:
            self._set_superseded(item.superseded)

    def _set_superseded(self, superseded: bool) -> None:
        self._superseded = superseded
        if self.superseded_label is None:
            self.superseded_label = _muted_label("superseded attempt", 11)
            self._layout.insertWidget(0, self.superseded_label)
        self.superseded_label.setVisible(superseded)
        self.stream.set_struck(superseded)


class _ThinkingHeader(QWidget):
    """``▸ Thinking  …the last words of the thought``, painted in one go (one widget)."""

    def __init__(self) -> None:
        super().__init__()
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.expanded = False
        self.live = False
        self.preview = ""
        font = self.font()
        font.setItalic(True)
        self.setFont(font)
        self.setFixedHeight(QFontMetrics(font).height() + 4)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def title(self) -> str:
        return "Thinking…" if self.live else "Thinking"

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        palette = self.palette()
        muted = secondary_text(palette)
        metrics = QFontMetrics(self.font())
        height = self.height()
        painter.setPen(muted)
        painter.drawText(
            QRectF(4, 0, 14, height), Qt.AlignmentFlag.AlignVCenter, "▾" if self.expanded else "▸"
        )
        title = self.title()
        x = 22.0
        painter.drawText(QRectF(x, 0, 200, height), Qt.AlignmentFlag.AlignVCenter, title)
        x += metrics.horizontalAdvance(title) + 8
        room = int(self.width() - x - 4)
        if self.preview and not self.expanded and room > 20:
            painter.setPen(mix(muted, palette.color(QPalette.ColorRole.Base), 0.25))
            text = metrics.elidedText(self.preview, Qt.TextElideMode.ElideLeft, room)
            painter.drawText(QRectF(x, 0, room, height), Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()


class ThinkingItem(HeaderToggleMixin, QWidget):
    """The model's thinking: one muted, foldable line ("Thinking · last words…"); a click
    shows the whole text, another folds it again. The text widget is only made when asked."""

    header: _ThinkingHeader

    def __init__(self, block: TextBlock, live: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._block = block
        self._shown_length = -1
        self.header = _ThinkingHeader()
        self.body: QLabel | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._layout.addWidget(self.header)
        self.refresh(block, live)

    def is_expanded(self) -> bool:
        return self.header.expanded

    def preview_text(self) -> str:
        return self.header.preview

    def set_expanded(self, expanded: bool) -> None:
        self.header.expanded = expanded
        if expanded and self.body is None:
            self.body = _muted_label()
            self.body.setWordWrap(True)
            self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.body.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            self.body.setContentsMargins(22, 0, 4, 4)
            font = self.body.font()
            font.setItalic(True)
            self.body.setFont(font)
            self._layout.addWidget(self.body)
        self._shown_length = -1
        self.refresh(self._block, self.header.live)
        if self.body is not None:
            self.body.setVisible(expanded)
        self.header.update()

    def refresh(self, item: Item, live: bool) -> None:
        assert isinstance(item, TextBlock)
        self._block = item
        length = len(item.content)
        if length == self._shown_length and live == self.header.live:
            return
        self._shown_length = length
        self.header.live = live
        self.header.preview = " ".join(item.content.tail(240).split())
        self.header.update()
        if self.body is not None and self.header.expanded:
            text = item.content.tail(THINKING_CHARS + 1).strip()
            if length > THINKING_CHARS:
                text = "…" + text[-THINKING_CHARS:]
            self.body.setText(text)

    def header_clicked(self) -> None:
        self.set_expanded(not self.header.expanded)


class NoticeItem(QLabel):
    """A retry, an approval or budget decision or a log line: one small muted line, tinted when it
    matters (a retry or warning amber, a denial or error red). What the person said to the
    step reads in full colour, as "You: …", where they said it."""

    _GLYPHS: ClassVar[dict[str, str]] = {
        "retry": "↻",
        "approval": "✓",
        "budget": "$",
        "log": "·",
        "message": "➤",
    }

    def __init__(self, notice: Notice, live: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setTextFormat(Qt.TextFormat.PlainText)  # a message may look like HTML
        self.setContentsMargins(4, 0, 4, 0)
        self._text = ""
        self.refresh(notice, live)

    def refresh(self, item: Item, live: bool) -> None:
        assert isinstance(item, Notice)
        glyph = self._GLYPHS.get(item.kind, "·")
        if item.kind == "approval" and item.level == "error":
            glyph = "✗"
        text = f"{glyph}  {item.text}" if item.kind != "message" else f"{glyph}  You: {item.text}"
        if text == self._text:
            return
        self._text = text
        self.setText(text)
        if item.kind == "message":
            self.setObjectName("UserMessage")
            set_font(self, weight=SEMIBOLD)
            self.setContentsMargins(4, 2, 4, 2)
            return
        if item.kind == "approval":
            severity = "error" if item.level == "error" else ""
        else:
            severity = {"warning": "waiting", "error": "error"}.get(item.level, "")
        set_tone(self, status_tone(severity))  # no severity: secondary
        if self.font().pixelSize() != NOTICE_PIXELS:
            set_font(self, pixel_size=NOTICE_PIXELS)


def make_item_widget(item: Item, live: bool, *, interrupted: bool = False) -> QWidget:
    """The widget for ``item`` (a tool row, text, thinking or a notice). ``interrupted``: the
    step will never finish (a saved run that stopped mid-way), so nothing shows as running."""
    if isinstance(item, ToolCall):
        return ToolCallRow(item, interrupted=interrupted)
    if isinstance(item, Notice):
        return NoticeItem(item, live)
    if item.kind == "thinking":
        return ThinkingItem(item, live)
    return TextItem(item, live)


def refresh_item_widget(
    widget: QWidget, item: Item, live: bool, *, interrupted: bool = False
) -> None:
    if isinstance(widget, ToolCallRow):
        assert isinstance(item, ToolCall)
        widget.refresh(item, interrupted=interrupted)
    elif isinstance(widget, TextItem | ThinkingItem | NoticeItem):
        widget.refresh(item, live)
