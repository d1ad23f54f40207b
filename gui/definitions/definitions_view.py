"""What the Agents and Presets views share: a view of definition files.

Both views are the same machine on purpose, so a person who learnt one knows the other: a
grouped list with its problems on the left; on the right an empty state, or a header, a
read-only note for built-ins and a :class:`~gui.definitions.definition_editor.DefinitionEditor`;
New /
Duplicate / Delete; folder watching; and the rule that unsaved edits are never dropped
silently (:meth:`DefinitionsView.maybe_discard_changes`). :class:`DefinitionsView` holds that
machine once; :class:`gui.definitions.agents_view.AgentsView` and
:class:`gui.definitions.presets_view.PresetsView` say
only what differs: how files are found, parsed and validated, how a header describes one, how a
new one is named, and how a copy is named.

Rows and the open file are tracked by path, so a refresh keeps the selection and the editor.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from gui.definitions.agent_list import AgentList
from gui.definitions.background_read import BackgroundRead
from gui.definitions.definition_header import DefinitionHeader
from gui.definitions.diagnostics_panel import DiagnosticsPanel
from gui.definitions.file_watch import FolderWatcher
from gui.theme import icons
from gui.widgets import Banner, EmptyState, PaneHeader
from gui.widgets.prompts import Prompts, UnsavedChoice

if TYPE_CHECKING:  # built on first use (see DefinitionsView.editor), with its checks
    from core.definitions.checks import Problem
    from gui.definitions.definition_editor import DefinitionEditor
    from gui.definitions.highlighters import Mode


class DefinitionsView(QWidget):
    """See the module docstring. Subclasses set the class attributes and the hooks below,
    then call :meth:`refresh` at the end of their ``__init__`` (once their own state exists).
    All signals are emitted on the GUI thread."""

    dirtyChanged = Signal(bool)
    """The open file gained (True) or lost (False) unsaved edits."""

    noun: ClassVar[str] = "definition"
    """One of them, lower case ("agent"): labels, the empty state, the read-only note."""
    new_tooltip: ClassVar[str] = ""
    empty_icon: ClassVar[str] = ""
    empty_text: ClassVar[str] = ""
    editor_mode: ClassVar[Mode] = "frontmatter"
    right_min_width: ClassVar[int] = 0
    find_context: ClassVar[Qt.ShortcutContext] = Qt.ShortcutContext.WindowShortcut
    """Where Ctrl+F (focus the filter) works."""

    def __init__(
        self,
        prompts: Prompts,
        settings: QSettings,
        working_folder: Path | None,
        parent: QWidget | None,
        definition_list: AgentList,
        header: DefinitionHeader,
    ) -> None:
        super().__init__(parent)
        self.prompts = prompts
        self._settings = settings
        self._working_folder = Path(working_folder or Path.cwd())
        self._list = definition_list
        plural = f"{self.noun.capitalize()}s"

        # Left: header, filter, list, problems.
        self.list_header = PaneHeader(plural)
        self.new_button = self.list_header.add_button("add", self.new_tooltip, self._new_clicked)
        self.filter_field = QLineEdit()
        self.filter_field.setObjectName("FilterField")
        self.filter_field.setPlaceholderText(f"Filter {self.noun}s")
        self.filter_field.setClearButtonEnabled(True)
        self.filter_field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.diagnostics = DiagnosticsPanel()
        filter_box = QWidget()
        filter_layout = QVBoxLayout(filter_box)
        filter_layout.setContentsMargins(8, 8, 8, 4)
        filter_layout.addWidget(self.filter_field)
        left = QWidget()
        left.setObjectName(f"{plural}LeftPane")
        left_layout = self.left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addWidget(self.list_header)
        left_layout.addWidget(filter_box)
        left_layout.addWidget(definition_list, 1)
        left_layout.addWidget(self.diagnostics)

        # Right: an empty state, or the header + read-only note + editor.
        self.header = header
        self.readonly_banner = Banner()
        self._editor: DefinitionEditor | None = None
        editor_page = QWidget()
        self._editor_layout = QVBoxLayout(editor_page)
        self._editor_layout.setContentsMargins(0, 0, 0, 0)
        self._editor_layout.setSpacing(0)
        self._editor_layout.addWidget(header)
        self._editor_layout.addWidget(self.readonly_banner)
        self.empty_state = EmptyState(self.empty_icon, f"No {self.noun} selected", self.empty_text)
        self.right = QStackedWidget()
        self.right.addWidget(self.empty_state)
        self.right.addWidget(editor_page)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName(f"{plural}Splitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 770])
        left.setMinimumWidth(240)
        if self.right_min_width:
            self.right.setMinimumWidth(self.right_min_width)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.watcher = FolderWatcher(parent=self)
        self._background = BackgroundRead(lambda: self._read(self._working_folder), self)
        self.watcher.changed.connect(self._background.request)
        self.filter_field.textChanged.connect(definition_list.set_filter)
        definition_list.currentPathChanged.connect(self._on_list_selection)
        self.diagnostics.openRequested.connect(self._on_open_diagnostic)
        header.save_button.clicked.connect(self.save_current)
        header.duplicate_button.clicked.connect(self._duplicate_clicked)
        header.delete_button.clicked.connect(self.delete_current)

        find = QAction(self)
        find.setShortcut("Ctrl+F")
        find.setShortcutContext(self.find_context)
        find.triggered.connect(lambda: self.filter_field.setFocus())
        self.addAction(find)

    @property
    def editor(self) -> DefinitionEditor:
        """The editor of the open file, built when first needed: the view opens on its empty
        state, so the editor (its text widget, highlighter and their modules) is not part of
        the window's first paint."""
        if self._editor is None:
            from gui.definitions.definition_editor import DefinitionEditor

            editor = DefinitionEditor(self._validate, self.prompts, mode=self.editor_mode)
            self._editor_layout.addWidget(editor, 1)
            editor.dirtyChanged.connect(self._on_dirty_changed)
            editor.fileSaved.connect(lambda _path: self.refresh())
            self._editor = editor
        return self._editor

    # -- hooks for subclasses ------------------------------------------------------------

    def _read(self, folder: Path) -> Callable[[], None]:
        """Read the files visible from ``folder`` and return what shows them (list, problems,
        open file). The read may run on a worker thread: it must not touch widgets; the
        function it returns runs on the GUI thread."""
        raise NotImplementedError

    def _validate(self, text: str) -> list[Problem]:
        """The editor's as-you-type check of ``text``."""
        raise NotImplementedError

    def _source_for(self, path: Path) -> str:
        """Where the file at ``path`` comes from ("builtin" files are read-only)."""
        raise NotImplementedError

    def _name_for(self, path: Path) -> str | None:
        """The definition's name in ``path`` (None: the file did not parse)."""
        raise NotImplementedError

    def _show_header(self, path: Path, source: str) -> None:
        """Describe the open ``path`` in :attr:`header`."""
        raise NotImplementedError

    def _copy_plan(self, path: Path, name: str) -> tuple[Path, str]:
        """Where a copy of ``path`` (named ``name``) goes, and the copy's name."""
        raise NotImplementedError

    def _with_name(self, text: str, new_name: str) -> str:
        """``text`` of a definition file, renamed to ``new_name``."""
        raise NotImplementedError

    def _new_clicked(self) -> None:
        raise NotImplementedError

    def _confirm_delete(self, name: str, path: Path) -> bool:
        return self.prompts.confirm_delete(name, path)

    def _on_open_diagnostic(self, path: str, line: int) -> None:
        self.open_path(Path(path), line)

    # -- public API ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the files now; update the list, the problems and the open file. (A change
        on disk re-reads them on a worker thread instead, see
        :mod:`gui.definitions.background_read`.)"""
        self._background.supersede()
        self._read(self._working_folder)()

    @property
    def working_folder(self) -> Path:
        return self._working_folder

    @working_folder.setter
    def working_folder(self, folder: Path) -> None:
        self._working_folder = Path(folder)
        self.refresh()

    def open_path(self, path: Path, line: int = 0) -> bool:
        """Open ``path`` in the editor (asking about unsaved edits first)."""
        current = self.editor.path()
        if current is not None and current == Path(path):
            if line:
                self.editor.text_edit.go_to_line(line)
            return True
        if not self.maybe_discard_changes():
            return False
        self._list.select_path(str(path), quiet=True)
        self._open(Path(path), line)
        return True

    def maybe_discard_changes(self) -> bool:
        """True when it is fine to leave the open file (saved, discarded or unchanged)."""
        if self._editor is None or not self._editor.is_dirty():
            return True
        path = self.editor.path()
        title = self.header.title.full_text() or (path.name if path else "this file")
        choice = self.prompts.unsaved_changes(title)
        if choice is UnsavedChoice.SAVE:
            return self.editor.save()
        return choice is UnsavedChoice.DISCARD

    def save_current(self) -> bool:
        return self.editor.save()

    def duplicate_current(self) -> Path | None:
        """Copy the open file (renamed when the name is taken); built-ins go to the user folder."""
        path = self.editor.path()
        if path is None or not self.maybe_discard_changes():
            return None
        name = self._name_for(path)
        name = name if name is not None else path.stem
        target, new_name = self._copy_plan(path, name)
        from core.workspace import file_state  # here: hashing files is not part of the first paint

        try:
            loaded = file_state.load(path)
        except OSError as error:
            self.prompts.show_error("Could not duplicate", f"Could not read {path}: {error}.")
            return None
        text = loaded.text if new_name == name else self._with_name(loaded.text, new_name)
        return self._create(target, file_state.encode(text, loaded.format))

    def delete_current(self) -> bool:
        """Move the open file to the trash (asking first); built-ins cannot be deleted."""
        path = self.editor.path()
        if path is None or self._source_for(path) == "builtin":
            return False
        name = self._name_for(path)
        if not self._confirm_delete(name if name is not None else path.name, path):
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

    def shutdown(self) -> None:
        """Stop watching the disk (before the window goes away)."""
        self.watcher.stop()
        self._background.wait()

    def refresh_colors(self) -> None:
        if self._editor is not None:  # one built later takes the colours then
            self._editor.refresh_colors()
        self._list.viewport().update()

    # -- private -------------------------------------------------------------------------

    def _sync_open_file(self, revalidate: bool = False) -> None:
        """After a re-read: close a file deleted elsewhere (unless edited), else re-check it.

        ``revalidate`` re-runs the editor's check when it depends on other files (presets
        name agents that may have come or gone).
        """
        path = self.editor.path()
        if path is None:
            return
        if not path.exists() and not self.editor.is_dirty():
            self._show_empty()
            return
        self.editor.check_disk()
        if revalidate:
            self.editor.validate_now()
        self._describe(path)

    def _open(self, path: Path, line: int = 0) -> None:
        self.editor.open_file(path, self._source_for(path) == "builtin")
        self._describe(path)
        self.right.setCurrentIndex(1)
        if line:
            self.editor.text_edit.go_to_line(line)

    def _describe(self, path: Path) -> None:
        """Fill the header and the read-only note for the open ``path``."""
        source = self._source_for(path)
        self._show_header(path, source)
        self.header.set_dirty(self.editor.is_dirty())
        if source == "builtin":
            self.readonly_banner.show_message(
                "info",
                f"Built-in {self.noun}s are read-only. Duplicate this one to get an editable "
                "copy in your user folder; it then replaces the built-in.",
                [("Duplicate", self._duplicate_clicked)],
                icon_name="lock",
            )
        else:
            self.readonly_banner.hide()

    def _show_empty(self) -> None:
        self.editor.clear()
        self._list.select_path(None, quiet=True)
        self.right.setCurrentIndex(0)
        self.header.set_dirty(False)

    def _create(self, path: Path, text: str) -> Path | None:
        """Write a new file and open it; None (after telling the user) when that fails."""
        if path.exists():  # unique_path() avoids this; a race with another program does not
            self.prompts.show_error("Could not create the file", f"{path} already exists.")
            return None
        from core.config.atomic import atomic_write_text  # here: not part of the first paint

        try:
            atomic_write_text(path, text)
        except OSError as error:
            self.prompts.show_error("Could not create the file", f"{path}: {error}.")
            return None
        self.editor.clear()
        self.refresh()
        self._list.select_path(str(path), quiet=True)
        self._open(path)
        self.editor.text_edit.setFocus()
        return path

    def _on_list_selection(self, path: str) -> None:
        current = self.editor.path()
        if current is not None and str(current) == path:
            return
        if not self.maybe_discard_changes():
            self._list.select_path(str(current) if current else None, quiet=True)
            return
        if path:
            self._open(Path(path))
        else:
            self._show_empty()

    def _duplicate_clicked(self) -> None:
        """Buttons want a slot without a result; :meth:`duplicate_current` returns the copy."""
        self.duplicate_current()

    def _on_dirty_changed(self, dirty: bool) -> None:
        self.header.set_dirty(dirty)
        self.dirtyChanged.emit(dirty)


def _move_to_trash(path: Path) -> bool:
    """Move ``path`` to the desktop trash; False when there is no usable trash."""
    # Imported here: PySide builds these classes' enums on first use, which the start-up of
    # the window (this module included) does not need.
    from PySide6.QtCore import QFile, QStandardPaths

    # Qt does not create the XDG data folder that holds the trash; a fresh account lacks it.
    data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    if data:
        with contextlib.suppress(OSError):
            Path(data).mkdir(parents=True, exist_ok=True)
    result = QFile.moveToTrash(str(path))  # bool, or (bool, path) in some PySide6 versions
    return bool(result[0] if isinstance(result, tuple) else result)
