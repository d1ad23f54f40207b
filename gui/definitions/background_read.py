"""Re-reading definition files off the GUI thread after the disk changed under a view.

A file-watch refresh used to parse every agent and preset on the GUI thread (0.45 s with
1,000 agents). :class:`BackgroundRead` runs the view's read — pure ``core`` work: listing,
stat'ing and parsing files — on a worker thread, and calls what it returns (the part that
updates widgets) on the GUI thread, through a queued signal: the one place where the hop
happens. Bursts merge: changes reported while a read runs cause one more read after it, never
a queue of them. A synchronous refresh in between (after a save, a New or a Delete)
:meth:`supersedes <BackgroundRead.supersede>` the read in flight, whose older picture is then
dropped instead of shown over the newer one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

Apply = Callable[[], None]
"""Updates the widgets with what a read found; called on the GUI thread."""


class BackgroundRead(QObject):
    """One read at a time on a worker thread; owned by the GUI thread."""

    # ------------------------------------------------------------------ signals
    _finished = Signal(object, int)  # (Apply or None, generation), from the worker thread

    def __init__(self, read: Callable[[], Apply], parent: QObject | None = None) -> None:
        """``read`` runs on the worker thread: it must not touch widgets, only return the
        function that does."""
        super().__init__(parent)
        self._read = read
        self._thread: threading.Thread | None = None
        self._again = False
        self._generation = 0
        self._finished.connect(self._deliver)

    # ------------------------------------------------------------------ public API

    def request(self) -> None:
        """Read again soon; merged with a read already running."""
        if self._thread is not None:
            self._again = True
            return
        self._thread = threading.Thread(
            target=self._work, args=(self._generation,), name="baton-read-definitions", daemon=True
        )
        self._thread.start()

    def supersede(self) -> None:
        """The view was just refreshed synchronously: drop what the read in flight finds."""
        self._generation += 1
        self._again = False

    def wait(self) -> None:
        """Block until the worker is done (shutdown, tests)."""
        if self._thread is not None:
            self._thread.join()

    # ------------------------------------------------------------------ private

    def _work(self, generation: int) -> None:
        apply: Apply | None = None
        try:
            apply = self._read()
        finally:  # an unexpected error is reported by threading's hook; the view stays as it was
            self._finished.emit(apply, generation)

    @Slot(object, int)
    def _deliver(self, apply: Apply | None, generation: int) -> None:
        self._thread = None
        if apply is not None and generation == self._generation:
            apply()
        if self._again:
            self._again = False
            self.request()
