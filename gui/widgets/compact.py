"""Buttons that give up room when the window is narrow: push buttons Qt's default 80-pixel
minimum (:func:`let_shrink_to_label`), tool buttons their label (:class:`CollapsingToolButton`).

Qt sizes a push button with a short label to at least 80 pixels and never shrinks it below
that. In a row of six actions that floor alone decides the window's minimum width, so a
narrow window would refuse to get narrower for the sake of padding. A compact button keeps
its usual size while there is room and shrinks to its label (never clipping it) when not.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionButton,
    QToolButton,
    QWidget,
)

LABEL_PADDING = 8
"""Space beside the label inside the button's frame, each side."""
COLLAPSED_PADDING = 5
"""Space beside the icon of a tool button that dropped its label, each side."""


def let_shrink_to_label(buttons: Iterable[QPushButton]) -> None:
    """Allow each button to shrink from its size hint down to its label's width."""
    for button in buttons:
        option = QStyleOptionButton()
        option.initFrom(button)
        frame = button.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, option, button)
        label = button.fontMetrics().horizontalAdvance(button.text())
        if not button.icon().isNull():
            label += button.iconSize().width() + 4
        button.setMinimumWidth(label + 2 * (LABEL_PADDING + frame))
        button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)


class CollapsingToolButton(QToolButton):
    """A tool button with an icon and a label that can drop its label (:meth:`set_collapsed`)
    when its row is short of room; the tooltip names the action all along.

    Its minimum is the icon alone, so a layout counts on no more; the row's owner, which knows
    what else the row holds, decides when the label goes (see
    :class:`gui.definitions.definition_header.DefinitionHeader`).
    """

    def __init__(self, icon: QIcon, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText(text)
        self.setIcon(icon)
        self.setIconSize(QSize(16, 16))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setAutoRaise(True)
        # A tool button is Fixed by default: its size hint would be its minimum too.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._full = super().sizeHint()

    def full_width(self) -> int:
        """The width with its label."""
        return self._full.width()

    def is_collapsed(self) -> bool:
        return self.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly

    def set_collapsed(self, collapsed: bool) -> None:
        if collapsed != self.is_collapsed():
            self.setToolButtonStyle(
                Qt.ToolButtonStyle.ToolButtonIconOnly
                if collapsed
                else Qt.ToolButtonStyle.ToolButtonTextBesideIcon
            )

    def minimumSizeHint(self) -> QSize:
        side = self.iconSize().width() + 2 * COLLAPSED_PADDING
        return QSize(side, self._full.height())
