"""The batch view's table model: one row per item, live from core events, coalesced.

A live batch publishes every event of every item (the core's :data:`BatchListener`, on the
qasync loop = the GUI thread). :meth:`BatchTableModel.add_event` only queues; a
:class:`~gui.widgets.throttle.Throttle` (every :data:`TABLE_INTERVAL_MS`, at once for an item's
start and end) folds the queue into each item's :class:`~core.record.run_state.RunState` — the
run view's reducer — and repaints only the rows that changed. A saved batch is loaded from its
results (:mod:`core.batch.results`): no run file is replayed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QObject, QSortFilterProxyModel, Qt, Signal

from core.batch.results import ItemResult
from core.batch.store import BatchRecord
from core.model.cost import format_cost
from core.model.events import Event, RunFinished, RunStarted, compact_number
from core.record.run_names import status_word
from core.record.run_state import RunState
from gui.history.runs_table import status_icon
from gui.widgets.plain_text import markdown_line, plain_tip
from gui.widgets.table_model import FlatTableModel, Index
from gui.widgets.throttle import Throttle

COLUMNS = ("#", "Input", "Status", "Step", "Tokens", "Cost", "Duration", "Output")
_DISPLAY = Qt.ItemDataRole.DisplayRole
_DECORATION = Qt.ItemDataRole.DecorationRole
_TOOL_TIP = Qt.ItemDataRole.ToolTipRole
_ROLES = frozenset({_DISPLAY, _DECORATION, _TOOL_TIP, Qt.ItemDataRole.UserRole})
"""The roles the table answers (UserRole: the sort key); the style's others get None."""
FAILED = frozenset({"error", "aborted", "interrupted"})
PREVIEW_CHARS = 160
TABLE_INTERVAL_MS = 250
"""A live batch's rows are repainted at most this often (4 Hz; an item's start and end at
once). Its figures are read, not watched word by word, and a repaint of 64 busy rows asks the
model for every cell's text, icon and colours: a quarter of the GUI thread's time at 20 Hz,
beside eight streaming steps (benchmarks/live.py)."""


@dataclass
class ItemRow:
    """What the table shows for one item."""

    index: int
    label: str
    status: str = "pending"
    run_id: str | None = None
    step: str = ""
    tokens: int = 0
    cost: float = 0.0
    priced: bool = True
    duration_s: float | None = None
    output: str = ""
    error: str | None = None
    state: RunState | None = None
    """The live item's folded run (None for a saved batch)."""
    cells: tuple[str, ...] = ()
    """Each cell's text, kept (see :meth:`show`)."""

    def fold(self, state: RunState) -> None:
        """Take the figures of the live item's state."""
        self.run_id = state.run_id or self.run_id
        self.status = state.status
        self.tokens = state.usage.input + state.usage.output
        self.cost = state.usage.cost
        self.priced = state.usage.priced
        self.duration_s = state.elapsed
        self.error = state.error
        active = next((s for s in state.steps if s.phase in ("running", "waiting")), None)
        self.step = f"{active.index + 1}/{len(state.steps)} {active.agent}" if active else ""
        done = [s.output for s in state.steps if s.output]
        self.output = done[-1] if done else self.output

    def show(self) -> set[int]:
        """Write the cells' text again from the figures; the columns whose text changed.
        Kept, not formatted at each ask: a repaint asks for every visible cell's text."""
        before, self.cells = self.cells, tuple(text(self) for text in _CELL_TEXTS)
        return {c for c, text in enumerate(self.cells) if not before or before[c] != text}


class BatchTableModel(FlatTableModel):
    """The items of one batch. GUI thread only (the qasync loop's thread)."""

    columns = COLUMNS

    # -- signals (GUI thread) ------------------------------------------------------------
    totalsChanged = Signal()
    """Counts, tokens or cost may have changed (after a load or a live batch of events)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ItemRow] = []
        self._by_index: dict[int, int] = {}
        self._pending: deque[tuple[int, Event]] = deque()
        self._throttle = Throttle(self.flush, TABLE_INTERVAL_MS, self)

    # -- public API ----------------------------------------------------------------------

    def load(self, record: BatchRecord, results: list[ItemResult]) -> None:
        """Show a batch as recorded (no live state)."""
        self._throttle.cancel()
        self._pending.clear()
        self.beginResetModel()
        self.rows = [
            _recorded_row(item.index, item.item.label(), result)
            for item, result in zip(record.items, results, strict=True)
        ]
        self._by_index = {row.index: number for number, row in enumerate(self.rows)}
        self.endResetModel()
        self.totalsChanged.emit()

    def update(self, results: dict[int, ItemResult]) -> None:
        """Take newer recorded figures for some items (a batch running elsewhere moved on);
        items folded live here keep their live figures."""
        changed = []
        for index, result in results.items():
            number = self._by_index.get(index)
            if number is None or self.rows[number].state is not None:
                continue
            self.rows[number] = _recorded_row(
                self.rows[number].index, self.rows[number].label, result
            )
            changed.append(number)
        if changed:
            right = self.columnCount() - 1
            self.dataChanged.emit(self.index(min(changed), 0), self.index(max(changed), right))
            self.totalsChanged.emit()

    def add_event(self, index: int, event: Event) -> None:
        """Queue one event of item ``index`` (the core's BatchListener signature)."""
        self._pending.append((index, event))
        self._throttle.request(urgent=isinstance(event, RunStarted | RunFinished))

    def flush(self) -> None:
        """Fold everything queued and repaint the rows it changed."""
        self._throttle.cancel()
        changed: set[int] = set()
        while self._pending:
            index, event = self._pending.popleft()
            number = self._by_index.get(index)
            if number is None:
                continue
            row = self.rows[number]
            if row.state is None or isinstance(event, RunStarted):
                row.state = RunState()
            row.state.apply(event)
            changed.add(number)
        columns: set[int] = set()
        for number in changed:
            row = self.rows[number]
            assert row.state is not None
            row.fold(row.state)
            columns |= row.show()
        if columns:  # only the cells that changed are repainted, not every busy row whole
            first, last = min(columns), max(columns)
            self.dataChanged.emit(self.index(min(changed), first), self.index(max(changed), last))
        if changed:
            self.totalsChanged.emit()

    def row(self, number: int) -> ItemRow:
        return self.rows[number]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    def totals(self) -> tuple[int, float]:
        """(tokens, cost) of every item."""
        return sum(row.tokens for row in self.rows), sum(row.cost for row in self.rows)

    def all_priced(self) -> bool:
        """False when some item's cost is only a lower bound (a model with no price)."""
        return all(row.priced for row in self.rows)

    # -- Qt model ------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.rows)

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # Asked six times for every cell a repaint shows, mostly for roles the table leaves
        # to the style: those are answered first, from constants (an enum member looked up
        # on Qt's class costs more than the rest of the call).
        if role not in _ROLES or not index.isValid():
            return None
        row, column = self.rows[index.row()], index.column()
        if role == _DISPLAY:
            return row.cells[column]
        if role == _DECORATION:
            return status_icon(row.status) if column == 2 else None
        if role == _TOOL_TIP:
            if column == 7 and row.output:
                return plain_tip(row.output[:2000])
            return plain_tip(row.error) if column == 2 and row.error else None
        return _SORT_KEYS[column](row)  # the sort key (UserRole): only the column asked for


_SORT_KEYS: tuple[Callable[[ItemRow], Any], ...] = (
    lambda row: row.index,
    lambda row: row.label.casefold(),
    lambda row: row.status,
    lambda row: row.step,
    lambda row: row.tokens,
    lambda row: row.cost,
    lambda row: row.duration_s or 0.0,
    lambda row: row.output.casefold(),
)


@lru_cache(maxsize=1024)
def _preview(text: str) -> str:
    """The Output column's line, kept: a live row writes its cells again whenever its figures
    change, mostly with the same answer, and an answer of many kilobytes is slow to flatten."""
    return markdown_line(text)[:PREVIEW_CHARS]


_CELL_TEXTS: tuple[Callable[[ItemRow], str], ...] = (
    lambda row: str(row.index + 1),
    lambda row: row.label,
    lambda row: status_word(row.status),
    lambda row: row.step,
    lambda row: compact_number(row.tokens) if row.tokens else "",
    lambda row: format_cost(row.cost, row.priced) if row.cost or not row.priced else "",
    lambda row: f"{row.duration_s:.1f} s" if row.duration_s is not None else "",
    lambda row: _preview(row.output or (row.error or "")),
)
"""Each column's text, in :data:`COLUMNS` order (see :meth:`ItemRow.show`)."""


def _recorded_row(index: int, label: str, result: ItemResult) -> ItemRow:
    row = ItemRow(
        index=index,
        label=label,
        status=result.status,
        run_id=result.run_id,
        tokens=result.tokens,
        cost=result.cost,
        priced=result.priced,
        duration_s=result.duration_s,
        output=result.output,
        error=result.error,
    )
    row.show()
    return row


class FailedFilter(QSortFilterProxyModel):
    """Sorts by each column's value; with :attr:`failed_only`, shows failed items only."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.failed_only = False
        self.setSortRole(Qt.ItemDataRole.UserRole)

    def set_failed_only(self, on: bool) -> None:
        if not hasattr(self, "beginFilterChange"):  # Qt < 6.9
            self.failed_only = on
            self.invalidateRowsFilter()
            return
        self.beginFilterChange()
        self.failed_only = on
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self.failed_only:
            return True
        model = self.sourceModel()
        assert isinstance(model, BatchTableModel)
        return model.row(source_row).status in FAILED
