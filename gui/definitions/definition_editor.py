"""The definition editor: one file, highlighted, validated as you type, saved safely.

Reusable for any definition file: what counts as valid is a pluggable validator
(``Callable[[str], list[Problem]]``), and the highlighter mode is a parameter.

Saving rules (the "why" behind them):

* **Atomic** (:func:`core.config.atomic.atomic_write_text`): a crash never leaves half a file. The
  file's BOM and newline style are kept, so saving in Baton does not rewrite every line of a
  file checked into git with CRLF endings.
* **Invalid text can be saved, on purpose**: people fix hand-written files in steps, and
  refusing to save would trap their work in the window. So Save stays enabled, and saving a
  file with an *error* asks "Save anyway?" first. Warnings save without asking.
* **Conflicts are never silent**: the file's identity (mtime, size, hash) is remembered when
  it is opened or saved. If the disk content differs at save time, the user chooses
  Overwrite / Reload from disk / Cancel. When the watcher reports a change and there are no
  unsaved edits the editor reloads silently; with unsaved edits it shows a non-modal banner.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from core.definitions.checks import Problem, Validator
from core.workspace import file_state
from core.workspace.file_state import DiskState, TextFormat
from gui.definitions.code_edit import CodeEdit
from gui.definitions.highlighters import DefinitionHighlighter, Mode
from gui.widgets import Banner
from gui.widgets.prompts import ConflictChoice, Prompts

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


class DefinitionEditor(QWidget):
    """Edits one file at a time. All signals are emitted on the GUI thread."""

    # -- signals -------------------------------------------------------------------------
    dirtyChanged = Signal(bool)
    """The text now differs (True) or no longer differs (False) from the file on disk."""
    fileSaved = Signal(str)
    """The file at this path was written."""
    problemsChanged = Signal()
    """Validation ran and :meth:`problems` may have changed."""

    VALIDATION_DELAY_MS = 250

    def __init__(
        self,
        validate: Validator,
        prompts: Prompts,
        mode: Mode = "frontmatter",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._validate = validate
        self._prompts = prompts
        self._path: Path | None = None
        self._format = TextFormat()
        self._baseline: DiskState | None = None
        self._problems: list[Problem] = []

        self.disk_banner = Banner()
        self.disk_banner.setObjectName("Banner")
        self.text_edit = CodeEdit()
        self.highlighter = DefinitionHighlighter(
            self.text_edit.document(), self.text_edit.palette(), mode
        )
        self.problem_banner = Banner()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.disk_banner)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.problem_banner)

        self._validation_timer = QTimer(self)
        self._validation_timer.setSingleShot(True)
        self._validation_timer.setInterval(self.VALIDATION_DELAY_MS)
        self._validation_timer.timeout.connect(self.validate_now)
        self.text_edit.document().contentsChanged.connect(self._validation_timer.start)
        self.text_edit.document().modificationChanged.connect(self.dirtyChanged)

    # -- public API ----------------------------------------------------------------------

    def path(self) -> Path | None:
        return self._path

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def is_dirty(self) -> bool:
        return self._path is not None and self.text_edit.document().isModified()

    def is_read_only(self) -> bool:
        return self.text_edit.isReadOnly()

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def open_file(self, path: Path, read_only: bool = False) -> bool:
        """Show ``path``; False (and an error banner) when it cannot be read."""
        self._path = Path(path)
        self.disk_banner.hide()
        try:
            loaded = file_state.load(self._path)
        except OSError as error:
            self._show_text("", read_only=True)
            self._baseline = None
            self.disk_banner.show_message(
                "error", f"Cannot read {self._path.name}: {error.strerror or error}."
            )
            return False
        self._format = loaded.format
        self._baseline = loaded.state
        self._show_text(loaded.text, read_only)
        if loaded.format.lossy:
            self.disk_banner.show_message(
                "warning",
                "This file is not valid UTF-8. Unreadable bytes are shown as � and are "
                "replaced if you save.",
            )
        return True

    def clear(self) -> None:
        """Close the file (without asking: callers ask about unsaved edits first)."""
        self._path = None
        self._baseline = None
        self._format = TextFormat()
        self.disk_banner.hide()
        self._show_text("", read_only=True)

    def save(self) -> bool:
        """Save with the checks in the module docstring; True when the file was written."""
        if self._path is None or self.is_read_only():
            return False
        self.validate_now()
        errors = [p for p in self._problems if p.severity == "error"]
        if errors and not self._prompts.confirm_save_invalid(self._path, errors[0]):
            return False
        current = DiskState.of(self._path)
        if self._baseline is not None and not self._baseline.same_content(current):
            choice = self._prompts.resolve_conflict(self._path, deleted=current is None)
            if choice is ConflictChoice.CANCEL:
                return False
            if choice is ConflictChoice.RELOAD:
                self.reload_from_disk()
                return False
        try:
            self._baseline = file_state.save(self._path, self.text(), self._format)
        except OSError as error:
            self._prompts.show_error(
                "Could not save", f"Could not save {self._path}: {error.strerror or error}."
            )
            return False
        self.text_edit.document().setModified(False)
        self.disk_banner.hide()
        self.fileSaved.emit(str(self._path))
        return True

    def reload_from_disk(self) -> None:
        """Replace the text with the file's content, keeping the cursor and scroll position."""
        if self._path is None:
            return
        cursor = self.text_edit.textCursor().position()
        scroll = self.text_edit.verticalScrollBar().value()
        if self.open_file(self._path, self.is_read_only()):
            text_cursor = self.text_edit.textCursor()
            text_cursor.setPosition(min(cursor, len(self.text())))
            self.text_edit.setTextCursor(text_cursor)
            self.text_edit.verticalScrollBar().setValue(scroll)

    def check_disk(self) -> None:
        """React to a possible outside change (called by the folder watcher)."""
        if self._path is None:
            return
        current = DiskState.of(self._path)
        if self._baseline is None or self._baseline.same_content(current):
            return
        if current is None:
            self.disk_banner.show_message(
                "warning",
                f"{self._path.name} was deleted on disk. Save to recreate it.",
                [("Keep mine", self._keep_mine)],
            )
            self.text_edit.document().setModified(True)
            return
        if not self.is_dirty():
            self.reload_from_disk()
            return
        self.disk_banner.show_message(
            "info",
            f"{self._path.name} changed on disk while you were editing it.",
            [("Reload", self.reload_from_disk), ("Keep mine", self._keep_mine)],
        )

    def validate_now(self) -> None:
        self._validation_timer.stop()
        if self._path is None:
            self._problems = []
        else:
            problems = self._validate(self.text())
            self._problems = sorted(problems, key=lambda p: _SEVERITY_ORDER[p.severity])
        self._show_problems()
        self.problemsChanged.emit()

    def refresh_colors(self) -> None:
        """Re-derive colours after a palette change."""
        self.highlighter.set_palette(self.text_edit.palette())
        self.text_edit.refresh_colors()

    # -- private -------------------------------------------------------------------------

    def _show_text(self, text: str, read_only: bool) -> None:
        document = self.text_edit.document()
        self.text_edit.setReadOnly(read_only)
        document.setPlainText(text)
        document.setModified(False)
        document.clearUndoRedoStacks()
        self.text_edit.refresh_colors()
        self.validate_now()

    def _keep_mine(self) -> None:
        """The user chose their text over the disk's: the next save may overwrite quietly."""
        if self._path is not None:
            self._baseline = DiskState.of(self._path)
        self.disk_banner.hide()

    def _show_problems(self) -> None:
        self.text_edit.set_marks(
            {p.line: p.severity for p in reversed(self._problems) if p.line is not None}
        )
        if not self._problems:
            self.problem_banner.hide()
            return
        first = self._problems[0]
        more = len(self._problems) - 1
        message = first.describe() + (f"  (+{more} more)" if more else "")
        actions = []
        if first.line is not None:
            line = first.line
            actions.append(("Go to line", lambda: self.text_edit.go_to_line(line)))
        self.problem_banner.show_message(
            first.severity,
            message,
            actions,
            tooltip="\n".join(p.describe() for p in self._problems),
        )
