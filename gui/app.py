"""Starting the window: ``baton`` with no sub-command ends up in :func:`run_app`.

The QApplication is set up here (names for QSettings, icon, style), the qasync loop is
installed (:mod:`gui.qt_asyncio`) so the asyncio core runs on the Qt thread, and the main
window is shown until it closes. Building the window itself lives in :mod:`gui.window.main_window`,
so tests can create it without any of this.
"""

from __future__ import annotations

# Start-up: the window paints before settings and agent files are read, so neither pydantic
# nor yaml is imported here (see gui.window.first_paint). asyncio (for the event loop, below)
# comes before PySide6: once loaded, PySide6 reads the source of every module imported after
# it (its __feature__ check, ~1 ms a module), and asyncio is ~30 modules.
import asyncio  # noqa: F401  # isort: skip
import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtWidgets import QApplication

from core import __version__
from gui import theme
from gui.qt_asyncio import run_event_loop
from gui.theme import icons
from gui.window.main_window import MainWindow

ORGANIZATION = "Baton"
APPLICATION = "Baton"


def create_application(argv: list[str]) -> QApplication:
    """The process's QApplication (reused if one exists), named and styled for Baton."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(["baton", *argv])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("baton")
    app.setWindowIcon(icons.app_icon())
    theme.apply_theme(app)
    return app


def run_app(argv: list[str]) -> int:
    """Show the main window and run until it closes; returns the process exit code."""
    app = create_application(argv)
    window = MainWindow()
    previous_hook = sys.excepthook
    sys.excepthook = _make_excepthook(window)
    try:
        window.show()
        return run_event_loop(app)
    finally:
        sys.excepthook = previous_hook


ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], None]


def _make_excepthook(window: MainWindow) -> ExceptHook:
    """An uncaught error in a slot: full traceback on stderr for the developer, one sentence
    in the status bar for the user — never a dialog full of traceback, never a dead window."""

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        traceback.print_exception(kind, error, tb, file=sys.stderr)
        message = str(error).splitlines()[0] if str(error) else kind.__name__
        window.statusBar().showMessage(f"Something went wrong: {message}", 15000)

    return hook
