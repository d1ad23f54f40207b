"""The Batches view: every batch, and one batch's items as a live table.

Left, the batches (newest first, from :class:`core.batch.store.BatchStore`); right, the chosen
batch: its preset and inputs, aggregate totals, and a table of items — status, current step,
tokens, cost, duration, a preview of the final output (:mod:`gui.batch.batch_model`).
"New batch…" starts one (:mod:`gui.batch.new_batch_dialog`, through :mod:`core.batch.start`
as ``baton batch`` does, live here); "Failed only" filters; Open (or a double-click) shows an
item as a normal run in Runs; Compare opens two items' runs side by side as tabs there;
"Re-run failed" runs the items that did not finish ok again, here, live (the core's
:class:`~core.batch.supervisor.BatchRun` with the local executor on the window's qasync loop,
answering approvals like any run started from the window); Export writes the results as
CSV or JSONL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from html import escape
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.batch.executors import ExecutorOptions, LocalExecutor
from core.batch.results import batch_results, item_result, results_csv, results_jsonl
from core.batch.start import batch_run, record_batch
from core.batch.store import BatchRecord, BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.config.atomic import atomic_write_text
from core.config.settings import SettingsError, load_settings
from core.model.cost import format_cost
from core.model.errors import RunError
from core.model.events import compact_number
from core.record.run_files import RunIndex
from core.record.run_names import status_word
from core.safety.approvals import Responder, deny_by_setting
from gui.batch.batch_model import FAILED, BatchTableModel
from gui.batch.new_batch_dialog import NewBatch, NewBatchDialog
from gui.history.runs_table import started_text
from gui.widgets.compact import let_shrink_to_label

_ORDER = ("running", "ok", "error", "pending")
"""The order of the counts in the totals line (every failure counts as failed)."""
NO_BATCH = "No batch chosen"
RERUN_CONCURRENCY = 4
WATCH_MS = 2000
"""How often a batch running in another process is read again."""
"""Items at once when the window re-runs a batch's failed items."""


class BatchView(QWidget):
    """GUI thread only; a live re-run runs on the qasync loop (the same thread)."""

    # -- signals (GUI thread) ------------------------------------------------------------
    openRunRequested = Signal(str)
    """The person wants to see this run (an item's) as a normal run."""

    def __init__(
        self,
        responder: Responder | None = None,
        parent: QWidget | None = None,
        *,
        working_folder: Callable[[], Path] = Path.cwd,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("BatchView")
        self._working_folder = working_folder
        self._responder = responder or deny_by_setting("the batch view has no approval queue")
        self.record: BatchRecord | None = None
        self.running: BatchRun | None = None
        self.task: asyncio.Future[None] | None = None

        self.batches = QListWidget()
        self.batches.setObjectName("BatchList")
        self.batches.setWordWrap(True)
        self.batches.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.batches.currentItemChanged.connect(lambda *_: self._chosen())

        self.title = QLabel(NO_BATCH)
        self.title.setObjectName("BatchTitle")
        self.title.setWordWrap(True)
        self.totals = QLabel("")
        self.totals.setWordWrap(True)
        self.totals.setObjectName("BatchTotals")
        self.failed_only = QCheckBox("Failed only")
        self.failed_only.toggled.connect(self._filter)
        self.refresh_button = self._button("Refresh", self.refresh)
        self.new_button = self._button("New batch…", self.new_batch)
        self.new_button.setToolTip("Run a preset over a file of inputs (JSONL or CSV)")
        self.open_button = self._button("Open run", self.open_selected)
        self.compare_button = self._button("Compare", self.compare_selected)
        self.rerun_button = self._button("Re-run failed", self.rerun_failed)
        self.cancel_button = self._button("Cancel", self.cancel)
        self.csv_button = self._button("Export CSV…", lambda: self.export("csv"))
        self.jsonl_button = self._button("Export JSONL…", lambda: self.export("jsonl"))

        self._watch = QTimer(self)  # a batch running in another process (baton batch)
        self._watch.setInterval(WATCH_MS)
        self._watch.timeout.connect(self._poll)

        self.model = BatchTableModel(self)
        self.model.totalsChanged.connect(self._show_totals)
        self.table = QTableView()
        self.table.setObjectName("BatchTable")
        self.table.setModel(self.model)  # which sorts and filters itself (no proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in enumerate((44, 300, 90, 110, 64, 72, 76)):
            header.resizeSection(column, width)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(lambda _index: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())

        let_shrink_to_label(  # seven of Qt's 80 px buttons would set the window's width
            (
                self.refresh_button,
                self.new_button,
                self.open_button,
                self.compare_button,
                self.rerun_button,
                self.cancel_button,
                self.csv_button,
                self.jsonl_button,
            )
        )
        # Two rows: looking (filter, open, compare) above acting (re-run, cancel, export), so
        # the view never makes the window wider than the other views do.
        looking = QHBoxLayout()
        for widget in (self.failed_only, self.open_button, self.compare_button):
            looking.addWidget(widget)
        looking.addStretch(1)
        acting = QHBoxLayout()
        for widget in (self.rerun_button, self.cancel_button):
            acting.addWidget(widget)
        acting.addStretch(1)
        for widget in (self.csv_button, self.jsonl_button):
            acting.addWidget(widget)
        detail = QWidget()
        right = QVBoxLayout(detail)
        right.setContentsMargins(12, 12, 12, 12)
        right.addWidget(self.title)
        right.addWidget(self.totals)
        right.addLayout(looking)
        right.addLayout(acting)
        right.addWidget(self.table, 1)

        side = QWidget()
        left = QVBoxLayout(side)
        left.setContentsMargins(12, 12, 0, 12)
        heading = QHBoxLayout()
        heading.addWidget(QLabel("Batches"), 1)
        heading.addWidget(self.refresh_button)
        left.addLayout(heading)
        left.addWidget(self.batches, 1)
        left.addWidget(self.new_button)  # under the list: the side column stays narrow

        splitter = QSplitter()
        splitter.addWidget(side)
        splitter.addWidget(detail)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.refresh()

    # -- public API ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the batches again (a batch run from the command line shows up)."""
        chosen = self.record.id if self.record else None
        self.batches.blockSignals(True)
        self.batches.clear()
        for record in BatchStore().list():
            item = QListWidgetItem(_list_text(record))
            item.setData(Qt.ItemDataRole.UserRole, record.id)
            item.setToolTip(record.id)
            self.batches.addItem(item)
        self.batches.blockSignals(False)
        ids = [self.batches.item(n).data(Qt.ItemDataRole.UserRole) for n in range(self.count())]
        if chosen is not None and chosen in ids:
            self.batches.setCurrentRow(ids.index(chosen))
            self.show_batch(chosen)
        elif ids and self.running is None:
            self.batches.setCurrentRow(0)
            self.show_batch(ids[0])
        elif self.record is None:  # the batch shown is gone (one that never started)
            self.title.setText(NO_BATCH)
            self.model.clear()
        self._update_buttons()

    def choose(self, batch_id: str) -> None:
        """Select and show this batch (read afresh: it may be new)."""
        self.record = None
        self.refresh()
        for row in range(self.count()):
            if self.batches.item(row).data(Qt.ItemDataRole.UserRole) == batch_id:
                self.batches.setCurrentRow(row)  # shows it

    def count(self) -> int:
        return self.batches.count()

    def show_batch(self, batch_id: str) -> None:
        record = BatchStore().get(batch_id)
        if record is None:
            return
        self.record = record
        self.title.setText(
            f"<b>{escape(record.spec.preset)}</b> over {escape(record.inputs)} · "
            f"{len(record.items)} items · {started_text(record.created_at)} · "
            f"<span style='color:gray'>{escape(record.id)}</span>"
        )
        if self.running is None or self.running.record.id != record.id:
            self.model.load(record, batch_results(record))
        self._update_buttons()
        self._watch_elsewhere()

    def selected_rows(self) -> list[int]:
        """Row numbers (item order) of the selected items, top to bottom."""
        rows = self.table.selectionModel().selectedRows()
        return sorted(self.model.number_at(index.row()) for index in rows)

    def select(self, *rows: int) -> None:
        """Select these row numbers (item order; for the keyboard and tests alike)."""
        selection = self.table.selectionModel()
        selection.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row in rows:
            position = self.model.position_of(row)
            if position is not None:
                selection.select(self.model.index(position, 0), flags)

    def open_selected(self) -> None:
        for row in self.selected_rows()[:1]:
            self._open(row)

    def compare_selected(self) -> None:
        """Open the two selected items' runs, one tab each."""
        for row in self.selected_rows()[:2]:
            self._open(row)

    def rerun_failed(self) -> asyncio.Future[None] | None:
        """Run the items that did not finish ok again, live; the task is returned."""
        if self.record is None or self.running is not None or not self.record.unfinished():
            return None
        try:
            batch = BatchRun(
                self.record,
                LocalExecutor(ExecutorOptions(concurrency=RERUN_CONCURRENCY)),
                settings=load_settings(),
                responder=self._responder,
                listeners=[self.model.add_event],
            )
        except SettingsError as error:
            self.totals.setText(f"Cannot re-run: {error}")
            return None
        return self._start(batch, refused="Cannot re-run")

    def new_batch(self) -> NewBatchDialog:
        """Ask for a preset, inputs, concurrency and executor (window-modal); Start starts it."""
        dialog = NewBatchDialog(self._working_folder(), self)
        dialog.accepted.connect(lambda: self.start_batch(dialog.request()))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def start_batch(self, wanted: NewBatch) -> asyncio.Future[None] | None:
        """Record and run a new batch, live in this view, the way ``baton batch`` does
        (:mod:`core.batch.start`); the task is returned, None if it could not start."""
        if self.running is not None:
            self.totals.setText("A batch is running here already: wait for it or cancel it.")
            return None
        store = BatchStore()
        spec = BatchSpec(preset=wanted.preset, cwd=str(self._working_folder().resolve()))
        try:
            record = record_batch(
                store, spec, wanted.inputs, wanted.placement, header=wanted.header
            )
        except RunError as error:
            self.totals.setText(f"Cannot start the batch: {error}")
            return None
        self.choose(record.id)
        try:
            batch = batch_run(
                record,
                wanted.placement,
                load_settings(),
                responder=self._responder,
                listeners=[self.model.add_event],
                store=store,
            )
        except (RunError, SettingsError) as error:
            store.delete(record.id)  # nothing ran: no record of a batch that never started
            self.record = None
            self.refresh()
            self.totals.setText(f"Cannot start the batch: {error}")
            return None
        return self._start(batch, refused="Cannot start the batch", new=store)

    def cancel(self) -> None:
        if self.running is not None:
            self.running.cancel()

    def export(self, kind: str) -> Path | None:
        if self.record is None:
            return None
        name = "CSV (*.csv)" if kind == "csv" else "JSON Lines (*.jsonl)"
        target, _filter = QFileDialog.getSaveFileName(
            self, "Export batch results", f"{self.record.id}.{kind}", name
        )
        if not target:
            return None
        results = batch_results(self.record)
        text = results_csv(results) if kind == "csv" else results_jsonl(results)
        try:
            atomic_write_text(Path(target), text)
        except OSError as error:
            self.totals.setText(f"Could not export to {target}: {error.strerror or error}")
            return None
        self.totals.setText(f"Exported {len(results)} items to {target}.")
        return Path(target)

    # -- internals -----------------------------------------------------------------------

    def _button(self, text: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.clicked.connect(lambda _checked=False: slot())  # type: ignore[operator]
        return button

    def _start(
        self, batch: BatchRun, *, refused: str, new: BatchStore | None = None
    ) -> asyncio.Future[None]:
        """Run ``batch`` live here; its items are checked first, off the window's loop (a
        millisecond an item: seconds for thousands), and the totals say so meanwhile."""
        self.running = batch
        self.totals.setText(f"Checking {len(batch.jobs):,} items…")
        self.task = asyncio.ensure_future(self._run(batch, refused, new))
        self._update_buttons()
        self._watch_elsewhere()
        return self.task

    async def _run(self, batch: BatchRun, refused: str, new: BatchStore | None) -> None:
        why: str | None = None
        try:
            await batch.run()
        except RunError as error:  # an item cannot run: the check refused, nothing ran
            why = f"{refused}: {error}"
            if new is not None:  # no record of a batch that never started
                new.delete(batch.record.id)
                self.record = None
        finally:
            self.model.flush()
            self.running = None
            self.refresh()
        if why is not None:
            self.totals.setText(why)

    def _watch_elsewhere(self) -> None:
        """Poll the record while the shown batch runs in another process, so its table
        moves on as items finish there (a batch run here is followed live instead)."""
        elsewhere = (
            self.running is None
            and self.record is not None
            and any(item.status == "running" for item in self.record.items)
        )
        if elsewhere and not self._watch.isActive():
            self._watch.start()
        elif not elsewhere:
            self._watch.stop()

    def _poll(self) -> None:
        if self.record is None:
            return
        record = BatchStore().get(self.record.id)
        if record is None:
            return
        shown = {row.index: row.status for row in self.model.rows}
        moved = [item for item in record.items if item.status != shown.get(item.index)]
        index = RunIndex()
        self.model.update(
            {
                item.index: item_result(item, index.get(item.run_id) if item.run_id else None)
                for item in moved
            }
        )
        self.record = record
        current = self.batches.currentItem()
        if current is not None:
            current.setText(_list_text(record))
        self._watch_elsewhere()

    def _chosen(self) -> None:
        item = self.batches.currentItem()
        if item is not None:
            self.show_batch(str(item.data(Qt.ItemDataRole.UserRole)))

    def _open(self, row: int) -> None:
        run_id = self.model.row(row).run_id
        if run_id:
            self.openRunRequested.emit(run_id)

    def _filter(self, on: bool) -> None:
        self.model.set_failed_only(on)

    def _show_totals(self) -> None:
        counts = self.model.counts()
        counts["error"] = sum(n for status, n in counts.items() if status in FAILED)
        words = [f"{counts[s]} {status_word(s)}" for s in _ORDER if counts.get(s)]
        tokens, cost = self.model.totals()
        figures = [", ".join(words)] if words else []
        if tokens:
            figures.append(f"{compact_number(tokens)} tokens")
        if cost or not self.model.all_priced():
            figures.append(format_cost(cost, self.model.all_priced()))
        self.totals.setText(" · ".join(figures))
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = len(self.selected_rows())
        live = self.running is not None
        has_failed = any(row.status in FAILED for row in self.model.rows)
        pending = self.record is not None and bool(self.record.unfinished())
        self.open_button.setEnabled(chosen >= 1)
        self.compare_button.setEnabled(chosen == 2)
        self.rerun_button.setEnabled(not live and (has_failed or pending))
        self.cancel_button.setEnabled(live)
        for button in (self.csv_button, self.jsonl_button):
            button.setEnabled(self.record is not None and not live)


def _list_text(record: BatchRecord) -> str:
    counts = ", ".join(f"{n} {status_word(s)}" for s, n in record.counts().items())
    return f"{record.spec.preset} · {record.inputs}\n{started_text(record.created_at)} · {counts}"
