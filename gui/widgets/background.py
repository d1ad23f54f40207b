"""Work off the GUI thread, newest request wins: a search box's query, two runs to compare.

:class:`LatestJob` runs one function at a time on a short-lived worker thread and delivers
its result on the GUI thread through a queued signal (the one hop). A job submitted while
another runs waits; a newer one replaces it, so typing ``retry`` runs at most two searches,
not five. Threads end with their job: nothing lingers after the last one (tests check).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress

from PySide6.QtCore import QObject, Signal, Slot


class LatestJob(QObject):
    """Owned by the GUI thread; :meth:`submit` and the signals are GUI-thread only."""

    # -- signals ------------------------------------------------------------------------
    done = Signal(object, object)
    """``(tag, result)`` of the job submitted with ``tag``; on the GUI thread."""
    failed = Signal(object, str)
    """``(tag, reason)``: the job raised; on the GUI thread."""
    _ended = Signal(object, object, str)  # from the worker: queued to the GUI thread

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._name = name
        self._thread: threading.Thread | None = None
        self._waiting: tuple[object, Callable[[], object]] | None = None
        self._ended.connect(self._deliver)

    # -- public API ---------------------------------------------------------------------

    def submit(self, tag: object, job: Callable[[], object]) -> None:
        """Run ``job`` now, or after the running one (replacing any job still waiting)."""
        if self.busy():
            self._waiting = (tag, job)
            return
        self._thread = threading.Thread(
            target=self._work, args=(tag, job), name=self._name, daemon=True
        )
        self._thread.start()

    def busy(self) -> bool:
        return self._thread is not None

    def wait(self) -> None:
        """Block until the running job's thread is done (shutdown, tests); its result still
        arrives as a signal at the next event-loop turn."""
        if self._thread is not None:
            self._thread.join()

    # -- private ------------------------------------------------------------------------

    def _work(self, tag: object, job: Callable[[], object]) -> None:
        try:
            result: object = job()
            error = ""
        except Exception as failure:  # shown to the person, never raised on a worker thread
            result, error = None, str(failure) or type(failure).__name__
        with suppress(RuntimeError):  # the owner was deleted meanwhile: nobody to tell
            self._ended.emit(tag, result, error)

    @Slot(object, object, str)
    def _deliver(self, tag: object, result: object, error: str) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if error:
            self.failed.emit(tag, error)
        else:
            self.done.emit(tag, result)
        if self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            self.submit(*waiting)
