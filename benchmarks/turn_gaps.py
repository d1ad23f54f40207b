"""How long the GUI thread went without answering: a 5 ms timer's ticks, and the gaps between
them — the wall-clock time input would have waited, and how much of it was the GUI thread's own
CPU time (what the window's code can cut; under load the rest is other processes' time).

Shared by the benchmarks that watch the window while it works (``live``, ``open_run``,
``ingest``) so they measure a stall the same way.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

TICK_MS = 5
"""The timer's interval: far below any stall worth reporting."""


class TurnGaps:
    """Gaps between the ticks of a running :data:`TICK_MS` timer, as (wall, CPU) seconds; one
    watch for one measurement."""

    def __init__(self) -> None:
        self.gaps: list[tuple[float, float]] = []
        self._last: tuple[float, float] | None = None
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._timer.start()

    def mark(self) -> None:
        """The next gap counts from this moment (work started right after is measured from
        its start, not from the tick before)."""
        self._last = self._now()

    def stop(self) -> None:
        """Stop for good: the timer lets go of this watch (a connection to a Python slot is
        a cycle through C++ that the garbage collector cannot see)."""
        self._timer.stop()
        self._timer.timeout.disconnect(self._tick)

    def longest(self) -> tuple[float, float]:
        """The longest gap (wall, CPU in it), or zeros."""
        return max(self.gaps, default=(0.0, 0.0))

    def longest_cpu(self) -> float:
        """The most CPU time the GUI thread spent in one gap."""
        return max((cpu for _wall, cpu in self.gaps), default=0.0)

    def walls(self) -> list[float]:
        return [wall for wall, _cpu in self.gaps]

    @staticmethod
    def _now() -> tuple[float, float]:
        return time.perf_counter(), time.thread_time()

    def _tick(self) -> None:
        now = self._now()
        if self._last is not None:
            self.gaps.append((now[0] - self._last[0], now[1] - self._last[1]))
        self._last = now
