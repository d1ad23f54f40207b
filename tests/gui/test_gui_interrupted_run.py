"""A run whose process died shows as Interrupted in the History and when reopened."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.events import RunFinished
from core.record.liveness import LivenessLock
from core.record.run_files import Redactor, RunIndex, RunWriter, load_run, run_file
from gui.window.main_window import MainWindow
from tests.test_run_state import sample_run

pytestmark = pytest.mark.usefixtures("qasync_loop")


def test_a_run_whose_owner_died_reads_interrupted_in_history_and_when_opened(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    events = [e for e in sample_run() if not isinstance(e, RunFinished)]
    owner = LivenessLock(run_file(events[0].run_id))  # "another process" still running it
    writer = RunWriter(events[0].run_id, Redactor())
    for event in events:
        writer.write(event)
    writer.close()
    RunIndex().add_file(writer.path)

    window = make_window()
    runs = window.runs_view
    runs.show_history()
    qtbot.waitUntil(lambda: [r.status for r in runs.history.visible_records()] == ["running"])
    assert runs.history.model.index(0, 2).data() == "Running"

    owner.release()  # the owner is gone (killed: the OS drops its lock)
    runs.history.refresh()
    qtbot.waitUntil(lambda: runs.history.model.index(0, 2).data() == "Interrupted")

    table = runs.history.table
    rect = table.visualRect(runs.history.model.index(0, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: runs.current_page() is not None)
    page = runs.current_page()
    assert page is not None
    qtbot.waitUntil(lambda: not page.is_reading())  # read off the GUI thread
    assert page.view.state().status == "interrupted"
    assert page.view.header.status.text() == "Interrupted"
    assert load_run(writer.path)[-1].type == "run_finished"
