"""The run history as a table model: one row per :class:`core.runs.RunRecord`.

Columns: started, what ran (preset and arguments, or the agents), status (a coloured dot and
a word), duration, tokens (↑ input ↓ output) and cost. Sorting uses raw values (a time, a
number), not the text shown; the filter matches the shown text plus the run id, folder and
error, so typing a folder name or a word from an error message finds the run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication

from core.events import compact_number
from core.run_names import run_name
from core.runs import RunRecord
from gui.run_status import fill_color, format_seconds, run_status_label, status_color

COLUMNS = ("Started", "Run", "Status", "Duration", "Tokens", "Cost")
ROLE_RECORD = Qt.ItemDataRole.UserRole + 1
ROLE_SORT = Qt.ItemDataRole.UserRole + 2

Index = QModelIndex | QPersistentModelIndex


def started_text(iso: str) -> str:
    """Local ``YYYY-MM-DD HH:MM`` of an ISO timestamp (the text itself when unparsable)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def what_ran(record: RunRecord) -> str:
    """The run's name as everywhere else (:func:`core.run_names.run_name`), or its id."""
    return run_name(record.mode, record.preset, record.args, record.agents) or record.id


def status_icon(status: str, palette: QPalette | None = None) -> QIcon:
    """A small filled dot in the status colour (grey for interrupted runs)."""
    palette = palette or QApplication.palette()
    color = fill_color(palette, status)
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor(0, 0, 0, 0))
    painter.setBrush(color)
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pixmap)


class RunsTableModel(QAbstractTableModel):
    """Rows of the history list. GUI thread only."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._records: list[RunRecord] = []
        self._icons: dict[str, QIcon] = {}

    def set_records(self, records: list[RunRecord]) -> None:
        self.beginResetModel()
        self._records = list(records)
        self.endResetModel()

    def records(self) -> list[RunRecord]:
        return list(self._records)

    def record(self, row: int) -> RunRecord:
        return self._records[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        record = self._records[index.row()]
        column = index.column()
        if role == ROLE_RECORD:
            return record
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, column)
        if role == ROLE_SORT:
            return self._sort_key(record, column)
        if role == Qt.ItemDataRole.DecorationRole and column == 2:
            return self._icon(record.status)
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return status_color(QApplication.palette(), record.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(record)
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    # -- private -------------------------------------------------------------------------

    @staticmethod
    def _text(record: RunRecord, column: int) -> str:
        usage = record.usage
        if column == 0:
            return started_text(record.started_at)
        if column == 1:
            return what_ran(record)
        if column == 2:
            return run_status_label(record.status)
        if column == 3:
            return format_seconds(record.duration_s) if record.duration_s is not None else "—"
        if column == 4:
            if not (usage.input or usage.output):
                return "—"
            return f"↑{compact_number(usage.input)} ↓{compact_number(usage.output)}"
        return f"${usage.cost:.4f}" if usage.cost else "—"

    @staticmethod
    def _sort_key(record: RunRecord, column: int) -> Any:
        usage = record.usage
        keys: list[Any] = [
            record.started_at,
            what_ran(record).casefold(),
            record.status,
            record.duration_s if record.duration_s is not None else -1.0,
            usage.input + usage.output,
            usage.cost,
        ]
        return keys[column]

    @staticmethod
    def _tooltip(record: RunRecord) -> str:
        lines = [what_ran(record), f"{record.mode} · {record.id}", record.cwd]
        if record.error:
            lines.append(record.error)
        line = record.usage.line()
        if line:
            lines.append(line)
        return "\n".join(lines)

    def _icon(self, status: str) -> QIcon:
        if status not in self._icons:
            self._icons[status] = status_icon(status)
        return self._icons[status]


class RunsFilterModel(QSortFilterProxyModel):
    """Sorts by raw values and filters on every word of the filter text."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._words: list[str] = []
        self.setSortRole(ROLE_SORT)

    def set_filter_text(self, text: str) -> None:
        # invalidateFilter() does not re-filter a sorted proxy in Qt 6.11; the explicit
        # begin/end pair (Qt 6.9+) does, and so does a full invalidate() before it.
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
            self._words = text.casefold().split()
            self.endFilterChange()
        else:
            self._words = text.casefold().split()
            self.invalidate()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self._words:
            return True
        model = self.sourceModel()
        if not isinstance(model, RunsTableModel):
            return True
        record = model.record(source_row)
        texts = [str(model.index(source_row, c).data()) for c in range(len(COLUMNS))]
        extra = [record.id, record.cwd, record.error or "", record.mode, *record.agents]
        haystack = " ".join([*texts, *extra])
        haystack = haystack.casefold()
        return all(word in haystack for word in self._words)
