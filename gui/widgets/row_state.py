"""Whether a row that a delegate paints is selected or under the mouse.

Asked here, QStyle is imported when the first row is painted rather than when a module that
paints rows is imported: PySide builds the class's 700-odd enum members on first use (~10 ms),
and the window's first picture (the agents view before its files are read) has no rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStyleOptionViewItem

RowState = Literal["selected", "hovered", "plain"]


def row_state(option: QStyleOptionViewItem) -> RowState:
    from PySide6.QtWidgets import QStyle

    if option.state & QStyle.StateFlag.State_Selected:
        return "selected"
    if option.state & QStyle.StateFlag.State_MouseOver:
        return "hovered"
    return "plain"
