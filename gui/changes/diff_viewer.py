"""The diff viewer: the files a step (or a whole run) changed on the left, the selected file's
patch on the right, unified or side by side, a page at a time.

It shows a patch it is given (:func:`core.patch_lines.parse_patch` reads it); fetching the
patch from the checkpoints is the caller's job (:mod:`gui.changes.actions`).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.patch_lines import FilePatch, parse_patch, side_by_side
from gui.changes.labels import file_label
from gui.changes.patch_view import PAGE_LINES, PatchText, split_rows
from gui.theme import secondary_text


class DiffViewer(QDialog):
    """Modeless; one per request. GUI thread only."""

    def __init__(
        self, title: str, patch: str, path: str | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("DiffViewer")
        self.setWindowTitle(title)
        self.resize(1100, 700)
        self.files: list[FilePatch] = parse_patch(patch)
        self._page = 0

        self.file_list = QListWidget()
        self.file_list.setObjectName("ChangedFiles")
        for file in self.files:
            added = None if file.binary else file.added
            removed = None if file.binary else file.removed
            QListWidgetItem(file_label(file.path, added, removed), self.file_list)
        self.file_list.currentRowChanged.connect(self._file_chosen)

        self.unified_button = QPushButton("Unified")
        self.split_button = QPushButton("Side by side")
        modes = QButtonGroup(self)
        for button in (self.unified_button, self.split_button):
            button.setCheckable(True)
            modes.addButton(button)
        self.unified_button.setChecked(True)
        modes.buttonClicked.connect(lambda _button: self._show())
        self.page_label = QLabel("")
        self.page_label.setStyleSheet(f"color: {secondary_text(self.palette()).name()};")
        self.previous_button = QPushButton("Previous page")
        self.next_button = QPushButton("Next page")
        self.previous_button.clicked.connect(lambda: self._turn(-1))
        self.next_button.clicked.connect(lambda: self._turn(1))
        bar = QHBoxLayout()
        bar.addWidget(self.unified_button)
        bar.addWidget(self.split_button)
        bar.addStretch(1)
        bar.addWidget(self.page_label)
        bar.addWidget(self.previous_button)
        bar.addWidget(self.next_button)

        self.unified = PatchText()
        self.unified.setObjectName("UnifiedPatch")
        self.old_side = PatchText()
        self.old_side.setObjectName("OldSide")
        self.new_side = PatchText()
        self.new_side.setObjectName("NewSide")
        for one, other in ((self.old_side, self.new_side), (self.new_side, self.old_side)):
            one.verticalScrollBar().valueChanged.connect(other.verticalScrollBar().setValue)
        sides = QSplitter()
        sides.addWidget(self.old_side)
        sides.addWidget(self.new_side)
        self.views = QStackedWidget()
        self.views.addWidget(self.unified)
        self.views.addWidget(sides)
        self.empty = QLabel("No changes to show.")
        self.views.addWidget(self.empty)

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(bar)
        column.addWidget(self.views, 1)
        split = QSplitter()
        split.addWidget(self.file_list)
        split.addWidget(right)
        split.setSizes([240, 860])
        layout = QVBoxLayout(self)
        layout.addWidget(split)

        start = next((i for i, f in enumerate(self.files) if f.path == path), 0)
        if self.files:
            self.file_list.setCurrentRow(start)
        else:
            self._show()

    # ---------------------------------------------------------------- public API

    def current_file(self) -> FilePatch | None:
        row = self.file_list.currentRow()
        return self.files[row] if 0 <= row < len(self.files) else None

    def page_count(self) -> int:
        file = self.current_file()
        if file is None:
            return 0
        return max(1, -(-self._row_count(file) // PAGE_LINES))

    # ---------------------------------------------------------------- private

    def _row_count(self, file: FilePatch) -> int:
        if self.split_button.isChecked():
            return len(side_by_side(file.lines))
        return len(file.lines)

    def _file_chosen(self, _row: int) -> None:
        self._page = 0
        self._show()

    def _turn(self, step: int) -> None:
        self._page = min(max(0, self._page + step), self.page_count() - 1)
        self._show()

    def _show(self) -> None:
        file = self.current_file()
        if file is None or file.binary or not file.lines:
            self.empty.setText("Binary file: no lines to show." if file else "No changes.")
            self.views.setCurrentWidget(self.empty)
            self.page_label.setText("")
            self.previous_button.setEnabled(False)
            self.next_button.setEnabled(False)
            return
        self._page = min(self._page, self.page_count() - 1)
        first = self._page * PAGE_LINES
        window = slice(first, first + PAGE_LINES)
        if self.split_button.isChecked():
            old, new = split_rows(side_by_side(file.lines)[window])
            self.old_side.show_lines(file.path, old, unified=False)
            self.new_side.show_lines(file.path, new, unified=False)
            self.views.setCurrentIndex(1)
            total = self._row_count(file)
        else:
            self.unified.show_lines(file.path, list(file.lines[window]), unified=True)
            self.views.setCurrentWidget(self.unified)
            total = len(file.lines)
        pages = self.page_count()
        last = min(total, first + PAGE_LINES)
        self.page_label.setText(
            f"lines {first + 1}–{last} of {total}" + (f" · page {self._page + 1}/{pages}")
        )
        self.previous_button.setEnabled(self._page > 0)
        self.next_button.setEnabled(self._page + 1 < pages)
