"""Document writes off the GUI thread, with the caller still getting the answer in line.

A write to the store waits up to its busy timeout (10 s, :mod:`core.documents.schema`) when
another program — ``baton docs``, an agent in another process — holds the write lock. Made on
the GUI thread, that wait froze the window. :meth:`StoreWriter.run` sends the write
to a worker thread of its own and, while it runs, keeps the GUI thread processing events in a
local event loop (the way a modal dialog does), so the window repaints and stays responsive.

The caller still gets the result (or the exception) in line, which the saving rules need: a
conflict is answered with a prompt before anything else happens, and "save before closing?"
must know whether the save worked. To make that safe, :attr:`StoreWriter.busyChanged` tells
the pane to disable itself for the duration, so no second write can start meanwhile.

One worker thread, not a pool: the store keeps a connection per thread, and writes are rare.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from PySide6.QtCore import QEventLoop, QObject, Signal

T = TypeVar("T")
WORKER_NAME = "baton-document-writes"


class StoreWriter(QObject):
    """See the module docstring. Lives on the GUI thread; its signals arrive there."""

    busyChanged = Signal(bool)
    """A write started (True) or ended (False)."""
    _done = Signal()
    """Emitted on the worker thread when a write ends; queued to the waiting loop."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._worker: ThreadPoolExecutor | None = None
        self.busy = False
        self.writes = 0
        """Writes run so far (what tests wait on)."""

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` on the worker thread; returns its result or raises its exception. The
        GUI thread processes events until then. Not reentrant: the caller disables what
        could start another write (:attr:`busyChanged`)."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix=WORKER_NAME)
        loop = QEventLoop()
        self._done.connect(loop.quit)
        self._set_busy(True)
        try:
            future: Future[T] = self._worker.submit(work)
            future.add_done_callback(lambda _: self._done.emit())
            if not future.done():
                loop.exec()
            return future.result()
        finally:
            self._done.disconnect(loop.quit)
            self.writes += 1
            self._set_busy(False)

    def shutdown(self) -> None:
        """End the worker thread (waiting for a write in progress). Call before closing."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.busyChanged.emit(busy)
