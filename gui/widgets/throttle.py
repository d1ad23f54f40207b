"""One throttle for updates that arrive faster than a person can read them.

The shape of qutebrowser's ``misc/throttle.py``: the first request after a quiet spell is
served at once, later ones are coalesced into one pending call, made when the interval since
the last call has passed. Two differences, both needed by every user here: "at once" means
on the next event-loop turn, never inside the caller (a producer's code is never interrupted
by a view update), and the call takes no arguments (the owner keeps what changed, the call
reads it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Throttle(QObject):
    """Calls ``func`` at most once per ``interval_ms``, with at most one call pending.

    GUI thread only (its timer belongs to the thread that made it). Give it a ``parent``: the
    pending call then ends with the owner instead of outliving it.
    """

    def __init__(self, func: Callable[[], None], interval_ms: int, parent: QObject) -> None:
        super().__init__(parent)
        self._func = func
        self._interval_ms = interval_ms
        self._last_call: float | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._call)

    # ---------------------------------------------------------------- public API

    def request(self, *, urgent: bool = False) -> None:
        """Ask for a call. It comes on the next event-loop turn when the last one is at least
        an interval old, else when it will be; a call already pending absorbs this request.
        ``urgent`` skips the wait (a turning point the reader must see now, or the next slice
        of work the call cut short itself)."""
        if urgent:
            self._timer.start(0)
        elif not self._timer.isActive():
            self._timer.start(self._wait_ms())

    def is_pending(self) -> bool:
        return self._timer.isActive()

    def flush(self) -> None:
        """Make the pending call now, if there is one (tests, a final render)."""
        if self._timer.isActive():
            self._timer.stop()
            self._call()

    def cancel(self) -> None:
        """Drop the pending call: the owner has nothing left to show, or shows it another way."""
        self._timer.stop()

    def restart(self) -> None:
        """The owner did the work itself (a whole text set at once, everything applied now):
        drop the pending call and count the interval from now."""
        self._timer.stop()
        self._last_call = time.monotonic()

    # ---------------------------------------------------------------- private

    def _wait_ms(self) -> int:
        if self._last_call is None:
            return 0
        elapsed_ms = (time.monotonic() - self._last_call) * 1000
        return max(0, math.ceil(self._interval_ms - elapsed_ms))

    def _call(self) -> None:
        self._func()
        self._last_call = time.monotonic()
