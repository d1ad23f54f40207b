"""Fetching pages of documents off the GUI thread, newest query first.

Measured at 100,000 documents (``benchmarks/documents.py --keep``, then the view on that
store): the store answers a page in ~9 ms (p95 13 ms) unfiltered, and in ~50 ms (p95 ~150 ms)
once a type filter joins in (bm25 over the FTS indexes, the total, snippets cut from the
matching texts, tag counts). Fetched on the GUI thread, that froze the window for 60 ms
(p95 158 ms) per query; fetched on a worker, the GUI thread's longest stall is 12 ms (p95 19 ms:
repainting the table). So :class:`PageFetcher` runs :func:`fetch` on **one** worker
thread of its own, awaited on the qasync loop: one, not a pool, because each thread has its own
SQLite connection and page cache, and a warm cache is what keeps searches fast.

Only the newest request matters: one already superseded when its turn comes is skipped, and an
answer to an older one is never delivered as current. Without a running asyncio loop (a bare Qt
test, a script) the fetch runs inline.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from core.documents.store import DocumentError, DocumentNotFound, DocumentStore, Page, SearchHit
from gui.documents.document_filters import DocumentQuery
from gui.documents.documents_table import MARK_CLOSE, MARK_OPEN

WORKER_NAME = "baton-documents"


@dataclass(frozen=True)
class FetchResult:
    """One page and the tags on offer, as fetched for one query."""

    query: DocumentQuery
    page: Page[SearchHit] | None
    """None when the store could not answer (``error`` says why)."""
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
    than a summary, and a listing row without one would be blank. One primary-key read each
    (~0.05 ms); a document deleted meanwhile is skipped."""
    previews: dict[int, str] = {}
    for hit in page.items:
        if hit.summary or not hit.chars:
            continue
        try:
            previews[hit.id] = store.get(hit.id, full=True).content or ""
        except DocumentNotFound:
            continue
    return previews


class PageFetcher(QObject):
    """See the module docstring. Lives on the GUI thread; so do its signals."""

    fetched = Signal(object)
    """A :class:`FetchResult` for the newest request."""
    tagsFetched = Signal(object, object)
    """``(type, tags)``: the tags in use, fetched with any request (even a superseded one,
    since they depend on the type only)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._tags_key: tuple[object, ...] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._worker: ThreadPoolExecutor | None = None

    def request(self, store: DocumentStore, query: DocumentQuery, token: object) -> None:
        """Fetch ``query``; the tags too when ``token`` (the store's change token) or the type
        differ from the last time they were fetched."""
        key = (token, query.type)
        with_tags = key != self._tags_key
        self._tags_key = key
        self._generation += 1
        generation = self._generation
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._deliver(generation, fetch(store, query, with_tags=with_tags))
            return
        task = loop.create_task(self._in_worker(generation, store, query, with_tags))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def shutdown(self) -> None:
        """Drop pending requests and end the worker thread (waiting for a fetch in progress,
        which takes milliseconds)."""
        self._generation += 1
        for task in list(self._tasks):
            task.cancel()
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None

    async def _in_worker(
        self, generation: int, store: DocumentStore, query: DocumentQuery, with_tags: bool
    ) -> None:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix=WORKER_NAME)

        def work() -> FetchResult | None:
            if generation != self._generation:
                return None  # superseded while queued: skip the work
            return fetch(store, query, with_tags=with_tags)

        result = await asyncio.get_running_loop().run_in_executor(self._worker, work)
        if result is None:
            if with_tags:
                self._tags_key = None  # not fetched after all: the next request asks
            return
        self._deliver(generation, result)

    def _deliver(self, generation: int, result: FetchResult) -> None:
        if result.page is None:
            self._tags_key = None
        if result.tags is not None:
            self.tagsFetched.emit(result.query.type, result.tags)
        if generation == self._generation:
            self.fetched.emit(result)
