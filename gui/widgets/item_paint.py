"""The common start of a delegate that paints an item's text itself: the item's background,
selection and focus drawn by the style, the text left out."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)


def paint_item_frame(
    delegate: QStyledItemDelegate,
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
) -> tuple[QStyleOptionViewItem, QStyle]:
    """Draw the item without its text; returns its filled-in option and the style used, for
    painting the text over it."""
    opt = QStyleOptionViewItem(option)
    delegate.initStyleOption(opt, index)
    opt.text = ""
    widget = opt.widget
    style = widget.style() if isinstance(widget, QWidget) else QApplication.style()
    style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
    return opt, style
