"""The Presets view: the grouped list on the left, the selected preset's file on the right.

It mirrors the Agents view on purpose — same list, same editor, same rules — so a person who
learnt one knows the other:

* built-in / user / project groups (:mod:`gui.preset_list`), problems of files that do not
  load underneath;
* the :class:`gui.definition_editor.DefinitionEditor` in YAML mode, validated as you type
  against the agents visible from the working folder (:func:`validate_preset_text`), saved
  atomically with the conflict prompt;
* New / Duplicate / Delete; built-ins are read-only and Duplicate makes an editable copy in
  ``<config>/presets/``;
* "Run…" asks the window to open the launch dialog on the preset (:attr:`runRequested`).

The folders are watched; the catalog is re-read on any change, after a save and after New /
Duplicate / Delete. Unsaved edits are never dropped silently (:meth:`maybe_discard_changes`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from PySide6.QtCore import QFile, QFileSystemWatcher, QSettings, QStandardPaths, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.agents import AgentCatalog, discover_agents, find_project_root
from core.atomic import atomic_write_text
from core.presets import PROJECT_PRESET_DIR, PresetCatalog, discover_presets
from gui import file_state, icons, preset_files
from gui.definition_editor import DefinitionEditor
from gui.diagnostics_panel import DiagnosticsPanel
from gui.file_watch import FolderWatcher
from gui.preset_header import PresetHeader
from gui.preset_list import PresetFile, PresetList, read_preset_files
from gui.prompts import Prompts, UnsavedChoice
from gui.validators import Problem
from gui.widgets import Banner, EmptyState, PaneHeader


class PresetsView(QWidget):
    """See the module docstring. All signals are emitted on the GUI thread."""

    dirtyChanged = Signal(bool)
    runRequested = Signal(str)
    """Open the launch dialog on the preset with this name."""

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
        self._catalog = PresetCatalog()
        self._agents = AgentCatalog()
        self._files: dict[str, PresetFile] = {}

        self.list_header = PaneHeader("Presets")
        self.new_button = self.list_header.add_button("add", "New preset", self._new_clicked)
        self.filter_field = QLineEdit()
        self.filter_field.setObjectName("FilterField")
        self.filter_field.setPlaceholderText("Filter presets")
        self.filter_field.setClearButtonEnabled(True)
        self.filter_field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.preset_list = PresetList()
        self.diagnostics = DiagnosticsPanel()
        filter_box = QWidget()
        filter_layout = QVBoxLayout(filter_box)
        filter_layout.setContentsMargins(8, 8, 8, 4)
        filter_layout.addWidget(self.filter_field)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addWidget(self.list_header)
        left_layout.addWidget(filter_box)
        left_layout.addWidget(self.preset_list, 1)
        left_layout.addWidget(self.diagnostics)

        self.header = PresetHeader()
        self.readonly_banner = Banner()
        self.editor = DefinitionEditor(self._validate, prompts, mode="yaml")
        editor_page = QWidget()
        editor_layout = QVBoxLayout(editor_page)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.setSpacing(0)
        editor_layout.addWidget(self.header)
        editor_layout.addWidget(self.readonly_banner)
        editor_layout.addWidget(self.editor, 1)
        self.empty_state = EmptyState(
            "nav-presets",
            "No preset selected",
            "A preset is a named run: its mode, agents and tasks. Pick one on the left to read "
            "it, edit it or run it.",
        )
        self.right = QStackedWidget()
        self.right.addWidget(self.empty_state)
        self.right.addWidget(editor_page)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 770])
        left.setMinimumWidth(240)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.watcher = FolderWatcher(parent=self)
        self.watcher.changed.connect(self.refresh)
        self._file_watcher = QFileSystemWatcher(self)  # in-place edits of *.yaml files
        self._file_watcher.fileChanged.connect(lambda _path: self.watcher.changed.emit())
        self.filter_field.textChanged.connect(self.preset_list.set_filter)
        self.preset_list.currentPathChanged.connect(self._on_list_selection)
        self.diagnostics.openRequested.connect(lambda path, line: self.open_path(Path(path), line))
        self.editor.dirtyChanged.connect(self._on_dirty_changed)
        self.editor.fileSaved.connect(lambda _path: self.refresh())
        self.header.save_button.clicked.connect(self.save_current)
        self.header.duplicate_button.clicked.connect(self._duplicate_clicked)
        self.header.delete_button.clicked.connect(self.delete_current)
        self.header.run_button.clicked.connect(self.run_current)
        find = QAction(self)
        find.setShortcut("Ctrl+F")
        find.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
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
    def catalog(self) -> PresetCatalog:
        return self._catalog

    def refresh(self) -> None:
        """Re-read presets and agents; update the list, the problems and the open file."""
        self._agents = discover_agents(self._working_folder, "both")
        self._catalog = discover_presets(self._working_folder, "both")
        files = read_preset_files(self._working_folder)
        self._files = {str(f.path): f for f in files}
        self.preset_list.set_presets(files, self._catalog)
        self.diagnostics.set_diagnostics(self._catalog.diagnostics)
        self._rewatch(files)
        path = self.editor.path()
        if path is not None:
            if not path.exists() and not self.editor.is_dirty():
                self._show_empty()
            else:
                self.editor.check_disk()
                self.editor.validate_now()  # agents may have changed
                self._describe(path)

    def open_path(self, path: Path, line: int = 0) -> bool:
        current = self.editor.path()
        if current is not None and current == Path(path):
            if line:
                self.editor.text_edit.go_to_line(line)
            return True
        if not self.maybe_discard_changes():
            return False
        self.preset_list.select_path(str(path), quiet=True)
        self._open(Path(path), line)
        return True

    def maybe_discard_changes(self) -> bool:
        if not self.editor.is_dirty():
            return True
        path = self.editor.path()
        choice = self.prompts.unsaved_changes(self.header.title.text() or str(path))
        if choice is UnsavedChoice.SAVE:
            return self.editor.save()
        return choice is UnsavedChoice.DISCARD

    def save_current(self) -> bool:
        return self.editor.save()

    def new_preset(self) -> Path | None:
        if not self.maybe_discard_changes():
            return None
        taken = [f.preset.name for f in self._files.values() if f.preset and f.source == "user"]
        name = self._ask_name(taken)
        if name is None:
            return None
        folder = preset_files.user_presets_dir()
        path = preset_files.unique_path(folder, preset_files.file_stem(name))
        return self._create(path, preset_files.template(name))

    def duplicate_current(self) -> Path | None:
        path = self.editor.path()
        if path is None or not self.maybe_discard_changes():
            return None
        file = self._files.get(str(path))
        source = file.source if file else "user"
        name = file.preset.name if file and file.preset else path.stem
        user_names = [
            f.preset.name for f in self._files.values() if f.preset and f.source == "user"
        ]
        every = [f.preset.name for f in self._files.values() if f.preset]
        if source == "builtin":
            folder = preset_files.user_presets_dir()
            free = name.casefold() not in {n.casefold() for n in user_names}
            new_name = name if free else preset_files.copy_name(name, every)
        else:
            folder = path.parent
            new_name = preset_files.copy_name(name, every)
        target = preset_files.unique_path(folder, preset_files.file_stem(new_name))
        try:
            loaded = file_state.load(path)
        except OSError as error:
            self.prompts.show_error("Could not duplicate", f"Could not read {path}: {error}.")
            return None
        text = loaded.text if new_name == name else preset_files.with_name(loaded.text, new_name)
        return self._create(target, file_state.encode(text, loaded.format))

    def delete_current(self) -> bool:
        path = self.editor.path()
        if path is None:
            return False
        file = self._files.get(str(path))
        if file is not None and file.source == "builtin":
            return False
        name = file.preset.name if file and file.preset else path.name
        if not self._confirm_delete(name, path):
            return False
        if not _move_to_trash(path):
            if not self.prompts.confirm_delete_permanently(path):
                return False
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            except OSError as error:
                self.prompts.show_error("Could not delete", f"Could not delete {path}: {error}.")
                return False
        self._show_empty()
        self.refresh()
        return True

    def run_current(self) -> None:
        """Ask for the launch dialog on the open preset (saving or discarding edits first)."""
        path = self.editor.path()
        if path is None or not self.maybe_discard_changes():
            return
        self.refresh()
        file = self._files.get(str(path))
        if file is not None and file.preset is not None:
            self.runRequested.emit(file.preset.name)

    def shutdown(self) -> None:
        self.watcher.stop()
        watched = self._file_watcher.files()
        if watched:
            self._file_watcher.removePaths(watched)

    # -- private -------------------------------------------------------------------------

    def _validate(self, text: str) -> list[Problem]:
        return preset_files.validate_preset_text(text, self._agents)

    def _rewatch(self, files: list[PresetFile]) -> None:
        root = find_project_root(self._working_folder, (PROJECT_PRESET_DIR,))
        may_appear = [
            preset_files.user_presets_dir(),
            (root or self._working_folder) / PROJECT_PRESET_DIR,
        ]
        folders = {f.path.parent for f in files if f.source != "builtin"}
        self.watcher.watch(sorted(folders), may_appear)
        wanted = {str(f.path) for f in files if f.source != "builtin"}
        current = set(self._file_watcher.files())
        if current - wanted:
            self._file_watcher.removePaths(sorted(current - wanted))
        if wanted - current:
            self._file_watcher.addPaths(sorted(wanted - current))

    def _open(self, path: Path, line: int = 0) -> None:
        file = self._files.get(str(path))
        self.editor.open_file(path, read_only=file is not None and file.source == "builtin")
        self._describe(path)
        self.right.setCurrentIndex(1)
        if line:
            self.editor.text_edit.go_to_line(line)

    def _describe(self, path: Path) -> None:
        file = self._files.get(str(path))
        source = file.source if file else "user"
        preset = file.preset if file else None
        override = ""
        if preset is not None:
            winner = self._catalog.get(preset.name)
            if winner is not None and winner.path != str(path):
                override = f"replaced by {winner.source}"
            elif source != "builtin" and any(
                f.source == "builtin" and f.preset and f.preset.key == preset.key
                for f in self._files.values()
            ):
                override = "overrides built-in"
        self.header.show_preset(preset, str(path), source, self._agents, override)
        self.header.set_dirty(self.editor.is_dirty())
        if source == "builtin":
            self.readonly_banner.show_message(
                "info",
                "Built-in presets are read-only. Duplicate this one to get an editable copy in "
                "your user folder; it then replaces the built-in.",
                [("Duplicate", self._duplicate_clicked)],
                icon_name="lock",
            )
        else:
            self.readonly_banner.hide()

    def _show_empty(self) -> None:
        self.editor.clear()
        self.preset_list.select_path(None, quiet=True)
        self.right.setCurrentIndex(0)
        self.header.set_dirty(False)

    def _create(self, path: Path, text: str) -> Path | None:
        if path.exists():
            self.prompts.show_error("Could not create the file", f"{path} already exists.")
            return None
        try:
            atomic_write_text(path, text)
        except OSError as error:
            self.prompts.show_error("Could not create the file", f"{path}: {error}.")
            return None
        self.editor.clear()
        self.refresh()
        self.preset_list.select_path(str(path), quiet=True)
        self._open(path)
        self.editor.text_edit.setFocus()
        return path

    def _ask_name(self, taken: list[str]) -> str | None:
        dialog = QInputDialog(self)
        dialog.setObjectName("NewPresetDialog")
        dialog.setWindowTitle("New preset")
        dialog.setLabelText("Name of the new preset (saved in your user folder):")
        dialog.setTextValue("")
        while dialog.exec():
            name = dialog.textValue().strip()
            problem = preset_files.name_problem(name, taken)
            if problem is None:
                return name
            self.prompts.show_error("Choose another name", problem)
        return None

    def _confirm_delete(self, name: str, path: Path) -> bool:
        box = QMessageBox(self)
        box.setObjectName("DeletePrompt")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete preset")
        box.setText(f"Delete the preset “{name}”?")
        box.setInformativeText(f"The file {path} is moved to the trash.")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is delete

    def _on_list_selection(self, path: str) -> None:
        current = self.editor.path()
        if current is not None and str(current) == path:
            return
        if not self.maybe_discard_changes():
            self.preset_list.select_path(str(current) if current else None, quiet=True)
            return
        if path:
            self._open(Path(path))
        else:
            self._show_empty()

    def _new_clicked(self) -> None:
        self.new_preset()

    def _duplicate_clicked(self) -> None:
        self.duplicate_current()

    def _on_dirty_changed(self, dirty: bool) -> None:
        self.header.set_dirty(dirty)
        self.dirtyChanged.emit(dirty)


def _move_to_trash(path: Path) -> bool:
    """Move ``path`` to the desktop trash; False when there is no usable trash."""
    data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    if data:
        with contextlib.suppress(OSError):
            Path(data).mkdir(parents=True, exist_ok=True)
    result = QFile.moveToTrash(str(path))
    return bool(result[0] if isinstance(result, tuple) else result)
