"""The menu on each step pane's header ("⋯"): what a person can do with one step.

"Re-run from here…", which the run view passes up as
:attr:`StepMenuButton.rerunRequested`; the runs view asks for the changes
(:mod:`gui.run.rerun_dialog`) and starts the new run. "Comment on this step…" (,
a finished step only) is passed up as :attr:`StepMenuButton.commentRequested`; the runs view
opens the review dialog (:mod:`gui.run.review_actions`). Kept out of
:mod:`gui.run.step_pane`, which only places the button.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu, QToolButton, QWidget


class StepMenuButton(QToolButton):
    """A flat "⋯" button with the step's menu. GUI thread only."""

    # -- signals (GUI thread) ------------------------------------------------------------

    rerunRequested = Signal(int)
    """(0-based step): "Re-run from here…" was chosen."""
    commentRequested = Signal(int)
    """(0-based step): "Comment on this step…" was chosen."""

    def __init__(self, step: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StepMenuButton")
        self.step = step
        self.setText("⋯")
        self.setAutoRaise(True)
        self.setToolTip("Step actions")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        self.rerun_action = menu.addAction("Re-run from here…")
        self.rerun_action.setToolTip(
            "A new run: the steps before this one are reused, this one runs again "
            "with the task, agent, model or backend you choose"
        )
        self.rerun_action.triggered.connect(lambda _checked=False: self.rerunRequested.emit(step))
        self.comment_action = menu.addAction("Comment on this step…")
        self.comment_action.setToolTip(
            "Comment on lines of the step's answer or of the files it changed, then send the "
            "comments to an agent as a follow-up step"
        )
        self.comment_action.setEnabled(False)  # the pane enables it once the step finished ok
        self.comment_action.triggered.connect(
            lambda _checked=False: self.commentRequested.emit(step)
        )
        self.setMenu(menu)
