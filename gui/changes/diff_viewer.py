"""The diff viewer: the files a step (or a whole run) changed on the left, the selected file's
patch on the right, unified or side by side, a page at a time.

It shows a patch it is given (:func:`core.workspace.patch_lines.parse_patch` reads it); fetching the
patch from the checkpoints is the caller's job (:mod:`gui.changes.actions`).

Review comments: the person selects lines (either side, any page), writes a comment and clicks
**Comment on selection**; each comment keeps the file's path, its line number(s) and the code
(:class:`core.run.review_comments.ReviewComment`, numbered by
:func:`core.run.review_comments.lines_text`
exactly as in the review dialog). **Send comments** hands them to the owner
(:attr:`DiffViewer.commentsSent`), which starts the same follow-up step as the review dialog.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.run.review_comments import ReviewComment, lines_text
from core.workspace.patch_lines import FilePatch, PatchLine, parse_patch, side_by_side
from gui.changes.labels import file_label
from gui.changes.patch_view import PAGE_LINES, PatchText, split_rows
from gui.theme import set_tone
from gui.widgets import PlainLabel
from gui.widgets.comment_list import CommentList, comment_field
from gui.widgets.line_selection import selected_lines
from gui.widgets.prompts import ANY, ask


class DiffViewer(QDialog):
    """Modeless; one per request. GUI thread only."""

    # -- signals ------------------------------------------------------------------------
    commentsSent = Signal(object)
    """``list[ReviewComment]``: "Send comments" was clicked (the viewer then closes)."""

    def __init__(
        self,
        title: str,
        patch: str,
        path: str | None = None,
        parent: QWidget | None = None,
        *,
        commentable: bool = False,
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
        set_tone(self.page_label, "secondary")
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

        self._shown: dict[PatchText, list[PatchLine | None]] = {}
        """The lines each view shows now (its page, its side): what a selection maps to."""
        self._selecting: PatchText = self.unified
        self.where = PlainLabel("Select the lines to comment on.")
        self.where.setObjectName("DiffWhere")
        self.comment = comment_field("DiffComment", max_height=70)
        self.comment_button = QPushButton("Comment on selection")
        self.comment_button.setObjectName("DiffCommentAdd")
        self.comment_list = CommentList("DiffComments")
        self.send_button = QPushButton("Send comments")
        self.send_button.setObjectName("DiffSend")
        self.send_button.setToolTip(
            "Start a follow-up step: the agent gets each comment with its file, line and code"
        )
        for view in (self.unified, self.old_side, self.new_side):
            view.selectionChanged.connect(lambda v=view: self._selected(v))
            view.cursorPositionChanged.connect(lambda v=view: self._selected(v))
        self.comment.textChanged.connect(self._update_comment)
        self.comment_button.clicked.connect(self.add_comment)
        self.send_button.clicked.connect(self._send)

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(bar)
        column.addWidget(self.views, 1)
        comment_row = QHBoxLayout()
        comment_row.addWidget(self.comment, 1)
        comment_row.addWidget(self.comment_button)
        column.addWidget(self.where)
        column.addLayout(comment_row)
        left = QWidget()
        files_column = QVBoxLayout(left)
        files_column.setContentsMargins(0, 0, 0, 0)
        files_column.addWidget(self.file_list, 2)
        self.comments_label = QLabel("Comments")
        files_column.addWidget(self.comments_label)
        files_column.addWidget(self.comment_list, 1)
        files_column.addWidget(self.send_button)
        for part in (
            self.where,
            self.comment,
            self.comment_button,
            self.comments_label,
            self.comment_list,
            self.send_button,
        ):
            part.setVisible(commentable)
        split = QSplitter()
        split.addWidget(left)
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

    def comments(self) -> list[ReviewComment]:
        return self.comment_list.comments()

    def selected_comment(self, text: str) -> ReviewComment | None:
        """``text`` as a comment on the selected lines of the view in use; None when they
        are no file lines (a hunk header, a blank beside a change, no file)."""
        file = self.current_file()
        lines = self._shown.get(self._selecting)
        if file is None or not lines:
            return None
        comment = lines_text(file.path, lines).comment(*selected_lines(self._selecting), text)
        return comment if comment.line else None

    def add_comment(self) -> None:
        """Add the comment field's text on the selected lines."""
        text = self.comment.toPlainText().strip()
        comment = self.selected_comment(text) if text else None
        if comment is None:
            return
        self.comment_list.add(comment)
        self.comment.clear()
        self._update_comment()

    def page_count(self) -> int:
        file = self.current_file()
        if file is None:
            return 0
        return max(1, -(-self._row_count(file) // PAGE_LINES))

    # ---------------------------------------------------------------- private

    def _selected(self, view: PatchText) -> None:
        self._selecting = view
        self._update_comment()

    def _update_comment(self) -> None:
        shown = self.selected_comment("")
        if shown is None:
            self.where.setText("Select the lines of a file to comment on.")
        else:
            lines = "line" if shown.end_line is None else "lines"
            self.where.setText(f"Commenting on {shown.path}, {lines} {shown.lines}")
        self.comment_button.setEnabled(
            shown is not None and bool(self.comment.toPlainText().strip())
        )
        count = self.comment_list.count()
        self.send_button.setEnabled(bool(count))
        self.send_button.setText(f"Send {count} comment{'s' if count != 1 else ''}")

    def reject(self) -> None:
        """Closing (Esc, the window's close button) with comments not sent asks first: they
        exist only in this window, and closing would lose them without a word."""
        count = self.comment_list.count()
        if count:
            answer = ask(
                self,
                "UnsentComments",
                QMessageBox.Icon.Question,
                "Unsent comments",
                f"Send your {count} comment{'s' if count != 1 else ''} to the agent?",
                "They are lost if you close without sending them.",
                [
                    ("send", f"Send {count} comment{'s' if count != 1 else ''}", ANY),
                    ("discard", "Discard", QMessageBox.ButtonRole.DestructiveRole),
                    ("keep", QMessageBox.StandardButton.Cancel, ANY),
                ],
                default="send",
                escape="keep",
            )
            if answer == "send":
                self.commentsSent.emit(self.comments())
            elif answer != "discard":
                return
            self.comment_list.clear()
        super().reject()

    def _send(self) -> None:
        if self.comment_list.count():
            self.commentsSent.emit(self.comments())
            self.comment_list.clear()  # sent: nothing left to lose
            self.close()

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
            self._shown = {}
            self._update_comment()
            return
        self._page = min(self._page, self.page_count() - 1)
        first = self._page * PAGE_LINES
        window = slice(first, first + PAGE_LINES)
        if self.split_button.isChecked():
            old, new = split_rows(side_by_side(file.lines)[window])
            self._shown = {self.old_side: old, self.new_side: new}
            self.old_side.show_lines(file.path, old, unified=False)
            self.new_side.show_lines(file.path, new, unified=False)
            self.views.setCurrentIndex(1)
            self._selecting = self.new_side
            total = self._row_count(file)
        else:
            unified: list[PatchLine | None] = list(file.lines[window])
            self._shown = {self.unified: unified}
            self.unified.show_lines(file.path, unified, unified=True)
            self.views.setCurrentWidget(self.unified)
            self._selecting = self.unified
            total = len(file.lines)
        pages = self.page_count()
        last = min(total, first + PAGE_LINES)
        self.page_label.setText(
            f"lines {first + 1}–{last} of {total}" + (f" · page {self._page + 1}/{pages}")
        )
        self.previous_button.setEnabled(self._page > 0)
        self.next_button.setEnabled(self._page + 1 < pages)
        self._update_comment()
