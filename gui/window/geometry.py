"""Where the window was, and which view it showed, kept in QSettings between sessions."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow

DEFAULT_SIZE = (1200, 760)


def restore_geometry(window: QMainWindow, settings: QSettings, views: list[str]) -> str:
    """Put ``window`` back where it was (else centred at :data:`DEFAULT_SIZE`, first run or a
    bad value) and return the key of the view to show: the saved one if still in ``views``,
    else the first."""
    geometry = settings.value("main/geometry")
    if not (
        isinstance(geometry, QByteArray | bytes) and window.restoreGeometry(QByteArray(geometry))
    ):
        window.resize(*DEFAULT_SIZE)
        screen = QGuiApplication.primaryScreen()
        if screen is not None:
            frame = window.frameGeometry()
            frame.moveCenter(screen.availableGeometry().center())
            window.move(frame.topLeft())
    state = settings.value("main/state")
    if isinstance(state, QByteArray | bytes):
        window.restoreState(QByteArray(state))
    view = settings.value("main/view", views[0])
    return str(view) if view in views else views[0]


def save_geometry(window: QMainWindow, settings: QSettings, view: str) -> None:
    """Remember ``window``'s geometry, toolbar/dock state and the view it shows."""
    settings.setValue("main/geometry", window.saveGeometry())
    settings.setValue("main/state", window.saveState())
    settings.setValue("main/view", view)
