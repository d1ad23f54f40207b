"""What the views and the menus may ask of the window, as a small typed object.

The window builds its views (:mod:`gui.window.views`) and menus (:mod:`gui.window.menus`), so
they must not import it back: it hands them a :class:`WindowServices` — open a run, show a
view, launch, the inbox, the run controller — instead of itself, and the views it has built
are kept typed in :class:`BuiltViews` so nothing needs to guess a view's class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

from gui.widgets.prompts import Prompts

if TYPE_CHECKING:  # the views' modules are imported where each view is first built
    from gui.batch.batch_view import BatchView
    from gui.definitions.agents_view import AgentsView
    from gui.definitions.presets_view import PresetsView
    from gui.documents.documents_view import DocumentsView
    from gui.inbox.inbox_model import InboxModel
    from gui.run.run_controller import RunController
    from gui.run.runs_view import RunsView


@dataclass
class BuiltViews:
    """The views built so far, each with its own type (None until first shown or asked for)."""

    agents: AgentsView | None = None
    presets: PresetsView | None = None
    runs: RunsView | None = None
    documents: DocumentsView | None = None
    batches: BatchView | None = None


@dataclass(frozen=True)
class WindowServices:
    """The window's part in building a view: what it has and what a view may ask it to do."""

    prompts: Prompts
    settings: QSettings
    built: BuiltViews
    working_folder: Callable[[], Path]
    opening: Callable[[], bool]
    """True while the window is being built (the first view reads its files after the paint)."""
    after_first_paint: list[Callable[[], None]]
    """Start-up work run once the window has painted; a view may append to it."""
    controller: Callable[[], RunController]
    """The runs launched from the window (made on first use: it brings in the backends)."""
    inbox: Callable[[], InboxModel]
    show_view: Callable[[str], None]
    open_run: Callable[[str], None]
    """Show a saved run, by id, in the Runs view."""
    show_batch: Callable[[str | None], None]
    launch: Callable[[str | None], object]
    """The launch dialog, on a preset when one is named."""
    update_title: Callable[[bool], None]


@dataclass(frozen=True)
class MenuCommands:
    """What the menu items do: each is one of the window's public methods."""

    new_agent: Callable[[], object]
    save: Callable[[], object]
    open_run_file: Callable[[], object]
    settings: Callable[[], object]
    quit: Callable[[], object]
    new_run: Callable[[], object]
    cancel_run: Callable[[], object]
    shortcuts: Callable[[], object]
    welcome: Callable[[], object]
    go_to_view: Callable[[str], object]
    open_folder: Callable[[], object]
    fill_recent_menu: Callable[[QMenu], object]
    """Fill File ▸ Open Recent with the recent projects (called as the menu opens)."""
