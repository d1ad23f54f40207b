"""Starting the window: ``baton`` with no sub-command ends up in :func:`run_app`.

The QApplication is set up here (names for QSettings, icon, style), the main window is shown,
and once it has painted the qasync loop is installed (:mod:`gui.qt_asyncio`) so the asyncio
core runs on the Qt thread until the window closes. Building the window itself lives in
:mod:`gui.window.main_window`, so tests can create it without any of this.
"""

from __future__ import annotations

# Start-up: the window paints before settings and agent files are read, so neither pydantic
# nor yaml is imported here (see gui.window.first_paint), and before asyncio is (see run_app).
import logging
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from core import __version__
from core.model.collection import freeze_start_up
from gui import theme
from gui.app_log import log_exception, show_startup_error, start_logging
from gui.theme import icons
from gui.theme.scheme import apply_scheme, saved_scheme
from gui.window.main_window import MainWindow

if TYPE_CHECKING:
    from gui.login_shell import LoginShellReader

ORGANIZATION = "Baton"
APPLICATION = "Baton"
STYLE = "Fusion"
"""Qt's own style, the same on every system: Baton's style sheet is written for it."""
GIL_SWITCH_S = 0.0001
"""How long a busy Python thread may keep the GIL from the GUI thread (Python's default: 5 ms).
Every Python slot, event handler and paint of a turn takes the GIL again, and with a thread
reading a saved run, each waited the whole interval: a turn of 34 ms of work took 100 ms
(benchmarks/open_run.py). At 0.5 ms a turn that takes the GIL 20 times beside a busy thread
took 16 ms instead of 106 ms, and the busy thread lost nothing (it got more done); at 0.1 ms
opening a saved run's longest gap fell again, in five interleaved rounds out of five (quiet
43-54 ms vs 56-118, loaded 50-72 vs 63-84), the run shown no later. Only a thread that wants
the GIL makes the holder switch, so an uncontended window pays nothing."""


def create_application(argv: list[str]) -> QApplication:
    """The process's QApplication (reused if one exists), named and styled for Baton: the
    Fusion style plus Baton's style sheet; the GIL handed to the GUI thread quickly
    (:data:`GIL_SWITCH_S`)."""
    sys.setswitchinterval(GIL_SWITCH_S)
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
    scheme = saved_scheme(QSettings())
    if scheme == "system":
        theme.apply_theme(app)
    else:  # the person chose light or dark in Settings ▸ Appearance
        apply_scheme(app, scheme)
    return app


def run_app(argv: list[str], project: Path | None = None) -> int:
    """Show the main window on ``project`` (``baton PATH``; None: the folder Baton was started
    in, or the last project when that is the home folder) and run until it closes; returns the
    process exit code. A start-up error is logged and shown in a dialog (nobody may see
    stderr), exit code 1."""
    reader = _read_login_shell()  # starts at once, on its own thread
    app = create_application(argv)
    try:
        window, asks_for_project = _open_window(project)
    except Exception as error:
        log_exception("Baton could not start", type(error), error, error.__traceback__)
        traceback.print_exc()
        show_startup_error(error)
        return 1
    window.login_shell = reader
    if sys.platform == "darwin":  # an app-wide Python filter costs start-up time elsewhere
        from gui.window.projects import FileOpenEvents

        app.installEventFilter(FileOpenEvents(window.projects, window))
    if reader is not None:
        reader.when_finished(lambda: _login_environment_read(window))
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

        window.after_first_paint.insert(0, _start_logging)
        if asks_for_project:
            window.after_first_paint.append(lambda: QTimer.singleShot(0, window.open_folder))
        else:
            window.after_first_paint.append(lambda: _remember(window.working_folder))
        # Last: what exists once the window has started lives as long as the process; no
        # full collection walks it again (core.model.collection).
        window.after_first_paint.append(freeze_start_up)
        window.first_paint.release()  # runs from the loop below
        return run_event_loop(app)
    finally:
        sys.excepthook = previous_hook


def _open_window(project: Path | None) -> tuple[MainWindow, bool]:
    """The window on ``project`` or the start folder, and whether it must ask for a project
    (a desktop start in the home folder with no project opened before)."""
    from core.config.recent_projects import start_folder

    try:
        cwd = Path.cwd()
    except OSError:  # started in a folder that was deleted since
        cwd = Path.home()
    folder = project if project is not None else start_folder(cwd)
    if folder is None:
        return MainWindow(Path.home()), True
    return MainWindow(folder.resolve()), False


def _start_logging() -> None:
    start_logging()


def _remember(folder: Path) -> None:
    from core.config.recent_projects import remember_project

    try:
        remember_project(folder)
    except OSError as error:
        logging.getLogger("baton").warning("could not remember the project %s: %s", folder, error)


def _read_login_shell() -> LoginShellReader | None:
    """Start reading the login shell's environment when Baton was not started from a terminal
    (a desktop launch lacks what the profile adds to PATH); None when it is not read."""
    from core.config.login_environment import login_shell, started_from_terminal

    shell = login_shell()
    if shell is None or started_from_terminal():
        return None
    from gui.login_shell import LoginShellReader

    reader = LoginShellReader(shell)
    reader.start()
    return reader


def _login_environment_read(window: MainWindow) -> None:
    """PATH may have grown: look for the CLIs again where the person is shown them."""
    panel = window.welcome_panel
    if panel is not None and panel.isVisible():
        panel.start_detection()


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
        log_exception("Uncaught error", kind, error, tb)
        message = str(error).splitlines()[0] if str(error) else kind.__name__
        window.statusBar().showMessage(f"Something went wrong: {message}", 15000)

    return hook
