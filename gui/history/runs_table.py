"""The run history as a table model: one row per :class:`core.record.run_files.RunRecord`, every
run.

Columns: started, what ran (preset and arguments, or the agents), status (a coloured dot and
a word), duration, tokens (↑ input ↓ output) and cost. The model is a window over the SQLite
index: it loads :data:`PAGE` rows at a time as the table scrolls (``canFetchMore`` /
``fetchMore``), and sorting and filtering are done by SQLite
(:meth:`core.record.run_files.RunIndex.page`)
on raw values (a time, a number), so ten thousand runs cost one page of rows. The filter
matches the words shown plus the run id, folder and error, so typing a folder name or a word
from an error message finds the run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication

from core.model.cost import cost_reason, format_cost
from core.model.events import compact_number
from core.record.run_files import RunIndex, RunRecord
from core.record.run_names import run_name
from gui.widgets.plain_text import plain_tip
from gui.widgets.run_status import fill_color, format_seconds, run_status_label, status_color
from gui.widgets.table_model import FlatTableModel, Index

COLUMNS = ("Started", "Run", "Status", "Duration", "Tokens", "Cost")
SORT_BY = ("started", "run", "status", "duration", "tokens", "cost")
"""The :data:`core.record.run_files.SORT_KEYS` key of each column."""
PAGE = 200
"""Rows fetched from the index at a time."""
ROLE_RECORD = Qt.ItemDataRole.UserRole + 1


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
    """The run's name as everywhere else (:func:`core.record.run_names.run_name`), or its id."""
    return run_name(record.mode, record.preset, record.args, record.agents) or record.id


_DOTS: dict[tuple[str, int], QIcon] = {}


def status_icon(status: str, palette: QPalette | None = None) -> QIcon:
    """A small filled dot in the status colour (grey for interrupted runs), drawn once per
    status and palette: a table asks for it at every repaint of every visible row (drawing
    each anew was most of a live batch's repaint), and a new palette (light ↔ dark) gets
    dots of its own."""
    palette = palette or QApplication.palette()
    key = (status, palette.cacheKey())
    icon = _DOTS.get(key)
    if icon is None:
        if len(_DOTS) > 64:  # dots of palettes no longer shown
            _DOTS.clear()
        icon = _DOTS[key] = _dot(fill_color(palette, status))
    return icon


def _dot(color: QColor) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor(0, 0, 0, 0))
    painter.setBrush(color)
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pixmap)


class RunsTableModel(FlatTableModel):
    """Every run in the index, a page at a time, filtered and sorted in SQL. GUI thread only."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._records: list[RunRecord] = []
        self._total = 0
        self._words: list[str] = []
        self._sort = ("started", True)

    # -- public API ----------------------------------------------------------------------

    def reload(self) -> None:
        """Read the first page again (after a run started or ended, an import, a delete)."""
        index = RunIndex()
        self.beginResetModel()
        self._total = index.count(self._words)
        self._records = index.page(0, PAGE, self._words, *self._sort)
        self.endResetModel()

    def set_filter_text(self, text: str) -> None:
        """Show only runs matching every word of ``text`` (see :meth:`RunIndex.page`)."""
        self._words = text.casefold().split()
        self.reload()

    def total(self) -> int:
        """Runs matching the filter, loaded or not."""
        return self._total

    def records(self) -> list[RunRecord]:
        """The rows loaded so far, in order."""
        return list(self._records)

    def record(self, row: int) -> RunRecord:
        return self._records[row]

    def row_of(self, run_id: str) -> int | None:
        """The row of ``run_id``, loading further pages until it is found (or all are)."""
        while True:
            for row, record in enumerate(self._records):
                if record.id == run_id:
                    return row
            if not self.canFetchMore(QModelIndex()):
                return None
            self.fetchMore(QModelIndex())

    # -- Qt model interface --------------------------------------------------------------

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 (Qt signature)
        return not parent.isValid() and len(self._records) < self._total

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008 (Qt signature)
        if parent.isValid():
            return
        rows = RunIndex().page(len(self._records), PAGE, self._words, *self._sort)
        if not rows:
            self._total = len(self._records)  # runs were deleted meanwhile
            return
        first = len(self._records)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._records.extend(rows)
        self.endInsertRows()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort = (SORT_BY[column], order == Qt.SortOrder.DescendingOrder)
        self.reload()

    def row_count(self) -> int:
        return len(self._records)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        record = self._records[index.row()]
        column = index.column()
        if role == ROLE_RECORD:
            return record
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, column)
        if role == Qt.ItemDataRole.DecorationRole and column == 2:
            return status_icon(record.status)
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return status_color(QApplication.palette(), record.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            reason = cost_reason(record.usage.cost, record.usage.priced)
            if column == 5 and reason:
                return reason
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
            return what_ran(record) + (f"  ↳ {record.origin.describe()}" if record.origin else "")
        if column == 2:
            return run_status_label(record.status)
        if column == 3:
            return format_seconds(record.duration_s) if record.duration_s is not None else "—"
        if column == 4:
            if not (usage.input or usage.output):
                return "—"
            return f"↑{compact_number(usage.input)} ↓{compact_number(usage.output)}"
        if not usage.priced:
            return format_cost(usage.cost, priced=False)
        return format_cost(usage.cost) if usage.cost else "—"

    @staticmethod
    def _tooltip(record: RunRecord) -> str:
        lines = [what_ran(record), f"{record.mode} · {record.id}", record.cwd]
        if record.origin is not None:
            lines.append(record.origin.describe().capitalize())
        if record.error:
            lines.append(record.error)
        line = record.usage.line()
        if line:
            lines.append(line)
        if not record.usage.priced:
            lines.append(
                f"Cost unknown for {record.usage.model or 'a model'}: it is in no price table. "
                "Give it a price under 'prices:' in config.yaml."
            )
        return plain_tip("\n".join(lines))  # a task, a folder, an error: anyone's words
