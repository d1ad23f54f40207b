"""The window's views, listed once in :data:`VIEWS`, and how each is built on first use.

Only the view shown first is built (and its modules imported) while the window opens; every
builder imports its view's package inside itself, so start-up pays for one view, not six.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from gui.window.services import WindowServices


@dataclass(frozen=True)
class ViewSpec:
    key: str
    label: str
    icon: str
    make: Callable[[WindowServices], QWidget]
    """Builds the view from what the window offers and records it in ``services.built``."""


def _agents(window: WindowServices) -> QWidget:
    from gui.definitions.agents_view import AgentsView

    # The view the window opens on reads its files off the GUI thread, once the window is up.
    opening = window.opening()
    view = AgentsView(window.prompts, window.settings, window.working_folder(), read_later=opening)
    if opening:
        window.after_first_paint.append(view.read_in_background)
    view.dirtyChanged.connect(window.update_title)
    window.built.agents = view
    return view


def _presets(window: WindowServices) -> QWidget:
    from gui.definitions.presets_view import PresetsView

    view = PresetsView(window.prompts, window.settings, window.working_folder())
    view.runRequested.connect(window.launch)
    view.dirtyChanged.connect(window.update_title)
    window.built.presets = view
    return view


def _runs(window: WindowServices) -> QWidget:
    from gui.run.runs_view import RunsView

    view = RunsView(window.controller())
    view.runOpened.connect(lambda _page: window.show_view("runs"))
    view.history.batchRequested.connect(lambda record: window.show_batch(record.batch_id))
    window.built.runs = view
    return view


def _documents(window: WindowServices) -> QWidget:
    from gui.documents.documents_view import DocumentsView

    view = DocumentsView(prompts=window.prompts)
    view.dirtyChanged.connect(window.update_title)
    view.openRunRequested.connect(window.open_run)
    window.built.documents = view
    return view


def _batches(window: WindowServices) -> QWidget:
    from gui.batch.batch_view import BatchView

    view = BatchView(responder=window.controller().approvals, working_folder=window.working_folder)
    view.openRunRequested.connect(window.open_run)
    window.built.batches = view
    return view


def _inbox(window: WindowServices) -> QWidget:
    from gui.inbox.inbox_view import InboxView

    return InboxView(window.inbox())


VIEWS: list[ViewSpec] = [
    ViewSpec("agents", "Agents", "nav-agents", _agents),
    ViewSpec("presets", "Presets", "nav-presets", _presets),
    ViewSpec("runs", "Runs", "nav-runs", _runs),
    ViewSpec("documents", "Documents", "nav-documents", _documents),
    ViewSpec("batches", "Batches", "nav-batches", _batches),
    ViewSpec("inbox", "Inbox", "nav-inbox", _inbox),
]
"""The views in sidebar order, one line each; each builder records its view, typed, in
:class:`~gui.window.services.BuiltViews`."""


def view_index(key: str) -> int:
    """The position of view ``key`` in the sidebar and the stack (ValueError if unknown)."""
    return [spec.key for spec in VIEWS].index(key)
