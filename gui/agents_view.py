"""The Agents view: the grouped list and its problems on the left, the editor on the right.

The view owns the working folder's :class:`~core.agents.AgentCatalog` and re-reads it whenever
the watched folders change, after a save, and after New / Duplicate / Delete. Discovery is
cheap (1,000 files well under a second), so it runs on the GUI thread. Rows are tracked by
path, so a refresh keeps the selection and the open file.

Unsaved edits are never dropped silently: switching agents, creating one and closing the
window all go through :meth:`AgentsView.maybe_discard_changes`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QFile, QSettings, QStandardPaths, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core import paths
from core.agents import PROJECT_AGENT_DIRS, AgentCatalog, AgentDefinition, discover_agents
from core.atomic import atomic_write_text
from gui import agent_files, file_state, icons
from gui.agent_header import AgentHeader
from gui.agent_list import AgentList
from gui.agent_rows import SOURCE_LABELS
from gui.definition_editor import DefinitionEditor
from gui.diagnostics_panel import DiagnosticsPanel
from gui.file_watch import FolderWatcher
from gui.new_agent_dialog import Scope
from gui.prompts import Prompts, UnsavedChoice
from gui.validators import validate_agent_text
from gui.widgets import Banner, EmptyState, PaneHeader


class AgentsView(QWidget):
    """See the module docstring. All signals are emitted on the GUI thread."""

    dirtyChanged = Signal(bool)
    """The open file gained (True) or lost (False) unsaved edits."""
    catalogChanged = Signal()
    """The catalog was re-read (:attr:`catalog` is the new one)."""

    def __init__(
        self,
        prompts: Prompts,
        settings: QSettings,
        working_folder: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.prompts = prompts
        self._settings = settings
        self._working_folder = Path(working_folder or Path.cwd())
        self._catalog = AgentCatalog()
        self._by_path: dict[str, AgentDefinition] = {}

        # Left: header, filter, list, problems.
        self.list_header = PaneHeader("Agents")
        self.new_button = self.list_header.add_button("add", "New agent (Ctrl+N)", self.new_agent)
        self.filter_field = QLineEdit()
        self.filter_field.setObjectName("FilterField")
        self.filter_field.setPlaceholderText("Filter agents")
        self.filter_field.setClearButtonEnabled(True)
        self.filter_field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.agent_list = AgentList()
        self.diagnostics = DiagnosticsPanel()
        filter_box = QWidget()
        filter_layout = QVBoxLayout(filter_box)
        filter_layout.setContentsMargins(8, 8, 8, 4)
        filter_layout.addWidget(self.filter_field)
        left = QWidget()
        left.setObjectName("AgentsLeftPane")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addWidget(self.list_header)
        left_layout.addWidget(filter_box)
        left_layout.addWidget(self.agent_list, 1)
        left_layout.addWidget(self.diagnostics)

        # Right: an empty state, or the header + read-only note + editor.
        self.header = AgentHeader()
        self.readonly_banner = Banner()
        self.editor = DefinitionEditor(validate_agent_text, prompts)
        editor_page = QWidget()
        editor_layout = QVBoxLayout(editor_page)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.setSpacing(0)
        editor_layout.addWidget(self.header)
        editor_layout.addWidget(self.readonly_banner)
        editor_layout.addWidget(self.editor, 1)
        self.empty_state = EmptyState(
            "nav-agents",
            "No agent selected",
            "Pick an agent on the left to read or edit it, or press Ctrl+N to create one.",
        )
        self.right = QStackedWidget()
        self.right.addWidget(self.empty_state)
        self.right.addWidget(editor_page)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("AgentsSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 770])
        left.setMinimumWidth(240)
        self.right.setMinimumWidth(320)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.watcher = FolderWatcher(parent=self)
        self.watcher.changed.connect(self.refresh)
        self.filter_field.textChanged.connect(self.agent_list.set_filter)
        self.agent_list.currentPathChanged.connect(self._on_list_selection)
        self.diagnostics.openRequested.connect(self._on_open_diagnostic)
        self.editor.dirtyChanged.connect(self._on_dirty_changed)
        self.editor.fileSaved.connect(lambda _path: self.refresh())
        self.header.save_button.clicked.connect(self.save_current)
        self.header.duplicate_button.clicked.connect(self.duplicate_current)
        self.header.delete_button.clicked.connect(self.delete_current)

        find = QAction(self)
        find.setShortcut("Ctrl+F")
        find.triggered.connect(lambda: self.filter_field.setFocus())
        self.addAction(find)

        self.refresh()

    # -- public API ----------------------------------------------------------------------

    @property
    def working_folder(self) -> Path:
        return self._working_folder

    @working_folder.setter
    def working_folder(self, folder: Path) -> None:
        self._working_folder = Path(folder)
        self.refresh()

    @property
    def catalog(self) -> AgentCatalog:
        return self._catalog

    def refresh(self) -> None:
        """Re-read every agent folder and update the list, the problems and the editor."""
        self._catalog = discover_agents(self._working_folder, "both")
        self._by_path = {
            a.path: a for a in [*self._catalog.shadowed, *self._catalog.agents] if a.path
        }
        self.agent_list.set_catalog(self._catalog)
        self.diagnostics.set_diagnostics(self._catalog.diagnostics)
        self._rewatch()
        path = self.editor.path()
        if path is not None:
            if not path.exists() and not self.editor.is_dirty():
                self._show_empty()
            else:
                self.editor.check_disk()
                self._describe(path)
        self.catalogChanged.emit()

    def open_path(self, path: Path, line: int = 0) -> bool:
        """Open ``path`` in the editor (asking about unsaved edits first)."""
        current = self.editor.path()
        if current is not None and current == Path(path):
            if line:
                self.editor.text_edit.go_to_line(line)
            return True
        if not self.maybe_discard_changes():
            return False
        self.agent_list.select_path(str(path), quiet=True)
        self._open(Path(path), line)
        return True

    def maybe_discard_changes(self) -> bool:
        """True when it is fine to leave the open file (saved, discarded or unchanged)."""
        if not self.editor.is_dirty():
            return True
        path = self.editor.path()
        title = self.header.title.text() or (path.name if path else "this file")
        choice = self.prompts.unsaved_changes(title)
        if choice is UnsavedChoice.SAVE:
            return self.editor.save()
        return choice is UnsavedChoice.DISCARD

    def save_current(self) -> bool:
        return self.editor.save()

    def new_agent(self) -> None:
        if not self.maybe_discard_changes():
            return
        every = [*self._catalog.agents, *self._catalog.shadowed]
        taken: dict[Scope, list[str]] = {
            "user": [a.name for a in every if a.source == "user"],
            "project": [a.name for a in every if a.source == "project"],
        }
        request = self.prompts.new_agent(self._working_folder, taken)
        if request is None:
            return
        if not self._write_new(
            request.path, agent_files.template(request.name, request.description)
        ):
            return
        self._after_create(request.path)

    def duplicate_current(self) -> None:
        path = self.editor.path()
        if path is None or not self.maybe_discard_changes():
            return
        agent = self._by_path.get(str(path))
        source = agent.source if agent else self._source_of(path)
        name = agent.name if agent else path.stem
        every = [a.name for a in [*self._catalog.agents, *self._catalog.shadowed]]
        if source == "builtin":
            folder = agent_files.user_agents_dir()
            user_names = {a.key for a in self._by_path.values() if a.source == "user"}
            free = name.casefold() not in user_names
            target_stem = agent_files.file_stem(name)
            new_name = name if free else agent_files.copy_name(name, folder, every)
        else:
            folder = path.parent
            new_name = agent_files.copy_name(name, folder, every)
            target_stem = agent_files.file_stem(new_name)
        target = agent_files.unique_path(folder, target_stem)
        try:
            loaded = file_state.load(path)
        except OSError as error:
            self.prompts.show_error("Could not duplicate", f"Could not read {path}: {error}.")
            return
        text = loaded.text if new_name == name else agent_files.with_name(loaded.text, new_name)
        if self._write_new(target, file_state.encode(text, loaded.format)):
            self._after_create(target)

    def delete_current(self) -> None:
        path = self.editor.path()
        if path is None:
            return
        agent = self._by_path.get(str(path))
        if (agent.source if agent else self._source_of(path)) == "builtin":
            return
        if not self.prompts.confirm_delete(agent.name if agent else path.name, path):
            return
        if not _move_to_trash(path):
            if not self.prompts.confirm_delete_permanently(path):
                return
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            except OSError as error:
                self.prompts.show_error("Could not delete", f"Could not delete {path}: {error}.")
                return
        self._show_empty()
        self.refresh()

    def save_state(self) -> None:
        self._settings.setValue("agents/splitter", self.splitter.saveState())
        self._settings.setValue("agents/problemsExpanded", self.diagnostics.is_expanded())
        path = self.editor.path()
        self._settings.setValue("agents/openFile", str(path) if path else "")

    def restore_state(self) -> None:
        state = self._settings.value("agents/splitter")
        if isinstance(state, QByteArray | bytes):
            self.splitter.restoreState(QByteArray(state))
        expanded = self._settings.value("agents/problemsExpanded", True)
        self.diagnostics.set_expanded(expanded not in (False, "false", "0", 0))
        last = self._settings.value("agents/openFile", "")
        if isinstance(last, str) and last and Path(last).is_file():
            self.open_path(Path(last))  # also a file that failed to load: it was being fixed

    def shutdown(self) -> None:
        """Stop watching the disk (before the window goes away)."""
        self.watcher.stop()

    def refresh_colors(self) -> None:
        self.editor.refresh_colors()
        self.agent_list.viewport().update()

    # -- private -------------------------------------------------------------------------

    def _rewatch(self) -> None:
        root = self._catalog.project_root or self._working_folder
        may_appear = [
            paths.pi_agent_dir() / "agents",
            agent_files.user_agents_dir(),
            *(root / sub for sub in PROJECT_AGENT_DIRS),
        ]
        folders = [f.path for f in self._catalog.folders if f.source != "builtin"]
        self.watcher.watch(folders, may_appear)

    def _source_of(self, path: Path) -> str:
        for folder in self._catalog.folders:
            if path.parent == folder.path:
                return folder.source
        return "user"

    def _open(self, path: Path, line: int = 0) -> None:
        agent = self._by_path.get(str(path))
        source = agent.source if agent else self._source_of(path)
        read_only = source == "builtin"
        self.editor.open_file(path, read_only)
        self._describe(path)
        self.right.setCurrentIndex(1)
        if line:
            self.editor.text_edit.go_to_line(line)

    def _describe(self, path: Path) -> None:
        """Fill the header (and read-only note) for the open ``path`` from the catalog."""
        agent = self._by_path.get(str(path))
        source = agent.source if agent else self._source_of(path)
        override = ""
        if agent is not None and agent.overrides:
            below = self._by_path.get(agent.overrides)
            override = f"overrides {SOURCE_LABELS[below.source].lower()}" if below else "overrides"
        elif agent is not None and agent not in self._catalog.agents:
            winner = self._catalog.get(agent.name)
            if winner is not None:
                override = f"shadowed by {SOURCE_LABELS[winner.source].lower()}"
        self.header.show_agent(agent, str(path), source, override)
        self.header.set_dirty(self.editor.is_dirty())
        if source == "builtin":
            self.readonly_banner.show_message(
                "info",
                "Built-in agents are read-only. Duplicate this one to get an editable copy in "
                "your user folder; it then replaces the built-in.",
                [("Duplicate", self.duplicate_current)],
                icon_name="lock",
            )
        else:
            self.readonly_banner.hide()

    def _show_empty(self) -> None:
        self.editor.clear()
        self.agent_list.select_path(None, quiet=True)
        self.right.setCurrentIndex(0)
        self.header.set_dirty(False)

    def _write_new(self, path: Path, text: str) -> bool:
        if path.exists():  # unique_path() avoids this; a race with another program does not
            self.prompts.show_error("Could not create the file", f"{path} already exists.")
            return False
        try:
            atomic_write_text(path, text)
        except OSError as error:
            self.prompts.show_error("Could not create the file", f"{path}: {error}.")
            return False
        return True

    def _after_create(self, path: Path) -> None:
        self.editor.clear()
        self.refresh()
        self.agent_list.select_path(str(path), quiet=True)
        self._open(path)
        self.editor.text_edit.setFocus()

    def _on_list_selection(self, path: str) -> None:
        current = self.editor.path()
        if current is not None and str(current) == path:
            return
        if not self.maybe_discard_changes():
            self.agent_list.select_path(str(current) if current else None, quiet=True)
            return
        if path:
            self._open(Path(path))
        else:
            self._show_empty()

    def _on_open_diagnostic(self, path: str, line: int) -> None:
        if Path(path).is_file():
            self.open_path(Path(path), line)

    def _on_dirty_changed(self, dirty: bool) -> None:
        self.header.set_dirty(dirty)
        self.dirtyChanged.emit(dirty)


def _move_to_trash(path: Path) -> bool:
    """Move ``path`` to the desktop trash; False when there is no usable trash."""
    # Qt does not create the XDG data folder that holds the trash; a fresh account lacks it.
    data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    if data:
        with contextlib.suppress(OSError):
            Path(data).mkdir(parents=True, exist_ok=True)
    result = QFile.moveToTrash(str(path))  # bool, or (bool, path) in some PySide6 versions
    return bool(result[0] if isinstance(result, tuple) else result)
