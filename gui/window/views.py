"""The window's views, listed once in :data:`VIEWS`, and how each is built on first use.

Only the view shown first is built (and its modules imported) while the window opens; every
builder imports its view's package inside itself, so start-up pays for one view, not six.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from gui.window.main_window import MainWindow


@dataclass(frozen=True)
class ViewSpec:
    key: str
    label: str
    icon: str
    make: Callable[[MainWindow], QWidget]


def _agents(window: MainWindow) -> QWidget:
    from gui.definitions.agents_view import AgentsView

    # The view the window opens on reads its files off the GUI thread, once the window is up.
    view = AgentsView(
        window.prompts, window.settings, window.working_folder, read_later=window.opening
    )
    if window.opening:
        window.after_first_paint.append(view.read_in_background)
    view.dirtyChanged.connect(window.update_title)
    return view


def _presets(window: MainWindow) -> QWidget:
    from gui.definitions.presets_view import PresetsView

    view = PresetsView(window.prompts, window.settings, window.working_folder)
    view.runRequested.connect(window.open_launch_dialog)
    view.dirtyChanged.connect(window.update_title)
    return view


def _runs(window: MainWindow) -> QWidget:
    from gui.run.runs_view import RunsView

    view = RunsView(window.run_controller)
    view.runOpened.connect(lambda _page: window.show_view("runs"))
    view.history.batchRequested.connect(lambda record: window.show_batch(record.batch_id))
    return view


def _documents(window: MainWindow) -> QWidget:
    from gui.documents.documents_view import DocumentsView

    view = DocumentsView(prompts=window.prompts)
    view.dirtyChanged.connect(window.update_title)
    view.openRunRequested.connect(window.open_run_by_id)
    return view


def _batches(window: MainWindow) -> QWidget:
    from gui.batch.batch_view import BatchView

    view = BatchView(responder=window.run_controller.approvals)
    view.openRunRequested.connect(window.open_run_by_id)
    return view


def _inbox(window: MainWindow) -> QWidget:
    from gui.inbox.inbox_view import InboxView

    return InboxView(window.inbox)


VIEWS: list[ViewSpec] = [
    ViewSpec("agents", "Agents", "nav-agents", _agents),
    ViewSpec("presets", "Presets", "nav-presets", _presets),
    ViewSpec("runs", "Runs", "nav-runs", _runs),
    ViewSpec("documents", "Documents", "nav-documents", _documents),
    ViewSpec("batches", "Batches", "nav-batches", _batches),
    ViewSpec("inbox", "Inbox", "nav-inbox", _inbox),
]
"""The views in sidebar order, one line each. The views for "agents", "presets" and "runs" must
be an AgentsView, a PresetsView and a RunsView."""


def view_index(key: str) -> int:
    """The position of view ``key`` in the sidebar and the stack (ValueError if unknown)."""
    return [spec.key for spec in VIEWS].index(key)
