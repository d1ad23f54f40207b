"""The whole run's Changes view: every step's changed files (and the restores made since), the
run's combined diff, and "Restore to before step N" for the selected step.

A parallel run has one checkpoint pair for the whole run (its tasks shared the folder at the
same time): the view lists its changed files under "All tasks", says they are not attributed
to a task, and restores to before the run."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.model.events import Event, RunStarted, StepChanges
from core.model.words import counted
from core.terminal.commands.worktree import merge_message
from core.workspace.restore import RestoreError, checkpoints_of
from core.workspace.worktrees import WorktreeError, discard_worktree, merge_worktree
from gui.changes import actions
from gui.changes.labels import change_label, totals_text
from gui.widgets import PlainLabel

STEP_ROLE = Qt.ItemDataRole.UserRole
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
RUN_ROLE = Qt.ItemDataRole.UserRole + 2
"""True on a parallel run's whole-run changes and their files."""


class RunChangesDialog(QDialog):
    """Modeless. GUI thread only; reads the run's saved checkpoints when opened."""

    # -- signals ------------------------------------------------------------------------
    commentsSent = Signal(int, object)
    """``(step, list[ReviewComment])``: review comments made in a diff opened here, to send
    in a follow-up after ``step`` (the step's diff; the run's last step for all changes)."""

    def __init__(self, run_id: str, events: list[Event], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunChanges")
        self.setWindowTitle(f"Changes — run {run_id}")
        self.resize(720, 480)
        self.run_id = run_id
        self.checkpoints = checkpoints_of(events)
        self.whole_run = any(c.kind == "run" for c in self.checkpoints)
        """A parallel run: its changes are recorded for the whole run, not per task."""
        started = next((e for e in events if isinstance(e, RunStarted)), None)
        agents = [s.agent for s in started.steps] if started is not None else []
        self.worktree = started.worktree if started is not None else None
        self.summary = PlainLabel("")
        self.tree = QTreeWidget()
        self.tree.setObjectName("RunChangesTree")
        self.tree.setHeaderHidden(True)
        for changes in self.checkpoints:
            self.tree.addTopLevelItem(self._item(changes, agents))
        self.tree.expandAll()
        self.tree.itemDoubleClicked.connect(self._open_item)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        buttons = QDialogButtonBox()
        self.all_button = QPushButton("View all changes")
        self.step_button = QPushButton("View step diff")
        self.restore_button = QPushButton("Restore to before step…")
        for button in (self.all_button, self.step_button, self.restore_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        self.merge_button = QPushButton("Merge (fast-forward)")
        self.squash_button = QPushButton("Merge (squash)")
        self.discard_button = QPushButton("Discard worktree")
        self.worktree_label = PlainLabel("")
        self.worktree_label.setWordWrap(True)
        worktree_row = QHBoxLayout()
        worktree_row.addWidget(self.worktree_label, 1)
        for button in (self.merge_button, self.squash_button, self.discard_button):
            worktree_row.addWidget(button)
        self.merge_button.clicked.connect(lambda: self._finish_worktree("merge"))
        self.squash_button.clicked.connect(lambda: self._finish_worktree("squash"))
        self.discard_button.clicked.connect(lambda: self._finish_worktree("discard"))
        self._show_worktree(self.worktree is not None)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        self.all_button.clicked.connect(lambda: self._diff(None, None))
        self.step_button.clicked.connect(lambda: self._diff(self._selected_step(), None))
        self.restore_button.clicked.connect(self._restore)
        steps = [c for c in self.checkpoints if c.kind in ("step", "run")]
        files = {f.path for c in steps for f in c.files}
        self.summary.setWordWrap(True)
        if self.whole_run:
            self.summary.setText(
                f"{counted(len(files), 'file')} changed by the run's "
                f"{counted(len(agents), 'parallel task')}. They "
                "worked in the folder at the same time, so the changes are recorded for the "
                "whole run, not per task."
            )
        else:
            self.summary.setText(
                f"{counted(len(files), 'file')} changed by {counted(len(steps), 'step')}"
                if steps
                else "This run recorded no checkpoints."
            )
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addLayout(worktree_row)
        layout.addWidget(buttons)
        self.all_button.setEnabled(bool(steps))
        self._update_buttons()

    def _show_worktree(self, open_: bool) -> None:
        """The worktree line and its three buttons, while the worktree is there."""
        info = self.worktree
        if info is not None:
            self.worktree_label.setText(
                f"Worked in {info.path} on branch {info.branch}"
                if open_
                else f"The worktree on {info.branch} is closed."
            )
        self.worktree_label.setVisible(info is not None)
        for button in (self.merge_button, self.squash_button, self.discard_button):
            button.setVisible(info is not None and open_)

    def _finish_worktree(self, how: str) -> None:
        actions.start(self._finish_worktree_async(how))

    async def _finish_worktree_async(self, how: str) -> None:
        info = self.worktree
        if info is None:
            return
        if how == "discard" and not await actions.confirm(
            self,
            "Discard the worktree?",
            f"Delete {info.path} and the branch {info.branch}, with everything the run "
            "changed there?",
            "Discard",
        ):
            return
        try:
            if how == "discard":
                await discard_worktree(info)
                said = f"Removed {info.path} and the branch {info.branch}."
            else:
                said = await merge_worktree(
                    info, squash=how == "squash", message=merge_message(self.run_id)
                )
        except WorktreeError as error:
            actions.tell(self, QMessageBox.Icon.Warning, "Worktree", str(error))
            return
        self._show_worktree(False)
        actions.tell(self, QMessageBox.Icon.Information, "Worktree", said)

    def _item(self, changes: StepChanges, agents: list[str]) -> QTreeWidgetItem:
        number = (changes.step or 0) + 1
        if changes.kind == "run":
            return self._run_item(changes)
        if changes.kind == "restore":
            before = "the run" if self.whole_run else f"step {number}"
            title = f"Restored to before {before} — {totals_text(changes)}"
        else:
            agent = agents[number - 1] if number - 1 < len(agents) else ""
            title = f"Step {number} {agent} — {totals_text(changes)}"
        item = QTreeWidgetItem([title])
        item.setData(0, STEP_ROLE, changes.step if changes.kind == "step" else None)
        for change in changes.files:
            child = QTreeWidgetItem([change_label(change)])
            child.setData(0, STEP_ROLE, changes.step if changes.kind == "step" else None)
            child.setData(0, PATH_ROLE, change.path)
            item.addChild(child)
        return item

    def _run_item(self, changes: StepChanges) -> QTreeWidgetItem:
        """A parallel run's changes: every task's, together (step 0 to restore: before any
        task is before the run)."""
        item = QTreeWidgetItem([f"All tasks (not attributed per task) — {totals_text(changes)}"])
        item.setData(0, STEP_ROLE, 0)
        item.setData(0, RUN_ROLE, True)
        for change in changes.files:
            child = QTreeWidgetItem([change_label(change)])
            child.setData(0, STEP_ROLE, 0)
            child.setData(0, RUN_ROLE, True)
            child.setData(0, PATH_ROLE, change.path)
            item.addChild(child)
        return item

    def _run_level(self) -> bool:
        item = self.tree.currentItem()
        return item is not None and item.data(0, RUN_ROLE) is True

    def _selected_step(self) -> int | None:
        item = self.tree.currentItem()
        step = item.data(0, STEP_ROLE) if item is not None else None
        return step if isinstance(step, int) else None

    def _update_buttons(self) -> None:
        step = self._selected_step()
        run_level = self._run_level()
        self.step_button.setEnabled(step is not None and not run_level)
        self.restore_button.setEnabled(step is not None)
        if run_level:
            self.restore_button.setText("Restore to before the run")
        else:
            self.restore_button.setText(
                f"Restore to before step {step + 1}"
                if step is not None
                else "Restore to before step…"
            )

    def _open_item(self, item: QTreeWidgetItem, _column: int) -> None:
        step = item.data(0, STEP_ROLE)
        if isinstance(step, int):
            path = item.data(0, PATH_ROLE)
            run_level = item.data(0, RUN_ROLE) is True
            self._diff(None if run_level else step, path if isinstance(path, str) else None)

    def _diff(self, step: int | None, path: str | None) -> None:
        steps = [c.step for c in self.checkpoints if c.kind == "step" and c.step is not None]
        after = step if step is not None else max(steps, default=None)
        send = None if after is None else lambda comments: self.commentsSent.emit(after, comments)
        actions.start(actions.open_diff(self, self.checkpoints, step, path, send))

    def _restore(self) -> None:
        step = self._selected_step()
        if step is not None:
            actions.start(self._restore_and_reload(step))

    async def _restore_and_reload(self, step: int) -> None:
        done = await actions.restore_step(self, self.run_id, step)
        if done is not None:
            self.checkpoints.append(done)
            self.tree.addTopLevelItem(self._item(done, []))


def open_run_changes(parent: QWidget | None, run_id: str) -> RunChangesDialog | None:
    """Open the run's Changes view (None, after saying why, when the run is not saved)."""
    try:
        _path, events = actions.run_events(run_id)
    except RestoreError as error:
        actions.tell(parent, QMessageBox.Icon.Warning, "No changes", str(error))
        return None
    dialog = RunChangesDialog(run_id, events, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
