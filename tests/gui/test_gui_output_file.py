"""``output: <file name>``: the step pane shows the file the answer was also written to as a
link (and, when it could not be written, why)."""

from __future__ import annotations

from PySide6.QtCore import QUrl

from core.model.events import OutputFileWritten
from gui.run.run_view import RunView
from tests.gui.run_events import finished_chain


def test_the_written_file_is_a_link_in_its_step_pane(view: RunView) -> None:
    events = finished_chain()
    run_id = events[0].run_id
    path = "/home/dev/src/baton/research.md"
    finished = events.index(next(e for e in events if e.type == "step_finished"))
    events.insert(finished, OutputFileWritten(run_id=run_id, step=0, ts=1.0, path=path))
    view.load_events(events)

    label = view.pane(0).output_file
    assert label is not None
    assert label.text() == (
        f'Answer also written to <a href="{QUrl.fromLocalFile(path).toString()}">research.md</a>'
    )
    assert label.openExternalLinks()
    assert view.pane(1).output_file is None  # only the step whose agent names a file


def test_a_file_that_could_not_be_written_says_why(view: RunView) -> None:
    events = finished_chain()
    error = "'notes/r.md' would be written outside the working folder"
    events.insert(
        -1,
        OutputFileWritten(
            run_id=events[0].run_id, step=2, ts=9.0, path="/p/notes/r.md", error=error
        ),
    )
    view.load_events(events)
    label = view.pane(2).output_file
    assert label is not None
    assert label.text() == (
        "Answer not written to r.md: 'notes/r.md' would be written outside the working folder"
    )
