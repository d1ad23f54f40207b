"""The review comments a person gathers before sending them, shown as a list.

The review dialog (a step's answer and diffs) and the diff viewer both collect
:class:`~core.run.review_comments.ReviewComment` objects the same way: typed in a comment field,
listed as ``path:lines — text``, sent together. One list keeps the comments and their rows in
step, so neither view can show a comment it would not send.
"""

from __future__ import annotations

from PySide6.QtWidgets import QListWidget, QPlainTextEdit, QWidget

from core.run.review_comments import ReviewComment
from gui.widgets.plain_text import plain_tip


class CommentList(QListWidget):
    """The comments gathered so far, one row each, in the order they were made."""

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self._comments: list[ReviewComment] = []

    def comments(self) -> list[ReviewComment]:
        return list(self._comments)

    def add(self, comment: ReviewComment) -> None:
        self._comments.append(comment)
        self.addItem(f"{comment.path}:{comment.lines} — {comment.text}")
        self.item(self.count() - 1).setToolTip(plain_tip(comment.text))  # the row may be cut short

    def clear(self) -> None:
        """Forget every comment (sent, or discarded by the person)."""
        self._comments.clear()
        super().clear()

    def remove_current(self) -> None:
        row = self.currentRow()
        if 0 <= row < len(self._comments):
            del self._comments[row]
            self.takeItem(row)


def comment_field(object_name: str, max_height: int) -> QPlainTextEdit:
    """Where the person types a comment on the selected lines."""
    field = QPlainTextEdit()
    field.setObjectName(object_name)
    field.setPlaceholderText("Your comment on the selected lines…")
    field.setMaximumHeight(max_height)
    return field
