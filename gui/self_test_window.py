"""The window part of ``baton --self-test``: a run launched and approved as a person would.

A packaged app cannot be driven by a test framework from outside, so the app drives itself:
the launch dialog gets a one-step chain and its Run button is clicked, the approval dialog that
the bash call raises is answered with its Approve button (after its real guard delay), and the
run's pane must then show the streamed tool call with its command and output. Everything is
real but the model (:mod:`gui.self_test_endpoint`); nothing needs a display (offscreen).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication

from core.config.settings import Provider, Settings, save_settings
from gui.app import create_application
from gui.qt_asyncio import attached_event_loop
from gui.run.tool_call_row import ToolCallRow
from gui.self_test_endpoint import COMMAND, MODEL, Endpoint
from gui.window.main_window import MainWindow

TIMEOUT_S = 60.0
"""Generous: a slow machine still finishes; a broken build fails instead of hanging."""


def wait_until(app: QApplication, what: str, predicate: Callable[[], bool]) -> None:
    """Run Qt (and so the asyncio tasks on it) until ``predicate`` holds."""
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)


def check_window_run(config: Path, project: Path) -> str:
    """Launch dialog → approval dialog → the pane's tool call; returns what was seen."""
    app = create_application([])
    with Endpoint() as endpoint:
        provider = Provider(name="self-test", base_url=endpoint.base_url)
        save_settings(Settings(providers=[provider], default_model=MODEL))
        settings = QSettings(str(config / "window-run.ini"), QSettings.Format.IniFormat)
        with attached_event_loop(app):
            window = MainWindow(project, settings)
            window.show()
            try:
                return _launch_and_approve(app, window)
            finally:
                window.close()
                app.processEvents()


def _launch_and_approve(app: QApplication, window: MainWindow) -> str:
    dialog = window.open_launch_dialog()
    dialog.tabs.setCurrentIndex(1)  # the ad-hoc chain
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("worker")
    row.task.setPlainText("Check that the bundled bash tool runs.")
    dialog.run_button.click()
    controller = window.run_controller
    wait_until(app, "the run to start", lambda: bool(controller.sessions()))
    session = controller.sessions()[-1]
    approval = controller.approvals.dialog
    wait_until(app, "the approval dialog", approval.isVisible)
    if approval.command_edit.toPlainText() != COMMAND:
        raise RuntimeError(f"the dialog asks about {approval.command_edit.toPlainText()!r}")
    wait_until(app, "the approval buttons", approval.buttons_enabled)
    approval.approve_once_button.click()
    wait_until(app, "the run to finish", lambda: not session.is_active())
    result = session.runner.result
    if result is None or result.status != "ok":
        raise RuntimeError(f"the run ended {result.status if result else 'without a result'}")

    def tool_rows() -> list[ToolCallRow]:
        widgets = session.view.pane(0).item_widgets() if session.view.panes() else []
        return [w for w in widgets if isinstance(w, ToolCallRow)]

    wait_until(app, "the tool call in the pane", lambda: bool(tool_rows()))
    row_shown = tool_rows()[0]
    row_shown.set_expanded(True)  # a person opens the row to read the output
    wait_until(app, "the tool call's output", lambda: "baton-self-test" in row_shown.output_text())
    if row_shown.tool_name() != "bash" or COMMAND not in row_shown.argument_text():
        raise RuntimeError(f"the pane shows {row_shown.tool_name()} {row_shown.argument_text()}")
    return "launch dialog → approval dialog (approved) → bash call and output in the pane"
