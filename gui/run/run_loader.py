"""Reading a saved run off the GUI thread: the window stays responsive while it opens.

:class:`RunLoader` runs a reading function (normally :func:`core.history.run_reading.read_folded`)
on a
worker thread and delivers its :class:`~core.history.run_reading.FoldedRun` — or the error's message
—
on the GUI thread, through a queued signal: the one place where the hop happens. Parsing holds
the GIL in bursts, but Python hands it back every few milliseconds, so the event loop keeps
turning while a 100,000-event file is read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from core.history.run_reading import FoldedRun


class RunLoader(QObject):
    """One read, started by :meth:`start`. Owned by the GUI thread."""

    # ------------------------------------------------------------------ signals
    loaded = Signal(object)
    """:class:`FoldedRun`; emitted on the GUI thread."""
    failed = Signal(str)
    """A one-line reason the file could not be read; emitted on the GUI thread."""
    _finished = Signal(object, str)  # from the worker thread: queued to the GUI thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._finished.connect(self._deliver)
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ public API

    def start(self, read: Callable[[], FoldedRun]) -> None:
        self._thread = threading.Thread(
            target=self._work, args=(read,), name="baton-read-run", daemon=True
        )
        self._thread.start()

    def wait(self) -> None:
        """Block until the worker is done (shutdown, tests); the result still arrives as a
        signal at the next event-loop turn."""
        if self._thread is not None:
            self._thread.join()

    # ------------------------------------------------------------------ private

    def _work(self, read: Callable[[], FoldedRun]) -> None:
        try:
            result = read()
        except Exception as error:
            message = error.strerror if isinstance(error, OSError) and error.strerror else ""
            self._finished.emit(None, message or str(error) or type(error).__name__)
            return
        self._finished.emit(result, "")

    @Slot(object, str)
    def _deliver(self, result: FoldedRun | None, error: str) -> None:
        if result is None:
            self.failed.emit(error)
        else:
            self.loaded.emit(result)
