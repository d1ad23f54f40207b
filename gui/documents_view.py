"""The Documents view: find, read, fix and prune what agents remember and write (DESIGN §7/§8).

Above: the filter bar (:mod:`gui.document_filters`), one page of results
(:mod:`gui.documents_table`) and the pager. Below: the open document
(:mod:`gui.document_detail`).

Where the work happens. Pages are fetched on one worker thread of the view's own, awaited on
the qasync loop. Measured at 100,000 documents (``benchmarks/documents.py --keep``), a page
takes 5-15 ms unfiltered and up to ~150 ms with a type or tag filter (bm25 over the FTS indexes,
the total, snippets cut from the matching texts, tag counts): done on the GUI thread that froze
typing for 70-160 ms; on the worker the GUI thread's longest stall stays ~25 ms (the GIL while
snippets are cut, and painting the page). One thread, not a pool: each thread has its own SQLite
connection and page cache, and a warm cache is what keeps searches fast. A query already
superseded when its turn comes is skipped, and an answer to an older query never overwrites a
newer one (generation numbers). Without a running asyncio loop (a bare Qt test) the fetch runs
inline. Single-row reads and writes (open, save, delete) stay on the GUI thread: they are
sub-millisecond and the conflict prompt needs their answer.

Live refresh. While the view is visible a timer polls :meth:`DocumentStore.change_token` (a
pragma, no table read) every second; when anyone — an agent in this process, ``baton docs`` in
another — has written, the page is fetched again keeping the selection and scroll position, and
the detail pane catches up without ever touching unsaved edits.

The store is :meth:`DocumentStore.default` (the data folder), opened when the view is first
shown; tests pass their own.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.documents import Document, DocumentError, DocumentNotFound, DocumentStore, Page, SearchHit
from gui.document_detail import DocumentDetail
from gui.document_filters import DocumentFilters, DocumentQuery
from gui.document_prompts import DocumentPrompts
from gui.documents_table import (
    COL_RUN,
    COL_SUMMARY,
    COL_TAGS,
    COL_TITLE,
    COL_TYPE,
    COL_UPDATED,
    MARK_CLOSE,
    MARK_OPEN,
    DocumentDelegate,
    DocumentsTableModel,
)
from gui.prompts import Prompts
from gui.widgets import EmptyState

POLL_MS = 1000
TIMES_REFRESH_MS = 30_000
_COLUMN_WIDTHS = {COL_TITLE: 240, COL_TYPE: 84, COL_TAGS: 170, COL_UPDATED: 100, COL_RUN: 140}


@dataclass(frozen=True)
class FetchResult:
    """One page and the tags on offer, as fetched (on a worker thread) for one query."""

    query: DocumentQuery
    page: Page[SearchHit] | None
    tags: list[tuple[str, int]] | None
    """None when not asked for (unchanged since the last fetch)."""
    previews: dict[int, str] = field(default_factory=dict)
    """The text of short documents, which have no summary (see :func:`fetch`)."""
    error: str = ""
    seconds: float = 0.0


def fetch(store: DocumentStore, query: DocumentQuery, *, with_tags: bool = True) -> FetchResult:
    """Everything the list shows for ``query``; any thread (the store keeps a connection per
    thread). Never raises: a problem becomes ``error``. Tag counts cost more than a search
    (:meth:`DocumentStore.tags`), so callers ask for them only when they may have changed."""
    started = time.perf_counter()
    try:
        page = store.search(
            query.text,
            type=query.type,
            tag=query.tag,
            page=query.page,
            markers=(MARK_OPEN, MARK_CLOSE),
        )
        tags = store.tags(type=query.type) if with_tags else None
        previews = {} if query.searching else _previews(store, page)
    except DocumentError as error:
        return FetchResult(
            query, None, None, error=str(error), seconds=time.perf_counter() - started
        )
    return FetchResult(query, page, tags, previews, seconds=time.perf_counter() - started)


def _previews(store: DocumentStore, page: Page[SearchHit]) -> dict[int, str]:
    """The whole text of the page's short documents: the store summarises only texts longer
    than a summary, and a listing row without one would be blank. A row read by primary key
    each (~0.05 ms); a document deleted meanwhile is skipped."""
    previews: dict[int, str] = {}
    for hit in page.items:
        if hit.summary or not hit.chars:
            continue
        try:
            previews[hit.id] = store.get(hit.id, full=True).content or ""
        except DocumentNotFound:
            continue
    return previews


class DocumentsView(QWidget):
    """See the module docstring. GUI thread only; signals are emitted on the GUI thread."""

    # -- signals -------------------------------------------------------------------------
    openRunRequested = Signal(str)
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
        self._generation = 0
        self._selected_id: int | None = None
        self._tags_key: tuple[object, ...] | None = None
        """(change token, type) the tag list was fetched for."""
        self._restoring = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._worker: ThreadPoolExecutor | None = None
        self.last_fetch_seconds = 0.0
        """How long the last page took to fetch (the store's side only)."""
        self.fetch_count = 0

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

        self.page_label = QLabel()
        self.page_label.setObjectName("Secondary")
        self.prev_button = QPushButton("‹ Previous")
        self.next_button = QPushButton("Next ›")
        self.prev_button.setToolTip("Previous page")
        self.next_button.setToolTip("Next page")
        pager = QHBoxLayout()
        pager.setContentsMargins(10, 4, 8, 8)
        pager.addWidget(self.page_label, 1)
        pager.addWidget(self.prev_button)
        pager.addWidget(self.next_button)
        self.pager = QWidget()
        self.pager.setLayout(pager)

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
        left.setMinimumHeight(190)
        self.detail.setMinimumHeight(220)
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
        self.prev_button.clicked.connect(lambda: self.go_to_page(self._page - 1))
        self.next_button.clicked.connect(lambda: self.go_to_page(self._page + 1))
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

    def reload(self) -> None:
        """Fetch the current page again (on a worker thread when the asyncio loop runs)."""
        store = self.store
        if store is None:
            self._show_empty("The document store cannot be opened", self._store_error)
            self.pageLoaded.emit()
            return
        if self._token is None:
            self._token = self._read_token(store)
        query = self.filters.query(self._page)
        tags_key = (self._token, query.type)
        with_tags = tags_key != self._tags_key
        self._tags_key = tags_key
        self._generation += 1
        generation = self._generation
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._apply(generation, fetch(store, query, with_tags=with_tags))
            return
        task = loop.create_task(self._fetch_in_thread(generation, store, query, with_tags))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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

    def shutdown(self) -> None:
        """Stop polling and end the worker thread (waits for a fetch in progress, which is
        milliseconds). Call before the window closes."""
        self._poll.stop()
        self._times.stop()
        self._generation += 1  # whatever is still queued is stale now
        for task in list(self._tasks):
            task.cancel()
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None

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

    async def _fetch_in_thread(
        self, generation: int, store: DocumentStore, query: DocumentQuery, with_tags: bool
    ) -> None:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="baton-documents")

        def work() -> FetchResult | None:
            if generation != self._generation:
                return None  # superseded while queued: skip the work
            return fetch(store, query, with_tags=with_tags)

        result = await asyncio.get_running_loop().run_in_executor(self._worker, work)
        if result is None:
            if with_tags:
                self._tags_key = None  # not fetched after all: the next fetch asks
            return
        self._apply(generation, result)

    def _apply(self, generation: int, result: FetchResult) -> None:
        if result.tags is not None and result.query.type == self.filters.query().type:
            self.filters.set_tags(result.tags)  # still right: they depend on the type only
        if generation != self._generation:
            return  # an answer to an older query: a newer one is on its way
        self.fetch_count += 1
        self.last_fetch_seconds = result.seconds
        query, page = result.query, result.page
        if page is None:
            self._tags_key = None
            self._show_empty("The documents cannot be listed", result.error)
            self.pageLoaded.emit()
            return
        if not page.items and page.total and query.page > 1:
            self.go_to_page(page.pages)  # the page emptied (deletes): show the last one
            return
        scroll = self.table.verticalScrollBar().value()
        self._restoring = True
        try:
            self.model.set_page(page.items, searching=query.searching, previews=result.previews)
            self._select_row(self._selected_id)
        finally:
            self._restoring = False
        self.table.verticalScrollBar().setValue(scroll)
        self._update_pager(page)
        if page.items:
            self.list_stack.setCurrentWidget(self.table)
        else:
            self._show_empty(*self._empty_texts(query, page))
        self.pageLoaded.emit()

    # -- private -------------------------------------------------------------------------

    @staticmethod
    def _read_token(store: DocumentStore) -> tuple[int, int] | None:
        try:
            return store.change_token()
        except DocumentError:
            return None

    def _update_pager(self, page: Page[SearchHit]) -> None:
        if page.total:
            first = (page.page - 1) * page.page_size + 1
            last = first + len(page.items) - 1
            noun = "result" if self.filters.query().searching else "document"
            self.page_label.setText(
                f"{first:,}–{last:,} of {page.total:,} {noun}{'s' if page.total != 1 else ''}"
            )
        else:
            self.page_label.setText("")
        self.prev_button.setEnabled(page.page > 1)
        self.next_button.setEnabled(page.page < page.pages)
        self.prev_button.setVisible(page.total > page.page_size or page.page > 1)
        self.next_button.setVisible(self.prev_button.isVisible())

    def _empty_texts(self, query: DocumentQuery, page: Page[SearchHit]) -> tuple[str, str]:
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
        self.reload()

    def _on_saved(self, document: Document) -> None:
        self._selected_id = document.id
        self.reload()

    def _on_deleted(self, doc_id: int) -> None:
        if self._selected_id == doc_id:
            self._selected_id = None
        self.reload()
