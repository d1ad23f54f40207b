"""Painting the richer cells of the documents table: tags as pills, matches marked.

A delegate, not widgets per row: the table stays one model and one view however many rows a
page has. The display text of these columns stays plain (see :mod:`gui.documents.documents_table`),
so
copying, accessibility and tests read ordinary strings; only the painting differs.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from gui.documents.documents_table import COL_SUMMARY, COL_TAGS, ROLE_SEGMENTS, ROLE_TAGS
from gui.theme import is_dark, mix, secondary_text
from gui.widgets.item_paint import paint_item_frame

Index = QModelIndex | QPersistentModelIndex
_LEFT_CENTRE = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


class DocumentDelegate(QStyledItemDelegate):
    """Paints the tags column as pills and the summary column with matches marked; every
    other column is painted the default way."""

    PILL_GAP = 4

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        column = index.column()
        if column not in (COL_TAGS, COL_SUMMARY):
            super().paint(painter, option, index)
            return
        opt, style = paint_item_frame(self, painter, option, index)
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        rect = rect.adjusted(2, 0, -2, 0)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        painter.save()
        painter.setClipRect(rect)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if column == COL_TAGS:
            self._paint_tags(painter, rect, palette, index.data(ROLE_TAGS) or [], selected)
        else:
            font: QFont = opt.font
            segments = index.data(ROLE_SEGMENTS) or []
            self._paint_segments(painter, rect, palette, font, segments, selected)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width(), max(size.height(), 30))

    # -- private -------------------------------------------------------------------------

    @staticmethod
    def _paint_segments(
        painter: QPainter,
        rect: QRect,
        palette: QPalette,
        font: QFont,
        segments: list[tuple[str, bool]],
        selected: bool,
    ) -> None:
        normal_color = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        bold = QFont(font)
        bold.setWeight(QFont.Weight.Bold)
        mark_bg = QColor.fromHslF(45 / 360, 0.95, 0.36 if is_dark(palette) else 0.72)
        mark_fg = QColor("#f5f5f5") if is_dark(palette) else QColor("#1a1a1a")
        x = rect.left()
        for text, match in segments:
            metrics = QFontMetrics(bold if match else font)
            width = metrics.horizontalAdvance(text)
            room = rect.right() - x
            last = width > room
            if last:
                text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(room, 0))
                width = metrics.horizontalAdvance(text)
            height = metrics.height()
            top = rect.top() + (rect.height() - height) // 2
            box = QRect(x, top, width, height)
            if match and text:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(mark_bg)
                painter.drawRoundedRect(box.adjusted(-2, 0, 2, 0), 3, 3)
            painter.setFont(bold if match else font)
            painter.setPen(mark_fg if match else normal_color)
            painter.drawText(
                box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text
            )
            x += width + (2 if match else 0)
            if last:
                break

    def _paint_tags(
        self, painter: QPainter, rect: QRect, palette: QPalette, tags: list[str], selected: bool
    ) -> None:
        font = tag_font()
        painter.setFont(font)
        base = palette.color(QPalette.ColorRole.Base)
        highlight = palette.color(QPalette.ColorRole.Highlight)
        dark = is_dark(palette)
        fill = mix(base, highlight, 0.22 if dark else 0.13)
        text_color = highlight.lighter(150) if dark else highlight.darker(130)
        if selected:
            fill = mix(highlight, base, 0.75)
        pills, more = self.tag_layout(QFontMetricsF(font), rect, tags)
        for pill, label in pills:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
            painter.setPen(text_color)
            painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), label)
        if more is not None:
            painter.setPen(secondary_text(palette) if not selected else text_color)
            painter.drawText(more[0], _LEFT_CENTRE, more[1])

    def tag_layout(
        self, metrics: QFontMetricsF, rect: QRect, tags: list[str]
    ) -> tuple[list[tuple[QRect, str]], tuple[QRect, str] | None]:
        """Where each tag pill goes and its label, and the "+N" for tags that do not fit.

        Widths are measured in fractional pixels and rounded up: a pill exactly as wide as
        its rounded-down text made ``elidedText`` cut tags that had room ("de…" for
        "design"). A label is elided only when its pill really is cut by the cell's edge.
        """
        height = math.ceil(metrics.height()) + 4
        top = rect.top() + (rect.height() - height) // 2
        x = rect.left()
        pills: list[tuple[QRect, str]] = []
        for number, tag in enumerate(tags):
            text_width = math.ceil(metrics.horizontalAdvance(tag)) + 1
            width = text_width + 2 * _PILL_PADDING
            rest = len(tags) - number - 1
            more_width = math.ceil(metrics.horizontalAdvance(f"+{rest}")) + 6 if rest else 0
            if x + width > rect.right() - more_width and number:
                more = QRect(x, top, rect.right() - x, height)
                return pills, (more, f"+{len(tags) - number}")
            room = rect.right() - x
            label = tag
            if width > room:
                width = room
                label = metrics.elidedText(
                    tag, Qt.TextElideMode.ElideRight, max(0, room - 2 * _PILL_PADDING)
                )
            pills.append((QRect(x, top, width, height), label))
            x += width + self.PILL_GAP
        return pills, None


_PILL_PADDING = 6


def tag_font() -> QFont:
    """The tag pills' font: the application font a little smaller, semi-bold."""
    font = QFont(QApplication.font())
    if font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * 0.85)
    font.setWeight(QFont.Weight.DemiBold)
    return font
