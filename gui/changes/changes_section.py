"""A step pane's Changes section: the files the step changed with their +/− counts (each opens
the diff viewer at that file), and buttons for the step's diff, the whole run's Changes view and
"Undo this step" (a restore to before the step, after a confirmation)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.model.events import StepChanges
from gui.changes import actions
from gui.changes.labels import change_label, totals_text
from gui.changes.run_changes import open_run_changes
from gui.theme import SEMIBOLD, set_font, set_tone

MAX_ROWS = 8
"""Files listed in the pane; the rest are one click away in the viewer."""


class ChangesSection(QWidget):
    """GUI thread only. Filled by :meth:`set_changes` (cheap when nothing changed)."""

    # -- signals ------------------------------------------------------------------------
    commentsSent = Signal(int, object)
    """``(step, list[ReviewComment])``: review comments on this step's diff (or, from the
    run's Changes view, on a step's or the whole run's) to send in a follow-up step."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChangesSection")
        self._changes: StepChanges | None = None
        self.title = QLabel("")
        set_font(self.title, weight=SEMIBOLD)
        self.diff_button = QPushButton("View diff")
        self.diff_button.clicked.connect(lambda: self._open(None))
        self.run_button = QPushButton("All changes…")
        self.run_button.setToolTip("Every step's changes in this run, and restoring to any step")
        self.run_button.clicked.connect(self._open_run)
        self.undo_button = QPushButton("Undo this step")
        self.undo_button.setToolTip("Put the files back as they were before this step")
        self.undo_button.clicked.connect(self._undo)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title)
        top.addStretch(1)
        for button in (self.diff_button, self.run_button, self.undo_button):
            top.addWidget(button)
        self._rows = QVBoxLayout()
        self._rows.setContentsMargins(8, 0, 0, 0)
        self._rows.setSpacing(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addLayout(self._rows)
        self.file_buttons: list[QPushButton] = []

    def set_changes(self, changes: StepChanges, *, run_running: bool) -> None:
        self.undo_button.setEnabled(not run_running)
        self.undo_button.setToolTip(
            "Available when the run has ended"
            if run_running
            else "Put the files back as they were before this step"
        )
        if changes is self._changes:
            return
        self._changes = changes
        self.title.setText(f"Changes · {totals_text(changes)}")
        for button in self.file_buttons:
            button.deleteLater()
        self.file_buttons = []
        for change in changes.files[:MAX_ROWS]:
            button = QPushButton(change_label(change))
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setObjectName("ChangedFileLink")  # its look: the application's style sheet
            set_tone(button, "link")
            button.clicked.connect(lambda _checked=False, path=change.path: self._open(path))
            self._rows.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
            self.file_buttons.append(button)
        hidden = len(changes.files) - MAX_ROWS
        if hidden > 0:
            more = QPushButton(f"and {hidden} more…")
            more.setFlat(True)
            set_tone(more, "secondary")
            more.clicked.connect(lambda: self._open(None))
            self._rows.addWidget(more, 0, Qt.AlignmentFlag.AlignLeft)
            self.file_buttons.append(more)

    # ---------------------------------------------------------------- private

    def _open(self, path: str | None) -> None:
        if self._changes is not None:
            step = self._changes.step
            send = None if step is None else lambda said: self.commentsSent.emit(step, said)
            actions.start(actions.open_diff(self.window(), [self._changes], step, path, send))

    def _open_run(self) -> None:
        if self._changes is not None:
            dialog = open_run_changes(self.window(), self._changes.run_id)
            if dialog is not None:
                dialog.commentsSent.connect(self.commentsSent)

    def _undo(self) -> None:
        if self._changes is not None and self._changes.step is not None:
            actions.start(
                actions.restore_step(self.window(), self._changes.run_id, self._changes.step)
            )
