"""Telling a person who is looking elsewhere that a run needs them or is done.

Two channels, both only while the main window is not the active window (a person watching the
run needs no pop-up):

* the taskbar / dock alert (``QApplication.alert``), available everywhere Qt runs;
* a system tray message, where the platform has a tray (``isSystemTrayAvailable()``). The
  tray icon is created on first use and stays until the window goes away, so messages from
  later runs reuse it instead of making icons flicker in and out of the tray.

A notification may name a run and a step (``target``): clicking the tray message emits
:attr:`Notifier.opened` with them, and the window shows that step. Where there is no tray, the
window's title and taskbar entry carry the count of what waits (:meth:`Notifier.set_waiting`
also puts it in the tray icon's tooltip).

Every notification is also recorded in :attr:`Notifier.sent`, which is what the window's tests
read.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from gui.theme import icons

MESSAGE_MS = 8000


@dataclass(frozen=True)
class Notification:
    title: str
    message: str
    tray: bool
    target: tuple[str, int] | None = None
    """(run id, 0-based step) that clicking the message shows."""


class Notifier(QObject):
    """Notifications on behalf of ``window``. GUI thread only."""

    # -- signals (GUI thread) ------------------------------------------------------------

    opened = Signal(str, int)
    """(run id, step): the person clicked a notification that names a step."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._tray: QSystemTrayIcon | None = None
        self._waiting = 0
        self._running = 0
        self.sent: list[Notification] = []

    def notify(
        self,
        title: str,
        message: str,
        *,
        warning: bool = False,
        target: tuple[str, int] | None = None,
        tray: bool = True,
    ) -> bool:
        """Alert when the window is not active; True when something was shown. ``tray``
        False: no tray message (a desktop notification with buttons says it already)."""
        if self._window.isActiveWindow():
            return False
        QApplication.alert(self._window, 0)
        tray = tray and QSystemTrayIcon.isSystemTrayAvailable()
        if tray:
            icon = (
                QSystemTrayIcon.MessageIcon.Warning
                if warning
                else QSystemTrayIcon.MessageIcon.Information
            )
            self._tray_icon().showMessage(title, message, icon, MESSAGE_MS)
        self.sent.append(Notification(title, message, tray, target))
        return True

    def open_latest(self) -> None:
        """The latest message was clicked: bring the window back, on its step if it names
        one (the tray's ``messageClicked`` carries no payload, so the latest is the one)."""
        self._bring_window_back()
        target = self.sent[-1].target if self.sent else None
        if target is not None:
            self.opened.emit(*target)

    def set_activity(self, running: int, waiting: int) -> None:
        """How many runs are at work and how many things wait for the person: the tray icon
        says so (its tooltip), and it is shown while a run is at work even when no
        notification was sent yet, so a run in a hidden window is never forgotten."""
        self._running = running
        self._waiting = waiting
        if self._tray is None and running and QSystemTrayIcon.isSystemTrayAvailable():
            self._tray_icon()
        if self._tray is not None:
            self._tray.setToolTip(_tooltip(running, waiting))

    def tray_tooltip(self) -> str:
        """What the tray icon says (also when the desktop has no tray)."""
        return _tooltip(self._running, self._waiting)

    def shutdown(self) -> None:
        """Remove the tray icon (the window is closing)."""
        if self._tray is not None:
            self._tray.hide()
            self._tray.deleteLater()
            self._tray = None

    def _tray_icon(self) -> QSystemTrayIcon:
        if self._tray is None:
            self._tray = QSystemTrayIcon(icons.app_icon(), self)
            self._tray.setToolTip(_tooltip(self._running, self._waiting))
            self._tray.messageClicked.connect(self.open_latest)
            self._tray.activated.connect(lambda _reason: self._bring_window_back())
            self._tray.show()
        return self._tray

    def _bring_window_back(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()


def _tooltip(running: int, waiting: int) -> str:
    parts = [f"{running} running"] if running else []
    if waiting:
        parts.append(f"{waiting} waiting for you")
    return "Baton — " + ", ".join(parts) if parts else "Baton"
