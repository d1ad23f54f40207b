"""Buttons that give up Qt's default 80-pixel minimum when the window is narrow.

Qt sizes a push button with a short label to at least 80 pixels and never shrinks it below
that. In a row of six actions that floor alone decides the window's minimum width, so a
narrow window would refuse to get narrower for the sake of padding. A compact button keeps
its usual size while there is room and shrinks to its label (never clipping it) when not.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QPushButton, QSizePolicy, QStyle, QStyleOptionButton

LABEL_PADDING = 8
"""Space beside the label inside the button's frame, each side."""


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
