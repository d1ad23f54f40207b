"""Commenting on a step's work, line by line, then sending the comments to an agent.

The dialog shows one text at a time — the step's answer, or a file's diff when there is one —
and names the selected line numbers under it. The person selects lines (mouse or
Shift+arrows), writes a comment and clicks **Add comment**; every comment keeps its path, its
line(s) and the lines' text (:class:`core.run.review_comments.ReviewComment`). **Send comments**
hands them, with the agent chosen (the step's by default), to the owner
(:attr:`ReviewDialog.sendRequested`), which starts the follow-up step; the task text is written
by the core (:func:`core.run.review_comments.follow_up_task`), never here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.run.review_comments import ReviewComment, ReviewText
from gui.theme import monospace_font
from gui.widgets import PlainLabel
from gui.widgets.comment_list import CommentList, comment_field
from gui.widgets.diff_view import DiffView
from gui.widgets.line_selection import selected_lines


class ReviewDialog(QDialog):
    """Not modal; GUI thread only."""

    # -- signals ------------------------------------------------------------------------
    sendRequested = Signal(object, str)
    """``(list[ReviewComment], agent)``: start the follow-up step."""

    def __init__(
        self,
        step_index: int,
        agent: str,
        sources: list[ReviewText],
        agents: list[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ReviewDialog")
        self.setWindowTitle(f"Review step {step_index + 1} ({agent})")
        self.step_index = step_index
        self.sources = list(sources)

        self.source = QComboBox()
        self.source.setObjectName("ReviewSource")
        self.source.addItems([source.path for source in sources])
        self.source.setVisible(len(sources) > 1)
        # An answer as plain text; a diff coloured (added green, removed red) by DiffView.
        self.plain = QPlainTextEdit()
        self.plain.setObjectName("ReviewText")
        self.plain.setReadOnly(True)
        self.plain.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.plain.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.plain.setFont(monospace_font())
        self.diff = DiffView()
        self.diff.setObjectName("ReviewDiff")
        self.text: QPlainTextEdit = self.plain
        """The text shown now: :attr:`plain` or :attr:`diff`."""
        self.texts = QStackedWidget()
        self.texts.addWidget(self.plain)
        self.texts.addWidget(self.diff)
        self.where = PlainLabel("Select the lines to comment on.")
        self.where.setObjectName("ReviewWhere")
        self.comment = comment_field("ReviewComment", max_height=90)
        self.add_button = QPushButton("Add comment")
        self.add_button.setObjectName("ReviewAdd")
        self.comment_list = CommentList("ReviewComments")
        self.remove_button = QPushButton("Remove")
        self.agent = QComboBox()
        self.agent.setObjectName("ReviewAgent")
        self.agent.addItems(sorted({agent, *agents}, key=str.casefold))
        self.agent.setCurrentText(agent)
        self.agent.setToolTip("Who gets the comments: the step's agent, or another")
        buttons = QDialogButtonBox()
        self.send_button = buttons.addButton(
            "Send comments", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.send_button.setObjectName("ReviewSend")
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.rejected.connect(self.reject)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.source)
        left_layout.addWidget(self.texts, 1)
        left_layout.addWidget(self.where)
        left_layout.addWidget(self.comment)
        add_row = QHBoxLayout()
        add_row.addStretch(1)
        add_row.addWidget(self.add_button)
        left_layout.addLayout(add_row)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("Comments"))
        right_layout.addWidget(self.comment_list, 1)
        right_layout.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignRight)
        agent_row = QHBoxLayout()
        agent_row.addWidget(QLabel("Send to"))
        agent_row.addWidget(self.agent, 1)
        right_layout.addLayout(agent_row)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(1000, 620)

        self.source.currentIndexChanged.connect(self._show_source)
        for view in (self.plain, self.diff):
            view.selectionChanged.connect(self._update)
            view.cursorPositionChanged.connect(self._update)
        self.comment.textChanged.connect(self._update)
        self.add_button.clicked.connect(self.add_comment)
        self.remove_button.clicked.connect(self._remove)
        self.comment_list.currentRowChanged.connect(lambda _row: self._update())
        self.send_button.clicked.connect(self._send)
        self._show_source(0)

    # -- public API ---------------------------------------------------------------------

    def comments(self) -> list[ReviewComment]:
        return self.comment_list.comments()

    def selected_lines(self) -> tuple[int, int]:
        """First and last selected line, from 1 (the cursor's line when nothing is)."""
        return selected_lines(self.text)

    def add_sources(self, sources: list[ReviewText]) -> None:
        """More texts to comment on (a step's file diffs, once read)."""
        self.sources += sources
        self.source.addItems([source.path for source in sources])
        self.source.setVisible(len(self.sources) > 1)

    def show_source(self, path: str) -> bool:
        """Show the text of ``path``; False when there is none."""
        index = self.source.findText(path)
        if index >= 0:
            self.source.setCurrentIndex(index)
        return index >= 0

    def add_comment(self) -> None:
        """Add the comment field's text on the selected lines."""
        text = self.comment.toPlainText().strip()
        if not text:
            return
        comment = self._current().comment(*self.selected_lines(), text)
        self.comment_list.add(comment)
        self.comment.clear()
        self._update()

    # -- private ------------------------------------------------------------------------

    def _show_source(self, index: int) -> None:
        if 0 <= index < len(self.sources):
            source = self.sources[index]
            if source.numbers:
                self.text = self.diff
                self.diff.set_diff(source.text)
            else:
                self.text = self.plain
                self.plain.setPlainText(source.text)
            self.texts.setCurrentWidget(self.text)
            self.text.moveCursor(QTextCursor.MoveOperation.Start)
        self._update()

    def _current(self) -> ReviewText:
        return self.sources[max(0, self.source.currentIndex())]

    def _update(self) -> None:
        if self.sources:
            shown = self._current().comment(*self.selected_lines(), "")
            lines = "line" if shown.end_line is None else "lines"
            self.where.setText(f"Commenting on {shown.path}, {lines} {shown.lines}")
        self.add_button.setEnabled(bool(self.comment.toPlainText().strip()))
        self.remove_button.setEnabled(self.comment_list.currentRow() >= 0)
        count = self.comment_list.count()
        self.send_button.setEnabled(bool(count))
        self.send_button.setText(f"Send {count} comment{'s' if count != 1 else ''}")

    def _remove(self) -> None:
        self.comment_list.remove_current()
        self._update()

    def _send(self) -> None:
        if self.comment_list.count():
            self.sendRequested.emit(self.comments(), self.agent.currentText())
            self.accept()
