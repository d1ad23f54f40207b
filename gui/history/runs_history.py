"""The history page of the Runs view: every saved run in a sortable, filterable table.

The page only shows and selects; what its buttons do (open, re-run, export, delete, import)
is decided by :class:`gui.run.runs_view.RunsView`, which owns the open runs too. The table pages
through the SQLite index (:class:`gui.history.runs_table.RunsTableModel`: rows load as it scrolls,
filter and sort run in SQL), re-read on :meth:`HistoryPage.refresh` — after a run starts or
ends, after a delete or an import, and whenever the page is shown (a ``baton run`` in a
terminal adds rows as well).
"""

from __future__ import annotations

import itertools

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.record.run_files import RunIndex, RunRecord
from gui.history.run_search_panel import RunSearchPanel
from gui.history.runs_table import ROLE_RECORD, RunsTableModel
from gui.theme import icons
from gui.widgets import Banner, EmptyState, PaneHeader
from gui.widgets.compact import let_shrink_to_label
from gui.widgets.usage_charts import UsageBar, UsageCharts

FILTER_DELAY_MS = 150
"""The filter queries the index this long after the last key press."""
RESUMABLE = frozenset({"error", "aborted", "interrupted", "incomplete"})
"""Statuses of a run that stopped before its end, so "Resume" can go on from there."""
RESUME_TIP = "Go on from its first unfinished step; the finished steps are reused, not re-run"


class HistoryPage(QWidget):
    """Toolbar, filter, table (or an empty state) and a message banner. GUI thread only."""

    openRequested = Signal(object)
    """Open this :class:`RunRecord` in a tab (double-click, Enter, "Open")."""
    rerunRequested = Signal(object)
    resumeRequested = Signal(object)
    """Resume this failed, cancelled or interrupted :class:`RunRecord` from its first
    unfinished step (a new run linked to it)."""
    exportRequested = Signal(object)
    deleteRequested = Signal(object)
    batchRequested = Signal(object)
    """Show the batch this :class:`RunRecord` is an item of ("Show its batch")."""
    openFileRequested = Signal()
    importRequested = Signal()
    compareRequested = Signal(object, object)
    """Compare these two :class:`RunRecord` s (older first): two rows selected, "Compare"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunsHistory")
        self.header = PaneHeader("Run history")
        self.open_file_button = self._header_button(
            "folder",
            "Open file…",
            "Open a run file or a pi / Claude Code transcript (Ctrl+Shift+O)",
        )
        self.open_file_button.clicked.connect(self.openFileRequested)
        self.import_button = self._header_button(
            "add", "Import…", "Copy a run file or transcript into your history"
        )
        self.import_button.clicked.connect(self.importRequested)

        self.filter_field = QLineEdit()
        self.filter_field.setObjectName("FilterField")
        self.filter_field.setPlaceholderText("Filter runs: preset, agent, status, folder…")
        self.filter_field.setClearButtonEnabled(True)
        self.filter_field.setMinimumWidth(100)  # the buttons give way first on a narrow window
        self.filter_field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.open_button = QPushButton("Open")
        self.rerun_button = QPushButton(icons.icon("reload"), "Re-run")
        self.resume_button = QPushButton("Resume")
        self.export_button = QPushButton("Export…")
        self.delete_button = QPushButton(icons.icon("delete"), "Delete…")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Select two runs (Ctrl+click) to set them side by side")
        self.open_button.setToolTip("Show this run (Enter)")
        self.rerun_button.setToolTip("Start a new run with the same agents, tasks and folder")
        self.resume_button.setToolTip(RESUME_TIP)
        self.export_button.setToolTip("Save this run as a Markdown file")
        self.delete_button.setToolTip("Delete this run and its file (Delete)")
        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(8, 8, 8, 4)
        toolbar.setSpacing(6)  # else it inherits the page layout's 0 and the buttons touch
        toolbar.addWidget(self.filter_field, 1)
        actions = (
            self.open_button,
            self.rerun_button,
            self.resume_button,
            self.export_button,
            self.compare_button,
            self.delete_button,
        )
        let_shrink_to_label(actions)  # six of Qt's 80 px buttons would set the window's width
        for button in actions:
            toolbar.addWidget(button)
        self.search_panel = RunSearchPanel()

        self.model = RunsTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("RunsTable")
        self.table.setModel(self.model)
        self.table.horizontalHeader().setSortIndicator(0, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)  # a header click re-queries, sorted by SQLite
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Two rows (Ctrl+click) can be compared; every other action takes one.
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(30)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        # The other columns as wide as what they hold (sample texts, not every row: a history
        # of thousands of runs is not measured), so the run's name keeps the rest at 800 px.
        metrics = self.table.fontMetrics()
        samples = ("2026-12-03 09:14", "", "● Interrupted", "12m 04s", "↑125k ↓12.5k", "$10.0000")
        for column, sample in enumerate(samples):
            if sample:
                self.table.setColumnWidth(column, metrics.horizontalAdvance(sample) + 24)
        self.table.doubleClicked.connect(lambda _index: self._emit(self.openRequested))
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, signal, keys in (
            ("Open", self.openRequested, "Return"),
            ("Re-run", self.rerunRequested, ""),
            ("Resume from the first unfinished step", self.resumeRequested, ""),
            ("Export as Markdown…", self.exportRequested, ""),
            ("Delete…", self.deleteRequested, "Delete"),
            ("Show its batch", self.batchRequested, ""),
        ):
            action = QAction(text, self.table)
            if keys:
                action.setShortcut(QKeySequence(keys))
                action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(lambda _=False, s=signal: self._emit(s))
            self.table.addAction(action)
        self.resume_action = self.table.actions()[2]

        self.empty_state = EmptyState(
            "nav-runs",
            "No runs yet",
            "Runs you start (Ctrl+R) or run with 'baton run' are kept here. You can also open "
            "a run file or a pi / Claude Code transcript.",
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty_state)
        self.stack.addWidget(self.table)
        self.search_panel.resultsShown.connect(lambda shown: self.stack.setVisible(not shown))
        self.banner = Banner()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addLayout(toolbar)
        layout.addWidget(self.search_panel, 0)
        layout.addWidget(self.banner)
        self.charts_button = self._header_button(
            "info", "Charts", "Cost and tokens over the last 30 days and per agent"
        )
        self.charts_button.setCheckable(True)
        self.charts_button.toggled.connect(self._show_charts)
        self.day_charts: UsageCharts | None = None
        self.agent_charts: UsageCharts | None = None
        self._charts_box = QWidget()
        self._charts_layout = QVBoxLayout(self._charts_box)
        self._charts_layout.setContentsMargins(8, 4, 8, 4)
        self._charts_box.hide()
        layout.addWidget(self._charts_box)
        layout.addWidget(self.stack, 1)

        self.open_button.clicked.connect(lambda: self._emit(self.openRequested))
        self.rerun_button.clicked.connect(lambda: self._emit(self.rerunRequested))
        self.resume_button.clicked.connect(lambda: self._emit(self.resumeRequested))
        self.export_button.clicked.connect(lambda: self._emit(self.exportRequested))
        self.delete_button.clicked.connect(lambda: self._emit(self.deleteRequested))
        self.compare_button.clicked.connect(self._compare)
        self._filter_timer = QTimer(self)  # one query per pause in typing, not per key
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._filter)
        self.filter_field.textChanged.connect(lambda _text: self._filter_timer.start())
        selection = self.table.selectionModel()
        selection.selectionChanged.connect(lambda *_: self._update_buttons())
        self._update_buttons()
        # Keyboard order: what a person looks for (filter), then the list, then what acts on it.
        order = [
            self.filter_field,
            self.table,
            *actions,
            self.open_file_button,
            self.import_button,
            self.search_panel.field,
        ]
        for before, after in itertools.pairwise(order):
            QWidget.setTabOrder(before, after)

    def _header_button(self, icon_name: str, text: str, tip: str) -> QPushButton:
        button = QPushButton(icons.icon(icon_name), text)
        button.setToolTip(tip)
        button.setFlat(True)
        layout = self.header.layout()
        assert layout is not None
        layout.addWidget(button)
        return button

    def _show_charts(self, shown: bool) -> None:
        if shown and self.day_charts is None:
            self.day_charts = UsageCharts("day")
            self.agent_charts = UsageCharts("agent")
            self._charts_layout.addWidget(self.day_charts)
            self._charts_layout.addWidget(self.agent_charts)
        self._charts_box.setVisible(shown)
        if shown:
            self._fill_charts()

    def _fill_charts(self) -> None:
        if self.day_charts is None or self.agent_charts is None:
            return
        index = RunIndex()
        self.day_charts.set_bars([UsageBar(day[5:], usage) for day, usage in index.usage_by_day()])
        by_agent = sorted(index.usage_by_agent().items(), key=lambda item: -item[1].cost)
        self.agent_charts.set_bars([UsageBar(name, usage) for name, usage in by_agent[:12]])

    # -- public API ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the index, keeping the selected run selected."""
        chosen = self.selected_record()
        self.model.reload()
        self.search_panel.refresh()
        if self._charts_box.isVisible():
            self._fill_charts()
        self.stack.setCurrentIndex(1 if self.model.rowCount() or self._filtering() else 0)
        if chosen is not None:
            self.select_run(chosen.id)
        self._update_buttons()

    def selected_record(self) -> RunRecord | None:
        """The selected run; with none selected, the row the keyboard is on (Tab into the
        table, Enter opens the run under the cursor)."""
        rows = self.table.selectionModel().selectedRows()
        current = self.table.currentIndex()
        if len(rows) > 1:
            return None
        if rows:
            record = rows[0].data(ROLE_RECORD)
        elif current.isValid() and self.table.hasFocus():
            record = current.siblingAtColumn(0).data(ROLE_RECORD)
        else:
            return None
        return record if isinstance(record, RunRecord) else None

    def selected_records(self) -> list[RunRecord]:
        """Every selected run, in table order."""
        rows = sorted(self.table.selectionModel().selectedRows(), key=lambda index: index.row())
        found = [index.data(ROLE_RECORD) for index in rows]
        return [record for record in found if isinstance(record, RunRecord)]

    def select_run(self, run_id: str) -> bool:
        row = self.model.row_of(run_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        self.table.selectionModel().select(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        return True

    def visible_records(self) -> list[RunRecord]:
        """The rows loaded so far (more load as the table scrolls)."""
        return self.model.records()

    def set_active_runs(self, run_ids: set[str]) -> None:
        """Runs still going cannot be deleted; the buttons follow."""
        self._active = run_ids
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    # -- private -------------------------------------------------------------------------

    _active: set[str] = set()  # noqa: RUF012 (replaced per instance, never mutated)

    def _emit(self, signal: object) -> None:
        record = self.selected_record()
        if record is not None:
            signal.emit(record)  # type: ignore[attr-defined]

    def filter_now(self) -> None:
        """Apply the filter field's text now rather than after the typing pause."""
        self._filter_timer.stop()
        self._filter()

    def _filtering(self) -> bool:
        return bool(self.filter_field.text().strip())

    def _filter(self) -> None:
        self.model.set_filter_text(self.filter_field.text())
        self.stack.setCurrentIndex(1 if self.model.rowCount() or self._filtering() else 0)
        self._update_buttons()

    def _compare(self) -> None:
        records = self.selected_records()
        if len(records) == 2:
            older, newer = sorted(records, key=lambda record: (record.started_at, record.id))
            self.compareRequested.emit(older, newer)

    def _update_buttons(self) -> None:
        self.compare_button.setEnabled(len(self.selected_records()) == 2)
        record = self.selected_record()
        chosen = record is not None
        for button in (self.open_button, self.rerun_button, self.export_button):
            button.setEnabled(chosen)
        running = record is not None and record.id in self._active
        stopped = record is not None and record.status in RESUMABLE and not running
        self.resume_button.setEnabled(stopped)
        self.resume_action.setEnabled(stopped)
        self.resume_button.setToolTip(
            RESUME_TIP if stopped else "Only a failed, cancelled or interrupted run can be resumed"
        )
        self.delete_button.setEnabled(chosen and not running)
        self.delete_button.setToolTip(
            "A running run cannot be deleted; cancel it first"
            if running
            else "Delete this run and its file (Delete)"
        )
