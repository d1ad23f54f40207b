"""How a run search result looks: run and place on one line, the snippet below with the
matched words in **bold**.

Run content is hostile data (a model wrote it), so the snippet is never given to Qt as HTML:
every part is escaped (:func:`html.escape`) and the only tags are the ``<b>`` this module puts
around the core's match parts (:attr:`core.history.run_search.SearchHit.parts`). The item's display
text stays plain (copying, accessibility, tests); a delegate paints the marked version.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from core.history.run_search import SearchHit
from gui.widgets.item_paint import paint_item_frame

ROLE_MARKED = Qt.ItemDataRole.UserRole + 2
"""The result as safe rich text (:func:`marked_html`)."""
MARGIN = 4

Index = QModelIndex | QPersistentModelIndex


def plain_result(heading: str, hit: SearchHit) -> str:
    """The result as plain text: heading, then the snippet without marks."""
    return f"{heading}\n" + "".join(part for part, _match in hit.parts or [(hit.snippet, False)])


def marked_html(heading: str, hit: SearchHit) -> str:
    """The result as rich text: everything escaped, each match (and only a match) in bold."""
    parts = hit.parts or ((hit.snippet, False),)
    snippet = "".join(
        f"<b>{html.escape(part)}</b>" if match else html.escape(part) for part, match in parts
    )
    return f"{html.escape(heading)}<br>{snippet}"


def _document(text: str, width: int, option: QStyleOptionViewItem) -> QTextDocument:
    document = QTextDocument()
    document.setDefaultFont(option.font)
    document.setDocumentMargin(MARGIN)
    document.setHtml(text)
    document.setTextWidth(max(width, 40))
    return document


class MarkedResultDelegate(QStyledItemDelegate):
    """Paints :data:`ROLE_MARKED` (wrapped to the view's width) over the usual item background
    (selection, alternating rows, focus)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        text = index.data(ROLE_MARKED)
        if not isinstance(text, str):
            super().paint(painter, option, index)
            return
        opt, _style = paint_item_frame(self, painter, option, index)
        document = _document(text, opt.rect.width(), opt)
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(role))
        painter.save()
        painter.translate(opt.rect.topLeft())
        painter.setClipRect(0, 0, opt.rect.width(), opt.rect.height())
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        text = index.data(ROLE_MARKED)
        if not isinstance(text, str):
            return super().sizeHint(option, index)
        widget = option.widget
        # the viewport's width, not the list's: the frame and a scroll bar take the rest, and a
        # hint as wide as the list would bring a horizontal scroll bar for nothing
        width = (
            widget.viewport().width()
            if isinstance(widget, QAbstractItemView)
            else option.rect.width()
        )
        document = _document(text, width, option)
        return QSize(width, int(document.size().height()) + 1)
