"""Work the window does right after its first paint, not before it.

Start-up is measured (and felt) as the time until the window is on screen. What the first
picture does not need — reading settings for the status bar, listing agent files — waits
until a widget of the window has painted once, then runs from the event loop, so the window
is already visible while it happens.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class AfterFirstPaint(QObject):
    """Calls ``callback`` once, from the event loop, after ``window`` (or any widget in it)
    first painted. Watches the application's events only until then."""

    def __init__(self, window: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(window)
        self._window = window
        self._callback = callback
        self.done = False
        """True once the callback ran."""
        app = QCoreApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self._window
        ):
            app = QCoreApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            QTimer.singleShot(0, self._run)  # after this paint, not inside it
        return False

    def _run(self) -> None:
        if not self.done:
            self.done = True
            self._callback()
