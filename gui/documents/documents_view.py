"""The Documents view: find, read, fix and prune what agents remember and write (architecture:
"Documents"/§8).

Above: the filter bar (:mod:`gui.documents.document_filters`), one page of results
(:mod:`gui.documents.documents_table`) and the pager. Below: the open document
(:mod:`gui.documents.document_detail`).

Where the work happens. Pages are fetched on a worker thread (:mod:`gui.documents.documents_fetch`,
which
also says why); single-row reads (open) stay on the GUI thread, being sub-millisecond; writes
(save, delete, restore) run on a worker of the detail pane's (:mod:`gui.documents.document_writes`),
since another program's write lock can make them wait seconds.

What the list shows, the pane shows: when a new search or filter leaves the open document out
of the results, the pane lets it go (unless it holds unsaved edits).

Live refresh. While the view is visible a timer polls :meth:`DocumentStore.change_token` (a
pragma, no table read) every second; when anyone — an agent in this process, ``baton docs`` in
another — has written, the page is fetched again keeping the selection and scroll position, and
the detail pane catches up without ever touching unsaved edits.

The store is :meth:`DocumentStore.default` (the data folder), opened when the view is first
shown; tests pass their own.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.documents.store import Document, DocumentError, DocumentNotFound, DocumentStore
from gui.documents.document_delegate import DocumentDelegate
from gui.documents.document_detail import DocumentDetail
from gui.documents.document_filters import DocumentFilters, DocumentQuery
from gui.documents.document_pager import DocumentPager
from gui.documents.document_prompts import DocumentPrompts
from gui.documents.documents_fetch import FetchResult, PageFetcher
from gui.documents.documents_table import (
    COL_RUN,
    COL_SUMMARY,
    COL_TAGS,
    COL_TITLE,
    COL_TYPE,
    COL_UPDATED,
    DocumentsTableModel,
)
from gui.widgets import EmptyState
from gui.widgets.prompts import Prompts

POLL_MS = 1000
TIMES_REFRESH_MS = 30_000
_COLUMN_WIDTHS = {COL_TITLE: 240, COL_TYPE: 84, COL_TAGS: 170, COL_UPDATED: 100, COL_RUN: 140}


class DocumentsView(QWidget):
    """See the module docstring. GUI thread only; signals are emitted on the GUI thread."""

    # -- signals -------------------------------------------------------------------------
    openRunRequested = Signal(str, int, str)
    """A document's provenance link was clicked: the window should show this run."""
    pageLoaded = Signal()
    """A page of results (or an empty state) is now shown."""
    dirtyChanged = Signal(bool)
    """The open document gained (True) or lost (False) unsaved edits."""

    def __init__(
        self,
        store: DocumentStore | None = None,
        prompts: Prompts | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("DocumentsView")
        self._store = store
        self._store_error = ""
        self._token: tuple[int, int] | None = None
        self._page = 1
        self._selected_id: int | None = None
        self._restoring = False
        self._filters_changed = False
        self.fetcher = PageFetcher(self)
        self._last_fetch_seconds = 0.0
        self.fetch_count = 0
        """Pages (or errors) shown so far: lets tests and benchmarks wait for the next one."""

        self.filters = DocumentFilters()
        self.model = DocumentsTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("DocumentsTable")
        self.table.setModel(self.model)
        self.table.setItemDelegate(DocumentDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(32)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setStretchLastSection(False)
        for column, width in _COLUMN_WIDTHS.items():
            header.resizeSection(column, width)
        header.setSectionResizeMode(COL_SUMMARY, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(60)

        self.pager = DocumentPager()
        self.page_label = self.pager.label
        self.prev_button, self.next_button = self.pager.prev_button, self.pager.next_button

        self.empty_state = EmptyState("nav-documents", "", "")
        self.list_stack = QStackedWidget()
        self.list_stack.addWidget(self.table)
        self.list_stack.addWidget(self.empty_state)

        left = QWidget()
        left.setObjectName("DocumentsListPane")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addWidget(self.filters)
        left_layout.addWidget(self.list_stack, 1)
        left_layout.addWidget(self.pager)

        self.prompts = DocumentPrompts(self, prompts)
        self.detail = DocumentDetail(self.prompts, store)

        # The table above, the open document below: both get the whole width, which the
        # table's six columns and a document's text need more than height.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("DocumentsSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([340, 480])
        # Explicit minimums (below the panes' size hints) let a small window squeeze them.
        left.setMinimumHeight(120)
        self.detail.setMinimumHeight(150)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.check_for_changes)
        self._times = QTimer(self)
        self._times.setInterval(TIMES_REFRESH_MS)
        self._times.timeout.connect(self.model.refresh_times)

        self.filters.changed.connect(self._on_filters_changed)
        self.filters.newRequested.connect(self.new_document)
        self.pager.pageRequested.connect(self.go_to_page)
        self.fetcher.fetched.connect(self._apply)
        self.fetcher.tagsFetched.connect(self._on_tags_fetched)
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)
        self.detail.saved.connect(self._on_saved)
        self.detail.deleted.connect(self._on_deleted)
        self.detail.openRunRequested.connect(self.openRunRequested)
        self.detail.dirtyChanged.connect(self.dirtyChanged)
        self._show_empty("Loading…", "")

    # -- public API ----------------------------------------------------------------------

    @property
    def store(self) -> DocumentStore | None:
        """The store, opened on first use (None when it cannot be opened: the view says why)."""
        if self._store is None and not self._store_error:
            try:
                self._store = DocumentStore.default()
            except DocumentError as error:
                self._store_error = str(error)
            else:
                self.detail.store = self._store
        return self._store

    def page(self) -> int:
        return self._page

    @property
    def last_fetch_seconds(self) -> float:
        """How long the store took to answer the last page shown."""
        return self._last_fetch_seconds

    def reload(self) -> None:
        """Fetch the current page again (on a worker thread when the asyncio loop runs)."""
        store = self.store
        if store is None:
            self._show_empty("The document store cannot be opened", self._store_error)
            self.pageLoaded.emit()
            return
        if self._token is None:
            self._token = self._read_token(store)
        self.fetcher.request(store, self.filters.query(self._page), self._token)

    def set_poll_interval(self, milliseconds: int) -> None:
        """How often to look for writes by others while visible (default :data:`POLL_MS`)."""
        self._poll.setInterval(milliseconds)

    def go_to_page(self, page: int) -> None:
        self._page = max(1, page)
        self.reload()

    def check_for_changes(self) -> bool:
        """Poll the store; True when something was written since the last look (and a
        refresh was started)."""
        store = self._store
        if store is None or store.closed:
            return False
        token = self._read_token(store)
        if token == self._token:
            return False
        self._token = token
        self.reload()
        self.detail.document_changed_elsewhere()
        return True

    def open_document(self, doc_id: int) -> bool:
        """Show document ``doc_id`` in the detail pane (after asking about unsaved edits)."""
        store = self.store
        if store is None or not self.detail.maybe_discard_changes():
            return False
        try:
            document = store.get(doc_id, full=True)
        except DocumentNotFound:
            self.detail.clear("Document deleted", f"Document #{doc_id} was deleted meanwhile.")
            self.reload()
            return False
        except DocumentError as error:
            self.detail.clear("The document cannot be read", str(error))
            return False
        self._selected_id = doc_id
        self.detail.show_document(document)
        return True

    def new_document(self) -> None:
        if self.store is None or not self.detail.maybe_discard_changes():
            return
        self._selected_id = None
        self._select_row(None)
        self.detail.start_new()

    def save_current(self) -> bool:
        """File ▸ Save while this view is current."""
        return self.detail.save()

    def maybe_discard_changes(self) -> bool:
        """For closing the window: False when the person chose to keep unsaved edits."""
        return self.detail.maybe_discard_changes()

    def refresh_colors(self) -> None:
        """After a light <-> dark switch: the open document's text and header in the new
        colours (the main window calls this on every view built so far)."""
        self.detail.refresh_colors()

    def shutdown(self) -> None:
        """Stop polling and end the worker thread (waits for a fetch in progress, which is
        milliseconds). Call before the window closes."""
        self._poll.stop()
        self._times.stop()
        self.fetcher.shutdown()
        self.detail.shutdown()

    # -- Qt overrides --------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            if self._token is None:
                self.reload()  # the first look
            else:
                self.check_for_changes()  # catch up on what was written while hidden
            self._poll.start()
            self._times.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        if not event.spontaneous():
            self._poll.stop()
            self._times.stop()

    # -- fetching ------------------------------------------------------------------------

    def _on_tags_fetched(self, doc_type: str | None, tags: list[tuple[str, int]]) -> None:
        if doc_type == self.filters.query().type:
            self.filters.set_tags(tags)

    def _apply(self, result: FetchResult) -> None:
        self.fetch_count += 1
        self._last_fetch_seconds = result.seconds
        query, page = result.query, result.page
        if page is None:
            self.pager.clear()
            self._show_empty("The documents cannot be listed", result.error)
            self.pageLoaded.emit()
            return
        if not page.items and page.total and query.page > 1:
            self.go_to_page(page.pages)  # the page emptied (deletes): show the last one
            return
        if self._filters_changed and query == self.filters.query(self._page):
            self._filters_changed = False
            self._let_go_unless_shown([hit.id for hit in page.items])
        scroll = self.table.verticalScrollBar().value()
        self._restoring = True
        try:
            self.model.set_page(page.items, searching=query.searching, previews=result.previews)
            self._select_row(self._selected_id)
        finally:
            self._restoring = False
        self.table.verticalScrollBar().setValue(scroll)
        self.pager.show_page(page, "result" if query.searching else "document")
        if page.items:
            self.list_stack.setCurrentWidget(self.table)
        else:
            self._show_empty(*self._empty_texts(query))
        self.pageLoaded.emit()

    # -- private -------------------------------------------------------------------------

    @staticmethod
    def _read_token(store: DocumentStore) -> tuple[int, int] | None:
        try:
            return store.change_token()
        except DocumentError:
            return None

    @staticmethod
    def _empty_texts(query: DocumentQuery) -> tuple[str, str]:
        kind = {"memory": "memories", "document": "documents"}.get(query.type or "", "documents")
        if query.searching:
            hint = "Nothing in a title, text or tag matches every word. Try fewer or shorter words"
            if query.type or query.tag:
                hint += ", or show all types and tags"
            return f"No results for “{query.text.strip()}”", hint + "."
        if query.tag:
            return f"No {kind} tagged “{query.tag}”", "Choose another tag, or All tags."
        if query.type:
            return f"No {kind} yet", "Agents write them with the document tool; New writes one."
        return (
            "No documents yet",
            "Agents create them with the document tool as they work — memories to recall "
            "later, documents they deliver. Press New to write one by hand.",
        )

    def _show_empty(self, title: str, hint: str) -> None:
        self.empty_state.title.setText(title)
        self.empty_state.hint.setText(hint)
        self.list_stack.setCurrentWidget(self.empty_state)

    def _select_row(self, doc_id: int | None) -> None:
        selection = self.table.selectionModel()
        row = self.model.row_of(doc_id) if doc_id is not None else None
        if row is None:
            selection.clearSelection()
            selection.setCurrentIndex(QModelIndex(), QItemSelectionModel.SelectionFlag.NoUpdate)
            return
        index = self.model.index(row, COL_TITLE)
        selection.setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._restoring or not current.isValid():
            return
        hit = self.model.hit(current.row())
        if hit.id == self.detail.current_id() and self.detail.mode() == "read":
            return
        if not self.open_document(hit.id):
            # After the click that moved the row has also set its selection, not before.
            QTimer.singleShot(0, self._restore_selection)

    def _restore_selection(self) -> None:
        self._restoring = True
        try:
            self._select_row(self._selected_id)
        finally:
            self._restoring = False

    def _on_filters_changed(self) -> None:
        self._page = 1
        self._filters_changed = True
        self.reload()

    def _let_go_unless_shown(self, shown: list[int]) -> None:
        """A search or filter left the open document out: stop showing it, unless a person
        is editing it (their edits are never dropped by typing in the search box)."""
        doc_id = self.detail.current_id()
        if doc_id is None or doc_id in shown or self.detail.is_dirty():
            return
        if self.detail.mode() in ("read", "history"):
            self._selected_id = None
            self.detail.clear("Not in the results", "The open document does not match the search.")

    def _on_saved(self, document: Document) -> None:
        self._selected_id = document.id
        self.reload()

    def _on_deleted(self, doc_id: int) -> None:
        if self._selected_id == doc_id:
            self._selected_id = None
        self.reload()
