"""Telling a person who is looking elsewhere that a run needs them or is done (issue 6 §8).

Two channels, both only while the main window is not the active window (a person watching the
run needs no pop-up):

* the taskbar / dock alert (``QApplication.alert``), available everywhere Qt runs;
* a system tray message, where the platform has a tray (``isSystemTrayAvailable()``). The
  tray icon is created on first use and stays until the window goes away, so messages from
  later runs reuse it instead of making icons flicker in and out of the tray.

Every notification is also recorded in :attr:`Notifier.sent`, which is what the window's tests
read.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from gui.theme import icons

MESSAGE_MS = 8000


@dataclass(frozen=True)
class Notification:
    title: str
    message: str
    tray: bool


class Notifier(QObject):
    """Notifications on behalf of ``window``. GUI thread only."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._tray: QSystemTrayIcon | None = None
        self.sent: list[Notification] = []

    def notify(self, title: str, message: str, *, warning: bool = False) -> bool:
        """Alert when the window is not active; True when something was shown."""
        if self._window.isActiveWindow():
            return False
        QApplication.alert(self._window, 0)
        tray = QSystemTrayIcon.isSystemTrayAvailable()
        if tray:
            icon = (
                QSystemTrayIcon.MessageIcon.Warning
                if warning
                else QSystemTrayIcon.MessageIcon.Information
            )
            self._tray_icon().showMessage(title, message, icon, MESSAGE_MS)
        self.sent.append(Notification(title, message, tray))
        return True

    def shutdown(self) -> None:
        """Remove the tray icon (the window is closing)."""
        if self._tray is not None:
            self._tray.hide()
            self._tray.deleteLater()
            self._tray = None

    def _tray_icon(self) -> QSystemTrayIcon:
        if self._tray is None:
            self._tray = QSystemTrayIcon(icons.app_icon(), self)
            self._tray.setToolTip("Baton")
            self._tray.messageClicked.connect(self._bring_window_back)
            self._tray.activated.connect(lambda _reason: self._bring_window_back())
            self._tray.show()
        return self._tray

    def _bring_window_back(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()
