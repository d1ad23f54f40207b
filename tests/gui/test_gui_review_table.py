"""A review step's structured result in its pane: counts in the header, a table with severity
badges, worst first, and a filter by severity."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gui.run.run_view import RunView
from tests.gui.run_events import RunBuilder

REVIEW = {
    "passed": False,
    "issues": [
        {"severity": "minor", "description": "Typo in the help text"},
        {"severity": "critical", "description": "Deletes the wrong folder", "file": "a.py",
         "line": 7},
        {"severity": "major", "description": "No test for --json", "file": "cli.py"},
    ],
}  # fmt: skip


def test_the_review_table_with_badges_counts_and_filter(qtbot: QtBot, view: RunView) -> None:
    run = RunBuilder("20260101-000000-review")
    run.start("single", [("reviewer", "Review the change", "m")])
    run.step_started(0, "Review the change", "m")
    run.text(0, "Changes requested.")
    run.step_finished(0, "ok", output="Changes requested.", structured=REVIEW)
    run.run_finished("ok")
    view.load_events(run.events)
    pane = view.pane(0)
    qtbot.waitUntil(lambda: pane.review is not None)
    assert pane.issues.text() == "1 critical · 1 major · 1 minor"
    table = pane.review
    assert table is not None
    assert table.verdict.text() == "Changes requested — 1 critical · 1 major · 1 minor"
    assert table.shown_rows() == [
        ["critical", "a.py:7", "Deletes the wrong folder"],
        ["major", "cli.py", "No test for --json"],
        ["minor", "—", "Typo in the help text"],
    ]
    assert table.badge_color(0) != table.badge_color(1)  # severities look different

    table.filter.setCurrentText("major")
    assert table.shown_rows() == [["major", "cli.py", "No test for --json"]]
