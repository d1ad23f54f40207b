"""The window at 800 px and at 1600 px: every view usable on a small screen, the run column
using a wide one, and headers that elide instead of widening the window."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from core.model.events import Event, Lineage, RunStarted, event_from_json, event_to_json
from gui.run.run_page import RunPage
from gui.run.run_view import RunView
from gui.widgets import ElidedLabel
from gui.window.main_window import MainWindow
from gui.window.views import VIEWS
from tests.gui.launching import open_launch_dialog
from tests.gui.run_events import failed_chain, finished_chain, running_parallel

SMALL_SCREEN = 800
LONG_ID = "run-20261203-101405-" + "a" * 40


def _linked(events: list[Event], run_id: str, kind: str) -> list[Event]:
    """``events`` as a run linked to a parent with a long id (the header's origin line)."""
    started = events[0]
    assert isinstance(started, RunStarted)
    lineage = Lineage.model_validate({"run_id": LONG_ID, "step": 1, "kind": kind})
    first = started.model_copy(
        update={
            "run_id": run_id,
            "lineage": lineage,
            "params": {"goal": "x" * 200, "style": "terse and very very long"},
            "cwd": "/home/dev/" + "deep/" * 30 + "project",
        }
    )
    return [first] + [event.model_copy(update={"run_id": run_id}) for event in events[1:]]


def _every_kind_of_run() -> list[list[Event]]:
    runs = [finished_chain(), failed_chain(), running_parallel(done=2, running=1, waiting=1)]
    for number, kind in enumerate(("resume", "rerun", "continue", "follow_up")):
        runs.append(_linked(failed_chain(), f"run-linked-{number}", kind))
    return runs


def _read(page: RunPage) -> bool:
    return not page.is_reading() and bool(page.view.panes())


def _titled(title: ElidedLabel, name: str) -> bool:
    return title.full_text() == name


def _minimum_width(window: MainWindow) -> int:
    layout = window.layout()
    assert layout is not None
    layout.activate()
    return window.minimumSizeHint().width()


def test_every_view_fits_800_px_with_every_kind_of_run_open(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    assert _minimum_width(window) <= SMALL_SCREEN, "with no run tabs"
    for events in _every_kind_of_run():
        page = window.runs_view.open_events(events)
        qtbot.waitUntil(partial(_read, page), timeout=20_000)
    for spec in VIEWS:  # every view, the lazily built ones too
        window.go_to_view(spec.key)
        view: QWidget = window.view(spec.key)
        qtbot.waitUntil(view.isVisible)
        assert _minimum_width(window) <= SMALL_SCREEN, spec.key
    window.go_to_view("runs")
    for index in range(window.runs_view.tabs.count()):
        window.runs_view.tabs.setCurrentIndex(index)
        assert _minimum_width(window) <= SMALL_SCREEN, window.runs_view.tabs.tabText(index)
    window.resize(SMALL_SCREEN, 700)
    qtbot.waitUntil(lambda: window.width() <= SMALL_SCREEN)


def test_the_run_column_uses_a_wide_window(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.load_events(finished_chain())
    view.resize(1480, 900)
    view.show()
    qtbot.waitUntil(lambda: bool(view.panes()) and view.panes()[0].width() > 1300)


def test_parallel_step_headers_elide_with_an_ellipsis(qtbot: QtBot) -> None:
    view = RunView()
    qtbot.addWidget(view)
    events = running_parallel(done=2, running=1)
    long_agent = "an-agent-with-a-remarkably-long-name-that-will-not-fit"
    view.load_events(
        [event_from_json(event_to_json(event).replace("reviewer", long_agent)) for event in events]
    )
    view.resize(1000, 700)
    view.show()
    qtbot.waitUntil(lambda: view.columns() == 2)
    pane = view.panes()[0]
    qtbot.waitUntil(lambda: pane.agent.text().endswith("…"))
    assert pane.agent.full_text() == long_agent
    assert pane.agent.width() + pane.agent.x() <= pane.header.width()


def test_a_preset_open_fits_800_px_its_actions_dropping_their_labels_first(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    window.go_to_view("presets")
    presets = window.presets_view
    header = presets.header
    for name in ("implement", "implement-and-review"):
        found = presets.catalog.get(name)
        assert found is not None and found.path is not None
        presets.open_path(Path(found.path))
        qtbot.waitUntil(partial(_titled, header.title, name))
        assert _minimum_width(window) <= SMALL_SCREEN, name
    window.resize(SMALL_SCREEN, 700)
    buttons = (header.duplicate_button, header.delete_button)
    qtbot.waitUntil(lambda: all(button.is_collapsed() for button in buttons))
    assert header.title.text().startswith("implement")  # a readable part of a long name
    window.resize(1600, 900)  # room again: the labels come back
    qtbot.waitUntil(lambda: not any(button.is_collapsed() for button in buttons))
    assert header.title.text() == "implement-and-review"


def test_the_launch_dialog_fits_an_800_by_600_screen_run_in_reach(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    assert dialog.minimumSizeHint().height() <= 560  # the rest scrolls above the buttons
    dialog.resize(760, 560)
    qtbot.waitUntil(lambda: dialog.height() <= 560)
    run = dialog.run_button
    bottom = run.mapTo(dialog, run.rect().bottomLeft()).y()
    assert run.isVisible() and bottom <= dialog.height()
