"""What the Changes buttons do: open a diff, restore a folder to before a step after the
person has seen what it would change and lose, and undo that restore from its message.
Coroutines, started from Qt slots with :func:`start`; dialogs are opened without nested event
loops (see :mod:`gui.qt_asyncio`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core.model.events import Event, StepChanges
from core.model.words import counted
from core.record.run_files import RunIndex, append_event, load_run
from core.run.review_comments import ReviewComment
from core.terminal.commands.changes import run_patch
from core.workspace.checkpoints import patch
from core.workspace.git_command import GitError
from core.workspace.restore import (
    RestoreError,
    RestorePlan,
    apply_restore,
    checkpoints_of,
    plan_restore,
)
from gui.changes.diff_viewer import DiffViewer
from gui.theme import monospace_font

_running: set[asyncio.Task[Any]] = set()


def start(work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run ``work`` on the window's loop, keeping a reference until it ends."""
    task = asyncio.ensure_future(work)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


def run_events(run_id: str) -> tuple[Path, list[Event]]:
    """The saved run's file and events (restores read the checkpoints recorded there)."""
    record = RunIndex().get(run_id)
    if record is None:
        raise RestoreError(f"run {run_id} is not in the history")
    return Path(record.path), load_run(Path(record.path))


async def open_diff(
    parent: QWidget | None,
    checkpoints: list[StepChanges],
    step: int | None,
    path: str | None = None,
    on_comments: Callable[[list[ReviewComment]], None] | None = None,
) -> DiffViewer | None:
    """Show step ``step``'s patch (the whole run's for None) in a new viewer, from the run's
    recorded checkpoints (live or saved). With ``on_comments`` the viewer takes review
    comments, and "Send comments" hands them there."""
    try:
        workspace, before, after = run_patch(checkpoints, step)
        text = await patch(workspace, before, after)
    except (RestoreError, GitError, OSError) as error:
        tell(parent, QMessageBox.Icon.Warning, "No diff", str(error))
        return None
    run_id = checkpoints[0].run_id
    title = f"Step {step + 1} changes" if step is not None else "All changes"
    viewer = DiffViewer(
        f"{title} — run {run_id}", text, path, parent, commentable=on_comments is not None
    )
    if on_comments is not None:
        viewer.commentsSent.connect(on_comments)
    viewer.show()
    return viewer


class RestoreDialog(QDialog):
    """What a restore would change, and — when refused — what would be lost and why."""

    def __init__(self, plan: RestorePlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RestoreDialog")
        self.setWindowTitle(f"Restore to before {plan.target_name}?")
        self.resize(620, 420)
        where = plan.workspace.work_tree
        intro = QLabel(
            f"The files in {where} go back to how they were before {plan.target_name}. "
            "The current state is checkpointed first, so this restore can be undone."
        )
        intro.setWordWrap(True)
        self.details = QPlainTextEdit()
        self.details.setObjectName("RestoreDetails")
        self.details.setReadOnly(True)
        self.details.setFont(monospace_font())
        lines = []
        if plan.refused:
            lines += ["Warning — " + plan.explanation(), ""]
        lines.append(f"{counted(len(plan.changes), 'file')} would change:")
        lines += [f"  {c.status:<8} {c.path}" for c in plan.changes]
        self.details.setPlainText("\n".join(lines))
        buttons = QDialogButtonBox()
        label = "Restore anyway" if plan.refused else "Restore"
        self.restore_button = buttons.addButton(label, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.details, 1)
        layout.addWidget(buttons)


async def answered(dialog: QDialog, accepted: Callable[[], bool]) -> bool:
    """Open ``dialog`` window-modal without a nested event loop and wait for it to close;
    ``accepted()`` then says whether the person went ahead."""
    future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def finished(_result: int) -> None:
        if not future.done():
            future.set_result(accepted())

    dialog.finished.connect(finished)
    dialog.open()
    try:
        return await future
    finally:
        dialog.deleteLater()


async def confirm(parent: QWidget | None, title: str, text: str, action: str) -> bool:
    """Ask yes/no; True when ``action`` was clicked."""
    no_buttons = QMessageBox.StandardButton.NoButton
    box = QMessageBox(QMessageBox.Icon.Question, title, text, no_buttons, parent)
    box.setObjectName("ChangesConfirm")
    yes = box.addButton(action, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    return await answered(box, lambda: box.clickedButton() is yes)


async def restore_step(parent: QWidget | None, run_id: str, step: int) -> StepChanges | None:
    """Plan, confirm, apply and record a restore to before ``step``; None when cancelled or
    impossible (the person was told why)."""
    try:
        path, events = run_events(run_id)
        plan = await plan_restore(events, step)
    except RestoreError as error:
        tell(parent, QMessageBox.Icon.Warning, "Cannot restore", str(error))
        return None
    dialog = RestoreDialog(plan, parent)
    if not await answered(dialog, lambda: dialog.result() == QDialog.DialogCode.Accepted):
        return None
    try:
        done = await apply_restore(plan)
    except RestoreError as error:
        tell(parent, QMessageBox.Icon.Warning, "Restore failed", str(error))
        return None
    append_event(path, done)
    offer_undo(parent, done, plan.target_name)
    return done


def offer_undo(parent: QWidget | None, done: StepChanges, target_name: str) -> QMessageBox:
    """Say what the restore did, with an Undo button: the person who just restored the wrong
    step should not need a terminal to take it back. OK stays the default (Enter, Escape),
    so dismissing the message never undoes anything; the terminal command is kept for those
    who undo later or elsewhere."""
    text = (
        f"Restored {counted(len(done.files), 'file')} to before {target_name}. "
        "Undo puts them back as they were before this restore "
        f"(from a terminal: baton runs restore {done.run_id} --undo)."
    )
    no_buttons = QMessageBox.StandardButton.NoButton
    box = QMessageBox(QMessageBox.Icon.Information, "Restored", text, no_buttons, parent)
    box.setObjectName("ChangesMessage")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    undo = box.addButton("Undo", QMessageBox.ButtonRole.ActionRole)
    ok = box.addButton(QMessageBox.StandardButton.Ok)
    box.setDefaultButton(ok)
    box.setEscapeButton(ok)
    undo.clicked.connect(lambda: start(undo_restore(parent, done, target_name)))
    box.open()
    return box


async def undo_restore(parent: QWidget | None, done: StepChanges, target_name: str) -> None:
    """Undo the restore ``done`` the way ``baton runs restore RUN --undo`` does (plan the
    undo of the latest restore, apply it, record it in the run file), and tell how it went.
    Over changes made since the restore it asks first, as the terminal wants ``--yes``."""
    parent = parent if parent is None or isValid(parent) else None  # closed meanwhile
    try:
        path, plan = await _plan_undo(done)
    except RestoreError as error:
        tell(parent, QMessageBox.Icon.Warning, "Cannot undo the restore", str(error))
        return
    if plan.refused and not await confirm(
        parent, "Undo the restore anyway?", plan.explanation(), "Undo anyway"
    ):
        return
    try:
        undone = await apply_restore(plan)
    except RestoreError as error:
        tell(parent, QMessageBox.Icon.Warning, "Undo failed", str(error))
        return
    append_event(path, undone)
    tell(parent, QMessageBox.Icon.Information, "Restore undone", _undone_text(undone, target_name))


async def _plan_undo(done: StepChanges) -> tuple[Path, RestorePlan]:
    """The run file and the plan undoing ``done``. Only while ``done`` is still the run's
    latest restore: the message may have stayed open while another restore was made, and
    the terminal's undo (of the latest) would then take back that one instead."""
    path, events = run_events(done.run_id)
    restores = [c for c in checkpoints_of(events) if c.kind == "restore"]
    if not restores or restores[-1].after != done.after:
        raise RestoreError(
            "another restore of this run was made since this one, so it is no longer the "
            "latest and cannot be undone from here. To undo the latest: "
            f"baton runs restore {done.run_id} --undo"
        )
    return path, await plan_restore(events, None)


def _undone_text(undone: StepChanges, target_name: str) -> str:
    """What the undo did. Not "restored to before step N": that names the change just taken
    back (the terminal's wording, for the same reason)."""
    return (
        f"The files in {undone.work_tree} are back as they were before the restore to before "
        f"{target_name}; {counted(len(undone.files), 'file')} changed. "
        f"To undo this too: baton runs restore {undone.run_id} --undo"
    )


def tell(parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str) -> None:
    """A non-blocking message (no nested loop inside a coroutine)."""
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("ChangesMessage")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
