"""The output section of an open tool-call row: the tail of a huge log, the whole on demand.

A build or ``npm install`` prints megabytes. Laying out megabytes in a text box freezes the
window, so the box shows at most :data:`OUTPUT_LINES` lines / :data:`OUTPUT_CHARS` characters:
the *tail* while a call streams (appending only what is new, read from the call's
:class:`~core.record.text_buffer.TextBuffer` without joining it), the *head* of a finished result.
"Show all" loads the whole text into the box in slices of :data:`LOAD_SLICE_CHARS`, one per
event-loop turn, so even 50 MB never blocks input for long; a call still streaming keeps
appending after that.

When a tool cut its result for the model (bash keeps the tail), but the streamed output is
longer, "Show all" loads the streamed output: the full log is what a person asks for.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetrics, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.record.run_state import ToolCall
from core.record.text_buffer import TextBuffer
from gui.theme import SEMIBOLD, monospace_font, set_font, set_tone

OUTPUT_LINES = 400
"""Lines shown before "Show all" (the tail while output streams, the head of a result)."""
OUTPUT_CHARS = 40_000
"""Characters shown before "Show all": one 40 MB line must not freeze the box either."""
LOAD_SLICE_CHARS = 64_000
"""Characters "Show all" adds per event-loop turn (a few ms of Qt's text work each)."""
VISIBLE_LINES = 14
"""Height of the output box, in lines; longer output scrolls inside it."""


def capped(text: str, head: bool) -> tuple[str, int]:
    """``text`` cut to the display caps, and how many lines were left out."""
    lines = text.count("\n") + 1
    if lines <= OUTPUT_LINES and len(text) <= OUTPUT_CHARS:
        return text, 0
    if head:
        cut = text[:OUTPUT_CHARS].split("\n")[:OUTPUT_LINES]
    else:
        cut = text[-OUTPUT_CHARS:].split("\n")[-OUTPUT_LINES:]
    return "\n".join(cut), max(0, lines - len(cut))


class MonospaceBox(QPlainTextEdit):
    """Read-only monospaced text that is as tall as its content, up to a few lines."""

    def __init__(self, max_lines: int = VISIBLE_LINES) -> None:
        super().__init__()
        self._max_lines = max_lines
        self.setReadOnly(True)
        self.setFont(monospace_font(-1))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.document().blockCountChanged.connect(self._fit)
        self.horizontalScrollBar().rangeChanged.connect(self._fit)
        self._fit()

    def append_text(self, text: str) -> None:
        """Add ``text`` at the end (continuing the last line), keeping the view at the end."""
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        self.setTextCursor(cursor)

    def _fit(self) -> None:
        count = self.document().blockCount()
        lines = min(max(1, count), self._max_lines)
        spacing = QFontMetrics(self.font()).lineSpacing()
        margin = int(self.document().documentMargin())
        # A box that scrolls keeps only its top margin, so it ends at a line, not inside one.
        height = lines * spacing + (2 * margin + 2 if count <= self._max_lines else margin + 1)
        height += 2 * self.frameWidth()
        if self.horizontalScrollBar().maximum() > 0:
            height += self.horizontalScrollBar().sizeHint().height()
        if height != self.height():
            self.setFixedHeight(height)


class ToolOutput(QWidget):
    """Label, box and "Show all" button for one call's output. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("Output")
        set_font(self.label, weight=SEMIBOLD, pixel_size=11)
        set_tone(self.label, "secondary")
        self.box = MonospaceBox()
        self.more = QPushButton("Show all")
        self.more.setFlat(True)
        self.more.setObjectName("ShowAllOutput")  # its look: the application's style sheet
        set_tone(self.more, "link")
        self.more.setCursor(Qt.CursorShape.PointingHandCursor)
        self.more.clicked.connect(self.show_all)
        self.more.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label)
        layout.addWidget(self.box)
        layout.addWidget(self.more, 0, Qt.AlignmentFlag.AlignLeft)
        self._mode = ""  # "tail" (streaming), "head" (finished), "all" (after Show all)
        self._shown_key: tuple[object, ...] = ()
        self._source = TextBuffer()  # what "all" mode loads
        self._loaded = 0  # characters of the source in the box ("tail" and "all" modes)
        self._running = False
        self._call: ToolCall | None = None
        self._loader = QTimer(self)
        self._loader.setSingleShot(True)
        self._loader.timeout.connect(self._load_slice)
        self.slices_loaded = 0
        """Slices "Show all" has added to the box (tests check big outputs come in parts)."""

    # ---------------------------------------------------------------- public API

    def update_from(self, call: ToolCall, running: bool) -> None:
        """Show ``call``'s output as it is now (cheap when nothing changed)."""
        self._call, self._running = call, running
        if self._mode == "all":
            if running:
                self._source = call.streamed
            if self._loaded < len(self._source) and not self._loader.isActive():
                self._load_slice()
            self._label()
        elif running:
            self._follow_tail(call.streamed)
        else:
            self._show_head(call)

    def show_all(self) -> None:
        """Load the whole text: at once when small, else a slice per event-loop turn."""
        call = self._call
        if call is None:
            return
        streamed_is_all = self._running or len(call.streamed) > len(call.result)
        self._source = call.streamed if streamed_is_all else TextBuffer(call.result)
        self._mode = "all"
        self.more.hide()
        self.box.setMaximumBlockCount(0)
        self.box.clear()
        self._loaded = 0
        self._load_slice()

    def is_loading(self) -> bool:
        return self._loader.isActive()

    # ---------------------------------------------------------------- private

    def _label(self) -> None:
        call = self._call
        if self._running:
            text = "Output (streaming)"
        elif call is not None and call.result and self._mode == "head":
            text = "Result"
        else:
            text = "Output"
        if self._mode == "all" and self._loaded < len(self._source):
            text += f" (loading {100 * self._loaded // len(self._source)}%)"
        if self.label.text() != text:
            self.label.setText(text)

    def _follow_tail(self, streamed: TextBuffer) -> None:
        added = len(streamed) - self._loaded
        if self._mode == "tail" and added == 0:
            return
        if self._mode != "tail" or added > OUTPUT_CHARS:  # a flood: restart at the tail
            self._mode = "tail"
            self.box.setMaximumBlockCount(OUTPUT_LINES)  # drops the oldest lines as it grows
            self.box.setPlainText(capped(streamed.tail(OUTPUT_CHARS), head=False)[0])
        else:
            self.box.append_text(streamed.since(self._loaded))
        self._loaded = len(streamed)
        self._label()
        self._offer(streamed.newlines + 1 - OUTPUT_LINES, "earlier")

    def _show_head(self, call: ToolCall) -> None:
        key = (len(call.result), len(call.streamed))
        if self._mode == "head" and key == self._shown_key:
            return
        self._mode, self._shown_key = "head", key
        text = (call.result or call.streamed.text).rstrip("\n")
        shown, hidden = capped(text, head=True)
        self.box.setMaximumBlockCount(0)
        self.box.setPlainText(shown or "(no output)")
        if len(call.streamed) > len(call.result):  # the tool cut it: all = the whole log
            hidden = call.streamed.newlines + 1 - (shown.count("\n") + 1)
        self._label()
        self._offer(hidden, "more")

    def _offer(self, hidden: int, where: str) -> None:
        if hidden > 0:
            self.more.setText(f"Show all ({hidden:,} {where} lines hidden)")
        self.more.setVisible(hidden > 0)

    def _load_slice(self) -> None:
        end = min(len(self._source), self._loaded + LOAD_SLICE_CHARS)
        if end > self._loaded:
            self.box.append_text(self._source.slice(self._loaded, end))
            self._loaded = end
            self.slices_loaded += 1
        if self._loaded < len(self._source):
            self._loader.start(0)
        self._label()
