"""``baton open RUN_FILE [--screenshot PNG]``: one saved run (or transcript) in the window.

The command (:mod:`core.terminal.commands.open`) has already read the file — a missing or unreadable
one is a one-line error there, before Qt starts — and hands the events over. The window opens
on the Runs view with the run in its own tab, replayed through the same view model as a live
run.

With ``--screenshot`` the window is laid out at its default size with throw-away view state
(the user's saved geometry would make screenshots differ from machine to machine, and the
first-run banner has no place in a picture of a run), the run is rendered completely — read
off the GUI thread, long answers laid out, model flushed, every Markdown stream's tail
rendered, layouts settled over a few event-loop turns —
then the main window is grabbed to a PNG and the process exits 0. Works on the ``offscreen``
platform, so no display is needed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import (
    QMessageLogContext,
    QSettings,
    QTimer,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtWidgets import QApplication

from core.model.events import Event, RunStarted
from core.record.run_state import RunState
from gui.app import create_application
from gui.qt_asyncio import run_event_loop
from gui.run.markdown_stream import MarkdownStream
from gui.window.main_window import MainWindow

OFFSCREEN_NOTE = "This plugin does not support"
"""The offscreen plugin's warning when asked to raise a window or pass on size hints."""
SETTLE_TURNS = 6
"""Event-loop turns (at TURN_MS each) given to layouts and deferred renders before grabbing."""
TURN_MS = 40


def open_run_window(path: Path, events: list[Event], screenshot: Path | None = None) -> int:
    """Show the run; with ``screenshot``, save a PNG of the window and return 0 (1 when the
    PNG cannot be written). Without, run until the window is closed."""
    app = create_application([])
    folder = _run_folder(events)
    if screenshot is None:
        window = MainWindow(folder)
        window.show_view("runs")
        window.runs_view.open_events(events, path)
        window.show()
        return run_event_loop(app)
    qInstallMessageHandler(_quiet_offscreen)
    with tempfile.TemporaryDirectory(prefix="baton-open-") as scratch:
        state = QSettings(str(Path(scratch) / "view-state.ini"), QSettings.Format.IniFormat)
        window = MainWindow(folder, settings=state)
        if window.welcome_panel is not None:
            window.welcome_panel.stop()
            window.welcome_panel.hide()
        window.show_view("runs")
        page = window.runs_view.open_events(events, path)
        window.show()
        outcome: list[int] = []

        def settle(turns_left: int) -> None:
            page.view.model.flush()
            streams = window.findChildren(MarkdownStream)
            for stream in streams:
                stream.flush()
            if page.is_reading() or not all(s.is_laid_out() for s in streams):
                QTimer.singleShot(TURN_MS, lambda: settle(turns_left))  # still reading
                return
            if turns_left == SETTLE_TURNS:
                failed = _first_failed_step(page.view.state())
                if failed is not None:  # the picture of a failed run shows where it failed
                    page.view.focus_step(failed, highlight=False)
            if turns_left > 0:
                QTimer.singleShot(TURN_MS, lambda: settle(turns_left - 1))
                return
            outcome.append(_save(window, screenshot))
            window.close()
            QApplication.quit()

        QTimer.singleShot(0, lambda: settle(SETTLE_TURNS))
        run_event_loop(app)
        return outcome[0] if outcome else 1


def _first_failed_step(state: RunState) -> int | None:
    return next((s.index for s in state.steps if s.phase in ("error", "aborted")), None)


def _quiet_offscreen(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Drop the offscreen platform's notes about window-manager features it lacks (a picture
    needs none); say everything else as Qt would."""
    if OFFSCREEN_NOTE in message:
        return
    print(message, file=sys.stderr)


def _run_folder(events: list[Event]) -> Path | None:
    """The run's working folder when it still exists (the window then shows the agents and
    presets a re-run would use), else None (the current folder)."""
    first = events[0] if events else None
    if isinstance(first, RunStarted) and Path(first.cwd).is_dir():
        return Path(first.cwd)
    return None


def _save(window: MainWindow, target: Path) -> int:
    image = window.grab()
    target = target.expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"baton open: cannot write {target}: {error.strerror or error}", file=sys.stderr)
        return 1
    if not image.save(str(target), "PNG"):
        print(f"baton open: cannot write {target}", file=sys.stderr)
        return 1
    print(f"Saved {target} ({image.width()}×{image.height()})")
    return 0
