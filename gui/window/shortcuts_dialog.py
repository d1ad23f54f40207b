"""Help ▸ Keyboard shortcuts: every shortcut of the window in one list.

The menu shortcuts are read from the menu bar itself, so the list cannot fall behind the menus;
the few that live inside a view (no menu item to read them from) are listed in
:data:`VIEW_SHORTCUTS`, next to where a person uses them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

VIEW_SHORTCUTS: tuple[tuple[str, str, str], ...] = (
    ("Launch dialog", "Run", "Ctrl+Return"),
    ("Run view", "Expand or collapse all steps", "Ctrl+O"),
    ("Run view", "Open or close the focused tool call", "Return or Space"),
    ("Runs history", "Open the selected run", "Return"),
    ("Runs history", "Delete the selected run", "Delete"),
    ("Documents", "Search", "Ctrl+F"),
    ("Documents", "Save the document being edited", "Ctrl+S"),
)
"""(where, what, keys) for shortcuts that belong to a view rather than to a menu item."""


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, item, keys) for every menu item that has a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []
    for top in menu_bar.actions():
        menu = top.menu()
        if not isinstance(menu, QMenu):
            continue
        title = top.text().replace("&", "")
        for action in menu.actions():
            if isinstance(action, QAction) and not action.shortcut().isEmpty():
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                rows.append((title, action.text().replace("&", "").rstrip("…"), keys))
    return rows


class ShortcutsDialog(QDialog):
    """A read-only table: where, what, keys."""

    def __init__(self, menu_bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ShortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        rows = menu_shortcuts(menu_bar) + list(VIEW_SHORTCUTS)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Where", "What", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(560, 480)
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def rows(self) -> list[list[str]]:
        """The table's text, row by row, as shown."""
        return [
            [self._text(row, column) for column in range(3)] for row in range(self.table.rowCount())
        ]

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""
