"""Markdown on screen: a safe read-only browser for one document.

:class:`MarkdownView` shows one document. It never loads a resource (remote images are not
even requested: :mod:`gui.run.markdown_render` turns them into alt text, and :meth:`loadResource`
answers nothing as a second line of defence), opens only http(s) and mailto links, and only
when clicked, in the system browser, and copies code blocks from their ``Copy`` link or from
the context menu ("Copy code block"). With ``auto_height`` it grows to fit its text and leaves
scrolling to the enclosing scroll area, which is how the run view stacks many of them.
:meth:`MarkdownView.append_markdown` adds finished blocks without touching what is shown, which
is what :class:`gui.run.markdown_stream.MarkdownStream` builds live rendering on.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPoint, Qt, QUrl
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QDesktopServices,
    QGuiApplication,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextTable,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QMenu,
    QSizePolicy,
    QTextBrowser,
    QWidget,
)

from gui.run.markdown_render import COPY_SCHEME, MarkdownColors, render_html
from gui.theme import is_dark, mix, monospace_font

OPENABLE_SCHEMES = frozenset({"http", "https", "mailto"})

_INDENT_WIDTH = 22
"""Pixels per list level (Qt's default of 40 wastes a narrow pane's width)."""
_DOCUMENT_CSS = """
p, ul, ol { margin-top: 0px; margin-bottom: 8px; }
li { margin-bottom: 2px; }
h1 { font-size: x-large; margin-top: 10px; margin-bottom: 6px; }
h2 { font-size: large; margin-top: 10px; margin-bottom: 6px; }
h3, h4, h5, h6 { font-size: medium; margin-top: 8px; margin-bottom: 4px; }
"""


def markdown_colors(palette: QPalette) -> MarkdownColors:
    """The renderer's colours for ``palette``: tints of its own roles, so light, dark and
    high-contrast schemes all read well. Cached per palette (every text item asks)."""
    key = palette.cacheKey()
    cached = _COLORS_CACHE.get(key)
    if cached is None:
        cached = _COLORS_CACHE[key] = _colors_for(palette)
    return cached


_COLORS_CACHE: dict[int, MarkdownColors] = {}


def _colors_for(palette: QPalette) -> MarkdownColors:
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    dark = is_dark(palette)
    return MarkdownColors(
        muted=mix(text, base, 0.45).name(),
        code_background=mix(base, text, 0.06 if dark else 0.035).name(),
        code_border=mix(base, text, 0.16 if dark else 0.12).name(),
        inline_code_background=mix(base, text, 0.11 if dark else 0.07).name(),
        table_border=mix(base, text, 0.22 if dark else 0.18).name(),
        table_header=mix(base, text, 0.08 if dark else 0.05).name(),
        background=base.name(),
        link=palette.color(QPalette.ColorRole.Link).name(),
        quote_bar=mix(base, text, 0.3).name(),
        monospace=f"'{monospace_font().family()}', monospace",
        dark=dark,
    )


render_html("")  # build the parser now, not in the middle of the first streamed answer


class MarkdownView(QTextBrowser):
    """A read-only Markdown document; safe with untrusted text (a model's answer).

    Build it with :meth:`set_markdown` (one render) or :meth:`append_markdown` (add finished
    blocks at the end without touching what is already there). GUI thread only.
    """

    def __init__(self, parent: QWidget | None = None, *, auto_height: bool = False) -> None:
        super().__init__(parent)
        self._source_parts: list[str] = []
        self._codes: list[str] = []
        self._colors = markdown_colors(QApplication.palette(self))
        self._auto_height = auto_height
        self._struck = False
        self._parked = False
        self.requested_resources: list[str] = []
        """Every URL the document asked to load (none are loaded): lets tests prove it."""
        self.render_count = 0
        self._source_length = 0
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._open_anchor)
        self.document().setDefaultStyleSheet(_DOCUMENT_CSS)
        # Read-only: an undo stack would keep a copy of every append (~5 % of a long answer).
        self.document().setUndoRedoEnabled(False)
        self.document().setIndentWidth(_INDENT_WIDTH)
        if auto_height:
            self.setFrameShape(QFrame.Shape.NoFrame)
            self.document().setDocumentMargin(0)
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            self.viewport().setAutoFillBackground(False)  # see-through: the card shows
            layout = self.document().documentLayout()
            layout.documentSizeChanged.connect(self._fit_height)
            self._fit_height()

    # ---------------------------------------------------------------- public API

    def set_markdown(self, source: str, *, open_fence: bool = False) -> None:
        """Replace the document with ``source`` rendered in one go."""
        rendered = render_html(source, self._colors, open_fence=open_fence)
        self._parked = False
        self._source_parts = [source] if source else []
        self._source_length = len(source)
        self._codes = rendered.code_blocks
        self.render_count += 1
        self.setHtml(rendered.html)
        if self._struck:
            self._apply_struck()

    def append_markdown(self, source: str) -> None:
        """Render ``source`` (whole blocks) and add it after what is shown; nothing already in
        the document is parsed or laid out again."""
        if not self._source_parts:
            self.set_markdown(source)
            return
        self.unpark()
        rendered = render_html(source, self._colors, code_base=len(self._codes))
        self._source_parts.append(source)
        self._source_length += len(source)
        self._codes += rendered.code_blocks
        self.render_count += 1
        _append_html(self.document(), rendered.html)
        if self._struck:
            self._apply_struck()

    def append_plain(self, text: str) -> bool:
        """Append ``text`` as ordinary characters at the end of the document, in the format of
        the last one, without rendering; False (nothing done) when the document does not end
        in a plain text line (it ends in a table, a code frame, or is empty). The caller
        checks the Markdown side (:func:`gui.run.markdown_render.extends_plainly`).

        A source ending in a space was rendered without it (Markdown drops a paragraph's
        trailing spaces): the space is put back before ``text``, or the words would touch."""
        if self._parked:
            return False
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self._source_parts or cursor.currentTable() is not None:
            return False
        if cursor.block().length() <= 1:
            return False
        source_spaced = self._source_parts[-1].endswith(" ")
        shown_last = self.document().characterAt(cursor.position() - 1)  # not the whole line
        if source_spaced and not text.startswith(" ") and shown_last != " ":
            cursor.insertText(" ")
        cursor.insertText(text)
        self._source_parts.append(text)
        self._source_length += len(text)
        return True

    def set_struck(self, struck: bool) -> None:
        """Grey and strike through the whole text (a superseded attempt).

        Done on the document's character formats, not with a palette or font: under an
        application style sheet Qt replaces a widget's palette and font when it polishes it.
        """
        if struck == self._struck:
            return
        self._struck = struck
        if self._parked:
            return  # applied when it is shown again
        if struck:
            self._apply_struck()
        elif self._source_parts:
            self.set_markdown(self.markdown())

    def is_struck(self) -> bool:
        return self._struck

    def park(self) -> bool:
        """Drop the rendered document of a view out of sight, keeping its source and height.

        Qt holds ~80 bytes a character for a rendered Markdown document and its layout: the
        segments of a 2 MB answer took 170 MB. A parked view shows nothing (it is not seen)
        until :meth:`unpark` renders it again. Only views that fit their height (the segments
        of a :class:`~gui.run.markdown_stream.MarkdownStream`) park; True if this one did.
        """
        if self._parked or not self._auto_height or not self._source_parts:
            return False
        self._parked = True  # first: the height stays what it was (see _fit_height)
        self.document().clear()
        return True

    def unpark(self) -> bool:
        """Render a parked view again (it is about to be seen); True if it was parked."""
        if not self._parked:
            return False
        self.set_markdown(self.markdown())
        return True

    def is_parked(self) -> bool:
        return self._parked

    def plain_text(self) -> str:
        """What this view shows (or shows once unparked) as plain text, without keeping a
        parked view's rendering."""
        if not self._parked:
            return self.toPlainText()
        scratch = QTextDocument()
        scratch.setHtml(render_html(self.markdown(), self._colors).html)
        return scratch.toPlainText()

    def source_length(self) -> int:
        """Characters of Markdown shown (cheaper than ``len(markdown())``)."""
        return self._source_length

    def markdown(self) -> str:
        """The Markdown source shown."""
        if len(self._source_parts) > 1:
            self._source_parts = ["".join(self._source_parts)]
        return self._source_parts[0] if self._source_parts else ""

    def code_block(self, number: int) -> str | None:
        return self._codes[number] if 0 <= number < len(self._codes) else None

    def copy_code_block(self, number: int) -> None:
        code = self.code_block(number)
        clipboard = QGuiApplication.clipboard()
        if code is not None and clipboard is not None:
            clipboard.setText(code)

    def context_menu_at(self, pos: QPoint) -> QMenu:
        """The context menu for viewport position ``pos``: the standard one, plus
        "Copy code block" on top when ``pos`` is inside a code block."""
        offset = QPoint(self.horizontalScrollBar().value(), self.verticalScrollBar().value())
        menu = self.createStandardContextMenu(pos + offset)
        number = self.code_block_at(pos)
        if number is not None:
            action = QAction("Copy code block", menu)
            action.triggered.connect(lambda: self.copy_code_block(number))
            first = menu.actions()[0] if menu.actions() else None
            if first is not None:
                menu.insertAction(first, action)
                menu.insertSeparator(first)
            else:
                menu.addAction(action)
        return menu

    def code_block_at(self, pos: QPoint) -> int | None:
        """The number of the code block under viewport position ``pos``, if any."""
        frame = self.cursorForPosition(pos).currentFrame()
        while frame is not None:
            if isinstance(frame, QTextTable) and frame.columns() == 2 and frame.rows() == 2:
                cursor = frame.cellAt(0, 1).lastCursorPosition()
                href = cursor.charFormat().anchorHref()
                if href.startswith(f"{COPY_SCHEME}:"):
                    return int(href.partition(":")[2])
            frame = frame.parentFrame()
        return None

    # ---------------------------------------------------------------- Qt overrides

    def loadResource(self, kind: int, name: QUrl | str) -> object:
        """Nothing is ever loaded: no remote images, no local files, no tracking pixels."""
        self.requested_resources.append(name.toString() if isinstance(name, QUrl) else name)
        return None

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.context_menu_at(event.pos())
        menu.exec(event.globalPos())
        menu.deleteLater()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self._auto_height:
            event.ignore()  # nothing to scroll here: let the enclosing scroll area have it
        else:
            super().wheelEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            # The application palette, not ours: ours may have a see-through base.
            colors = markdown_colors(QApplication.palette(self))
            if colors != self._colors:
                self._colors = colors
                if self._source_parts and not self._parked:
                    self.set_markdown(self.markdown())

    # ---------------------------------------------------------------- private

    def _apply_struck(self) -> None:
        palette = QApplication.palette(self)
        grey = mix(
            palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.45
        )
        strike = QTextCharFormat()
        strike.setFontStrikeOut(True)
        strike.setForeground(grey)
        cursor = QTextCursor(self.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeCharFormat(strike)

    def _open_anchor(self, url: QUrl) -> None:
        if url.scheme() == COPY_SCHEME:
            number = url.path()
            if number.isdigit():
                self.copy_code_block(int(number))
        elif url.scheme().lower() in OPENABLE_SCHEMES:
            QDesktopServices.openUrl(url)

    def _fit_height(self) -> None:
        if self._parked:
            return  # keeps the height it had, so nothing around it moves
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        bar = self.horizontalScrollBar()
        if bar.isVisible():
            height += bar.sizeHint().height()
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)


def _append_html(document: QTextDocument, html: str) -> None:
    """Insert ``html`` as new blocks at the end of ``document``.

    ``QTextCursor.insertHtml`` merges the first inserted block into the last existing one and
    drops its block format (a heading would lose its size). Rendering into a scratch document
    first and giving the new first block that document's formats keeps structure intact.
    """
    scratch = QTextDocument()
    scratch.setDefaultStyleSheet(document.defaultStyleSheet())
    scratch.setHtml(html)
    first = scratch.begin()
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.beginEditBlock()
    second = first.next()
    leading_empty = (  # a table comes first: Qt puts an empty block before it
        first.length() == 1 and second.isValid() and QTextCursor(second).currentTable() is not None
    )
    if not leading_empty:
        cursor.insertBlock(first.blockFormat(), first.charFormat())
    start = cursor.position()
    cursor.insertFragment(QTextDocumentFragment(scratch))
    if not leading_empty and first.length() > 1 and document.findBlock(start).length() == 1:
        # A fragment starting with a list opens its own block: drop the empty one we made.
        cleanup = QTextCursor(document)
        cleanup.setPosition(start)
        cleanup.deletePreviousChar()
    cursor.endEditBlock()
