"""The Presets view: the grouped list on the left, the selected preset's file on the right.

It mirrors the Agents view on purpose — same list, same editor, same rules — so a person who
learnt one knows the other; the shared machine is
:class:`gui.definitions.definitions_view.DefinitionsView`. What is particular to presets:

* built-in / user / project groups (:mod:`gui.definitions.preset_list`) list every file, also the
replaced
  and broken ones, read by :func:`~gui.definitions.preset_list.read_preset_files`;
* the editor is in YAML mode, validated as you type against the agents visible from the
  working folder (:func:`~core.definitions.preset_files.validate_preset_text`), so a refresh
  re-validates;
* New asks only for a name (presets are created in ``<config>/presets/``);
* "Run…" asks the window to open the launch dialog on the preset (:attr:`runRequested`);
* preset files are also watched one by one: an in-place edit of a ``*.yaml`` file does not
  change its folder;
* beside the text, a step editor (:class:`~gui.definitions.preset_form.PresetForm`) adds,
  removes and connects steps by editing the text (so validation, saving and the on-disk change
  warning stay the text editor's), and the header's graph follows the text as it is edited.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QInputDialog, QSplitter, QWidget

from core.definitions import preset_files
from core.definitions.agents import AgentCatalog, Diagnostic, discover_agents, find_project_root
from core.definitions.checks import Problem
from core.definitions.presets import (
    PROJECT_PRESET_DIR,
    PresetCatalog,
    PresetError,
    agent_diagnostics,
    discover_presets,
    parse_preset_text,
)
from gui.definitions.definitions_view import DefinitionsView
from gui.definitions.parse_caches import AGENT_FILES, PRESET_FILES
from gui.definitions.preset_chain import draw_preset
from gui.definitions.preset_form import PresetForm
from gui.definitions.preset_header import PresetHeader
from gui.definitions.preset_list import PresetFile, PresetList, read_preset_files
from gui.widgets.prompts import Prompts

if TYPE_CHECKING:
    from gui.definitions.definition_editor import DefinitionEditor

FORM_DELAY_MS = 200
"""A hand edit of the text reaches the step editor and the graph after this pause."""


class PresetsView(DefinitionsView):
    """See the module docstring. All signals are emitted on the GUI thread."""

    runRequested = Signal(str)
    """Open the launch dialog on the preset with this name."""

    header: PresetHeader
    noun = "preset"
    new_tooltip = "New preset"
    empty_icon = "nav-presets"
    empty_text = (
        "A preset is a named run: its mode, agents and tasks. Pick one on the left to read "
        "it, edit it or run it."
    )
    editor_mode = "yaml"
    find_context = Qt.ShortcutContext.WidgetWithChildrenShortcut

    def __init__(
        self,
        prompts: Prompts,
        settings: QSettings,
        working_folder: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        preset_list = PresetList()
        super().__init__(prompts, settings, working_folder, parent, preset_list, PresetHeader())
        self.preset_list = preset_list
        self._catalog = PresetCatalog()
        self._agents = AgentCatalog()
        self._files: dict[str, PresetFile] = {}
        self.step_form = PresetForm()
        self.step_form.textEdited.connect(self._write_form_text)
        self._writing_form_text = False
        self._form_timer = QTimer(self)
        self._form_timer.setSingleShot(True)
        self._form_timer.setInterval(FORM_DELAY_MS)
        self._form_timer.timeout.connect(self._text_changed)
        self._file_watcher = QFileSystemWatcher(self)  # in-place edits of *.yaml files
        self._file_watcher.fileChanged.connect(lambda _path: self.watcher.changed.emit())
        self.header.run_button.clicked.connect(self.run_current)
        self.refresh()

    # -- public API ----------------------------------------------------------------------

    @property
    def catalog(self) -> PresetCatalog:
        return self._catalog

    @property
    def editor(self) -> DefinitionEditor:
        """The text editor, with the step editor beside it (both built on first use)."""
        if self._editor is None:
            editor = super().editor
            self._editor_layout.removeWidget(editor)
            self.editor_splitter = QSplitter(Qt.Orientation.Horizontal)
            self.editor_splitter.setObjectName("PresetEditorSplitter")
            self.editor_splitter.setChildrenCollapsible(False)
            self.editor_splitter.addWidget(editor)
            self.editor_splitter.addWidget(self.step_form)
            self.editor_splitter.setStretchFactor(0, 3)
            self.editor_splitter.setStretchFactor(1, 2)
            self._editor_layout.addWidget(self.editor_splitter, 1)
            editor.text_edit.document().contentsChanged.connect(self._on_text_edited)
            return editor
        return self._editor

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
        super().shutdown()
        watched = self._file_watcher.files()
        if watched:
            self._file_watcher.removePaths(watched)

    # -- DefinitionsView hooks -----------------------------------------------------------

    def _read(self, folder: Path) -> Callable[[], None]:
        """Presets and the agents their steps name (a step's agent may have come or gone)."""
        agents = discover_agents(folder, "both", AGENT_FILES)
        catalog = discover_presets(folder, "both", PRESET_FILES)
        files = read_preset_files(folder, PRESET_FILES)
        problems = catalog.diagnostics + agent_diagnostics(catalog, agents)
        return lambda: self._show(agents, catalog, files, problems)

    def _show(
        self,
        agents: AgentCatalog,
        catalog: PresetCatalog,
        files: list[PresetFile],
        problems: list[Diagnostic],
    ) -> None:
        """Show what a read found: the list, the problems, the open file."""
        self._agents = agents
        self._catalog = catalog
        self.step_form.set_agents(agents.names())
        self._files = {str(f.path): f for f in files}
        self.preset_list.set_presets(files, catalog, problems)
        self.diagnostics.set_diagnostics(problems)
        self._rewatch(files)
        self._sync_open_file(revalidate=True)  # agents may have changed

    def _validate(self, text: str) -> list[Problem]:
        return preset_files.validate_preset_text(text, self._agents)

    def _source_for(self, path: Path) -> str:
        file = self._files.get(str(path))
        return file.source if file else "user"

    def _name_for(self, path: Path) -> str | None:
        file = self._files.get(str(path))
        return file.preset.name if file and file.preset else None

    def _show_header(self, path: Path, source: str) -> None:
        file = self._files.get(str(path))
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
        if self.editor.path() == path:
            self._text_changed()

    def _copy_plan(self, path: Path, name: str) -> tuple[Path, str]:
        """A built-in's copy keeps its name when no user preset has it (so it replaces the
        built-in); any other copy gets a name no preset has."""
        user_names = [
            f.preset.name for f in self._files.values() if f.preset and f.source == "user"
        ]
        every = [f.preset.name for f in self._files.values() if f.preset]
        if self._source_for(path) == "builtin":
            folder = preset_files.user_presets_dir()
            free = name.casefold() not in {n.casefold() for n in user_names}
            new_name = name if free else preset_files.copy_name(name, every)
        else:
            folder = path.parent
            new_name = preset_files.copy_name(name, every)
        return preset_files.unique_path(folder, preset_files.file_stem(new_name)), new_name

    def _with_name(self, text: str, new_name: str) -> str:
        return preset_files.with_name(text, new_name)

    def _new_clicked(self) -> None:
        self.new_preset()

    def _confirm_delete(self, name: str, path: Path) -> bool:
        return self.prompts.confirm_delete(name, path, noun="preset")

    # -- private -------------------------------------------------------------------------

    def _on_text_edited(self) -> None:
        if not self._writing_form_text:
            self._form_timer.start()

    def _text_changed(self) -> None:
        """The text changed (or a file opened): the step editor and the graph follow it. A
        text that does not parse keeps the last graph drawn; the problems list says why."""
        self._form_timer.stop()
        text = self.editor.text()
        self.step_form.load(text, self.editor.is_read_only())
        self._redraw_graph(text)

    def _redraw_graph(self, text: str) -> None:
        try:
            preset = parse_preset_text(text)
        except PresetError:
            return
        draw_preset(self.header.graph, preset, self._agents)

    def _write_form_text(self, text: str) -> None:
        """The step editor's change, into the text as one undoable edit."""
        if text == self.editor.text():
            return
        cursor = QTextCursor(self.editor.text_edit.document())
        self._writing_form_text = True
        try:
            cursor.beginEditBlock()
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(text)
            cursor.endEditBlock()
        finally:
            self._writing_form_text = False
        self._redraw_graph(text)

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
