"""Starting the window: ``baton`` with no sub-command ends up in :func:`run_app`.

The QApplication is set up here (names for QSettings, icon, style), the main window is shown,
and once it has painted the qasync loop is installed (:mod:`gui.qt_asyncio`) so the asyncio
core runs on the Qt thread until the window closes. Building the window itself lives in
:mod:`gui.window.main_window`, so tests can create it without any of this.
"""

from __future__ import annotations

# Start-up: the window paints before settings and agent files are read, so neither pydantic
# nor yaml is imported here (see gui.window.first_paint), and before asyncio is (see run_app).
import os
import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from core import __version__
from gui import theme
from gui.theme import icons
from gui.window.main_window import MainWindow

ORGANIZATION = "Baton"
APPLICATION = "Baton"
STYLE = "Fusion"
"""Qt's own style, the same on every system: Baton's style sheet is written for it."""


def create_application(argv: list[str]) -> QApplication:
    """The process's QApplication (reused if one exists), named and styled for Baton: the
    Fusion style plus Baton's style sheet."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        app = existing
        app.setStyle(STYLE)
    else:
        # The style named on the command line: the style object never reaches Python, which
        # spares PySide building the QStyle class's enums (~5 ms) before the first paint.
        app = QApplication(["baton", "-style", STYLE, *argv])
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
        # asyncio and qasync are ~40 ms of imports the first picture does not need: they are
        # loaded once the window is on screen, and the start-up work waits for the loop.
        window.first_paint.hold()
        window.show()
        wait_for_first_paint(window)
        if not window.isVisible():
            return 0  # closed before it painted: nothing started, nothing to run
        if os.environ.get(STARTUP_PROBE):
            print("painted", flush=True)  # benchmarks/bundle_startup.py times this line
            return 0
        from gui.qt_asyncio import run_event_loop

        window.first_paint.release()  # runs from the loop below
        return run_event_loop(app)
    finally:
        sys.excepthook = previous_hook


STARTUP_PROBE = "BATON_STARTUP_PROBE"
"""Set, the window prints ``painted`` once it has painted and exits: the start-up benchmark
times a packaged app from outside with it, where no test code can be injected."""

FIRST_PAINT_WAIT_MS = 1000
"""How long :func:`wait_for_first_paint` waits at most: a window that is not painted (shown
minimised, say) must not keep the event loop from starting."""


def wait_for_first_paint(window: MainWindow) -> None:
    """Run Qt's events (plain Qt, no asyncio yet) until ``window`` has painted once, or
    :data:`FIRST_PAINT_WAIT_MS` passed."""
    if window.first_paint.is_painted():
        return
    loop = QEventLoop()
    window.first_paint.when_painted(loop.quit)  # after this paint event, which goes on
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    deadline.start(FIRST_PAINT_WAIT_MS)
    try:
        loop.exec()
    finally:
        deadline.stop()


ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], None]


def _make_excepthook(window: MainWindow) -> ExceptHook:
    """An uncaught error in a slot: full traceback on stderr for the developer, one sentence
    in the status bar for the user — never a dialog full of traceback, never a dead window."""

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        traceback.print_exception(kind, error, tb, file=sys.stderr)
        message = str(error).splitlines()[0] if str(error) else kind.__name__
        window.statusBar().showMessage(f"Something went wrong: {message}", 15000)

    return hook
