"""A flat table of Python rows under a fixed row of column titles.

Qt asks every table model for its size and its column titles in the same way. The history,
the documents and the batch items differ only in their rows and in what each cell shows,
so they say that much (:attr:`FlatTableModel.columns`, :meth:`~FlatTableModel.row_count`,
``data``) and share the rest.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex


class FlatTableModel(QAbstractTableModel):
    """Rows without children, :attr:`columns` wide."""

    columns: ClassVar[tuple[str, ...]] = ()
    """The column titles, left to right."""

    def row_count(self) -> int:
        """How many rows the table has now."""
        raise NotImplementedError

    def column_title(self, section: int) -> str:
        """The title of column ``section`` (a model may change one with its state)."""
        return self.columns[section]

    # -- Qt model API --------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self.columns)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Qt's own checks the bounds through ``rowCount`` and ``columnCount``: two calls into
        Python for every cell a view paints (through a sort proxy, for every role it asks
        of it), where one call does."""
        if parent.isValid() or not (
            0 <= row < self.row_count() and 0 <= column < len(self.columns)
        ):
            return QModelIndex()
        return self.createIndex(row, column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.column_title(section)
        return None
