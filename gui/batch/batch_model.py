"""The batch view's table model: one row per item, live from core events, coalesced.

A live batch publishes every event of every item (the core's :data:`BatchListener`, on the
qasync loop = the GUI thread). :meth:`BatchTableModel.add_event` only queues; a
:class:`~gui.widgets.throttle.Throttle` (every :data:`TABLE_INTERVAL_MS`, at once for an item's
start and end) folds the queue into each item's :class:`~core.record.run_state.RunState` — the
run view's reducer — and repaints only the rows that changed. A saved batch is loaded from its
results (:mod:`core.batch.results`): no run file is replayed.

The model sorts and filters its rows itself, with no ``QSortFilterProxyModel`` between it and
the table: through a proxy, every cell a repaint shows cost eight more calls into Python (the
proxy maps each role it asks for through the model's ``index``) — a repaint of the table's
visible cells took 21 ms instead of 13 (measured side by side, 200 cells), in the turns a live
batch shares with eight streaming steps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal

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
_ASCENDING = Qt.SortOrder.AscendingOrder
_FIXED_COLUMNS = frozenset({0, 1})
"""Columns whose values never change while a batch runs (its number, its input)."""
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
        """Every item, in item order: a row *number* is a place in this list."""
        self._by_index: dict[int, int] = {}
        self._shown: list[int] = []
        """The numbers of the rows the table shows, in the order it shows them."""
        self._position: dict[int, int] = {}
        """Where each shown row number is in :attr:`_shown`."""
        self._sort_column = 0
        self._sort_order = _ASCENDING
        self.failed_only = False
        self._pending: deque[tuple[int, Event]] = deque()
        self._throttle = Throttle(self.flush, TABLE_INTERVAL_MS, self)

    # -- public API ----------------------------------------------------------------------

    def load(self, record: BatchRecord, results: list[ItemResult]) -> None:
        """Show a batch as recorded (no live state)."""
        self._show(
            [
                _recorded_row(item.index, item.item.label(), result)
                for item, result in zip(record.items, results, strict=True)
            ]
        )

    def clear(self) -> None:
        """Show no batch (the one shown is gone)."""
        self._show([])

    def _show(self, rows: list[ItemRow]) -> None:
        self._throttle.cancel()
        self._pending.clear()
        self.beginResetModel()
        self.rows = rows
        self._by_index = {row.index: number for number, row in enumerate(self.rows)}
        self._set_shown(self._arranged())
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
            self._repaint(changed, range(self.columnCount()))
            self._follow_figures()
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
            self._repaint(changed, columns)
        if changed:
            self._follow_figures()
            self.totalsChanged.emit()

    def row(self, number: int) -> ItemRow:
        return self.rows[number]

    def number_at(self, position: int) -> int:
        """The row number shown at ``position`` of the table."""
        return self._shown[position]

    def position_of(self, number: int) -> int | None:
        """Where row ``number`` is shown (None: filtered out)."""
        return self._position.get(number)

    def set_failed_only(self, on: bool) -> None:
        """Show only the items that failed, were stopped or interrupted (or every item)."""
        self.failed_only = on
        self._rearrange()

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
        return len(self._shown)

    def sort(self, column: int, order: Qt.SortOrder = _ASCENDING) -> None:
        """Show the rows by ``column``'s value (the table's header asks; it stays so while
        the figures change)."""
        self._sort_column, self._sort_order = column, order
        self._rearrange()

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # Asked six times for every cell a repaint shows, mostly for roles the table leaves
        # to the style: those are answered first, from constants (an enum member looked up
        # on Qt's class costs more than the rest of the call).
        if role not in _ROLES or not index.isValid():
            return None
        row, column = self.rows[self._shown[index.row()]], index.column()
        if role == _DISPLAY:
            return row.cells[column]
        if role == _DECORATION:
            return status_icon(row.status) if column == 2 else None
        if role == _TOOL_TIP:
            if column == 7 and row.output:
                return plain_tip(row.output[:2000])
            return plain_tip(row.error) if column == 2 and row.error else None
        return _SORT_KEYS[column](row)  # the sort key (UserRole): only the column asked for

    # -- arrangement -----------------------------------------------------------------------

    def _arranged(self) -> list[int]:
        """The row numbers to show, filtered and sorted (ties keep item order)."""
        rows, failed_only = self.rows, self.failed_only
        numbers = [n for n in range(len(rows)) if not failed_only or rows[n].status in FAILED]
        key = _SORT_KEYS[self._sort_column]
        descending = self._sort_order != _ASCENDING
        return sorted(numbers, key=lambda n: key(rows[n]), reverse=descending)

    def _follow_figures(self) -> None:
        """Figures changed: arrange again when what the rows are sorted or filtered by can
        change (not by number or input, unfiltered: a 10,000-item batch would sort at 4 Hz
        for nothing)."""
        if self.failed_only or self._sort_column not in _FIXED_COLUMNS:
            self._rearrange()

    def _set_shown(self, shown: list[int]) -> None:
        self._shown = shown
        self._position = {number: position for position, number in enumerate(shown)}

    def _rearrange(self) -> None:
        """Sort and filter again (the figures changed, or how to sort or filter did); the
        selection and current row follow their items."""
        shown = self._arranged()
        if shown == self._shown:
            return
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        numbers = [self._shown[index.row()] for index in before]
        self._set_shown(shown)
        after = []
        for index, number in zip(before, numbers, strict=True):
            position = self._position.get(number)
            after.append(
                self.index(position, index.column()) if position is not None else QModelIndex()
            )
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def _repaint(self, numbers: Iterable[int], columns: Iterable[int]) -> None:
        """Tell the table the cells of these rows and columns changed (those it shows)."""
        positions = [p for n in numbers if (p := self._position.get(n)) is not None]
        if positions:
            first, last = min(columns), max(columns)
            self.dataChanged.emit(
                self.index(min(positions), first), self.index(max(positions), last)
            )


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
