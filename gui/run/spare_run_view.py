"""A run view built ahead of time, so that opening a run does not build one.

A double-click in the history made the page of the run in one turn: the run view with its
header (some 45 widgets, 9 ms on a 2-core machine) was over a third of that turn, which a busy
machine stretched past 50 ms before the window answered. :class:`SpareRunView` builds the next
view while the window has nothing else to do — no run being read, no gradual work queued
(:func:`gui.widgets.turn_work.pending_jobs`) — and hands it over at the next open. Without a
spare (two opens in a row), a view is built on the spot, as before. GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from shiboken6 import isValid

from gui.run.run_view import RunView
from gui.widgets.turn_work import pending_jobs

IDLE_CHECK_MS = 300
"""How long after the last hand-over (or a busy look) the spare is built, at the earliest."""


class SpareRunView(QObject):
    """At most one unused :class:`RunView`, built when ``idle()`` says the window is idle."""

    def __init__(self, parent: QObject, idle: Callable[[], bool]) -> None:
        super().__init__(parent)
        self._idle = idle
        self._view: RunView | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(IDLE_CHECK_MS)
        self._timer.timeout.connect(self._build_when_idle)
        self._timer.start()
        self.built = 0
        """Views built ahead so far."""
        self.looks = 0
        """Times the window was looked at to see whether it is idle."""

    def take(self) -> RunView:
        """The spare view (built now if there is none); the next is built when idle."""
        view, self._view = self._view, None
        self._timer.start()
        if view is not None and isValid(view):
            return view
        return RunView()

    @property
    def ready(self) -> RunView | None:
        """The view the next open will use, if it is built."""
        return self._view

    def _build_when_idle(self) -> None:
        self.looks += 1
        if self._view is not None:
            return
        if pending_jobs() or not self._idle():
            self._timer.start()  # look again later: never on top of other work
            return
        self._view = RunView()  # no parent: nothing finds or shows it until it is taken
        self.built += 1
