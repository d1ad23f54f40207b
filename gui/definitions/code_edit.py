"""A plain-text editor for definition files: monospace, line numbers, marked problem lines.

Validation messages name lines ("line 4: ..."), so the gutter shows numbers and the offending
line gets a tinted full-width mark. Marks and the current-line tint are ExtraSelections: they
never enter the document, its undo stack or the saved file.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from gui.theme import SEVERITY_HUES, mix, monospace_font, secondary_text, tint


class _LineNumberArea(QWidget):
    def __init__(self, editor: CodeEdit) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_line_numbers(event)


class CodeEdit(QPlainTextEdit):
    """QPlainTextEdit with a line-number gutter, problem marks and soft tab stops."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DefinitionText")
        self.setFont(monospace_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 2)
        self.document().setDocumentMargin(8)
        self._marks: dict[int, str] = {}
        self._gutter = _LineNumberArea(self)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._scroll_gutter)
        self.cursorPositionChanged.connect(self._refresh_selections)
        self._update_gutter_width()
        self._refresh_selections()

    # -- public API ----------------------------------------------------------------------

    def set_marks(self, marks: dict[int, str]) -> None:
        """Mark lines (1-based) with a severity (``error``/``warning``); replaces old marks."""
        self._marks = dict(marks)
        self._refresh_selections()
        self._gutter.update()

    def marks(self) -> dict[int, str]:
        return dict(self._marks)

    def go_to_line(self, line: int) -> None:
        block = self.document().findBlockByNumber(max(0, line - 1))
        if block.isValid():
            cursor = QTextCursor(block)
            self.setTextCursor(cursor)
            self.centerCursor()
            self.setFocus()

    def line_number_width(self) -> int:
        digits = max(2, len(str(self.blockCount())))
        return 14 + self.fontMetrics().horizontalAdvance("9") * digits

    def refresh_colors(self) -> None:
        self._refresh_selections()
        self._gutter.update()

    # -- Qt overrides --------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(
            QRect(rect.left(), rect.top(), self.line_number_width(), rect.height())
        )

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # YAML forbids tab indentation: a Tab key inserts two spaces.
        if event.key() == Qt.Key.Key_Tab and not event.modifiers() and not self.isReadOnly():
            self.insertPlainText("  ")
            return
        super().keyPressEvent(event)

    # -- gutter --------------------------------------------------------------------------

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        palette = self.palette()
        painter = QPainter(self._gutter)
        base = palette.color(QPalette.ColorRole.Base)
        painter.fillRect(event.rect(), mix(base, palette.color(QPalette.ColorRole.Window), 0.5))
        muted = secondary_text(palette)
        current = self.textCursor().blockNumber()
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        width = self._gutter.width() - 6
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                number = block.blockNumber() + 1
                severity = self._marks.get(number)
                if severity:
                    painter.fillRect(
                        0, top, self._gutter.width(), bottom - top, self._mark_color(severity)
                    )
                painter.setPen(
                    palette.color(QPalette.ColorRole.Text) if number - 1 == current else muted
                )
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
        painter.end()

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    # -- extra selections ----------------------------------------------------------------

    def _mark_color(self, severity: str) -> QColor:
        hue = SEVERITY_HUES.get(severity, SEVERITY_HUES["error"])
        return tint(self.palette(), hue, 0.22)

    def _refresh_selections(self) -> None:
        selections: list[QTextEdit.ExtraSelection] = []
        palette = self.palette()
        if not self.isReadOnly():
            current = QTextEdit.ExtraSelection()
            current.format.setBackground(
                mix(
                    palette.color(QPalette.ColorRole.Base),
                    palette.color(QPalette.ColorRole.Highlight),
                    0.07,
                )
            )
            current.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            current.cursor = self.textCursor()
            current.cursor.clearSelection()
            selections.append(current)
        for line, severity in sorted(self._marks.items()):
            block = self.document().findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            mark = QTextEdit.ExtraSelection()
            mark.format.setBackground(self._mark_color(severity))
            mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            mark.format.setToolTip(severity)
            mark.cursor = QTextCursor(block)
            selections.append(mark)
        self.setExtraSelections(selections)
